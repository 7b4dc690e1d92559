package crawlkit

import (
	"context"
	"time"

	"github.com/crawlkit/crawlkit/frontier"
)

// Parking: a leased page that must wait for its host does not hold a
// worker while it waits.
//
// The Queue hands out a URL when its host is ready, but the gate may then
// contact the host itself: a host's first URL fetches its robots.txt, after
// which politeness wants the host's delay (Delay, Crawl-delay, or five times
// the robots.txt response time, the adaptive delay) before the page. With
// the worker asleep through that wait, a crawl of many new hosts spends most
// of its workers sleeping: at 150 ms per response a worker did one new host
// per second. Such a page is parked instead: its worker goes back to the
// Queue, and the page's own goroutine sleeps until the host is ready, then
// takes a fetch slot again. Fetch slots stay at Workers, so no more than
// Workers pages are worked on at once; at most lotPerWorker × Workers pages
// are parked, so no more than (lotPerWorker + 1) × Workers URLs are leased.

// lotPerWorker is how many parked pages the lot holds per worker. While a
// crawl meets new hosts, each worker starts one in a response time and each
// waits about its delay: five response times under the adaptive delay, a
// second under the default Delay against 100-200 ms responses. A lot of
// Workers pages filled up at the start of a crawl of many hosts, and the
// rest waited with their workers: on the latency-bound web of
// distributed's BenchmarkScaleLatency one node took 153 s with it and 145 s
// with this one. A parked page costs a goroutine and a lease.
const lotPerWorker = 16

// parkAfter is the shortest wait a page is parked for; a shorter one is
// waited out by its worker, as a parked page costs a goroutine and a lease.
const parkAfter = 100 * time.Millisecond

// maxPolitenessWait is the longest a fetch waits for its host; a URL whose
// host is blocked for longer is put back (HostBlockedError), and is not
// parked either.
const maxPolitenessWait = time.Minute

// takeSlot waits for one of the Workers fetch slots. Slot holders are all
// working on a page (never waiting on the Queue), so one always comes back.
func (cr *Crawler) takeSlot() {
	cr.slots <- struct{}{}
	cr.stats.activeWorkers.Add(1)
}

// giveSlot returns a fetch slot.
func (cr *Crawler) giveSlot() {
	cr.stats.activeWorkers.Add(-1)
	<-cr.slots
}

// parkFor returns how long lease l's page must wait for its host, if that
// is long enough to park it, short enough for the fetch to wait it out, and
// there is room in the lot; else 0.
func (cr *Crawler) parkFor(l *frontier.Lease, media bool) time.Duration {
	f := cr.fetcher
	if media {
		f = cr.mediaFetcher
	}
	now := cr.cfg.Now()
	wait := f.Politeness().ReadyAt(l.Host, now).Sub(now)
	if wait < parkAfter || wait > maxPolitenessWait {
		return 0
	}
	select {
	case cr.lot <- struct{}{}:
		return wait
	default:
		return 0
	}
}

// park gives up the caller's fetch slot and runs rest on a goroutine of
// its own once wait has passed (at once if ctx ends first: rest then sees
// the ended context) and it holds a fetch slot again. The goroutine counts
// among the Run's workers, so Run waits for it.
func (cr *Crawler) park(ctx context.Context, wait time.Duration, rest func(context.Context)) {
	cr.giveSlot()
	cr.stats.parked.Add(1)
	cr.workers.Add(1)
	go func() {
		defer cr.workers.Done()
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
		}
		<-cr.lot
		cr.stats.parked.Add(-1)
		cr.takeSlot()
		rest(ctx)
	}()
}
