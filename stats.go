package crawlkit

import (
	"encoding/json"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/crawlkit/crawlkit/bloom"
)

// Stats is a snapshot of a crawl's progress.
type Stats struct {
	// URLs counts URLs by what happened to them.
	URLs URLStats `json:"urls"`
	// Throughput is in pages fetched per second.
	Throughput Throughput  `json:"throughput"`
	Hosts      HostStats   `json:"hosts"`
	Workers    WorkerStats `json:"workers"`
	// Bytes is the decoded body bytes fetched; WireBytes the bytes
	// received before content decoding.
	Bytes     int64 `json:"bytes"`
	WireBytes int64 `json:"wire_bytes"`
	// SinkErrors counts the pages Config.Sink failed to write.
	SinkErrors int64 `json:"sink_errors"`
	// Usage counts what the usage preferences did (Config.Usage).
	Usage UsageStats `json:"usage"`
	// LinksRejected counts the links of fetched pages (and seeds, sitemap
	// entries and redirect targets) that were not queued, by Reason: one
	// count per occurrence, so a link on every page counts on every page.
	// Links to URLs already known are not counted: they are followed.
	LinksRejected map[Reason]int64 `json:"links_rejected"`
	// Errors counts failed fetches by cause.
	Errors ErrorStats `json:"errors"`
	// Waiting says what the crawl waits for now.
	Waiting WaitStats `json:"waiting"`
	// Totals sums every Run on the DataDir, this one included; nil
	// without a DataDir.
	Totals *Totals `json:"totals,omitempty"`
	// Ended says how Run ended: "" while it runs, else "complete"
	// (nothing left), "max-pages", "max-wait" (what is left waits longer
	// than Config.MaxRetryWait; counted in URLs.NotFetched and kept in a
	// DataDir's queue) or "cancelled" (ctx ended).
	Ended string `json:"ended,omitempty"`
	// Started is when Run began; Elapsed how long it has run.
	Started time.Time     `json:"started"`
	Elapsed time.Duration `json:"elapsed_ns"`
}

// URLStats counts URLs.
type URLStats struct {
	// Discovered counts distinct URLs accepted into the crawl (seeds,
	// sitemap URLs, links and redirect targets that passed normalization,
	// scope, depth and trap checks).
	Discovered int64 `json:"discovered"`
	// Queued is the number of URLs waiting in the frontier's memory or
	// leased now.
	Queued int64 `json:"queued"`
	// Fetched counts fetch attempts that got an HTTP response; Successful
	// those with a 2xx or 304 status; Failed the URLs given up on
	// (network errors, 4xx, 5xx after retries, pages whose Handler failed
	// on every attempt).
	Fetched    int64 `json:"fetched"`
	Successful int64 `json:"successful"`
	Failed     int64 `json:"failed"`
	// Retried counts fetches put back to be tried again; a URL's last
	// attempt, after which the frontier gives it up (Config.MaxAttempts),
	// counts as Failed instead. With a Config.Queue, whose attempt limit
	// the Crawler does not know, that last attempt counts as Retried.
	Retried int64 `json:"retried"`
	// Duplicates counts fetched pages whose content was a near-duplicate
	// of another, earlier page (a page fetched again is not a duplicate of
	// itself).
	Duplicates int64 `json:"duplicate_content"`
	// BlockedByRobots counts URLs robots.txt did not allow
	// (NotFetched robots and crawl-delay).
	BlockedByRobots int64 `json:"blocked_by_robots"`
	// TrapRejected counts links rejected as spider traps (LinksRejected
	// trap and trap-stopped).
	TrapRejected int64 `json:"rejected_as_traps"`
	// OutOfScope counts links outside the crawl's scope or depth, and
	// redirects out of scope (LinksRejected scope and depth, NotFetched
	// scope).
	OutOfScope int64 `json:"out_of_scope"`
	// NotFetched counts the queued URLs the crawl gave up without a
	// fetch, or after failed ones, by Reason (robots, guard,
	// robots-unreachable, retry-budget, max-wait, …). With MaxPages,
	// max-pages counts the URLs left queued when the crawl stopped.
	NotFetched map[Reason]int64 `json:"not_fetched"`
	// Deferred counts the times a URL was put back to be tried later, by
	// Reason (fetch-error, http-error, retry-after, robots-unreachable,
	// handler-error, links-pending); Retried is their sum.
	Deferred map[Reason]int64 `json:"deferred"`
	// LinksTruncated counts pages with more links than
	// Config.MaxLinksPerPage, whose other links were not read.
	LinksTruncated int64 `json:"links_truncated"`
	// FetchedByRedirect counts queued URLs settled without a request
	// because this Run had already fetched them as the target of another
	// URL's redirect (http:// to https://, say) after they were queued.
	FetchedByRedirect int64 `json:"fetched_by_redirect"`
	// CacheHits counts the Fetched pages answered from Config.Cache:
	// fresh entries served without a request, and stale ones a 304
	// revalidated.
	CacheHits int64 `json:"cache_hits,omitempty"`
}

