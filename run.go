package crawlkit

import (
	"context"
	"errors"
	"time"

	"github.com/crawlkit/crawlkit/frontier"
)

// The lease loop: workers take leases from the Queue and run each through
// the stages (gate, fetch, analyze, handle) to its settlement; the monitor
// ends the crawl when nothing is left.

// worker leases and processes URLs until leasing stops.
func (cr *Crawler) worker(leaseCtx, workCtx context.Context, stop context.CancelFunc) {
	backoff := time.Duration(0)
	for {
		l, err := cr.front.Next(leaseCtx)
		switch {
		case err == nil:
			backoff = 0
		case leaseCtx.Err() != nil || errors.Is(err, frontier.ErrClosed):
			return
		default:
			// A shared Queue can fail for a while (a database restarting):
			// wait and ask again rather than lose the worker.
			backoff = queueBackoff(backoff)
			cr.cfg.Logger.Warn("leasing from the frontier failed; retrying", "err", err, "in", backoff)
			t := time.NewTimer(backoff)
			select {
			case <-leaseCtx.Done():
				t.Stop()
				return
			case <-t.C:
			}
			continue
		}
		if !cr.process(workCtx, l, stop) {
			return
		}
	}
}

// totalsEvery is how often a DataDir crawl's totals are saved.
const totalsEvery = 10 * time.Second

// queueBackoff returns the wait before asking a failing Queue again after
// waiting d: 100 ms, doubling up to 10 s.
func queueBackoff(d time.Duration) time.Duration {
	return min(max(2*d, 100*time.Millisecond), 10*time.Second)
}

// monitor ends the crawl when the frontier is drained: no worker busy,
// nothing leased, and nothing that will become ready without a new Add.
func (cr *Crawler) monitor(leaseCtx, workCtx context.Context, stop context.CancelFunc, drained chan<- struct{}) {
	tick := time.NewTicker(stateEvery)
	defer tick.Stop()
	poll := time.NewTicker(50 * time.Millisecond)
	defer poll.Stop()
	// After a NextAt error the monitor asks again from retryAt on, as the
	// workers do after a Next error, keeping its ticks meanwhile.
	var backoff time.Duration
	var retryAt time.Time
	lastSave := time.Now()
	for {
		select {
		case <-leaseCtx.Done():
			return
		case now := <-tick.C:
			cr.stats.tick(now)
			cr.saveCrawlState()
			if err := cr.jar.save(); err != nil {
				cr.cfg.Logger.Warn("saving the cookies", "err", err)
			}
			if cr.totals != nil && now.Sub(lastSave) >= totalsEvery {
				lastSave = now
				if err := cr.saveTotals(); err != nil {
					cr.cfg.Logger.Warn("saving the crawl's totals", "err", err)
				}
			}
			continue
		case <-cr.wake:
		case <-poll.C:
		}
		cr.maybeSaveTraps(time.Now())
		cr.maybeShareTraps(time.Now())
		if cr.hasPending() {
			if err := cr.enqueue(nil, nil); err != nil {
				cr.cfg.Logger.Warn("queueing pending links", "err", err)
			}
			continue
		}
		if cr.busy.Load() != 0 || cr.front.Stats().Leased != 0 {
			continue
		}
		if !retryAt.IsZero() && time.Now().Before(retryAt) {
			continue
		}
		l, at, err := cr.front.NextAt(cr.cfg.Now())
		switch {
		case err == nil:
			backoff, retryAt = 0, time.Time{}
		case errors.Is(err, frontier.ErrClosed):
			return
		default:
			// A shared Queue can fail for a while: the end of the crawl
			// is noticed once it answers again.
			backoff = queueBackoff(backoff)
			retryAt = time.Now().Add(backoff)
			cr.cfg.Logger.Warn("asking the frontier for ready URLs failed; retrying", "err", err, "in", backoff)
			continue
		}
		if l != nil {
			// Became ready just now: fetch it here.
			if !cr.process(workCtx, l, stop) {
				return
			}
			continue
		}
		if at.IsZero() && cr.busy.Load() == 0 {
			close(drained)
			stop()
			return
		}
		if cr.outwaits(at) && cr.busy.Load() == 0 {
			cr.waitedOut.Store(true)
			close(drained)
			stop()
			return
		}
	}
}

