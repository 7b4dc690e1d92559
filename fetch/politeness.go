package fetch

import (
	"math"
	"math/rand/v2"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// PolitenessConfig configures a Politeness. Zero fields take the documented
// defaults; a negative duration or factor switches that rule off. Zero
// cannot mean "none" because it is the unset value, and an unset field must
// be polite.
type PolitenessConfig struct {
	// Delay is the minimum time between the end of one request to a host
	// and the start of the next. Zero means the default, 1 s (one request
	// per second per host, the convention most site operators expect from
	// crawlers); negative means no delay at all. The adaptive delay and a
	// Crawl-delay still apply without it: for requests back to back, set
	// DelayFactor negative too.
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

	// BackoffBase, BackoffMax and ForgiveAfter govern the host-wide
	// exponential backoff, which starts when the host as a whole seems in
	// trouble (see Politeness): the n-th backoff blocks the host for
	// BackoffBase × 2^(n-1), capped at BackoffMax, each multiplied by a
	// random factor in [0.75, 1.25) so that hosts behind one failing
	// balancer do not all come back at once. The count is forgiven once
	// the host has gone ForgiveAfter past the end of its last backoff
	// without another. Defaults 60 s doubling to 1 h: a failing server is
	// typically overloaded or restarting, which takes tens of seconds to
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
	// URL is what was requested. Failures are told apart by it: one URL
	// failing again and again is that URL's trouble, several different
	// ones failing is the host's (see Politeness). Only a hash is kept.
	// Empty counts as a different URL every time.
	URL string
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
	// it does not count as a failure. The Fetcher sets it on all attempts
	// but the last of one Fetch call.
	Interim bool
}

// failed reports whether o is a failure: no answer, or an answer saying the
// server could not serve the request.
func (o Outcome) failed() bool {
	return o.Err != nil || o.Status >= 500 || o.Status == 429
}

// hostFailureURLs is how many different URLs of a host must fail in a row,
// with no success between them, before the host is taken to be in trouble
// and backed off. One or two are what a healthy site with a broken page or
// two looks like when their retries come due together; a server that is
// down, overloaded or refusing connections fails whatever it is asked, so
// a third different URL failing is strong evidence, and waiting for it
// costs a dead host only two more requests.
const hostFailureURLs = 3

// Politeness is the per-host politeness model: it decides when each host may
// be contacted next from everything recorded about it — the end of its last
// request plus the delay (the larger of Delay, its Crawl-delay and the
// adaptive delay), the start spacing of concurrent requests, Retry-After,
// exponential backoff after failures, and explicit blocks — and it caps the
// requests in flight per host.
//
// Only signals about the whole host block it. A 429 or 503 with
// Retry-After blocks it until then (RFC 9110 §10.2.3); a 429 without one
// starts the error backoff at once, since it says the client is sending
// too many requests (RFC 6585 §4). Any other failure — a 5xx, a
// connection refused, a DNS failure, a timeout — is first taken as the
// URL's own: a page that always answers 500, or one heavy page that times
// out, must not hold up the rest of its site (its caller retries the URL on
// its own schedule, as a frontier does). The host backs off only when
// hostFailureURLs (3) different URLs have failed with no success between
// them, and again at each further different URL that fails before a
// success. Transport errors are counted the same way: most are host-wide,
// but a timeout cannot be told from a slow page, and a refused connection
// costs the server nothing, so waiting for three URLs is cheap.
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
	// restarted counts as every host's last contact (see Restarted).
	restarted time.Time
}

