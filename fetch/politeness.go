package fetch

import (
	"math"
	"math/rand/v2"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// PolitenessConfig configures a Politeness. Zero fields take the documented
// defaults; a negative duration or factor switches that rule off.
type PolitenessConfig struct {
	// Delay is the minimum time between the end of one request to a host
	// and the start of the next. Default 1 s (one request per second per
	// host, the convention most site operators expect from crawlers).
	Delay time.Duration

	// MaxConcurrent is the most requests in flight to one host. Default 1.
	// With more than one, request starts are also spaced Delay apart (a token
	// bucket of one token per Delay).
	MaxConcurrent int

	// DelayFactor, MinAdaptiveDelay and MaxAdaptiveDelay make the delay
	// adapt to the host's response time, after Heritrix's
	// DispositionProcessor (delayFactor 5, minDelayMs 3000, maxDelayMs
	// 30000): after a fetch that took d, the next may start no sooner than
	// clamp(DelayFactor × d, MinAdaptiveDelay, MaxAdaptiveDelay) after it
	// ended. Factor 5 keeps the crawler's share of a slow server to about
	// one sixth of its time. Defaults: factor 5 like Heritrix; floor 0
	// rather than Heritrix's 3 s because Delay already sets the floor (1 s,
	// the project's one-request-per-second default); ceiling 30 s like
	// Heritrix, so a server that stalls once is not shunned for minutes.
	DelayFactor                        float64
	MinAdaptiveDelay, MaxAdaptiveDelay time.Duration

	// MaxCrawlDelay caps a robots.txt Crawl-delay set with SetCrawlDelay.
	// Default 60 s: long enough to honour every common value (1–30 s),
	// short enough that one robots line cannot stall a host for hours.
	// (Heritrix honours up to 300 s.)
	MaxCrawlDelay time.Duration

	// MaxRetryAfter caps a Retry-After header. Default 1 h.
	MaxRetryAfter time.Duration

	// BackoffBase, BackoffMax and ForgiveAfter govern the exponential
	// backoff after failures (network errors, 5xx, and 429/503 without
	// Retry-After): the n-th consecutive failure blocks the host for
	// BackoffBase × 2^(n-1), capped at BackoffMax, each multiplied by a
	// random factor in [0.75, 1.25) so that hosts behind one failing
	// balancer do not all come back at once. The failure count is forgiven
	// once the host has gone ForgiveAfter past the end of its last backoff
	// without failing again. Defaults 60 s doubling to 1 h: a failing server
	// is typically overloaded or restarting, which takes tens of seconds to
	// minutes, and the cap equals MaxRetryAfter so an explicit and an
	// inferred "come back later" agree; forgiveness after 10 min of quiet.
	BackoffBase, BackoffMax, ForgiveAfter time.Duration

	// MaxHosts bounds the number of hosts whose state is kept. When it is
	// exceeded, idle hosts whose ready time has passed are forgotten (they
	// cannot be contacted too early by being forgotten, but their
	// Crawl-delay and failure count are lost). Hosts that may not be
	// forgotten yet (in flight, blocked, or in an unforgiven error
	// backoff) are kept even beyond MaxHosts; the map is then swept again
	// only once it has grown by another eighth. Default 100000.
	MaxHosts int

	// Rand returns a uniform value in [0, 1) for jitter. Default
	// math/rand/v2.Float64; tests inject a fixed value.
	Rand func() float64
}

func (c *PolitenessConfig) ensureDefaults() {
	defDur := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		} else if *d < 0 {
			*d = 0
		}
	}
	defDur(&c.Delay, time.Second)
	defDur(&c.MinAdaptiveDelay, 0)
	defDur(&c.MaxAdaptiveDelay, 30*time.Second)
	defDur(&c.MaxCrawlDelay, time.Minute)
	defDur(&c.MaxRetryAfter, time.Hour)
	defDur(&c.BackoffBase, time.Minute)
	defDur(&c.BackoffMax, time.Hour)
	defDur(&c.ForgiveAfter, 10*time.Minute)
	if c.DelayFactor == 0 {
		c.DelayFactor = 5
	} else if c.DelayFactor < 0 {
		c.DelayFactor = 0
	}
	if c.MaxConcurrent <= 0 {
		c.MaxConcurrent = 1
	}
	if c.MaxHosts <= 0 {
		c.MaxHosts = 100000
	}
	if c.Rand == nil {
		c.Rand = rand.Float64
	}
}

