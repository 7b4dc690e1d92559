// Package usage reads what a site says about how its content may be used
// once fetched: for search, for training AI models, as input to AI answers.
// These are preferences about use, not about crawling, which robots.txt
// Allow and Disallow rules govern.
//
// It parses each signal a crawler meets, every parser bounded and total
// (no input makes one fail; an unreadable signal says nothing):
//
//   - the Content-Usage header and robots.txt rule of the IETF AI
//     Preferences drafts (draft-ietf-aipref-attach, draft-ietf-aipref-vocab):
//     an RFC 9651 Dictionary such as "train-ai=n, search=y";
//   - Cloudflare's Content-Signal robots.txt line (and header), such as
//     "search=yes, ai-train=no, ai-input=no" (contentsignals.org);
//   - Robots-Tag (draft-illyes-repext), X-Robots-Tag in Google's forms
//     ("googlebot: noindex", unavailable_after) and <meta name="robots">,
//     with the noai and noimageai values;
//   - the W3C TDM Reservation Protocol (TDMRep): the tdm-reservation and
//     tdm-policy headers, <meta name="tdm-reservation">, and the rules of
//     /.well-known/tdmrep.json.
//
// A [Collector] gathers a page's signals and merges them into [Signals]: a
// [Verdict] (Allowed, Disallowed or Unknown) per [Purpose], with the
// [Source] of every signal that spoke.
//
// # Precedence
//
// As the drafts say: within one statement an explicit verdict on a purpose
// beats its parent's (vocab-03 §5: train-genai over train-ai over bots);
// within robots.txt the Content-Usage rule with the longest matching path
// applies, equally long ones combined (attach §3.1); TDMRep's sources
// override in order file, header, meta (TDMRep §3.5), an absent value not
// resetting an earlier one. Statements from different places (robots.txt
// and header, aipref and Content-Signal, TDMRep, robots directives) have no
// order among them, so they combine most-restrictively (vocab §7.1): any
// Disallowed wins, then any Allowed, else Unknown. A page header therefore
// narrows robots.txt but never widens it.
package usage

import (
	"fmt"
	"net/http"
	"time"
)

// Verdict is a preference on one purpose: the three answers of
// draft-ietf-aipref-vocab §3 ("allowed", "disallowed", "unknown"). The zero
// value is Unknown.
type Verdict uint8

const (
	// Unknown: no signal said anything about the purpose.
	Unknown Verdict = iota
	// Allowed: a signal allows the purpose and none disallows it.
	Allowed
	// Disallowed: a signal disallows the purpose.
	Disallowed
)

var verdictNames = [...]string{"unknown", "allowed", "disallowed"}

// String returns "unknown", "allowed" or "disallowed".
func (v Verdict) String() string {
	if int(v) < len(verdictNames) {
		return verdictNames[v]
	}
	return fmt.Sprintf("Verdict(%d)", uint8(v))
}

// MarshalText writes the verdict's name, for JSON.
func (v Verdict) MarshalText() ([]byte, error) { return []byte(v.String()), nil }

// UnmarshalText reads a verdict's name.
func (v *Verdict) UnmarshalText(b []byte) error {
	for i, n := range verdictNames {
		if n == string(b) {
			*v = Verdict(i)
			return nil
		}
	}
	return fmt.Errorf("usage: unknown verdict %q", b)
}

// combine is vocab §7.1 for two verdicts: Disallowed over Allowed over
// Unknown.
func combine(a, b Verdict) Verdict { return max(a, b) }

// Purpose is a category of use.
type Purpose uint8

// The purposes. Search and AITraining are the categories of
// draft-ietf-aipref-vocab (labels "search", "train-ai"); GenAITraining and
// Automated are its earlier ones (vocab-03 "train-genai", "bots"; vocab-02
// "all"), still read; AIInput is Content-Signal's "ai-input" (vocab-02's
// "ai-use").
const (
	// Search: building a search index and showing results that link to
	// the content.
	Search Purpose = iota
	// AITraining: training or fine-tuning AI models.
	AITraining
	// AIInput: using the content as input to an AI model's answer
	// (retrieval-augmented generation, grounding).
	AIInput
	// GenAITraining: training generative AI models, a part of AITraining.
	GenAITraining
	// Automated: any automated processing; the parent of the others.
	Automated

	numPurposes
)

var purposeNames = [numPurposes]string{"search", "train-ai", "ai-input", "train-genai", "bots"}

// String returns the purpose's aipref label ("search", "train-ai",
// "ai-input", "train-genai", "bots").
func (p Purpose) String() string {
	if p < numPurposes {
		return purposeNames[p]
	}
	return fmt.Sprintf("Purpose(%d)", uint8(p))
}