type hostState struct {
	inflight     int
	lastEnd      time.Time     // end of the most recent request
	adaptive     time.Duration // from the last request's duration
	crawlDelay   time.Duration
	limiter      *rate.Limiter // start spacing; nil while MaxConcurrent is 1
	blockedUntil time.Time     // Retry-After, backoff or BlockUntil
	// failing holds hashes of the latest different URLs that failed since
	// the last success, a ring of which the first min(nfailing,
	// len(failing)) entries are in use; nfailing counts them all.
	failing    [hostFailureURLs]uint64
	nfailing   int
	backoffs   int       // host-wide backoffs not yet forgiven
	backoffEnd time.Time // end of the latest backoff
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
	if end := later(h.lastEnd, p.restarted); !end.IsZero() {
		t = later(t, end.Add(p.delayLocked(h)))
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
		if p.restarted.IsZero() {
			return now
		}
		return later(now, p.restarted.Add(p.cfg.Delay))
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
// duration (adaptive delay), Retry-After (a block, capped by MaxRetryAfter),
// and whether it failed or succeeded, which may start the error backoff
// (see Politeness). An Interim failure is not counted.
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
	p.endedLocked(h, started, now)
	switch {
	case o.HasRetryAfter && (o.Status == 429 || o.Status == 503):
		h.blockedUntil = later(h.blockedUntil, now.Add(min(max(o.RetryAfter, 0), p.cfg.MaxRetryAfter)))
	case o.Interim:
	case o.Status == 429:
		p.backoffLocked(h, now)
	case o.failed():
		p.urlFailedLocked(h, o.URL, now)
	case o.Status > 0:
		h.nfailing = 0
	}
	p.updateLimiterLocked(h, now)
}

// endedLocked records a request to h that ran from started to ended: the
// next may start a delay after ended, and a request that came after all
// others recorded sets the adaptive delay. Requires p.mu.
func (p *Politeness) endedLocked(h *hostState, started, ended time.Time) {
	if ended.Before(h.lastEnd) {
		return
	}
	h.lastEnd = ended
	if p.cfg.DelayFactor > 0 && ended.After(started) {
		d := time.Duration(p.cfg.DelayFactor * float64(ended.Sub(started)))
		h.adaptive = min(max(d, p.cfg.MinAdaptiveDelay), p.cfg.MaxAdaptiveDelay)
	}
}

// Contacted records a request to host made outside p, by a Fetcher with a
// politeness model of its own, from started to ended: the next request
// admitted by p waits the host's delay after ended, and the adaptive delay
// follows the request's duration, as for one of p's own. A crawler fetches
// robots.txt that way and must not send the first page right after it: a
// Crawl-delay spaces all of a crawler's requests to the host. Config.Contacted
// calls it for every request a Fetcher sends.
func (p *Politeness) Contacted(host string, started, ended time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	h := p.hostLocked(host, ended)
	p.endedLocked(h, started, ended)
	p.updateLimiterLocked(h, ended)
}

// urlFailedLocked counts a failure of url at h, and backs the host off when
// it is the hostFailureURLs-th or a later different URL to fail since the
// last success. Requires p.mu.
func (p *Politeness) urlFailedLocked(h *hostState, url string, now time.Time) {
	var k uint64
	if url != "" {
		k = hashURL(url)
		for _, seen := range h.failing[:min(h.nfailing, len(h.failing))] {
			if seen == k {
				return
			}
		}
	}
	h.failing[h.nfailing%len(h.failing)] = k
	h.nfailing++
	if h.nfailing >= hostFailureURLs {
		p.backoffLocked(h, now)
	}
}

// hashURL is 64-bit FNV-1a, never zero (zero marks a URL left unnamed).
func hashURL(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return max(h, 1)
}

// backoffLocked blocks h for its next host-wide backoff. Requires p.mu.
func (p *Politeness) backoffLocked(h *hostState, now time.Time) {
	if p.cfg.BackoffBase <= 0 {
		return
	}
	if h.backoffs > 0 && now.Sub(h.backoffEnd) >= p.cfg.ForgiveAfter {
		h.backoffs = 0
	}
	h.backoffs++
	d := p.cfg.BackoffMax
	if shift := h.backoffs - 1; shift < 32 {
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

// MaxGap is the longest gap the spacing rules alone put between two
// requests to a host: Delay, a capped Crawl-delay or the adaptive delay,
// whichever is largest. Blocks (Retry-After, backoff) can be longer; a
// caller that gives up on long waits tells them apart by this bound.
func (p *Politeness) MaxGap() time.Duration {
	return max(p.cfg.Delay, p.cfg.MaxCrawlDelay, p.cfg.MaxAdaptiveDelay)
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

// Failures returns how many different URLs of host have failed since its
// last success: the evidence toward a host-wide backoff, which starts at
// the third.
func (p *Politeness) Failures(host string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if h, ok := p.hosts[host]; ok {
		return h.nfailing
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
		forgiven := h.backoffs == 0 || now.Sub(h.backoffEnd) >= p.cfg.ForgiveAfter
		if h.inflight == 0 && forgiven && !p.readyLocked(h, now).After(now) {
			delete(p.hosts, name)
		}
	}
	p.nextSweep = len(p.hosts) + len(p.hosts)/8 + 1
}

// fail counts a failure of url at host at now, one that was first recorded
// as Interim but will not be retried after all.
func (p *Politeness) fail(host, url string, now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.urlFailedLocked(p.hostLocked(host, now), url, now)
}
