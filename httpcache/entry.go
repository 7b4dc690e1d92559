package httpcache

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Entry is a stored response.
type Entry struct {
	// URL is the URL that was requested, the entry's key; FinalURL the
	// one that answered, after Redirects.
	URL, FinalURL string
	Redirects     []Hop
	StatusCode    int
	Header        http.Header
	Body          []byte
	// Stored is when the response was received (RFC 9111 §4.2.3's
	// response_time), or last revalidated.
	Stored time.Time
}

// Hop is a redirect the response was reached through.
type Hop struct {
	URL    string      `json:"url"`
	Status int         `json:"status"`
	Header http.Header `json:"header,omitempty"`
}

// Validators are an entry's validators for a conditional request (RFC 9110
// §13.1): sent as If-None-Match and If-Modified-Since.
type Validators struct {
	ETag, LastModified string
}

// Validators returns e's validators.
func (e *Entry) Validators() Validators {
	return Validators{ETag: e.Header.Get("ETag"), LastModified: e.Header.Get("Last-Modified")}
}

// Lifetime is e's freshness lifetime (RFC 9111 §4.2.1): max-age, else
// Expires less Date, else for a status cacheable by default with a
// Last-Modified 10% of the time between it and Date (§4.2.2). no-cache
// makes it zero (§5.2.2.4): the entry is revalidated every time.
func (e *Entry) Lifetime() time.Duration {
	cc := parseCacheControl(e.Header)
	if cc.has("no-cache") {
		return 0
	}
	if v, ok := cc["max-age"]; ok {
		return seconds(v)
	}
	date := e.date()
	if v := e.Header.Get("Expires"); v != "" {
		exp, err := http.ParseTime(v)
		if err != nil {
			return 0 // an invalid Expires is in the past (§5.3)
		}
		return max(exp.Sub(date), 0)
	}
	if lm, err := http.ParseTime(e.Header.Get("Last-Modified")); err == nil && heuristicallyCacheable(e.StatusCode) {
		return max(date.Sub(lm)/10, 0)
	}
	return 0
}

// Age is e's current age at now (RFC 9111 §4.2.3, with no request delay):
// the larger of its apparent age at Stored and its Age header, plus the
// time since Stored.
func (e *Entry) Age(now time.Time) time.Duration {
	initial := max(e.Stored.Sub(e.date()), 0)
	if v := e.Header.Get("Age"); v != "" {
		initial = max(initial, seconds(v))
	}
	return initial + max(now.Sub(e.Stored), 0)
}

// Fresh reports whether e's lifetime is longer than its age at now (RFC
// 9111 §4.2).
func (e *Entry) Fresh(now time.Time) bool { return e.Lifetime() > e.Age(now) }

// Revalidated updates e with the header of a 304 answer to a conditional
// request, received at now (RFC 9111 §4.3.4: the stored header fields are
// replaced by the 304's, Content-Length and the like excepted).
func (e *Entry) Revalidated(h http.Header, now time.Time) {
	hdr := e.Header.Clone()
	if hdr == nil {
		hdr = http.Header{}
	}
	for k, v := range h {
		switch http.CanonicalHeaderKey(k) {
		case "Content-Length", "Content-Encoding", "Transfer-Encoding", "Content-Range":
			continue
		}
		hdr[http.CanonicalHeaderKey(k)] = append([]string(nil), v...)
	}
	e.Header = hdr
	e.Stored = now
}

// date is e's Date header, or Stored when it has none or a bad one.
func (e *Entry) date() time.Time {
	if d, err := http.ParseTime(e.Header.Get("Date")); err == nil {
		return d
	}
	return e.Stored
}

// seconds parses a delta-seconds value (RFC 9111 §1.2.2): an invalid one
// is zero, an overflowing one the largest duration.
func seconds(v string) time.Duration {
	v = strings.Trim(strings.TrimSpace(v), `"`)
	n, err := strconv.ParseUint(v, 10, 63)
	if err != nil {
		var ne *strconv.NumError
		if errors.As(err, &ne) && errors.Is(ne.Err, strconv.ErrRange) {
			return math.MaxInt64
		}
		return 0
	}
	if n > math.MaxInt64/uint64(time.Second) {
		return math.MaxInt64
	}
	return time.Duration(n) * time.Second
}

// cacheControl holds Cache-Control directives (RFC 9111 §5.2), names in
// lower case, values unquoted.
type cacheControl map[string]string

func (cc cacheControl) has(d string) bool { _, ok := cc[d]; return ok }

// parseCacheControl reads every Cache-Control field of h; a directive that
// appears twice keeps its first value.
func parseCacheControl(h http.Header) cacheControl {
	cc := cacheControl{}
	for _, field := range h.Values("Cache-Control") {
		for _, d := range strings.Split(field, ",") {
			name, val, _ := strings.Cut(strings.TrimSpace(d), "=")
			name = strings.ToLower(strings.TrimSpace(name))
			if name == "" {
				continue
			}
			if _, dup := cc[name]; !dup {
				cc[name] = strings.Trim(strings.TrimSpace(val), `"`)
			}
		}
	}
	return cc
}

// The entry file: a magic line, a line of JSON metadata, and the body.
const magic = "crawlkit-httpcache 1\n"

// ErrCorrupt is wrapped by Decode's errors.
var ErrCorrupt = errors.New("httpcache: corrupt entry")

// entryMeta is an entry file's metadata line.
type entryMeta struct {
	URL       string      `json:"url"`
	FinalURL  string      `json:"final_url,omitempty"`
	Redirects []Hop       `json:"redirects,omitempty"`
	Status    int         `json:"status"`
	Header    http.Header `json:"header"`
	Stored    time.Time   `json:"stored"`
	BodyLen   int         `json:"body_len"`
}

// Encode returns e as an entry file's bytes.
func (e *Entry) Encode() []byte {
	meta, _ := json.Marshal(entryMeta{URL: e.URL, FinalURL: e.FinalURL, Redirects: e.Redirects, Status: e.StatusCode,
		Header: e.Header, Stored: e.Stored, BodyLen: len(e.Body)})
	b := make([]byte, 0, len(magic)+len(meta)+1+len(e.Body))
	b = append(b, magic...)
	b = append(b, meta...)
	b = append(b, '\n')
	return append(b, e.Body...)
}

// Decode reads an entry file's bytes.
func Decode(b []byte) (*Entry, error) {
	rest, ok := bytes.CutPrefix(b, []byte(magic))
	if !ok {
		return nil, fmt.Errorf("%w: not an entry file", ErrCorrupt)
	}
	line, body, ok := bytes.Cut(rest, []byte("\n"))
	if !ok {
		return nil, fmt.Errorf("%w: no metadata line", ErrCorrupt)
	}
	var m entryMeta
	if err := json.Unmarshal(line, &m); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	if m.BodyLen != len(body) {
		return nil, fmt.Errorf("%w: body of %d bytes, %d expected", ErrCorrupt, len(body), m.BodyLen)
	}
	if m.URL == "" || m.Status < 100 || m.Status > 999 {
		return nil, fmt.Errorf("%w: no URL or a bad status", ErrCorrupt)
	}
	if m.Header == nil {
		m.Header = http.Header{}
	}
	return &Entry{URL: m.URL, FinalURL: m.FinalURL, Redirects: m.Redirects, StatusCode: m.Status, Header: m.Header,
		Body: body, Stored: m.Stored}, nil
}
