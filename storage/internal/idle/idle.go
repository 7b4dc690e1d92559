// Package idle coalesces the polling of goroutines that wait for work in a
// store shared by several processes (the PostgreSQL and Redis queues' Next).
// Without it, every idle worker asks the database on its own timer: 32
// workers polling every 200 ms make 160 queries a second that all find
// nothing. With a Gate, one waiting goroutine (the poller) asks on the timer
// while the others sleep until they are woken: when the poller leaves (it
// found work, or stopped waiting), or when Wake reports local work.
// Gate.Next is the whole waiting loop of both queues' Next. Background and
// Backoff run the goroutines that wake the Gate from other processes' Adds
// (the queues' listeners) and PostgreSQL's notifier.
package idle

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/crawlkit/crawlkit/frontier"
)

// Gate is where the goroutines waiting for work meet. The zero value is
// ready to use.
type Gate struct {
	mu       sync.Mutex
	polling  bool          // a Turn holds the poller role
	sleepers int           // Turns in Sleep
	woken    chan struct{} // closed to wake the sleepers; nil until needed
	listens  int           // Listening calls
	// wakes counts Wake and Listening calls, so that a Turn that was
	// polling (not sleeping) when one came polls again at once rather
	// than sleep through it.
	wakes uint64
}

// Turn is one goroutine's wait at a Gate, from Enter to Leave.
type Turn struct {
	g      *Gate
	poller bool
	wakes  uint64 // g.wakes when the turn's current poll began
}

// Enter starts a goroutine's wait.
func (g *Gate) Enter() *Turn {
	g.mu.Lock()
	defer g.mu.Unlock()
	return &Turn{g: g, wakes: g.wakes}
}

// Sleep is called after a poll that found nothing. If no other Turn holds
// the poller role, t takes it and sleeps for d, or until woken; otherwise
// it sleeps until woken, without a timer. Either way the caller polls again
// when Sleep returns true. A Wake or Listening that came since t's poll
// began (since Enter, or since the previous Sleep returned) makes Sleep
// return true at once: the poll may have read the store before the work
// that the wake-up announces. Sleep returns false when ctx ends or closed
// is closed; the caller should then stop waiting (and Leave).
func (t *Turn) Sleep(ctx context.Context, closed <-chan struct{}, d time.Duration) bool {
	g := t.g
	g.mu.Lock()
	if g.wakes != t.wakes {
		t.wakes = g.wakes
		g.mu.Unlock()
		if ctx.Err() != nil {
			return false
		}
		select {
		case <-closed:
			return false
		default:
		}
		return true
	}
	if !g.polling {
		g.polling, t.poller = true, true
	}
	if g.woken == nil {
		g.woken = make(chan struct{})
	}
	woken := g.woken
	g.sleepers++
	g.mu.Unlock()
	defer func() {
		g.mu.Lock()
		g.sleepers--
		t.wakes = g.wakes // the caller's next poll begins now
		g.mu.Unlock()
	}()

	var tc <-chan time.Time
	if t.poller {
		timer := time.NewTimer(d)
		defer timer.Stop()
		tc = timer.C
	}
	select {
	case <-ctx.Done():
		return false
	case <-closed:
		return false
	case <-woken:
	case <-tc:
	}
	return true
}

// Leave ends t's wait. If t held the poller role, the sleepers are woken
// so that one of them takes it over; a poller that leaves has usually
// found work, and there may be more.
func (t *Turn) Leave() {
	if !t.poller {
		return
	}
	t.poller = false
	g := t.g
	g.mu.Lock()
	g.polling = false
	g.wakeLocked()
	g.mu.Unlock()
}

// Listening is called by a listener for other processes' Adds each time it
// has (re)started listening: it wakes the sleepers, since URLs may have been
// added while no one listened, and counts the (re)start.
func (g *Gate) Listening() {
	g.mu.Lock()
	g.listens++
	g.wakes++
	g.wakeLocked()
	g.mu.Unlock()
}

// Listens returns the number of Listening calls.
func (g *Gate) Listens() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.listens
}

// Sleeping returns the number of Turns in Sleep.
func (g *Gate) Sleeping() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.sleepers
}

// Wake wakes every sleeping Turn, for example after this process added or
// settled work, so that they poll now; a Turn polling at the time polls
// again instead of sleeping.
func (g *Gate) Wake() {
	g.mu.Lock()
	g.wakes++
	g.wakeLocked()
	g.mu.Unlock()
}

func (g *Gate) wakeLocked() {
	if g.sleepers > 0 && g.woken != nil {
		close(g.woken)
		g.woken = nil
	}
}

// Source is what Gate.Next needs of a shared queue.
type Source struct {
	// Ctx is the queue's own context, ended when the queue is closed; it
	// also bounds each lease call (with OpTimeout).
	Ctx       context.Context
	OpTimeout time.Duration
	// PollInterval is the longest the poller sleeps between two calls.
	PollInterval time.Duration
	// Now is the queue's clock.
	Now func() time.Time
	// LeaseAt leases up to n URLs at now; with none it also returns when
	// a host may be ready (zero: unknown).
	LeaseAt func(ctx context.Context, now time.Time, n int) ([]*frontier.Lease, time.Time, error)
	// Unavailable is the queue's error for a lost database connection
	// (errors.Is): it is logged and waited out, not returned.
	Unavailable error
	// OnUnavailable logs such an error.
	OnUnavailable func(err error)
}

// Next is a shared queue's Next: it leases one URL, waiting until one is
// available, ctx ends (its error) or the queue closes (frontier.ErrClosed).
// While nothing is ready, one of the goroutines waiting at g asks again when
// the earliest host may be ready, and at least every PollInterval; the
// others sleep until it finds work, it stops waiting, or Wake.
func (g *Gate) Next(ctx context.Context, src Source) (*frontier.Lease, error) {
	turn := g.Enter()
	defer turn.Leave()
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		now := src.Now()
		opCtx, cancel := context.WithTimeout(src.Ctx, src.OpTimeout)
		stop := context.AfterFunc(ctx, cancel)
		ls, at, err := src.LeaseAt(opCtx, now, 1)
		stop()
		cancel()
		wait := src.PollInterval
		switch {
		case err == nil && len(ls) > 0:
			return ls[0], nil
		case err == nil:
			if !at.IsZero() {
				wait = min(wait, max(at.Sub(now), time.Millisecond))
			}
		case ctx.Err() != nil:
			return nil, ctx.Err()
		case errors.Is(err, src.Unavailable):
			src.OnUnavailable(err)
		default:
			return nil, err
		}
		if !turn.Sleep(ctx, src.Ctx.Done(), wait) {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			return nil, frontier.ErrClosed
		}
	}
}