// Outcome is what happened to one request, as recorded by Release.
type Outcome struct {
	// Status is the HTTP status code, or 0 if no response arrived.
	Status int
	// Err is the transport error, if no response arrived. The Fetcher
	// leaves it nil when the request was abandoned because the caller's
	// context ended or the Fetcher was closed: that is not the host's
	// failure and must not start its error backoff.
	Err error
	// RetryAfter is the parsed Retry-After delay (see ParseRetryAfter);
	// HasRetryAfter says whether the response carried a valid one.
	RetryAfter    time.Duration
	HasRetryAfter bool
	// Interim marks an attempt that the caller retries at once (after its
	// own short backoff): its timing and any Retry-After are recorded, but
	// it does not count as a failure for the error backoff. The Fetcher
	// sets it on all attempts but the last of one Fetch call.
	Interim bool
}

// failed reports whether o counts as a failure for the error backoff.
func (o Outcome) failed() bool {
	return o.Err != nil || o.Status >= 500 || o.Status == 429
}

// Politeness is the per-host politeness model: it decides when each host may
// be contacted next from everything recorded about it — the end of its last
// request plus the delay (the larger of Delay, its Crawl-delay and the
// adaptive delay), the start spacing of concurrent requests, Retry-After,
// exponential backoff after failures, and explicit blocks — and it caps the
// requests in flight per host.
//
// All methods take the current time explicitly and never read a clock, so
// the model is deterministic. ReadyAt is the query a scheduler wants: a
// *Politeness satisfies the frontier's politeness interface directly. A
// fetcher brackets each request with TryAcquire and Release. A Politeness
// is safe for concurrent use.
type Politeness struct {
	cfg PolitenessConfig

	mu       sync.Mutex
	hosts    map[string]*hostState
	released map[string]chan struct{} // closed and dropped when a slot of the host frees
	// nextSweep is the table size at which the next eviction sweep runs,
	// when above MaxHosts: after a sweep that could not bring the table
	// under MaxHosts it is set one eighth above the size left, so sweeps
	// stay amortized constant per new host.
	nextSweep int
	sweeps    int // eviction sweeps run, for tests
}

type hostState struct {
	inflight     int
	lastEnd      time.Time     // end of the most recent request
	adaptive     time.Duration // from the last request's duration
	crawlDelay   time.Duration
	limiter      *rate.Limiter // start spacing; nil while MaxConcurrent is 1
	blockedUntil time.Time     // Retry-After, backoff or BlockUntil
	failures     int           // consecutive failures not yet forgiven
	backoffEnd   time.Time     // end of the latest failure backoff
}

// NewPoliteness returns a Politeness with cfg's rules.
func NewPoliteness(cfg PolitenessConfig) *Politeness {
	cfg.ensureDefaults()
	return &Politeness{cfg: cfg, hosts: make(map[string]*hostState), released: make(map[string]chan struct{})}
}

// Config returns the effective configuration, defaults filled in.
func (p *Politeness) Config() PolitenessConfig { return p.cfg }

// delayLocked is the effective gap after a request to h ends. Requires p.mu.
func (p *Politeness) delayLocked(h *hostState) time.Duration {
	return max(p.cfg.Delay, h.crawlDelay, h.adaptive)
}

