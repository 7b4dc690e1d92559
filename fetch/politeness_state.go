package fetch

import "time"

// Politeness state survives a restart: what the model knows of a host that
// a new process must not forget (its next contact time, a Retry-After or
// backoff block, its Crawl-delay) is exported for the caller to store with
// the rest of the crawl's state, and imported by the next process, which
// also counts every host as contacted at its start (Restarted), so that a
// request made just before a crash is honoured even if its record was not
// saved.

// HostState is what a Politeness knows of one host that a restart must not
// forget. Times are wall-clock times.
type HostState struct {
	Host string `json:"host"`
	// LastEnd is when the latest request to the host ended; Adaptive the
	// delay its duration asked for.
	LastEnd  time.Time     `json:"last_end,omitzero"`
	Adaptive time.Duration `json:"adaptive,omitempty"`
	// CrawlDelay is the host's robots.txt Crawl-delay, as set.
	CrawlDelay time.Duration `json:"crawl_delay,omitempty"`
	// BlockedUntil is the end of a Retry-After, backoff or BlockUntil.
	BlockedUntil time.Time `json:"blocked_until,omitzero"`
	// Backoffs counts host-wide backoffs not yet forgiven; BackoffEnd is
	// the end of the latest.
	Backoffs   int       `json:"backoffs,omitempty"`
	BackoffEnd time.Time `json:"backoff_end,omitzero"`
}

// Export returns the state of the hosts whose state still matters at now:
// blocked or backing off, spaced by a Crawl-delay, or not yet ready. It
// holds at most one entry per host the model keeps (PolitenessConfig
// MaxHosts bounds them).
func (p *Politeness) Export(now time.Time) []HostState {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []HostState
	for host, h := range p.hosts {
		if !h.blockedUntil.After(now) && h.crawlDelay == 0 && h.backoffs == 0 && !p.readyLocked(h, now).After(now) {
			continue
		}
		out = append(out, HostState{Host: host, LastEnd: h.lastEnd, Adaptive: h.adaptive, CrawlDelay: h.crawlDelay,
			BlockedUntil: h.blockedUntil, Backoffs: h.backoffs, BackoffEnd: h.backoffEnd})
	}
	return out
}

// Import merges states exported by an earlier process. It never makes a
// host contactable sooner than the model already holds it: times only move
// later, and a Crawl-delay already set is kept. A request cannot have
// ended after now, so a LastEnd after now (a damaged record, or a clock
// set back) counts as now: the host waits its delay from now, not until a
// date that may be years away. Blocks (BlockedUntil) are kept as they are.
func (p *Politeness) Import(states []HostState, now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, s := range states {
		h := p.hostLocked(s.Host, now)
		if s.LastEnd.After(now) {
			s.LastEnd = now
		}
		h.lastEnd = later(h.lastEnd, s.LastEnd)
		h.adaptive = max(h.adaptive, min(s.Adaptive, p.cfg.MaxAdaptiveDelay))
		if h.crawlDelay == 0 {
			h.crawlDelay = min(max(s.CrawlDelay, 0), p.cfg.MaxCrawlDelay)
		}
		h.blockedUntil = later(h.blockedUntil, s.BlockedUntil)
		h.backoffs = max(h.backoffs, s.Backoffs)
		h.backoffEnd = later(h.backoffEnd, s.BackoffEnd)
		p.updateLimiterLocked(h, now)
	}
}

// Restarted counts every host, known or not, as contacted at at: no host
// is contacted before at plus its delay. A process that resumes a crawl
// calls it once at its start, so that the requests of the process before
// it, whose records may have been lost in a crash, are spaced too.
func (p *Politeness) Restarted(at time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.restarted = later(p.restarted, at)
}
