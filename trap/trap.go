// Package trap detects spider traps: URL spaces that a site (by design or by
// accident) makes unbounded, such as calendars that page forever, relative
// links that nest a path into itself, session identifiers minted per visit,
// parameters that change on every link, subdomains minted per user and soft-404
// pages that answer any URL with the same content.
//
// A Detector judges each candidate URL before it is queued and returns a
// Verdict naming the rule that fired and a human-readable reason. Most rules
// look at the URL alone; some learn from what the detector has already seen
// on the URL's host (budgets, growing parameters, calendar walks), and one
// learns from the pages the crawler reports back after fetching
// (ObservePage).
//
// # Using it in a crawler
//
// Judge every discovered link with JudgeAt before queueing it, and report
// every fetched page once with ObservePage: its URL, its SimHash and its
// links. When ObservePage rejects, do not follow the page's links; label
// them with its verdict. A verdict whose Scope is not ScopeURL stops a
// pattern, host or domain from then on; exactly one such verdict per stop
// has First set, so log that one (it names the Config field to change in
// Setting) and count the rest.
//
// Content repetition needs more than similar text: a template can dominate
// distinct pages so that their SimHashes lie within a few bits. A pattern is
// stopped when most of its pages are the same page (near fingerprints and
// the same links, as one "not found" template served at many URLs) or have
// identical text (as a maze that mints a new link per page); a host, when
// such a group spans several of its patterns.
//
// # Rules and reasons
//
// Every reason starts with the rule's name, a colon and a space, followed by
// a sentence fragment that says what was found and which limit it broke. The
// rule names and the shape of each reason are stable, so logs can be grepped
// and aggregated by them:
//
//	url-length          url-length: 2417 characters, limit 2000
//	invalid-url         invalid-url: <what is wrong>
//	path-depth          path-depth: 23 segments, limit 20
//	hop-depth           hop-depth: 9 hops from a seed, limit 8
//	repeated-segments   repeated-segments: "a/b" repeated 3 times in a row, limit 2
//	                    repeated-segments: "img" occurs 4 times, limit 3
//	                    repeated-segments: 3 paths made of {a, b, loop} repeat a segment, limit 2
//	calendar            calendar: date 2031-01 is more than 2 years after 2025-11
//	                    calendar: date 1901-05 is more than 30 years before 2025-11
//	                    calendar: 7 dates reached by walking /events/{date}/, limit 6
//	session-id          session-id: parameter "jsessionid"
//	                    session-id: parameter "tok" holds a 40-character token
//	growing-param       growing-param: "t" took 9 values on /page?t={v}, limit 8
//	                    growing-param: "q" grew 3 times on /search?q={v}, limit 2
//	host-budget         host-budget: host example.com reached its budget of 100000 URLs
//	pattern-budget      pattern-budget: /item/{n} on example.com reached its budget of 10000 URLs
//	domain-budget       domain-budget: example.com reached its budget of 1000 hosts
//	                    domain-budget: u{n}.example.com reached its budget of 8 minted hosts
//	content-repetition  content-repetition: 5 URLs under /missing/{*} served the same page (simhash 0x…, same links)
//	                    content-repetition: 5 URLs of example.com served identical content (simhash 0x…)
//
// Where a reason quotes a pattern, digit runs are written {n}, hexadecimal
// identifiers and UUIDs {id}, the varying part {v}, {date} or {*}.
//
// # Input
//
// The detector expects absolute http or https URLs in normalized form
// (urlnorm.Normalize): a lower-case host without a default port, no fragment,
// and tracking and well-known session parameters already removed. It still
// copes with unnormalized input, but two spellings of one URL then count as
// two URLs against the budgets.
//
// # State
//
// Learned state is kept per host, in a least-recently-used table of at most
// Config.MaxHosts hosts, and per registrable domain in a second table of the
// same size. A host that falls out of the table forgets what was learned
// about it. Budgets count distinct URLs: the detector remembers a 64-bit key
// of every URL it has accepted on a tracked host (about 16 bytes each, at
// most the host's budget per host and Config.MaxTrackedURLs in all, oldest
// hosts evicted first; a host without a budget keeps at most
// Config.MaxTrackedURLs keys and counts its URLs after that), so a URL
// linked from every page is counted once and an accepted URL is accepted
// again when it is found again, unless content repetition has since
// stopped its pattern. A caller that never judges a URL
// twice (a crawler with its own seen set) sets Config.DistinctCandidates and
// the detector keeps counts instead of keys: its memory is then bounded by
// the host tables alone, whatever the number of URLs.
//
// A Detector is safe for concurrent use. It starts no goroutines and needs
// no Close.
package trap

