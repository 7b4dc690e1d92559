package frontierapi

import (
	"net/http"
	"sort"
	"sync"
	"time"

	"github.com/crawlkit/crawlkit/service/dashboard"
	"github.com/crawlkit/crawlkit/urlnorm"
)

// counters are the service's figures. One mutex guards them all: every
// update is a few additions, far cheaper than the store write beside it.
type counters struct {
	mu sync.Mutex

	started time.Time
	bands   []int64 // queued URLs per band known to this process
	urls    dashboard.URLCounts
	errs    dashboard.ErrorCounts
	bytes   int64

	hostKeys    map[uint64]struct{} // every host accepted (8 bytes each)
	activeHosts map[string]int      // hosts with URLs leased now
	blocked     map[string]dashboard.BlockedHost
	workers     map[string]*workerState
	leased      int64

	rate rate
}

type workerState struct {
	leased   int64
	results  int64
	lastSeen time.Time
}

// Bounds of the per-worker and blocked-host tables.
const (
	maxWorkers      = 10000
	maxBlockedHosts = 10000
)

func newCounters(bands int, started time.Time) *counters {
	return &counters{
		started:     started,
		bands:       make([]int64, bands),
		hostKeys:    map[uint64]struct{}{},
		activeHosts: map[string]int{},
		blocked:     map[string]dashboard.BlockedHost{},
		workers:     map[string]*workerState{},
	}
}

func (c *counters) queue(band int, delta int64) {
	c.mu.Lock()
	c.queueLocked(band, delta)
	c.mu.Unlock()
}

// queueLocked moves a band count, never below zero: URLs carried over from
// an earlier process in delayed keys are not counted at startup, so their
// leases would otherwise drive a band negative.
func (c *counters) queueLocked(band int, delta int64) {
	c.bands[band] = max(c.bands[band]+delta, 0)
}

// worker returns the state of worker id, creating it, or nil if the table
// is full and holds no idle worker to evict. Requires c.mu.
//
// The table is bounded by maxWorkers. A new worker that finds it full
// evicts the least recently seen idle workers (pruneWorkersLocked); workers
// holding leases are never evicted, so their counts stay right until their
// leases are settled or expire. If every tracked worker holds a lease, the
// new worker is not tracked: its leases still count in c.leased, but not on
// the worker list (a later request of it that finds room adds it with the
// leases taken from then on).
func (c *counters) worker(id string, now time.Time) *workerState {
	w, ok := c.workers[id]
	if !ok {
		if len(c.workers) >= maxWorkers {
			c.pruneWorkersLocked()
			if len(c.workers) >= maxWorkers {
				return nil
			}
		}
		w = &workerState{}
		c.workers[id] = w
	}
	if now.After(w.lastSeen) {
		w.lastSeen = now
	}
	return w
}

// pruneWorkersLocked forgets the least recently seen half (rounded up) of
// the workers holding no lease; none if every worker holds one. Requires
// c.mu.
func (c *counters) pruneWorkersLocked() {
	type idle struct {
		id   string
		seen time.Time
	}
	var list []idle
	for id, w := range c.workers {
		if w.leased == 0 {
			list = append(list, idle{id, w.lastSeen})
		}
	}
	sort.Slice(list, func(i, j int) bool { return list[i].seen.Before(list[j].seen) })
	for _, it := range list[:(len(list)+1)/2] {
		delete(c.workers, it.id)
	}
}

// seen marks a worker as alive without a lease change.
func (c *counters) seen(id string, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.worker(id, now)
}

// leasedTo counts the leases of a batch handed to worker at now.
func (c *counters) leasedTo(worker string, b *batch, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := int64(len(b.items))
	if w := c.worker(worker, now); w != nil {
		w.leased += n
	}
	c.leased += n
	for _, l := range b.items {
		c.activeHosts[l.Host]++
	}
}

// block records that host may not be fetched before until.
func (c *counters) block(host, reason string, until time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if b, ok := c.blocked[host]; ok && b.Until.After(until) {
		return
	}
	if len(c.blocked) >= maxBlockedHosts {
		for h, b := range c.blocked {
			if b.Until.Before(until) {
				delete(c.blocked, h)
				break
			}
		}
		if len(c.blocked) >= maxBlockedHosts {
			return
		}
	}
	c.blocked[host] = dashboard.BlockedHost{Host: host, Reason: reason, Until: until}
}

// blockedUntil reports when host's block ends (zero if none).
func (c *counters) blockedUntil(host string, now time.Time) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if b, ok := c.blocked[host]; ok && b.Until.After(now) {
		return b.Until
	}
	return time.Time{}
}