// Throughput is in pages per second.
type Throughput struct {
	// Current is over the last ten seconds.
	Current float64 `json:"current"`
	Average float64 `json:"average"`
	Peak    float64 `json:"peak"`
}

// HostStats counts hosts.
type HostStats struct {
	// Discovered counts distinct hosts of URLs accepted into the crawl.
	// It is counted in a Bloom filter (bloom.Set, false-positive rate
	// 10⁻⁵), not a map, so that the Crawler's memory does not grow by a
	// map entry per host: it may undercount by that rate.
	Discovered int64 `json:"discovered"`
	// Active hosts have a page being fetched now.
	Active int64 `json:"active"`
	// Blocked hosts are disallowed entirely by robots.txt (or their
	// robots.txt is unreachable).
	Blocked int64 `json:"blocked"`
}

// ErrorStats counts failed fetches by cause.
type ErrorStats struct {
	// Network and Timeout count fetches that got no answer; HTTP4xx and
	// HTTP5xx answers with those statuses (429 among the 4xx).
	Network int64 `json:"network"`
	Timeout int64 `json:"timeout"`
	HTTP4xx int64 `json:"http_4xx"`
	HTTP5xx int64 `json:"http_5xx"`
}

// WaitStats says what a crawl waits for: without it, a crawl idling on
// its last hosts' Crawl-delay or an unreachable robots.txt looks stuck.
type WaitStats struct {
	// InFlight counts the URLs being worked on now; Queued those waiting
	// in the queue (URLs.Queued less InFlight).
	InFlight int64 `json:"in_flight"`
	// CrawlDelayHosts counts hosts spaced by a robots.txt Crawl-delay
	// longer than Config.Delay; LongestCrawlDelay is the longest.
	CrawlDelayHosts   int           `json:"crawl_delay_hosts"`
	LongestCrawlDelay time.Duration `json:"longest_crawl_delay_ns"`
	// RobotsRetryHosts counts hosts whose robots.txt is unreachable, so
	// all their URLs wait; NextRobotsRetry is the next fetch of one.
	RobotsRetryHosts int       `json:"robots_retry_hosts"`
	NextRobotsRetry  time.Time `json:"next_robots_retry,omitzero"`
	// RetryAfterHosts counts hosts that asked the crawl to come back
	// later (429/503 with Retry-After); RetryAfterUntil is the last end.
	RetryAfterHosts int       `json:"retry_after_hosts"`
	RetryAfterUntil time.Time `json:"retry_after_until,omitzero"`
	// LoginHosts counts hosts whose Config.Login is under way: their URLs
	// wait for it.
	LoginHosts int `json:"login_hosts"`
}