// readyLocked is h's earliest permitted start time, ignoring its
// concurrency cap. Requires p.mu.
func (p *Politeness) readyLocked(h *hostState, now time.Time) time.Time {
	t := h.blockedUntil
	if !h.lastEnd.IsZero() {
		t = later(t, h.lastEnd.Add(p.delayLocked(h)))
	}
	if h.limiter != nil {
		if tok := h.limiter.TokensAt(now); tok < 1-1e-9 {
			wait := time.Duration(math.Ceil((1 - tok) / float64(h.limiter.Limit()) * 1e9))
			t = later(t, now.Add(wait))
		}
	}
	return t
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// ReadyAt returns the earliest time host may be contacted again given
// everything recorded for it; a time not after now means "now". It does not
// account for the concurrency cap (a scheduler that hands out one lease per
// host at a time needs no more). Unknown hosts are ready at once.
//
// The signature matches the frontier's Politeness interface, whose second
// parameter is named finished: it is the time of the query.
func (p *Politeness) ReadyAt(host string, now time.Time) time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	h, ok := p.hosts[host]
	if !ok {
		return now
	}
	return later(now, p.readyLocked(h, now))
}

// TryAcquire reserves a request slot for host at now. It succeeds when the
// host is ready (see ReadyAt) and fewer than MaxConcurrent requests to it
// are in flight; the caller must then call Release exactly once. Otherwise
// it returns false and the time to try again, or the zero time when the
// host is ready but all its slots are busy (try again after a Release).
func (p *Politeness) TryAcquire(host string, now time.Time) (ok bool, retryAt time.Time) {
	ok, retryAt, _ = p.tryAcquire(host, now)
	return ok, retryAt
}

// tryAcquire is TryAcquire that also returns, when the slots are full, a
// channel closed at the next Release for host.
func (p *Politeness) tryAcquire(host string, now time.Time) (bool, time.Time, <-chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	h := p.hostLocked(host, now)
	if r := p.readyLocked(h, now); r.After(now) {
		return false, r, nil
	}
	if h.inflight >= p.cfg.MaxConcurrent {
		ch, ok := p.released[host]
		if !ok {
			ch = make(chan struct{})
			p.released[host] = ch
		}
		return false, time.Time{}, ch
	}
	h.inflight++
	p.updateLimiterLocked(h, now)
	if h.limiter != nil {
		// ReserveN rather than AllowN: readyLocked tolerates float rounding
		// just below one token, and the token must be taken regardless.
		h.limiter.ReserveN(now, 1)
	}
	return true, time.Time{}, nil
}

// Release ends a request to host that TryAcquire admitted; started is when
// it began and now when it ended. It records the outcome: the end time and
// duration (adaptive delay), Retry-After (a block, capped by MaxRetryAfter)
// and, for a failure that is not Interim, the error backoff.
func (p *Politeness) Release(host string, started, now time.Time, o Outcome) {
	p.mu.Lock()
	defer p.mu.Unlock()
	h := p.hostLocked(host, now)
	if h.inflight > 0 {
		h.inflight--
	}
	if ch, ok := p.released[host]; ok {
		close(ch)
		delete(p.released, host)
	}
	h.lastEnd = later(h.lastEnd, now)
	if p.cfg.DelayFactor > 0 && now.After(started) {
		d := time.Duration(p.cfg.DelayFactor * float64(now.Sub(started)))
		h.adaptive = min(max(d, p.cfg.MinAdaptiveDelay), p.cfg.MaxAdaptiveDelay)
	}
	switch {
	case o.HasRetryAfter && (o.Status == 429 || o.Status == 503):
		h.blockedUntil = later(h.blockedUntil, now.Add(min(max(o.RetryAfter, 0), p.cfg.MaxRetryAfter)))
	case o.failed() && !o.Interim:
		p.backoffLocked(h, now)
	}
	p.updateLimiterLocked(h, now)
}

// backoffLocked blocks h after a failure. Requires p.mu.
func (p *Politeness) backoffLocked(h *hostState, now time.Time) {
	if p.cfg.BackoffBase <= 0 {
		return
	}
	if h.failures > 0 && now.Sub(h.backoffEnd) >= p.cfg.ForgiveAfter {
		h.failures = 0
	}
	h.failures++
	d := p.cfg.BackoffMax
	if shift := h.failures - 1; shift < 32 {
		d = min(p.cfg.BackoffBase<<shift, p.cfg.BackoffMax)
	}
	if d <= 0 { // overflow of the shift
		d = p.cfg.BackoffMax
	}
	jittered := time.Duration(float64(d) * (0.75 + 0.5*p.cfg.Rand()))
	h.backoffEnd = now.Add(jittered)
	h.blockedUntil = later(h.blockedUntil, h.backoffEnd)
}