// MarshalText writes the purpose's label.
func (p Purpose) MarshalText() ([]byte, error) { return []byte(p.String()), nil }

// UnmarshalText reads a purpose's label; Content-Signal's "ai-train" is
// read as AITraining.
func (p *Purpose) UnmarshalText(b []byte) error {
	if string(b) == "ai-train" {
		*p = AITraining
		return nil
	}
	for i, n := range purposeNames {
		if n == string(b) {
			*p = Purpose(i)
			return nil
		}
	}
	return fmt.Errorf("usage: unknown purpose %q", b)
}

// parent is the broader purpose whose verdict applies when a statement says
// nothing about p (vocab-03 §5), or p itself for Automated.
func (p Purpose) parent() Purpose {
	switch p {
	case GenAITraining:
		return AITraining
	default:
		return Automated
	}
}

// Statement is one statement of preference: the verdicts it states
// explicitly, by purpose. The zero value states nothing.
type Statement struct {
	v [numPurposes]Verdict
}

// Set states v for p. Setting a purpose twice combines the two
// most-restrictively.
func (s *Statement) Set(p Purpose, v Verdict) {
	if p < numPurposes {
		s.v[p] = combine(s.v[p], v)
	}
}

// Explicit returns the verdict stated on p itself.
func (s Statement) Explicit(p Purpose) Verdict {
	if p < numPurposes {
		return s.v[p]
	}
	return Unknown
}

// Resolve returns the statement's verdict on p: the explicit one, else its
// parent's, up to Automated (vocab-03 §5).
func (s Statement) Resolve(p Purpose) Verdict {
	for p < numPurposes {
		if v := s.v[p]; v != Unknown {
			return v
		}
		if p == Automated {
			break
		}
		p = p.parent()
	}
	return Unknown
}

// IsZero reports whether the statement states nothing.
func (s Statement) IsZero() bool { return s == Statement{} }

// Kind names where a signal was found.
type Kind string

// The kinds of source.
const (
	KindContentUsage        Kind = "content-usage"             // Content-Usage header (aipref attach §2)
	KindRobotsContentUsage  Kind = "robots.txt content-usage"  // robots.txt Content-Usage rule (aipref attach §3)
	KindContentSignal       Kind = "content-signal"            // Content-Signal header
	KindRobotsContentSignal Kind = "robots.txt content-signal" // robots.txt Content-Signal line
	KindRobotsTag           Kind = "robots-tag"                // Robots-Tag header (draft-illyes-repext)
	KindXRobotsTag          Kind = "x-robots-tag"              // X-Robots-Tag header
	KindMetaRobots          Kind = "meta robots"               // <meta name="robots"> or <meta name="TOKEN">
	KindTDMHeader           Kind = "tdm-reservation"           // TDMRep header fields
	KindTDMMeta             Kind = "meta tdm-reservation"      // TDMRep HTML meta
	KindTDMFile             Kind = "/.well-known/tdmrep.json"  // TDMRep file on the origin server
)

// Source is one signal that spoke about a page: where it was found and its
// value as written (cut at maxSourceValue octets).
type Source struct {
	Kind  Kind   `json:"kind"`
	Value string `json:"value"`
}

const maxSourceValue = 512

// maxSources bounds the sources a Collector keeps.
const maxSources = 32

// Signals are a page's merged usage preferences. The zero value says
// nothing (every purpose Unknown).
type Signals struct {
	Search        Verdict `json:"search,omitempty"`
	AITraining    Verdict `json:"train-ai,omitempty"`
	AIInput       Verdict `json:"ai-input,omitempty"`
	GenAITraining Verdict `json:"train-genai,omitempty"`
	Automated     Verdict `json:"bots,omitempty"`
	// NoImageAI is the noimageai directive: the page's images are not to
	// be used for AI.
	NoImageAI bool `json:"noimageai,omitempty"`
	// TDMPolicy is the TDMRep tdm-policy URL of a reservation (TDMRep
	// §2.2), where a licence may be sought.
	TDMPolicy string `json:"tdm-policy,omitempty"`
	// Sources are the signals that spoke, in the order they were read.
	Sources []Source `json:"sources,omitempty"`
}

// Verdict returns the merged verdict on p.
func (s Signals) Verdict(p Purpose) Verdict {
	switch p {
	case Search:
		return s.Search
	case AITraining:
		return s.AITraining
	case AIInput:
		return s.AIInput
	case GenAITraining:
		return s.GenAITraining
	case Automated:
		return s.Automated
	}
	return Unknown
}

func (s *Signals) set(p Purpose, v Verdict) {
	switch p {
	case Search:
		s.Search = v
	case AITraining:
		s.AITraining = v
	case AIInput:
		s.AIInput = v
	case GenAITraining:
		s.GenAITraining = v
	case Automated:
		s.Automated = v
	}
}