// WorkerStats counts workers.
type WorkerStats struct {
	Active int64 `json:"active"`
	Idle   int64 `json:"idle"`
	// Parked counts pages waiting for their host's politeness delay
	// without a worker, typically after the host's robots.txt fetch
	// (park.go).
	Parked int64 `json:"parked"`
}

// counters are the crawler's live counters.
type counters struct {
	discovered, fetched, successful, failed, retried atomic.Int64
	duplicates, linksTruncated                       atomic.Int64
	bytes, wireBytes, sinkErrors, redirectFetched    atomic.Int64
	activeWorkers, parked                            atomic.Int64
	cacheHits                                        atomic.Int64
	hostsBlocked                                     atomic.Int64
	// By reason: links not queued, queued URLs given up, URLs put back.
	linksRejected, notFetched, deferred reasonCounts
	// Failure categories for the dashboard.
	errNetwork, errTimeout, err4xx, err5xx atomic.Int64

	hostsSeen       *bloom.Set // hosts counted in discoveredHosts
	discoveredHosts atomic.Int64

	mu       sync.Mutex
	busy     map[string]int // host -> pages being fetched now, hosts with one or more only
	activity map[string]*hostActivity
	samples  []sample // fetched counts, one a second, for Current
	peak     float64
}

// Bounds of the per-host accounting, so that the Crawler's memory does not
// grow with the number of hosts a crawl meets: activity keeps the
// maxActivity hosts fetched last (between maxActivity and twice that),
// which is what the dashboard's most-active-hosts table shows.
const (
	maxActivity        = 4096
	hostsExpected      = 1 << 16
	hostsFalsePositive = 1e-5
)

type sample struct {
	at      time.Time
	fetched int64
}

// throughputWindow is the span of Throughput.Current.
const throughputWindow = 10 * time.Second

// hostActivity is what the dashboard's most-active-hosts table shows.
type hostActivity struct {
	fetched, errors int64
	recent          int64 // fetches since recentSince
	recentSince     time.Time
	last            time.Time
}

// recentSpan is how long a host's "recent" fetch count accumulates before
// it starts over.
const recentSpan = time.Minute

func newCounters() *counters {
	return &counters{hostsSeen: newHostSet(), busy: map[string]int{}, activity: map[string]*hostActivity{}}
}

// newHostSet returns an empty set of host names for counting distinct
// hosts; it grows past hostsExpected and keeps its false-positive rate.
func newHostSet() *bloom.Set {
	s, err := bloom.New(bloom.Config{Expected: hostsExpected, FalsePositiveRate: hostsFalsePositive})
	if err != nil {
		panic(err) // constant, valid options
	}
	return s
}

// hostFetched records a fetch from host that ended at now.
func (c *counters) hostFetched(host string, failed bool, now time.Time) {
	c.mu.Lock()
	a := c.activity[host]
	if a == nil {
		if len(c.activity) >= 2*maxActivity {
			c.trimActivity()
		}
		a = &hostActivity{recentSince: now}
		c.activity[host] = a
	}
	a.fetched++
	if failed {
		a.errors++
	}
	if now.Sub(a.recentSince) > recentSpan {
		a.recent, a.recentSince = 0, now
	}
	a.recent++
	a.last = now
	c.mu.Unlock()
}

// trimActivity keeps the maxActivity hosts fetched last. c.mu held.
func (c *counters) trimActivity() {
	lasts := make([]time.Time, 0, len(c.activity))
	for _, a := range c.activity {
		lasts = append(lasts, a.last)
	}
	slices.SortFunc(lasts, func(a, b time.Time) int { return b.Compare(a) })
	cut := lasts[maxActivity-1]
	for host, a := range c.activity {
		if a.last.Before(cut) {
			delete(c.activity, host)
		}
	}
}

// hostSeen records a discovered host.
func (c *counters) hostSeen(host string) {
	if seen, _ := c.hostsSeen.TestAndAdd(host); !seen {
		c.discoveredHosts.Add(1)
	}
}

