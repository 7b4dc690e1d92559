package frontierapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"
	"unicode"

	"github.com/crawlkit/crawlkit/frontier"
	"github.com/crawlkit/crawlkit/robots"
	"github.com/crawlkit/crawlkit/service/dashboard"
)

const (
	maxWorkerID    = 128
	robotsParallel = 8 // robots.txt lookups in flight per batch
)

func (s *Server) serveNext(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	worker := q.Get("worker_id")
	if worker == "" {
		writeError(w, http.StatusBadRequest, CodeMissingParameter, "worker_id is required")
		return
	}
	if err := checkWorkerID(worker); err != nil {
		writeError(w, http.StatusBadRequest, CodeInvalidParameter, err.Error())
		return
	}
	n := DefaultBatchSize
	if v := q.Get("batch_size"); v != "" {
		b, err := strconv.Atoi(v)
		if err != nil || b < 1 || b > MaxBatchSize {
			writeError(w, http.StatusBadRequest, CodeInvalidParameter,
				fmt.Sprintf("batch_size %q: want an integer from 1 to %d", v, MaxBatchSize))
			return
		}
		n = b
	}
	var wait time.Duration
	if v := q.Get("timeout_ms"); v != "" {
		ms, err := strconv.ParseInt(v, 10, 64)
		if err != nil || ms < 0 || ms > s.cfg.MaxWait.Milliseconds() {
			writeError(w, http.StatusBadRequest, CodeInvalidParameter,
				fmt.Sprintf("timeout_ms %q: want an integer from 0 to %d", v, s.cfg.MaxWait.Milliseconds()))
			return
		}
		wait = time.Duration(ms) * time.Millisecond
	}
	resp, err := s.Next(r.Context(), worker, n, wait)
	switch {
	case err == nil:
		writeJSON(w, http.StatusOK, resp)
	case errors.Is(err, frontier.ErrClosed):
		writeError(w, http.StatusServiceUnavailable, CodeUnavailable, "the service is shutting down")
	case r.Context().Err() != nil:
		// The worker went away; its leases, if any, expire.
	default:
		writeError(w, http.StatusServiceUnavailable, CodeStoreFailed, err.Error())
	}
}

func checkWorkerID(id string) error {
	if len(id) > maxWorkerID {
		return fmt.Errorf("worker_id longer than %d bytes", maxWorkerID)
	}
	for _, r := range id {
		if !unicode.IsPrint(r) {
			return fmt.Errorf("worker_id %q holds a non-printable character", id)
		}
	}
	return nil
}

// Next is GET /api/v1/frontier/next without HTTP: it leases up to n ready
// URLs to worker, waiting up to wait for the first one. It returns an empty
// response if none became ready in time.
func (s *Server) Next(ctx context.Context, worker string, n int, wait time.Duration) (NextResponse, error) {
	if n < 1 || n > MaxBatchSize {
		return NextResponse{}, fmt.Errorf("%w: batch size %d outside 1..%d", ErrConfig, n, MaxBatchSize)
	}
	start := s.cfg.Now()
	deadline := start.Add(wait)
	s.stats.seen(worker, start)
	for {
		s.mu.Lock()
		wake, closed := s.wake, s.closed
		s.mu.Unlock()
		if closed {
			return NextResponse{}, frontier.ErrClosed
		}
		if err := ctx.Err(); err != nil {
			return NextResponse{}, err
		}
		now := s.cfg.Now()
		s.pruneExpired(now)
		resp, next, again, err := s.leaseBatch(ctx, worker, n, now)
		if err != nil || len(resp.URLs) > 0 {
			return resp, err
		}
		if again {
			continue // URLs were settled without being handed out; their hosts may have more
		}
		if !now.Before(deadline) {
			return NextResponse{URLs: []LeasedURL{}}, nil
		}
		until := deadline
		if !next.IsZero() && next.Before(until) {
			until = next
		}
		t := time.NewTimer(until.Sub(now))
		select {
		case <-ctx.Done():
			t.Stop()
			return NextResponse{}, ctx.Err()
		case <-wake:
		case <-t.C:
		}
		t.Stop()
	}
}

