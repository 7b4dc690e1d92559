package usage

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/crawlkit/crawlkit/robots"
)

// This file reads the W3C TDM Reservation Protocol (TDMRep, Community
// Group final report): a rightsholder's reservation of text and data
// mining rights, per resource, with an optional policy URL.

// TDMPath is where TDMRep's file on the origin server lives (TDMRep §3.1).
const TDMPath = "/.well-known/tdmrep.json"

// MaxTDMFileBytes bounds the tdmrep.json read; a longer file is read as
// unreadable (every resource Unknown).
const MaxTDMFileBytes = 64 << 10

// maxTDMRules bounds the rules kept from one file; lookups are linear in
// them.
const maxTDMRules = 1024

// TDMReservation is the value of tdm-reservation (TDMRep §2.1).
type TDMReservation uint8

const (
	// TDMUnset: no value, or one other than 0 and 1 (a protocol error,
	// which TDMRep §2.1 reads as unset).
	TDMUnset TDMReservation = iota
	// TDMNotReserved: tdm-reservation 0, mining rights are not reserved.
	TDMNotReserved
	// TDMReserved: tdm-reservation 1, mining rights are reserved (the
	// opt-out of Article 4 of the EU DSM Directive).
	TDMReserved
)

// TDM is one TDMRep declaration.
type TDM struct {
	Reservation TDMReservation
	// Policy is the tdm-policy URL, kept only with a reservation (TDMRep
	// §2.2: it is not processed otherwise).
	Policy string
}

// String renders the declaration as its header fields would read.
func (t TDM) String() string {
	switch t.Reservation {
	case TDMReserved:
		if t.Policy != "" {
			return "tdm-reservation=1, tdm-policy=" + t.Policy
		}
		return "tdm-reservation=1"
	case TDMNotReserved:
		return "tdm-reservation=0"
	}
	return ""
}

// Statement maps the declaration to purposes: TDM is mining by automated
// analysis, which training AI models and feeding their answers are; it
// is not read as saying anything about search. A reservation disallows
// AITraining and AIInput, its absence (0) allows them.
func (t TDM) Statement() Statement {
	var st Statement
	switch t.Reservation {
	case TDMReserved:
		st.Set(AITraining, Disallowed)
		st.Set(AIInput, Disallowed)
	case TDMNotReserved:
		st.Set(AITraining, Allowed)
		st.Set(AIInput, Allowed)
	}
	return st
}

func parseReservation(v string) TDMReservation {
	switch strings.TrimSpace(v) {
	case "1":
		return TDMReserved
	case "0":
		return TDMNotReserved
	}
	return TDMUnset
}

func newTDM(reservation, policy string) TDM {
	t := TDM{Reservation: parseReservation(reservation)}
	if t.Reservation == TDMReserved && len(policy) <= maxSourceValue {
		t.Policy = strings.TrimSpace(policy)
	}
	return t
}

// ParseTDMHeader reads the tdm-reservation and tdm-policy header fields
// (TDMRep §3.2). Several tdm-reservation lines that disagree are a protocol
// error, read as unset.
func ParseTDMHeader(h http.Header) TDM {
	vals := h.Values("Tdm-Reservation")
	if len(vals) == 0 {
		return TDM{}
	}
	for _, v := range vals[1:] {
		if strings.TrimSpace(v) != strings.TrimSpace(vals[0]) {
			return TDM{}
		}
	}
	return newTDM(vals[0], h.Get("Tdm-Policy"))
}

// TDMRule is one rule of a tdmrep.json file.
type TDMRule struct {
	// Location is a path pattern with robots.txt's "*" and "$" (TDMRep
	// §3.1.1).
	Location string
	TDM
}

// TDMFile is a parsed /.well-known/tdmrep.json.
type TDMFile struct {
	Rules []TDMRule
}

// ErrTDMFile wraps the reasons a tdmrep.json cannot be read.
var ErrTDMFile = errors.New("usage: unreadable tdmrep.json")

// ParseTDMFile reads a tdmrep.json body (TDMRep §3.1): a JSON array of
// objects with a location, a tdm-reservation of 0 or 1 (a number, or
// leniently a string) and an optional tdm-policy. A rule without a
// location or a valid reservation is dropped; a body that is not such an
// array, or is longer than MaxTDMFileBytes, is an error wrapping
// ErrTDMFile.
func ParseTDMFile(body []byte) (*TDMFile, error) {
	if len(body) > MaxTDMFileBytes {
		return nil, fmt.Errorf("%w: longer than %d octets", ErrTDMFile, MaxTDMFileBytes)
	}
	var raw []struct {
		Location    *string         `json:"location"`
		Reservation json.RawMessage `json:"tdm-reservation"`
		Policy      string          `json:"tdm-policy"`
	}
	if err := json.Unmarshal(body, &raw); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrTDMFile, err)
	}
	f := &TDMFile{}
	for _, r := range raw {
		if r.Location == nil || *r.Location == "" || len(f.Rules) == maxTDMRules {
			continue
		}
		res := strings.Trim(string(r.Reservation), `"`)
		t := newTDM(res, r.Policy)
		if t.Reservation == TDMUnset {
			continue
		}
		f.Rules = append(f.Rules, TDMRule{Location: *r.Location, TDM: t})
	}
	return f, nil
}

// Lookup returns the declaration of the first rule whose location matches
// target, an absolute URL or a path with optional query: TDMRep §3.1 has
// "the most specific match is the first in sequence". No match is the
// zero TDM (unset). A nil file matches nothing.
func (f *TDMFile) Lookup(target string) TDM {
	if f == nil {
		return TDM{}
	}
	for _, r := range f.Rules {
		if robots.MatchPattern(r.Location, target) {
			return r.TDM
		}
	}
	return TDM{}
}