// hostBusy marks one more (delta 1) or one fewer (-1) fetch on host.
func (c *counters) hostBusy(host string, delta int) {
	if delta > 0 {
		c.hostSeen(host)
	}
	c.mu.Lock()
	if n := c.busy[host] + delta; n > 0 {
		c.busy[host] = n
	} else {
		delete(c.busy, host)
	}
	c.mu.Unlock()
}

// tick records a throughput sample; the crawler calls it once a second.
func (c *counters) tick(now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.samples = append(c.samples, sample{at: now, fetched: c.fetched.Load()})
	cut := 0
	for cut < len(c.samples)-1 && now.Sub(c.samples[cut].at) > throughputWindow {
		cut++
	}
	c.samples = append(c.samples[:0], c.samples[cut:]...)
	if cur := c.currentLocked(); cur > c.peak {
		c.peak = cur
	}
}

func (c *counters) currentLocked() float64 {
	if len(c.samples) < 2 {
		return 0
	}
	first, last := c.samples[0], c.samples[len(c.samples)-1]
	d := last.at.Sub(first.at).Seconds()
	if d <= 0 {
		return 0
	}
	return float64(last.fetched-first.fetched) / d
}

func (c *counters) snapshot(started, now time.Time, queued int64, workers int) Stats {
	c.mu.Lock()
	current, peak := c.currentLocked(), c.peak
	hosts, active := c.discoveredHosts.Load(), int64(len(c.busy))
	c.mu.Unlock()
	fetched := c.fetched.Load()
	elapsed := now.Sub(started)
	var avg float64
	if elapsed > 0 {
		avg = float64(fetched) / elapsed.Seconds()
	}
	if avg > peak && elapsed >= throughputWindow {
		peak = avg
	}
	activeWorkers := c.activeWorkers.Load()
	return Stats{
		URLs: URLStats{
			Discovered:      c.discovered.Load(),
			Queued:          queued,
			Fetched:         fetched,
			Successful:      c.successful.Load(),
			Failed:          c.failed.Load(),
			Retried:         c.retried.Load(),
			Duplicates:      c.duplicates.Load(),
			BlockedByRobots: c.notFetched.get(ReasonRobots) + c.notFetched.get(ReasonCrawlDelay),
			TrapRejected:    c.linksRejected.get(ReasonTrap) + c.linksRejected.get(ReasonTrapStopped),
			OutOfScope:      c.linksRejected.get(ReasonScope) + c.linksRejected.get(ReasonDepth) + c.notFetched.get(ReasonScope),
			NotFetched:      c.notFetched.snapshot(),
			LinksTruncated:  c.linksTruncated.Load(),
			Deferred:        c.deferred.snapshot(),

			FetchedByRedirect: c.redirectFetched.Load(),
			CacheHits:         c.cacheHits.Load(),
		},
		Throughput:    Throughput{Current: current, Average: avg, Peak: peak},
		Hosts:         HostStats{Discovered: hosts, Active: active, Blocked: c.hostsBlocked.Load()},
		Workers:       WorkerStats{Active: activeWorkers, Idle: int64(workers) - activeWorkers, Parked: c.parked.Load()},
		Bytes:         c.bytes.Load(),
		WireBytes:     c.wireBytes.Load(),
		SinkErrors:    c.sinkErrors.Load(),
		LinksRejected: c.linksRejected.snapshot(),
		Errors: ErrorStats{Network: c.errNetwork.Load(), Timeout: c.errTimeout.Load(),
			HTTP4xx: c.err4xx.Load(), HTTP5xx: c.err5xx.Load()},
		Started: started,
		Elapsed: elapsed,
	}
}

// StatsHandler returns an http.Handler that serves the crawler's Stats as
// JSON.
func (cr *Crawler) StatsHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, `{"error":"method_not_allowed"}`, http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		_ = enc.Encode(cr.Stats())
	})
}