// outwaits reports that the only work left, due at at, is further away
// than MaxRetryWait (a host blocked by a long Retry-After): the crawl ends
// and leaves it queued, as MaxRetryWait promises, rather than idle. A
// Recrawl schedule or a shared Queue waits on purpose and is left alone.
func (cr *Crawler) outwaits(at time.Time) bool {
	if at.IsZero() || cr.cfg.Recrawl != nil || cr.cfg.Queue != nil {
		return false
	}
	wait := at.Sub(cr.cfg.Now())
	// A host's politeness gap is no wait for the server: however small
	// MaxRetryWait, the crawl waits out Delay, a Crawl-delay and the
	// adaptive delay.
	if wait <= max(cr.cfg.MaxRetryWait, cr.fetcher.Politeness().MaxGap()) {
		return false
	}
	fs := cr.front.Stats()
	cr.cfg.Logger.Info("ending the crawl: the URLs left wait longer than Config.MaxRetryWait; a later Run on the same DataDir takes them up",
		"urls", fs.InMemory+fs.Leased, "until", at, "wait", wait.Round(time.Second), "max_retry_wait", cr.cfg.MaxRetryWait)
	return true
}

// process runs one leased URL through the stages and settles its lease.
// It reports false when the crawl should stop (MaxPages reached). A page
// whose host asks for a long wait first is parked (park.go): its worker
// returns at once, and the rest runs on the parked lease's own goroutine.
func (cr *Crawler) process(ctx context.Context, l *frontier.Lease, stop context.CancelFunc) bool {
	cr.busy.Add(1)
	host := cr.leaseHost(l)
	cr.stats.hostBusy(host, 1)
	// The lease is kept alive from the start: a page may wait for a
	// fetch slot held by pages back from the park.
	keep := cr.keepLease(l)
	cr.takeSlot()
	var res result
	media := len(l.Meta) > 0 && l.Meta[0] == metaMedia
	fetch, ok := cr.passGates(ctx, l, media, &res)
	if fetch && ok {
		if wait := cr.parkFor(l, media); wait > 0 {
			cr.park(ctx, wait, func(ctx context.Context) {
				ok := cr.work(ctx, l, media, &res)
				cr.finish(l, &res, ok, keep, stop, host)
			})
			return true
		}
		ok = cr.work(ctx, l, media, &res)
	}
	return cr.finish(l, &res, ok, keep, stop, host)
}

// finish ends lease l's processing: it settles the lease unless the work
// was abandoned, gives back the fetch slot and wakes the monitor. It
// reports false when the crawl should stop (MaxPages reached).
func (cr *Crawler) finish(l *frontier.Lease, res *result, ok bool, keep func(), stop context.CancelFunc, host string) bool {
	keep()
	defer func() {
		cr.giveSlot()
		cr.stats.hostBusy(host, -1)
		cr.busy.Add(-1)
		select {
		case cr.wake <- struct{}{}:
		default:
		}
	}()
	if !ok {
		if cr.limitReached.Load() {
			// MaxPages: leave the lease unsettled; with a durable store
			// it is queued again by the next Run.
			stop()
			return false
		}
		return true // abandoned: ctx ended mid-fetch; the lease expires
	}
	cr.settle(l, res)
	return true
}

// passGates runs lease l through the checks before its fetch: a URL already
// fetched as another's redirect target, the gate (robots.txt, Crawl-delay)
// and the login gate. fetch reports whether the URL is to be fetched; ok
// is false when the work was abandoned (ctx ended).
func (cr *Crawler) passGates(ctx context.Context, l *frontier.Lease, media bool, res *result) (fetch, ok bool) {
	if !media && cr.takeRedirected(l) {
		// The page was fetched, and handled, as another URL's redirect
		// target after this URL had been queued.
		res.redirectFetched = true
		return false, true
	}
	if !cr.gate(ctx, l.URL, cr.leaseHost(l), res) || !cr.loginGate(ctx, l, res) {
		return false, ctx.Err() == nil
	}
	return true, true
}