// leased is one lease on its way to a worker.
type leased struct {
	l        *frontier.Lease
	decision *dashboard.RobotsDecision
	delay    time.Duration
	ip       string
	drop     bool // settled by the service, not handed out
	orphan   bool // not handed out because the worker went away; left to expire
}

// leaseBatch takes up to n leases at now, checks them against robots.txt and
// registers the handed-out ones under a new lease ID. again reports that
// some leases were settled by the service itself. next is when a URL may
// become ready.
func (s *Server) leaseBatch(ctx context.Context, worker string, n int, now time.Time) (resp NextResponse, next time.Time, again bool, err error) {
	var ls []leased
	for len(ls) < n {
		l, wake, err := s.f.NextAt(now)
		if err != nil {
			if len(ls) == 0 {
				return resp, next, false, err
			}
			break
		}
		if l == nil {
			next = wake
			break
		}
		ls = append(ls, leased{l: l})
	}
	if len(ls) == 0 {
		return NextResponse{URLs: []LeasedURL{}}, next, false, nil
	}
	c := s.stats
	c.mu.Lock()
	for _, it := range ls {
		c.queueLocked(s.band(it.l), -1)
	}
	c.mu.Unlock()

	if s.cfg.Robots != nil {
		s.checkRobots(ctx, ls, now)
	}
	if s.cfg.Resolve != nil {
		s.resolve(ctx, ls)
	}
	resp.URLs = make([]LeasedURL, 0, len(ls))
	b := &batch{id: newLeaseID(), worker: worker, items: map[string]*frontier.Lease{}, hosts: map[uint64]string{}}
	for i := range ls {
		it := &ls[i]
		if it.drop {
			again = true
			continue
		}
		if it.orphan {
			// Kept in the batch, whose expiry accounts for it, but
			// never handed out.
			b.items[it.l.URL] = it.l
			b.expires = maxTime(b.expires, it.l.Expires)
			continue
		}
		var m meta
		if len(it.l.Meta) > 0 {
			_ = json.Unmarshal(it.l.Meta, &m) // written by Submit; a bad record only loses the extras
		}
		resp.URLs = append(resp.URLs, LeasedURL{
			URL: it.l.URL, Host: it.l.Host, IP: it.ip, Depth: it.l.Depth, Priority: it.l.Priority,
			Attempt: it.l.Attempt, SourceURL: m.Source, CrawlID: m.Crawl, DiscoveredAt: m.discoveredAt(),
			Robots: it.decision, CrawlDelayMS: it.delay.Milliseconds(),
		})
		b.items[it.l.URL] = it.l
		b.hosts[s.recent.urlKey(it.l.URL)] = it.l.Host
		b.expires = maxTime(b.expires, it.l.Expires)
	}
	if len(b.items) == 0 {
		return resp, next, again, nil
	}
	b.ttl = max(b.expires.Sub(now), 0)
	s.mu.Lock()
	s.batches[b.id] = b
	s.mu.Unlock()
	c.leasedTo(worker, b, now)
	if len(resp.URLs) == 0 {
		return resp, next, again, nil
	}
	resp.LeaseID, resp.LeaseExpiresAt = b.id, b.expires
	for _, u := range resp.URLs {
		s.hist.Leased(u.URL)
	}
	return resp, next, again, nil
}

// band is the priority band of a lease's URL, as the frontier's Prioritizer
// assigned it when the URL was added.
func (s *Server) band(l *frontier.Lease) int {
	e := frontier.Entry{URL: l.URL, Host: l.Host, Priority: l.Priority, Depth: l.Depth, Meta: l.Meta}
	return min(max(s.prio.Band(&e, s.bands), 0), s.bands-1)
}