// rate counts fetches per second over the last minute, for the current and
// peak throughput.
type rate struct {
	secs  [64]int64
	stamp [64]int64 // the Unix second each slot holds
	peak  float64
}

const rateWindow = 10 // seconds in Throughput.Current

func (r *rate) add(now, started time.Time, n int64) {
	sec := now.Unix()
	i := sec & 63
	if r.stamp[i] != sec {
		r.stamp[i], r.secs[i] = sec, 0
	}
	r.secs[i] += n
	r.peak = max(r.peak, r.current(now, started))
}

// current is the rate over the last rateWindow seconds (the current second
// included), or over the time since started when that is shorter, but never
// over less than a second, so the first fetches do not read as a burst.
func (r *rate) current(now, started time.Time) float64 {
	sec := now.Unix()
	var sum int64
	for s := sec - rateWindow + 1; s <= sec; s++ {
		if i := s & 63; r.stamp[i] == s {
			sum += r.secs[i]
		}
	}
	span := min(max(now.Sub(started).Seconds(), 1), rateWindow)
	return float64(sum) / span
}

// snapshot returns the dashboard Snapshot at now.
func (s *Server) snapshot(now time.Time) Stats {
	s.pruneExpired(now)
	fs := s.f.Stats()
	c := s.stats
	c.mu.Lock()
	st := Stats{Started: c.started, Leased: c.leased}
	snap := &st.Snapshot
	snap.Time = now
	snap.URLs = c.urls
	snap.Errors = c.errs
	snap.Bytes = c.bytes
	snap.QueueByBand = append([]int64(nil), c.bands...)
	for _, n := range c.bands {
		snap.URLs.Queued += n
	}
	cur := c.rate.current(now, c.started)
	c.rate.peak = max(c.rate.peak, cur)
	snap.Throughput.Current = cur
	snap.Throughput.Peak = c.rate.peak
	if el := now.Sub(c.started).Seconds(); el > 0 {
		snap.Throughput.Average = float64(c.urls.Fetched) / el
	}
	snap.Hosts.Discovered = int64(len(c.hostKeys))
	snap.Hosts.Active = int64(len(c.activeHosts))
	for h, b := range c.blocked {
		if !b.Until.After(now) {
			delete(c.blocked, h)
			continue
		}
		snap.BlockedHosts = append(snap.BlockedHosts, b)
	}
	snap.Hosts.Blocked = int64(len(snap.BlockedHosts))
	for id, w := range c.workers {
		active := w.leased > 0
		if !active && now.Sub(w.lastSeen) > s.cfg.IdleAfter {
			continue // gone
		}
		if active {
			snap.Workers.Active++
		} else {
			snap.Workers.Idle++
		}
		snap.WorkerList = append(snap.WorkerList, dashboard.Worker{ID: id, Leased: w.leased, Fetched: w.results, LastSeen: w.lastSeen, Active: active})
	}
	c.mu.Unlock()

	sort.Slice(snap.BlockedHosts, func(i, j int) bool { return snap.BlockedHosts[i].Host < snap.BlockedHosts[j].Host })
	if len(snap.BlockedHosts) > 50 {
		snap.BlockedHosts = snap.BlockedHosts[:50]
	}
	sort.Slice(snap.WorkerList, func(i, j int) bool { return snap.WorkerList[i].ID < snap.WorkerList[j].ID })
	snap.TopHosts = s.hist.TopHosts(now, 10)
	st.Frontier = FrontierStats{
		Hosts: fs.Hosts, InMemory: fs.InMemory, Delayed: fs.Delayed, Leased: fs.Leased,
		Added: fs.Added, Leases: fs.Leases, Succeeded: fs.Succeeded, NotModified: fs.NotModified,
		Retried: fs.Retried, Failed: fs.Failed, Dropped: fs.Dropped, Recrawls: fs.Recrawls,
		Expired: fs.Expired, Released: fs.Released, Corrupt: fs.Corrupt,
	}
	return st
}

// Stats returns the service's figures at the service clock's now: the
// document GET /api/v1/stats serves.
func (s *Server) Stats() Stats { return s.snapshot(s.cfg.Now()) }

// Snapshot returns the dashboard's view of Stats; pass it as a
// dashboard.Config's Source.
func (s *Server) Snapshot() dashboard.Snapshot { return s.Stats().Snapshot }

func (s *Server) serveStats(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.Stats())
}

// hostKey is the key of a host in the discovered-hosts set.
func hostKey(host string) uint64 { return urlnorm.HostKey(host) }
