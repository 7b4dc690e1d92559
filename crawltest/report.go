package crawltest

import (
	"maps"
	"net/http"
	"sync"
	"time"
)

// Report is a snapshot of the server's accounting of every request it has
// answered since the web started (or since ResetReport). It is computed on
// the server side, so it holds whatever a crawler claims.
//
// Robots violations are judged per request against the rules the host's
// robots.txt gives the product token of that request's User-Agent (RFC
// 9309 §2.2.1). A request violates them if the rules disallow either its
// request target as sent (path and query, with percent-encoded unreserved
// characters decoded, RFC 9309 §2.2.2; so "Allow: /private/*.html$" does
// not cover /private/x.html?utm_source=feed) or the canonical target of the
// URL it names (so /docs/../private/x.html is caught too). Politeness is judged per virtual host, with the time from
// Config.Now. A request is in flight from its arrival until its response
// is ready to be written (after Config.Latency); it ends at that moment. A
// request that arrives while MaxPerHost requests to its host are in flight
// is a concurrency violation; a request that arrives, with none in flight,
// sooner than the host's required gap (the larger of Config.MinGap and the
// Crawl-delay its robots.txt asks of the request's agent) after the
// previous request ended is a spacing violation. Requests
// for /robots.txt and to HostileHost are left out of the robots,
// politeness and duplicate accounting.
type Report struct {
	// Requests counts every request, robots.txt and hostile ones included.
	Requests int
	// PerURL counts requests by the URL as requested: "http://", the Host
	// header and the request target, unnormalized.
	PerURL map[string]int
	// PerPage counts requests for pages and trap pages, by canonical URL.
	PerPage map[string]int
	// RobotsFetches counts /robots.txt requests per host name.
	RobotsFetches map[string]int
	// Hosts holds the per-host accounting of every host that was
	// requested, by host name.
	Hosts map[string]HostReport

	// RobotsViolations counts requests for URLs the host's robots.txt
	// disallows (every request to a host whose robots.txt is unavailable).
	RobotsViolations int
	// RobotsViolationURLs lists the first 100 of them.
	RobotsViolationURLs []string
	// BeforeRobots counts requests to a host before its robots.txt was
	// requested even once.
	BeforeRobots int
	// SpacingViolations and ConcurrencyViolations count politeness
	// violations (see the type's documentation).
	SpacingViolations     int
	ConcurrencyViolations int
	// ExactRepeats counts requests for a page under a URL (as requested)
	// that was requested before.
	ExactRepeats int
	// SpellingRepeats counts requests for a page already requested under
	// another spelling that folds to the same canonical URL.
	SpellingRepeats int
	// ContentRepeats counts requests for a page with another canonical
	// URL whose content, byte for byte, was already served (an exact
	// duplicate such as /index.html or a print version).
	ContentRepeats int
	// TrapFetches counts requests inside spider traps.
	TrapFetches int
	// NotFound counts requests answered 404 on the page hosts, other than
	// for robots.txt and inside trap regions (see TrapFetches).
	NotFound int
}

// PolitenessViolations returns SpacingViolations + ConcurrencyViolations.
func (r Report) PolitenessViolations() int { return r.SpacingViolations + r.ConcurrencyViolations }

// DuplicateFetches returns ExactRepeats + SpellingRepeats: requests for a
// canonical URL beyond the first.
func (r Report) DuplicateFetches() int { return r.ExactRepeats + r.SpellingRepeats }

// HostReport is the accounting of one host.
type HostReport struct {
	Requests              int // all requests, robots.txt included
	RobotsFetches         int
	RobotsViolations      int
	BeforeRobots          int
	SpacingViolations     int
	ConcurrencyViolations int
	TrapFetches           int
	// MaxInFlight is the most requests (other than for robots.txt) that
	// were in flight to the host at once.
	MaxInFlight int
	// Gaps is the number of measured gaps between one request's end and
	// the next one's start; MinGap is the shortest of them.
	Gaps   int
	MinGap time.Duration
}

// hostState is the live accounting of one host.
type hostState struct {
	HostReport
	group *groupState
}

// groupState is the live politeness accounting of a politeness group
// (Config.PolitenessGroup; by default one host).
type groupState struct {
	inFlight int
	lastEnd  time.Time
	ended    bool // lastEnd is set
}

// accounting records requests; its methods are safe for concurrent use.
type accounting struct {
	web *Web

	mu      sync.Mutex
	rep     Report
	hosts   map[int]*hostState
	groups  map[string]*groupState
	content map[[2]int]bool // content (host, page) already served
}

func newAccounting(w *Web) *accounting {
	a := &accounting{web: w}
	a.reset()
	return a
}

// reset clears the counts; it requires a.mu to be held or a to be unshared.
func (a *accounting) reset() {
	a.rep = Report{
		PerURL:        make(map[string]int),
		PerPage:       make(map[string]int),
		RobotsFetches: make(map[string]int),
	}
	a.hosts = make(map[int]*hostState)
	a.groups = make(map[string]*groupState)
	a.content = make(map[[2]int]bool)
}

const maxViolationURLs = 100