// checkRobots asks robots.txt about every lease. Disallowed URLs are settled
// as failed; URLs of hosts whose robots.txt is unreachable (RFC 9309
// §2.3.1.4: assume complete disallow) are deferred (see deferLease): their
// host is blocked until the cache's next fetch of the file and they are
// queued again without counting an attempt, since they were never fetched.
// Once the file has been unreachable for longer than the cache's
// UnreachableLimit, the cache's Fallback decides for good: a URL it
// disallows is settled as failed like any disallowed URL, so a host whose
// robots.txt never comes back does not keep its URLs forever.
func (s *Server) checkRobots(ctx context.Context, ls []leased, now time.Time) {
	sem := make(chan struct{}, robotsParallel)
	var wg sync.WaitGroup
	for i := range ls {
		wg.Add(1)
		sem <- struct{}{}
		go func(it *leased) {
			defer wg.Done()
			defer func() { <-sem }()
			s.checkRobotsOne(ctx, it, now)
		}(&ls[i])
	}
	wg.Wait()
}

func (s *Server) checkRobotsOne(ctx context.Context, it *leased, now time.Time) {
	l := it.l
	pol, err := s.cfg.Robots.PolicyAt(ctx, l.URL, now)
	if err != nil {
		if ctx.Err() != nil {
			// The worker went away: hand nothing out; the lease
			// expires and the URL is queued again.
			it.orphan = true
			return
		}
		it.decision = &dashboard.RobotsDecision{Allowed: true, Reason: "error", Error: err.Error()}
		if errors.Is(err, robots.ErrUnsupportedURL) {
			s.settleInternal(l, frontier.Failed(), now, "robots: "+err.Error(), "robots")
			it.drop = true
		}
		return
	}
	d, err := pol.Allowed(s.cfg.Agent, l.URL)
	if err != nil { // the agent was validated in New
		it.decision = &dashboard.RobotsDecision{Allowed: true, Reason: "error", Error: err.Error()}
		return
	}
	it.decision = decisionOf(d)
	if cd, err := pol.CrawlDelay(s.cfg.Agent); err == nil && cd.Set {
		it.delay = cd.Capped()
	}
	if s.polite != nil {
		s.polite.set(l.Host, it.delay)
	}
	switch {
	case d.Reason == robots.ReasonUnreachable && !pol.FetchInfo().Fallback:
		until := pol.FetchInfo().Expires
		if !until.After(now) {
			until = now.Add(time.Minute)
		}
		s.f.BlockHost(l.Host, until)
		s.stats.block(l.Host, "robots.txt unreachable", until)
		s.deferLease(l, now, "robots.txt unreachable", "robots")
		it.drop = true
	case !d.Allowed:
		why := "disallowed by robots.txt: " + d.Rule.String()
		if d.Reason == robots.ReasonUnreachable {
			why = "robots.txt unreachable for longer than the cache's limit; its fallback disallows everything"
		}
		s.settleInternal(l, frontier.Failed(), now, why, "robots")
		s.stats.mu.Lock()
		s.stats.urls.BlockedByRobots++
		s.stats.mu.Unlock()
		s.hist.Blocked(l.URL, l.Host)
		it.drop = true
	}
}

func decisionOf(d robots.Decision) *dashboard.RobotsDecision {
	rd := &dashboard.RobotsDecision{Allowed: d.Allowed, Reason: d.Reason.String()}
	if d.Reason == robots.ReasonRule {
		rd.Rule = d.Rule.String()
	}
	return rd
}

// settleInternal settles a lease the service decided on itself and keeps the
// counters. category is the error category counted.
func (s *Server) settleInternal(l *frontier.Lease, o frontier.Outcome, now time.Time, why, category string) {
	set, err := s.f.DoneAt(now, l, o)
	if err != nil {
		s.cfg.Logger.Error("frontierapi: settling a lease", "url", l.URL, "err", err)
		return
	}
	c := s.stats
	c.mu.Lock()
	countCategory(&c.errs, category)
	outcome := OutcomeFailed
	if set.Kind == frontier.SettlementRetrying {
		outcome = OutcomeRetry
		c.urls.Retried++
		c.queueLocked(s.band(l), 1)
	} else {
		c.urls.Failed++
	}
	c.mu.Unlock()
	s.hist.Fetched(dashboard.FetchRecord{URL: l.URL, Host: l.Host, Time: now, Error: why, Category: category, Outcome: outcome})
}

