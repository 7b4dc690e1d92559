package dashboard

import (
	"container/list"
	"sort"
	"sync"
	"time"
)

// URLReport is the URL analysis view.
type URLReport struct {
	// URL is the URL as asked; Normalized its normalized form; Host its
	// host.
	URL        string `json:"url"`
	Normalized string `json:"normalized"`
	Host       string `json:"host"`
	// State is where the URL stands: "unknown", "seen" (accepted, not
	// fetched yet), "leased", "fetched", "retrying", "failed",
	// "blocked" (by robots.txt) or "rejected" (as a trap), as far as the
	// analyzer knows.
	State string `json:"state"`
	// Fetches are the most recent fetches, oldest first.
	Fetches []FetchRecord `json:"fetches"`
	// Robots is the robots.txt decision for the URL, when known.
	Robots *RobotsDecision `json:"robots,omitempty"`
	// CrawlDelayMS is the delay between fetches from the host that
	// robots.txt asks for, in milliseconds (0: none).
	CrawlDelayMS int64 `json:"crawl_delay_ms"`
	// InLinks counts links to the URL seen while it was remembered;
	// OutLinks the links found on it by its latest fetch.
	InLinks  int64 `json:"in_links"`
	OutLinks int64 `json:"out_links"`
	// TrapReason is the trap rule that rejected the URL, if one did.
	TrapReason string `json:"trap_reason,omitempty"`
}

// RobotsDecision is a robots.txt answer for one URL.
type RobotsDecision struct {
	Allowed bool `json:"allowed"`
	// Reason says why ("rule", "no-rule", "unavailable", ...); Rule is
	// the deciding rule ("Disallow: /private/ (line 3)") when a rule
	// decided.
	Reason string `json:"reason"`
	Rule   string `json:"rule,omitempty"`
	// Error is set when robots.txt could not be consulted.
	Error string `json:"error,omitempty"`
}

// FetchRecord is one fetch of a URL.
type FetchRecord struct {
	URL  string    `json:"url"`
	Host string    `json:"host"`
	Time time.Time `json:"time"`
	// Status is the HTTP status, 0 when no response arrived.
	Status int `json:"status"`
	// DurationMS is how long the fetch took, in milliseconds.
	DurationMS  int64  `json:"duration_ms"`
	ContentHash string `json:"content_hash,omitempty"`
	// Error describes a failure; Category is its error category
	// ("network", "timeout", "http_4xx", "http_5xx") or "" on success.
	Error    string `json:"error,omitempty"`
	Category string `json:"category,omitempty"`
	// Outcome is what became of the URL: "done", "retry" or "failed".
	Outcome string `json:"outcome,omitempty"`
}

// HostReport is the host analysis view.
type HostReport struct {
	Host string `json:"host"`
	// Discovered counts URLs of the host accepted into the crawl; Fetched
	// its fetches; Blocked its URLs refused by robots.txt; Errors its
	// failed fetches.
	Discovered int64 `json:"discovered"`
	Fetched    int64 `json:"fetched"`
	Blocked    int64 `json:"blocked"`
	Errors     int64 `json:"errors"`
	// AvgResponseMS is the mean fetch duration; ErrorRate is
	// Errors/Fetched.
	AvgResponseMS float64 `json:"avg_response_ms"`
	ErrorRate     float64 `json:"error_rate"`
	// Robots is the host's robots.txt state, when known.
	Robots *RobotsState `json:"robots,omitempty"`
	// BlockedUntil is set while the host may not be contacted.
	BlockedUntil time.Time `json:"blocked_until"`
}

// RobotsState describes a host's robots.txt.
type RobotsState struct {
	// Source is "file", "unavailable" (4xx: all allowed) or "unreachable"
	// (all disallowed).
	Source    string    `json:"source"`
	URL       string    `json:"url,omitempty"`
	Status    int       `json:"status"`
	Error     string    `json:"error,omitempty"`
	FetchedAt time.Time `json:"fetched_at"`
	Expires   time.Time `json:"expires"`
	// CrawlDelayMS is the Crawl-delay for the crawler's agent.
	CrawlDelayMS int64 `json:"crawl_delay_ms"`
	// BlockedPaths are the Disallow rules that apply to the crawler's
	// agent.
	BlockedPaths []string `json:"blocked_paths"`
	Sitemaps     []string `json:"sitemaps,omitempty"`
}