// hostile records a request to HostileHost.
func (a *accounting) hostile(r *http.Request) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.rep.Requests++
	a.rep.PerURL["http://"+r.Host+r.RequestURI]++
}

// begin records the start of a request to host h; the returned function
// records its end and must be called once the response is written.
func (a *accounting) begin(h int, r *http.Request, res resolution) (end func()) {
	g := a.web.gen
	token := productToken(r.Header.Get("User-Agent"))

	a.mu.Lock()
	defer a.mu.Unlock()
	// The clock is read under the lock, so that arrivals and ends are
	// accounted in the order of their times: read before it, a request's
	// arrival could be accounted after the end of a request it overlapped.
	now := a.web.cfg.Now()
	hs := a.hosts[h]
	if hs == nil {
		name := HostName(h)
		if f := a.web.cfg.PolitenessGroup; f != nil {
			name = f(name)
		}
		gs := a.groups[name]
		if gs == nil {
			gs = &groupState{}
			a.groups[name] = gs
		}
		hs = &hostState{group: gs}
		a.hosts[h] = hs
	}
	gs := hs.group
	a.rep.Requests++
	hs.Requests++
	a.rep.PerURL[res.spelling]++
	if res.kind == resRobots {
		a.rep.RobotsFetches[HostName(h)]++
		hs.RobotsFetches++
		return func() {}
	}
	if hs.RobotsFetches == 0 {
		a.rep.BeforeRobots++
		hs.BeforeRobots++
	}
	// The rules are matched against the target as sent (RFC 9309
	// §2.2.2) and against the canonical target of what it names, so that
	// neither a spelling the rules disallow nor a disallowed page under
	// another spelling escapes.
	if res.canonical != "" && (!g.allowed(h, token, res.target) || res.sent != res.target && !g.allowed(h, token, res.sent)) {
		a.rep.RobotsViolations++
		hs.RobotsViolations++
		if len(a.rep.RobotsViolationURLs) < maxViolationURLs {
			a.rep.RobotsViolationURLs = append(a.rep.RobotsViolationURLs, res.spelling)
		}
	}

	// Politeness.
	if gs.inFlight >= a.web.cfg.MaxPerHost {
		a.rep.ConcurrencyViolations++
		hs.ConcurrencyViolations++
	} else if gs.inFlight == 0 && gs.ended {
		gap := now.Sub(gs.lastEnd)
		if hs.Gaps == 0 || gap < hs.MinGap {
			hs.MinGap = gap
		}
		hs.Gaps++
		need := max(a.web.cfg.MinGap, g.crawlDelay(h, token))
		if gap < need {
			a.rep.SpacingViolations++
			hs.SpacingViolations++
		}
	}
	gs.inFlight++
	hs.MaxInFlight = max(hs.MaxInFlight, gs.inFlight)

	// Duplicates and traps.
	switch res.kind {
	case resNotFound:
		a.rep.NotFound++
	case resTrap:
		a.rep.TrapFetches++
		hs.TrapFetches++
		a.countPage(res, false)
	case resPage:
		key := [2]int{h, res.nd.n}
		a.countPage(res, a.content[key])
		a.content[key] = true
	}
	return func() {
		a.mu.Lock()
		defer a.mu.Unlock()
		now := a.web.cfg.Now()
		if a.hosts[h] != hs {
			return // the report was reset meanwhile
		}
		gs.inFlight--
		if !gs.ended || now.After(gs.lastEnd) {
			gs.lastEnd, gs.ended = now, true
		}
	}
}

// countPage counts a request for an existing page; contentSeen says whether
// the page's content was served before, under any URL. It requires a.mu.
func (a *accounting) countPage(res resolution, contentSeen bool) {
	before := a.rep.PerPage[res.canonical]
	a.rep.PerPage[res.canonical]++
	switch {
	case before > 0 && a.rep.PerURL[res.spelling] > 1:
		a.rep.ExactRepeats++
	case before > 0:
		a.rep.SpellingRepeats++
	case contentSeen:
		a.rep.ContentRepeats++
	}
}

// Report returns a snapshot of the server-side accounting.
func (w *Web) Report() Report {
	a := w.acct
	a.mu.Lock()
	defer a.mu.Unlock()
	rep := a.rep
	rep.PerURL = maps.Clone(a.rep.PerURL)
	rep.PerPage = maps.Clone(a.rep.PerPage)
	rep.RobotsFetches = maps.Clone(a.rep.RobotsFetches)
	rep.RobotsViolationURLs = append([]string(nil), a.rep.RobotsViolationURLs...)
	rep.Hosts = make(map[string]HostReport, len(a.hosts))
	for h, hs := range a.hosts {
		rep.Hosts[HostName(h)] = hs.HostReport
	}
	return rep
}

// ResetReport clears the accounting, Report's and JSReport's, for example
// between two crawls of the same web. Requests in flight while it runs are
// not counted as ending in Report; in JSReport they still count as in
// flight, and no gap is measured across the reset.
func (w *Web) ResetReport() {
	w.acct.mu.Lock()
	w.acct.reset()
	w.acct.mu.Unlock()
	w.js.reset()
}