// updateLimiterLocked keeps h's start-spacing bucket in step with its delay.
// Requires p.mu.
func (p *Politeness) updateLimiterLocked(h *hostState, now time.Time) {
	if p.cfg.MaxConcurrent <= 1 {
		return
	}
	lim := rate.Inf
	if d := p.delayLocked(h); d > 0 {
		lim = rate.Every(d)
	}
	if h.limiter == nil {
		h.limiter = rate.NewLimiter(lim, 1)
	} else if h.limiter.Limit() != lim {
		h.limiter.SetLimitAt(now, lim)
	}
}

// SetCrawlDelay records host's robots.txt Crawl-delay, capped by
// MaxCrawlDelay. Zero removes it.
func (p *Politeness) SetCrawlDelay(host string, d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	h := p.hostLocked(host, time.Time{})
	h.crawlDelay = min(max(d, 0), p.cfg.MaxCrawlDelay)
}

// BlockUntil forbids contacting host before t (it never shortens an existing
// block).
func (p *Politeness) BlockUntil(host string, t time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	h := p.hostLocked(host, time.Time{})
	h.blockedUntil = later(h.blockedUntil, t)
}

// Delay returns the gap currently enforced after each request to host: the
// largest of Delay, its Crawl-delay and its adaptive delay.
func (p *Politeness) Delay(host string) time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	if h, ok := p.hosts[host]; ok {
		return p.delayLocked(h)
	}
	return p.cfg.Delay
}

// Failures returns host's count of consecutive, unforgiven failures.
func (p *Politeness) Failures(host string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if h, ok := p.hosts[host]; ok {
		return h.failures
	}
	return 0
}

// Len returns the number of hosts with recorded state.
func (p *Politeness) Len() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.hosts)
}

// hostLocked returns host's state, creating it (and evicting idle hosts when
// over MaxHosts) if needed. now may be zero when the caller does not know
// the time; eviction is then skipped. Requires p.mu.
func (p *Politeness) hostLocked(host string, now time.Time) *hostState {
	if h, ok := p.hosts[host]; ok {
		return h
	}
	if len(p.hosts) >= max(p.cfg.MaxHosts, p.nextSweep) && !now.IsZero() {
		p.evictLocked(now)
	}
	h := &hostState{}
	p.hosts[host] = h
	p.updateLimiterLocked(h, now)
	return h
}

// evictLocked forgets idle hosts that are ready, until the map is at most
// seven eighths full, so that sweeps are rare (amortized constant cost per
// new host). Forgetting such a host cannot make it be contacted early.
// Hosts that may not be forgotten yet (blocked, backing off, busy) can keep
// the map above MaxHosts; the next sweep then waits until it has grown by
// another eighth, rather than scanning the whole map for every new host.
// Requires p.mu.
func (p *Politeness) evictLocked(now time.Time) {
	p.sweeps++
	target := p.cfg.MaxHosts - p.cfg.MaxHosts/8 - 1
	for name, h := range p.hosts {
		if len(p.hosts) <= target {
			break
		}
		forgiven := h.failures == 0 || now.Sub(h.backoffEnd) >= p.cfg.ForgiveAfter
		if h.inflight == 0 && forgiven && !p.readyLocked(h, now).After(now) {
			delete(p.hosts, name)
		}
	}
	p.nextSweep = len(p.hosts) + len(p.hosts)/8 + 1
}

// fail applies the error backoff to host at now, for a failure that was
// first recorded as Interim but will not be retried after all.
func (p *Politeness) fail(host string, now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.backoffLocked(p.hostLocked(host, now), now)
}