// HistoryConfig bounds a History.
type HistoryConfig struct {
	// MaxURLs is how many URLs are remembered; the least recently touched
	// are forgotten first. Zero means 100000.
	MaxURLs int
	// FetchesPerURL is how many fetches of one URL are kept. Zero means 8.
	FetchesPerURL int
	// MaxHosts is how many hosts are remembered. Zero means 10000.
	MaxHosts int
}

// History is a bounded in-memory record of what happened to URLs and hosts:
// fetches, links, robots blocks and trap rejections. Memory is bounded by
// HistoryConfig: URLs and hosts are kept in least-recently-used order, so a
// long crawl keeps its recent past. Safe for concurrent use.
type History struct {
	cfg HistoryConfig

	mu    sync.Mutex
	urls  map[string]*list.Element // of *urlEntry
	ulru  *list.List
	hosts map[string]*list.Element // of *hostEntry
	hlru  *list.List
}

type urlEntry struct {
	url     string
	fetches []FetchRecord // ring of at most FetchesPerURL
	next    int
	in, out int64
	state   string
	trap    string
}

type hostEntry struct {
	host                              string
	discovered, fetched, blocked, err int64
	timed                             int64
	totalDur                          time.Duration
	last                              time.Time
	// Fetches in the current and the previous minute, for "recent
	// activity" without keeping every timestamp.
	minute    int64
	cur, prev int64
}

// NewHistory returns an empty History.
func NewHistory(cfg HistoryConfig) *History {
	if cfg.MaxURLs <= 0 {
		cfg.MaxURLs = 100000
	}
	if cfg.FetchesPerURL <= 0 {
		cfg.FetchesPerURL = 8
	}
	if cfg.MaxHosts <= 0 {
		cfg.MaxHosts = 10000
	}
	return &History{
		cfg:   cfg,
		urls:  map[string]*list.Element{},
		ulru:  list.New(),
		hosts: map[string]*list.Element{},
		hlru:  list.New(),
	}
}

// url returns the entry of u, creating it. Requires h.mu.
func (h *History) url(u string) *urlEntry {
	if el, ok := h.urls[u]; ok {
		h.ulru.MoveToFront(el)
		return el.Value.(*urlEntry)
	}
	e := &urlEntry{url: u}
	h.urls[u] = h.ulru.PushFront(e)
	if h.ulru.Len() > h.cfg.MaxURLs {
		old := h.ulru.Back()
		h.ulru.Remove(old)
		delete(h.urls, old.Value.(*urlEntry).url)
	}
	return e
}

// host returns the entry of host, creating it. Requires h.mu.
func (h *History) host(host string) *hostEntry {
	if el, ok := h.hosts[host]; ok {
		h.hlru.MoveToFront(el)
		return el.Value.(*hostEntry)
	}
	e := &hostEntry{host: host}
	h.hosts[host] = h.hlru.PushFront(e)
	if h.hlru.Len() > h.cfg.MaxHosts {
		old := h.hlru.Back()
		h.hlru.Remove(old)
		delete(h.hosts, old.Value.(*hostEntry).host)
	}
	return e
}

// Accepted records that u, a URL of host, was accepted into the crawl.
func (h *History) Accepted(u, host string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.url(u).state = "seen"
	h.host(host).discovered++
}

// Leased records that u was handed to a worker.
func (h *History) Leased(u string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.url(u).state = "leased"
}

// AddInLinks records one more link to each of to (normalized URLs).
func (h *History) AddInLinks(to ...string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, t := range to {
		h.url(t).in++
	}
}

// SetOutLinks records that the latest fetch of u found n links.
func (h *History) SetOutLinks(u string, n int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.url(u).out = int64(n)
}