import (
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// Rule names a trap rule. Its value is the stable name used at the start of
// every reason.
type Rule string

// The rules, in the order in which a Detector applies them.
const (
	// RuleNone is the Rule of a Verdict that accepts the URL.
	RuleNone Rule = ""
	// RuleURLLength rejects URLs longer than Config.MaxURLLength bytes. It
	// is applied first, so an overlong URL is never parsed.
	RuleURLLength Rule = "url-length"
	// RuleInvalid rejects what is not an absolute http or https URL with
	// a host.
	RuleInvalid Rule = "invalid-url"
	// RulePathDepth rejects paths of more than Config.MaxPathDepth segments.
	RulePathDepth Rule = "path-depth"
	// RuleHopDepth rejects candidates more than Config.MaxHops links away
	// from a seed (off by default).
	RuleHopDepth Rule = "hop-depth"
	// RuleRepeatedSegments rejects paths that repeat a segment or a
	// sequence of segments (/a/b/a/b/a/b/) or use one segment too often.
	RuleRepeatedSegments Rule = "repeated-segments"
	// RuleSessionID rejects URLs carrying a session identifier or another
	// long random token.
	RuleSessionID Rule = "session-id"
	// RuleCalendar rejects dates far from now (Config.YearsAhead,
	// YearsBehind) and walks through previous/next links that go on too
	// long (MaxCalendarSteps): a calendar pages forever. Dates are read
	// from the path and query in the common forms (scanDates). A year
	// and month alone, with no calendar word or date parameter near them,
	// are as often an id (/t/topic/2841/5), so they count as a date only
	// within the range, and a walk through them is limited only once it
	// crossed a year, which a calendar does within twelve steps and the
	// pages of an item never do. Dated articles are never too old.
	RuleCalendar Rule = "calendar"
	// RuleContentRepetition rejects URLs of a pattern (or a whole host)
	// that kept serving the same page, as reported through ObservePage.
	RuleContentRepetition Rule = "content-repetition"
	// RuleDomainBudget rejects hosts beyond the number a registrable
	// domain may have (subdomain farms).
	RuleDomainBudget Rule = "domain-budget"
	// RuleGrowingParam rejects a query parameter whose values keep
	// changing while the rest of the URL stays the same.
	RuleGrowingParam Rule = "growing-param"
	// RuleHostBudget rejects new URLs of a host that has used its budget.
	RuleHostBudget Rule = "host-budget"
	// RulePatternBudget rejects new URLs of a path pattern that has used
	// its budget.
	RulePatternBudget Rule = "pattern-budget"
)

// Rules lists every rule in the order a Detector applies them.
var Rules = []Rule{
	RuleURLLength, RuleInvalid, RulePathDepth, RuleHopDepth, RuleRepeatedSegments,
	RuleSessionID, RuleCalendar, RuleContentRepetition, RuleDomainBudget,
	RuleGrowingParam, RuleHostBudget, RulePatternBudget,
}

// Verdict is a Detector's judgement of one URL. The zero Verdict accepts.
type Verdict struct {
	// Rule is the rule that rejected the URL, or RuleNone.
	Rule Rule
	// Reason explains the rejection in one line, starting with the rule's
	// name (see the package documentation for the formats). It is empty
	// when the URL is accepted.
	Reason string
	// Scope is what the verdict stops: this URL alone, or from now on
	// every new URL of a pattern, a host or a domain.
	Scope Scope
	// Target names what Scope stops: "example.com/missing/{*}" for a
	// pattern, "example.com" for a host or domain; empty for ScopeURL.
	Target string
	// First marks the one verdict that established a stop (Scope is not
	// ScopeURL), so that a caller can log each stop once; the verdicts
	// that follow from the stop have First false.
	First bool
	// Setting is the Config field that changes the rule, such as
	// "HostContentRepeats", so a log can say what to raise; empty for
	// RuleInvalid.
	Setting string
}

// Scope is what a Verdict stops.
type Scope uint8

// The scopes of a verdict.
const (
	ScopeURL     Scope = iota // the judged URL only
	ScopePattern              // new URLs of Verdict.Target, a pattern of one host
	ScopeHost                 // new URLs of the host Verdict.Target
	ScopeDomain               // new hosts of the registrable domain Verdict.Target
)

var scopeNames = [...]string{"url", "pattern", "host", "domain"}

// String returns "url", "pattern", "host" or "domain".
func (s Scope) String() string {
	if int(s) < len(scopeNames) {
		return scopeNames[s]
	}
	return "Scope(" + itoa(int(s)) + ")"
}

// Rejected reports whether the verdict rejects the URL.
func (v Verdict) Rejected() bool { return v.Rule != RuleNone }

// String returns the reason, or "accepted".
func (v Verdict) String() string {
	if v.Rule == RuleNone {
		return "accepted"
	}
	return v.Reason
}

// reject builds a verdict on one URL whose reason is the rule's name and
// detail; setting is the Config field that changes the rule.
func reject(r Rule, setting, detail string) Verdict {
	return Verdict{Rule: r, Reason: string(r) + ": " + detail, Setting: setting}
}

// stop builds a verdict that stops target, a pattern, host or domain.
func stop(r Rule, setting string, scope Scope, target string, first bool, detail string) Verdict {
	return Verdict{Rule: r, Reason: string(r) + ": " + detail, Scope: scope, Target: target, First: first, Setting: setting}
}

// later returns v as it is given after the verdict that established it.
func later(v Verdict) Verdict {
	v.First = false
	return v
}

// Candidate is a URL to judge together with where it was found.
type Candidate struct {
	// URL is the absolute, preferably normalized, URL to judge.
	URL string
	// Source is the URL of the page the link was found on, or "" for a
	// seed. The calendar and growing-param rules use it to tell a walk
	// (a date page linking to the next date, a search linking to its own
	// refinement) from a list of dates or searches on another page.
	Source string
	// Depth is the number of links followed from a seed to reach URL
	// (seeds have depth 0). Only the hop-depth rule uses it.
	Depth int
}

// Budgets are the URL and host budgets of one host or registrable domain.
// A zero field means the Config's value; a negative one means unlimited.
type Budgets struct {
	// Host is the number of distinct URLs accepted per host.
	Host int
	// Pattern is the number of distinct URLs accepted per path pattern
	// of a host.
	Pattern int
	// DomainHosts is the number of hosts accepted under one registrable
	// domain.
	DomainHosts int
	// MintedHosts is the number of hosts under one registrable domain
	// whose subdomain differs from the others only in digits or an
	// identifier (u1, u2, …; 3f9a0c1e, …).
	MintedHosts int
}

// Config configures a Detector. The zero value gives the documented
// defaults: for each int field 0 means the default and a negative value
// switches the rule (or limit) off.
type Config struct {
	// MaxURLLength is the longest URL accepted, in bytes (default 2000;
	// Heritrix and BUbiNG use 2048, and many servers and browsers stop
	// near 2000).
	MaxURLLength int
	// MaxPathDepth is the most path segments accepted (default 20, as
	// Heritrix's TooManyPathSegmentsDecideRule).
	MaxPathDepth int
	// MaxHops is the most links from a seed (Candidate.Depth) accepted.
	// Default 0: off, because depth alone is a poor trap test.
	MaxHops int
	// MaxRepetitions is how many times in a row a path segment or a
	// sequence of segments may appear (default 2: the third repetition
	// is rejected, as Heritrix's PathologicalPathDecideRule).
	MaxRepetitions int
	// MaxSegmentOccurrences is how many times one segment may occur
	// anywhere in a path (default 3).
	MaxSegmentOccurrences int
	// MaxRepeatingPaths is how many distinct paths of a host that repeat
	// a non-numeric segment may be made of one set of segments (default
	// 2; the query is not part of the path, so /docs/docs/?page=3 is the
	// path /docs/docs/). Relative links that nest a directory into itself
	// (/loop/a/b/a/…) branch faster than the limits above can stop them.
	MaxRepeatingPaths int

	// YearsAhead rejects dates more than this many years after now
	// (default 2). RuleCalendar says what counts as a date.
	YearsAhead int
	// YearsBehind rejects calendar pages (a path that ends in a date, or
	// a date in the query) more than this many years before now
	// (default 30). Dated articles (/1999/05/01/title) are never
	// rejected for age: newspaper archives are real.
	YearsBehind int
	// MaxCalendarSteps is how many distinct dates of one URL shape may be
	// reached from a page of the same shape with another date, that is,
	// how far a walk through previous/next links may go (default 6; see
	// RuleCalendar for walks through bare dates).
	MaxCalendarSteps int

	// SessionParams adds names to the built-in list of session-id
	// parameters (jsessionid, phpsessid, aspsessionid…, sessionid,
	// session_id, sessid, sess_id, cfid, cftoken, zenid, oscsid; sid,
	// session and sess only when the value looks random). Matching is
	// case-insensitive.
	SessionParams []string
	// MinTokenLength is the length from which a query value made of hex
	// digits, or of base64 characters mixing upper case, lower case and
	// digits, counts as a session token (default 32: an MD5 in hex).
	MinTokenLength int
	// MaxParamValues is how many distinct values a query parameter may
	// take while the rest of the URL stays the same, when the values are
	// volatile: mixing letters and digits, or numbers of ten digits or
	// more, such as timestamps (default 8). Values from a vocabulary
	// (colours, sizes) and small numbers (pages, ids) are not limited.
	MaxParamValues int
	// MaxParamGrowth is how many parts (words or list items) a parameter
	// may gain through a chain of links, each page linking to its own URL
	// with the value extended, as search refinements do (q=a → q=a+b →
	// q=a+b+c; default 2). A faceted filter that appends one facet per
	// link is limited the same way: a chain that adds more than
	// MaxParamGrowth facets to one parameter is stopped, so raise it for
	// sites whose filters go deeper.
	MaxParamGrowth int

	// HostBudget is the number of distinct URLs accepted per host
	// (default 100000).
	HostBudget int
	// PatternBudget is the number of distinct URLs accepted per path
	// pattern of a host, where the pattern folds digit runs to {n} and
	// hexadecimal identifiers to {id}: /item/{n}?color=red (default
	// 10000).
	PatternBudget int
	// DomainHostBudget is the number of hosts accepted under one
	// registrable domain, per golang.org/x/net/publicsuffix (default
	// 1000: the Wikipedias use about 700).
	DomainHostBudget int
	// MintedHostBudget is the number of hosts accepted under one
	// registrable domain whose subdomains fold to the same pattern
	// (u{n}.example.com, {id}.example.com; default 8).
	MintedHostBudget int
	// Trusted raises (or lowers) the budgets of particular hosts. Keys
	// are hosts as in the URL ("www.example.com", "example.com:8080") or
	// registrable domains ("example.com"), which apply to every host
	// under them that has no entry of its own.
	Trusted map[string]Budgets

	// ContentRepeats is how many distinct URLs of one pattern (the path
	// with digits folded and its last segment a wildcard, plus the query's
	// parameter names) must serve the same page (fingerprints within
	// ContentDistance and the same links) or identical text (the same
	// fingerprint), making up at least half of the pattern's reports,
	// before the pattern is stopped (default 5).
	ContentRepeats int
	// HostContentRepeats is the same for a whole host, counting only a
	// group that spans more than one pattern, so that a run of soft 404s
	// stops their pattern, not the site (default 5).
	HostContentRepeats int
	// ContentDistance is the largest Hamming distance between two 64-bit
	// SimHash fingerprints of pages with the same links that still counts
	// as the same page (default 3, as Manku, Jain and Das Sarma, WWW
	// 2007).
	ContentDistance int

	// MaxHosts bounds the hosts (and, separately, the registrable
	// domains) whose learned state is kept (default 10000).
	MaxHosts int
	// MaxTrackedURLs bounds the URL keys kept for budgets over all hosts
	// (default 2000000, about 32 MB); the least recently used hosts are
	// forgotten first. A single host may exceed it up to its own budget.
	// A host without a host budget keeps at most MaxTrackedURLs keys and
	// counts the URLs it accepts after that without remembering them, as
	// with DistinctCandidates, so that its pattern budgets still hold.
	MaxTrackedURLs int

	// DistinctCandidates promises that the caller judges each URL at most
	// once and reports each fetched URL to Observe at most once (it keeps a
	// seen set of its own, as a crawler does). The detector then counts
	// accepted URLs and content reports instead of remembering a key per
	// URL, so its memory does not grow with the URLs judged; MaxTrackedURLs
	// no longer applies. A URL judged twice anyway counts twice against
	// the budgets, and a URL that is accepted once is not accepted again
	// by memory of it: the rules are applied to it again.
	DistinctCandidates bool
}

// Default values of Config fields.
const (
	DefaultMaxURLLength          = 2000
	DefaultMaxPathDepth          = 20
	DefaultMaxRepetitions        = 2
	DefaultMaxSegmentOccurrences = 3
	DefaultMaxRepeatingPaths     = 2
	DefaultYearsAhead            = 2
	DefaultYearsBehind           = 30
	DefaultMaxCalendarSteps      = 6
	DefaultMinTokenLength        = 32
	DefaultMaxParamValues        = 8
	DefaultMaxParamGrowth        = 2
	DefaultHostBudget            = 100_000
	DefaultPatternBudget         = 10_000
	DefaultDomainHostBudget      = 1000
	DefaultMintedHostBudget      = 8
	DefaultContentRepeats        = 5
	DefaultHostContentRepeats    = 5
	DefaultContentDistance       = 3
	DefaultMaxHosts              = 10_000
	DefaultMaxTrackedURLs        = 2_000_000
)

// pick returns v, or def when v is zero, or -1 (off) when v is negative.
func pick(v, def int) int {
	switch {
	case v == 0:
		return def
	case v < 0:
		return -1
	}
	return v
}

// settings is a Config with defaults resolved: -1 means off.
type settings struct {
	maxURLLength, maxPathDepth, maxHops               int
	maxRepetitions, maxOccurrences, maxRepeatingPaths int
	yearsAhead, yearsBehind, maxCalendarSteps         int
	minTokenLength, maxParamValues, maxParamGrowth    int
	budgets                                           Budgets
	contentRepeats, hostRepeats, contentDist          int
	maxHosts, maxTrackedURLs                          int
	distinct                                          bool
	sessionParams                                     []string
	trusted                                           map[string]Budgets
}

func newSettings(c Config) settings {
	s := settings{
		maxURLLength:      pick(c.MaxURLLength, DefaultMaxURLLength),
		maxPathDepth:      pick(c.MaxPathDepth, DefaultMaxPathDepth),
		maxHops:           pick(c.MaxHops, -1),
		maxRepetitions:    pick(c.MaxRepetitions, DefaultMaxRepetitions),
		maxOccurrences:    pick(c.MaxSegmentOccurrences, DefaultMaxSegmentOccurrences),
		maxRepeatingPaths: pick(c.MaxRepeatingPaths, DefaultMaxRepeatingPaths),
		yearsAhead:        pick(c.YearsAhead, DefaultYearsAhead),
		yearsBehind:       pick(c.YearsBehind, DefaultYearsBehind),
		maxCalendarSteps:  pick(c.MaxCalendarSteps, DefaultMaxCalendarSteps),
		minTokenLength:    pick(c.MinTokenLength, DefaultMinTokenLength),
		maxParamValues:    pick(c.MaxParamValues, DefaultMaxParamValues),
		maxParamGrowth:    pick(c.MaxParamGrowth, DefaultMaxParamGrowth),
		budgets: Budgets{
			Host:        pick(c.HostBudget, DefaultHostBudget),
			Pattern:     pick(c.PatternBudget, DefaultPatternBudget),
			DomainHosts: pick(c.DomainHostBudget, DefaultDomainHostBudget),
			MintedHosts: pick(c.MintedHostBudget, DefaultMintedHostBudget),
		},
		contentRepeats: pick(c.ContentRepeats, DefaultContentRepeats),
		hostRepeats:    pick(c.HostContentRepeats, DefaultHostContentRepeats),
		contentDist:    pick(c.ContentDistance, DefaultContentDistance),
		maxHosts:       pick(c.MaxHosts, DefaultMaxHosts),
		maxTrackedURLs: pick(c.MaxTrackedURLs, DefaultMaxTrackedURLs),
		distinct:       c.DistinctCandidates,
	}
	if s.maxHosts < 1 {
		s.maxHosts = DefaultMaxHosts // state cannot be switched off, only bounded
	}
	if s.maxTrackedURLs < 1 {
		s.maxTrackedURLs = DefaultMaxTrackedURLs
	}
	if s.contentDist > 64 {
		s.contentDist = 64
	}
	for _, p := range c.SessionParams {
		s.sessionParams = append(s.sessionParams, strings.ToLower(p))
	}
	if len(c.Trusted) > 0 {
		s.trusted = make(map[string]Budgets, len(c.Trusted))
		for k, v := range c.Trusted {
			s.trusted[k] = v
		}
	}
	return s
}

// budgetsFor resolves the budgets of host (under registrable domain dom):
// its own Trusted entry, else its domain's, else the defaults.
func (s *settings) budgetsFor(host, dom string) Budgets {
	b, ok := s.trusted[host]
	if !ok && dom != "" {
		b, ok = s.trusted[dom]
	}
	if !ok {
		return s.budgets
	}
	return Budgets{
		Host:        pick(b.Host, s.budgets.Host),
		Pattern:     pick(b.Pattern, s.budgets.Pattern),
		DomainHosts: pick(b.DomainHosts, s.budgets.DomainHosts),
		MintedHosts: pick(b.MintedHosts, s.budgets.MintedHosts),
	}
}

// Detector judges candidate URLs. Create one with New; it is safe for
// concurrent use.
type Detector struct {
	cfg     settings
	hosts   [numShards]hostShard
	domains [numShards]domainShard
	// changes moves whenever the learning may have changed (Changes).
	changes atomic.Uint64
}

// Changes is a counter that moves whenever the detector's learning may
// have changed (a URL admitted, a page observed, a Merge or Restore), so
// that a caller that saves Snapshots can skip encoding unchanged learning.
// It may move without a change; it never stays put across one.
func (d *Detector) Changes() uint64 { return d.changes.Load() }

// New returns a Detector configured by cfg (see Config for the defaults).
func New(cfg Config) *Detector {
	d := &Detector{cfg: newSettings(cfg)}
	perShard := (d.cfg.maxHosts + numShards - 1) / numShards
	urlsPerShard := (d.cfg.maxTrackedURLs + numShards - 1) / numShards
	for i := range d.hosts {
		d.hosts[i].init(perShard, urlsPerShard)
		d.domains[i].init(perShard)
	}
	return d
}

// Judge judges c as of the current time. See JudgeAt.
func (d *Detector) Judge(c Candidate) Verdict { return d.JudgeAt(time.Now(), c) }

// JudgeAt judges c as of now, which the calendar rule measures dates
// against. An accepted URL is counted against its host's budgets (once,
// however often it is judged again) and its parameters and dates are
// remembered for the learned rules; a rejected URL is not counted.
func (d *Detector) JudgeAt(now time.Time, c Candidate) Verdict {
	var u parsedURL
	var buf segBuf
	if v := d.parse(&u, c.URL, &buf); v.Rejected() {
		return v
	}
	if u.segs == nil {
		u.segs = buf[:u.nsegs] // set here: a store through a pointer would move buf to the heap
	}
	var ds dateScan
	if v := d.stateless(&u, &ds, now, c.Depth); v.Rejected() {
		return v
	}
	return d.learned(&u, &ds, c.Source, now)
}

// Page is what a crawler reports to ObservePage about a fetched page.
type Page struct {
	// URL is the fetched URL, in the form given to JudgeAt.
	URL string
	// Fingerprint is the 64-bit SimHash of the page's text.
	Fingerprint uint64
	// Links are the page's outlinks as found, absolute and normalized
	// as for JudgeAt, before any are judged or dropped as seen. Nil
	// means the page has no links.
	Links []string
}

// ObservePage reports a fetched page, once per URL. Pages of one pattern
// (or host) that serve the same page again and again are a soft 404, a
// mirror or a maze, and the pattern (or host) is stopped. The links are the
// evidence that tells such a page from distinct pages that share a
// template: those have near fingerprints too, but link elsewhere.
//
// When the page's pattern or host is stopped, now or before, ObservePage
// returns the content-repetition verdict that JudgeAt gives from then on to
// its new URLs (First is set on the report that established it); the
// caller should then not follow the page's links and may label them with
// the verdict.
func (d *Detector) ObservePage(p Page) Verdict {
	var u parsedURL
	var buf segBuf
	if v := d.parse(&u, p.URL, &buf); v.Rejected() {
		return v
	}
	if u.segs == nil {
		u.segs = buf[:u.nsegs] // set here: a store through a pointer would move buf to the heap
	}
	return d.observe(&u, p.Fingerprint, linkHash(&u, p.Links), true)
}

// Observe reports a fetched page whose links the caller does not know, as
// ObservePage. Without links only identical fingerprints count as
// repetition, so that distinct pages of one template are never taken for a
// trap; prefer ObservePage, which also stops pages that differ in a few
// bits (a soft 404 that echoes the URL).
func (d *Detector) Observe(rawURL string, fp uint64) Verdict {
	var u parsedURL
	var buf segBuf
	if v := d.parse(&u, rawURL, &buf); v.Rejected() {
		return v
	}
	if u.segs == nil {
		u.segs = buf[:u.nsegs] // set here: a store through a pointer would move buf to the heap
	}
	return d.observe(&u, fp, 0, false)
}

// itoa is strconv.Itoa, short for the reason builders.
func itoa(n int) string { return strconv.Itoa(n) }