// work runs a lease l that passed the gates through the fetch, analyze and
// handle stages, recording what they learn in res. It reports false when
// the work was abandoned (ctx ended, or MaxPages was reached).
func (cr *Crawler) work(ctx context.Context, l *frontier.Lease, media bool, res *result) bool {
	p, ok := cr.fetchPage(ctx, l, media, res)
	if !ok || p == nil {
		return ok
	}
	// The redirect target's key is remembered (see takeRedirected) once
	// the page is settled as a success, and only for a page fetch: a
	// media fetch neither handles a page nor follows its links, and a
	// failed one did not get the target's content. A media URL that
	// redirected to an HTML page (hotlink protection) did not crawl that
	// page: it stays unseen, for a link to find.
	var targetKey uint64
	var targetKnown bool
	if len(p.Redirects) > 0 && !(media && isHTML(p.ContentType)) {
		targetKey, targetKnown = cr.markRedirectTarget(l, p.finalURL)
	}
	ok2xx := p.StatusCode >= 200 && p.StatusCode < 300
	if ok2xx && media && !cr.wantMedia(p.ContentType) {
		return true // not a type the user asked for: not handed on
	}
	follow := false
	if ok2xx && !media && isHTML(p.ContentType) {
		if stop := cr.analyze(p); stop != reasonNone {
			cr.rejectAll(p, stop)
		} else {
			cr.renderRouted(ctx, p)
			follow = true
		}
		res.fingerprint = p.Fingerprint
	}
	// A page whose usage preferences UsageSkip withholds goes to neither
	// the Handler nor the Sink; its links are followed.
	withhold := ok2xx && cr.readUsage(ctx, p)
	// The Handler sees the page before its links are queued, so that it
	// can skip some (Link.Skip) and add others (Page.Enqueue); the links
	// are queued even if it fails, as the page's retry may never come.
	if !withhold {
		cr.callHandler(ctx, p, res)
	}
	if follow {
		res.linksErr = cr.followLinks(l, p)
	}
	if res.linksErr == nil && res.handlerErr == nil && !media {
		res.linksErr = cr.followEnqueued(l, p)
	}
	if res.linksErr != nil {
		// The links could not be queued: the page is fetched again
		// later rather than its links lost.
		cr.cfg.Logger.Warn("queueing links failed; the page will be fetched again", "url", l.URL, "err", res.linksErr)
	}
	if res.handlerErr == nil && res.linksErr == nil && !withhold {
		// A page fetched again is handed to the Sink then.
		cr.sink(ctx, p)
	}
	if targetKnown && !media && ok2xx && res.handlerErr == nil {
		cr.rememberRedirected(targetKey)
	}
	return true
}

// Extender is implemented by Queues whose leases can be prolonged: the
// frontier and the PostgreSQL and Redis queues. The Crawler extends every
// lease it works on through it (see Config.Queue).
type Extender interface {
	Extend(l *frontier.Lease, ttl time.Duration) error
}

// keepLease keeps l alive while its work runs, if the Queue is an Extender:
// whenever half of the lease's time has passed it extends the lease by its
// full duration again. A robots.txt fetch, a host's crawl delay, a slow
// server and a slow Handler may together outlast a lease; without this its
// URL would go to another worker, and be fetched twice, while it is still
// being worked on. The returned function stops it, and must be called
// before the lease is settled.
func (cr *Crawler) keepLease(l *frontier.Lease) (stop func()) {
	var ex Extender
	ok := false
	switch q := cr.front.(type) {
	case guardedQueue:
		ex, ok = q.extender()
	case Extender:
		ex, ok = q, true
	}
	if !ok || l.Expires.IsZero() {
		return func() {}
	}
	ttl := l.Expires.Sub(cr.cfg.Now())
	if ttl <= 0 {
		return func() {}
	}
	done := make(chan struct{})
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		t := time.NewTimer(ttl / 2)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			err := ex.Extend(l, ttl)
			switch {
			case err == nil:
				t.Reset(ttl / 2)
			case errors.Is(err, frontier.ErrLeaseExpired), errors.Is(err, frontier.ErrLeaseSettled),
				errors.Is(err, frontier.ErrClosed), errors.Is(err, frontier.ErrForeignLease):
				// Nothing left to keep: the settlement reports what
				// became of the lease.
				return
			default:
				// A shared queue failing for a moment: try again
				// before the lease runs out.
				cr.cfg.Logger.Warn("extending a lease failed; retrying", "url", l.URL, "err", err)
				t.Reset(ttl / 8)
			}
		}
	}()
	return func() {
		close(done)
		<-exited
	}
}