// Fetched records a fetch. r.Outcome sets the URL's state: "done" makes it
// "fetched", "retry" "retrying" and "failed" "failed".
func (h *History) Fetched(r FetchRecord) {
	h.mu.Lock()
	defer h.mu.Unlock()
	e := h.url(r.URL)
	if len(e.fetches) < h.cfg.FetchesPerURL {
		e.fetches = append(e.fetches, r)
	} else {
		e.fetches[e.next] = r
		e.next = (e.next + 1) % len(e.fetches)
	}
	switch r.Outcome {
	case "done":
		e.state = "fetched"
	case "retry":
		e.state = "retrying"
	case "failed":
		e.state = "failed"
	}
	he := h.host(r.Host)
	he.fetched++
	if r.Category != "" {
		he.err++
	}
	if r.DurationMS > 0 {
		he.timed++
		he.totalDur += time.Duration(r.DurationMS) * time.Millisecond
	}
	if r.Time.After(he.last) {
		he.last = r.Time
	}
	m := r.Time.Unix() / 60
	switch {
	case m == he.minute:
		he.cur++
	case m == he.minute+1:
		he.prev, he.cur, he.minute = he.cur, 1, m
	case m > he.minute:
		he.prev, he.cur, he.minute = 0, 1, m
	case m == he.minute-1:
		he.prev++ // a late report of the previous minute
	default:
		// An older report is not recent activity.
	}
}

// Blocked records that robots.txt refused u, a URL of host.
func (h *History) Blocked(u, host string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.url(u).state = "blocked"
	h.host(host).blocked++
}

// Rejected records that u was rejected as a spider trap, and why.
func (h *History) Rejected(u, reason string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	e := h.url(u)
	e.state = "rejected"
	e.trap = reason
}

// URL returns what the History knows of u (a normalized URL). The report's
// Robots, CrawlDelayMS, Normalized and Host fields are left for the caller.
func (h *History) URL(u string) (URLReport, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	el, ok := h.urls[u]
	if !ok {
		return URLReport{URL: u, State: "unknown", Fetches: []FetchRecord{}}, false
	}
	e := el.Value.(*urlEntry)
	rep := URLReport{URL: u, State: e.state, InLinks: e.in, OutLinks: e.out, TrapReason: e.trap}
	if rep.State == "" {
		rep.State = "unknown"
	}
	rep.Fetches = make([]FetchRecord, 0, len(e.fetches))
	rep.Fetches = append(rep.Fetches, e.fetches[e.next:]...)
	rep.Fetches = append(rep.Fetches, e.fetches[:e.next]...)
	return rep, true
}

// Host returns what the History knows of host. Robots and BlockedUntil are
// left for the caller.
func (h *History) Host(host string) (HostReport, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	el, ok := h.hosts[host]
	if !ok {
		return HostReport{Host: host}, false
	}
	e := el.Value.(*hostEntry)
	rep := HostReport{Host: host, Discovered: e.discovered, Fetched: e.fetched, Blocked: e.blocked, Errors: e.err}
	if e.timed > 0 {
		rep.AvgResponseMS = float64(e.totalDur.Microseconds()) / 1000 / float64(e.timed)
	}
	if e.fetched > 0 {
		rep.ErrorRate = float64(e.err) / float64(e.fetched)
	}
	return rep, true
}

// TopHosts returns up to n hosts ordered by recent activity at now (fetches
// in the current and the previous minute), then by all fetches, then by
// name. It costs one pass over the remembered hosts.
func (h *History) TopHosts(now time.Time, n int) []HostActivity {
	h.mu.Lock()
	m := now.Unix() / 60
	out := make([]HostActivity, 0, len(h.hosts))
	for _, el := range h.hosts {
		e := el.Value.(*hostEntry)
		if e.fetched == 0 {
			continue
		}
		var recent int64
		switch e.minute {
		case m:
			recent = e.cur + e.prev
		case m - 1:
			recent = e.cur
		}
		out = append(out, HostActivity{Host: e.host, Recent: recent, Fetched: e.fetched, Errors: e.err, LastFetch: e.last})
	}
	h.mu.Unlock()
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Recent != b.Recent {
			return a.Recent > b.Recent
		}
		if a.Fetched != b.Fetched {
			return a.Fetched > b.Fetched
		}
		return a.Host < b.Host
	})
	if len(out) > n {
		out = out[:max(n, 0)]
	}
	return out
}

// Len reports how many URLs and hosts are remembered.
func (h *History) Len() (urls, hosts int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.urls), len(h.hosts)
}