// deferLease gives l back to the frontier unsettled (frontier.ReleaseAt),
// for a URL the service did not hand out for a reason that is not the URL's
// fault (its host's robots.txt is unreachable), and keeps the counters: the
// URL is queued again with its attempt count unchanged. The caller blocks
// the host first, so the URL waits for the end of the block. category is
// the error category counted.
func (s *Server) deferLease(l *frontier.Lease, now time.Time, why, category string) {
	err := s.f.ReleaseAt(now, l)
	if err != nil && !errors.Is(err, frontier.ErrLeaseExpired) {
		// ErrClosed: nothing to keep count of.
		s.cfg.Logger.Error("frontierapi: deferring a lease", "url", l.URL, "err", err)
		return
	}
	// Either way the URL is queued again: it is released now, or its
	// lease already expired.
	c := s.stats
	c.mu.Lock()
	countCategory(&c.errs, category)
	c.queueLocked(s.band(l), 1)
	c.mu.Unlock()
	s.hist.Fetched(dashboard.FetchRecord{URL: l.URL, Host: l.Host, Time: now, Error: why, Category: category, Outcome: OutcomeRetry})
}

func countCategory(e *dashboard.ErrorCounts, category string) {
	switch category {
	case "network":
		e.Network++
	case "timeout":
		e.Timeout++
	case "http_4xx":
		e.Client++
	case "http_5xx":
		e.Server++
	case "robots":
		e.Robots++
	case "trap":
		e.Trap++
	}
}

// resolve fills the IP of every lease, once per host.
func (s *Server) resolve(ctx context.Context, ls []leased) {
	ips := map[string]string{}
	for i := range ls {
		it := &ls[i]
		if it.drop {
			continue
		}
		ip, ok := ips[it.l.Host]
		if !ok {
			h := it.l.Host
			if hh, _, err := net.SplitHostPort(h); err == nil {
				h = hh
			}
			if a, err := s.cfg.Resolve(ctx, h); err == nil {
				ip = a
			}
			ips[it.l.Host] = ip
		}
		it.ip = ip
	}
}

// pruneExpired forgets batches whose leases have run out (the frontier
// queues their URLs again), at most once a second. Their IDs are remembered
// in s.recent for a while (see recentLease).
func (s *Server) pruneExpired(now time.Time) {
	s.mu.Lock()
	if now.Before(s.pruneAt) {
		s.mu.Unlock()
		return
	}
	s.pruneAt = now.Add(time.Second)
	var gone []*batch
	for id, b := range s.batches {
		if !b.expires.After(now) {
			gone = append(gone, b)
			delete(s.batches, id)
			s.recent.addLocked(b, b.expires.Add(b.ttl), now)
		}
	}
	s.recent.expireLocked(now)
	s.mu.Unlock()
	if len(gone) == 0 {
		return
	}
	c := s.stats
	c.mu.Lock()
	for _, b := range gone {
		for _, l := range b.items {
			c.queueLocked(s.band(l), 1)
			c.releaseLocked(b.worker, l.Host)
		}
	}
	c.mu.Unlock()
}

// releaseLocked undoes the bookkeeping of one handed-out lease. Requires
// c.mu.
func (c *counters) releaseLocked(worker, host string) {
	c.leased--
	if w, ok := c.workers[worker]; ok && w.leased > 0 {
		w.leased--
	}
	if c.activeHosts[host] <= 1 {
		delete(c.activeHosts, host)
	} else {
		c.activeHosts[host]--
	}
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