// IsZero reports whether no signal spoke.
func (s Signals) IsZero() bool {
	return s.Search == Unknown && s.AITraining == Unknown && s.AIInput == Unknown &&
		s.GenAITraining == Unknown && s.Automated == Unknown && !s.NoImageAI && s.TDMPolicy == "" && len(s.Sources) == 0
}

// Collector gathers the signals about one page and merges them. Add
// robots.txt's first, then the response's (AddHeader), then the HTML's
// (AddHTML): TDMRep's sources override in that order. The zero value is
// ready to use; a Collector is not safe for concurrent use.
type Collector struct {
	// Token is the crawler's product token (RFC 9309 §2.2.1): robots
	// directives addressed to it apply besides the general ones.
	Token string
	// Now dates X-Robots-Tag unavailable_after; nil means time.Now.
	Now func() time.Time

	stmts   []Statement
	sources []Source
	noImage bool
	tdm     TDM
	tdmKind Kind
}

// Add records a statement read from a source of kind k with the given
// value. An empty statement still records its source when value is not
// empty: the site spoke, though in terms this package does not know.
func (c *Collector) Add(k Kind, value string, st Statement) {
	if !st.IsZero() {
		c.stmts = append(c.stmts, st)
	}
	c.source(k, value)
}

func (c *Collector) source(k Kind, value string) {
	if value == "" || len(c.sources) >= maxSources {
		return
	}
	if len(value) > maxSourceValue {
		value = value[:maxSourceValue]
	}
	c.sources = append(c.sources, Source{Kind: k, Value: value})
}

// AddDirectives records robots directives (Robots-Tag, X-Robots-Tag, meta
// robots).
func (c *Collector) AddDirectives(k Kind, value string, d Directives) {
	c.noImage = c.noImage || d.NoImageAI
	c.Add(k, value, d.Statement(c.now()))
}

// AddTDM records a TDMRep declaration; a set reservation overrides the one
// recorded before it (TDMRep §3.5), an unset one changes nothing.
func (c *Collector) AddTDM(k Kind, t TDM) {
	if t.Reservation == TDMUnset {
		return
	}
	c.tdm, c.tdmKind = t, k
	c.source(k, t.String())
}

// AddHeader records the signals of a response header: Content-Usage,
// Content-Signal, Robots-Tag, X-Robots-Tag, tdm-reservation and tdm-policy.
func (c *Collector) AddHeader(h http.Header) {
	if v := h.Values("Content-Usage"); len(v) > 0 {
		s, _ := joinField(v)
		st, _ := ParseContentUsage(s)
		c.Add(KindContentUsage, s, st)
	}
	if v := h.Values("Content-Signal"); len(v) > 0 {
		s, _ := joinField(v)
		c.Add(KindContentSignal, s, ParseContentSignal(s))
	}
	if v := h.Values("Robots-Tag"); len(v) > 0 {
		s, _ := joinField(v)
		c.AddDirectives(KindRobotsTag, s, ParseRobotsTag(s, c.Token))
	}
	if v := h.Values("X-Robots-Tag"); len(v) > 0 {
		s, _ := joinField(v)
		c.AddDirectives(KindXRobotsTag, s, ParseXRobotsTag(v, c.Token))
	}
	c.AddTDM(KindTDMHeader, ParseTDMHeader(h))
}

// AddHTML records the signals of an HTML page's <meta> elements.
func (c *Collector) AddHTML(body []byte) {
	m := ParseHTML(body, c.Token)
	if m.RobotsContent != "" {
		c.AddDirectives(KindMetaRobots, m.RobotsContent, m.Robots)
	}
	c.AddTDM(KindTDMMeta, m.TDM)
}

func (c *Collector) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

// Signals merges what was recorded: each statement resolved through the
// purposes' hierarchy, the TDMRep declaration in force, then all combined
// most-restrictively (vocab §7.1).
func (c *Collector) Signals() Signals {
	var s Signals
	stmts := c.stmts
	if c.tdm.Reservation != TDMUnset {
		stmts = append(stmts[:len(stmts):len(stmts)], c.tdm.Statement())
		if c.tdm.Reservation == TDMReserved {
			s.TDMPolicy = c.tdm.Policy
		}
	}
	for p := range numPurposes {
		v := Unknown
		for _, st := range stmts {
			v = combine(v, st.Resolve(p))
		}
		s.set(p, v)
	}
	s.NoImageAI = c.noImage
	if len(c.sources) > 0 {
		s.Sources = append([]Source(nil), c.sources...)
	}
	return s
}
