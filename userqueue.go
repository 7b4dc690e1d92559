package crawlkit

import (
	"context"
	"log/slog"
	"time"

	"github.com/crawlkit/crawlkit/frontier"
)

// A user's Queue is a callback like the Handler: a panic in one of its
// methods must not take the crawl down. guardedQueue turns a panic into a
// *PanicError ("queue") where the method returns an error, so the Crawler
// handles it as a failing shared queue (backoff and retry, the lease
// expiring), and logs it with its stack where the method returns none.
type guardedQueue struct {
	q      Queue
	logger *slog.Logger
}

func (g guardedQueue) recovered(err *error) {
	if v := recover(); v != nil {
		pe := &PanicError{Where: "queue", Value: v, Stack: debugStack()}
		if err != nil {
			*err = pe
			return
		}
		g.logger.Error("the Queue panicked; going on", "err", pe, "stack", string(pe.Stack))
	}
}

func (g guardedQueue) Add(entries ...frontier.Entry) (err error) {
	defer g.recovered(&err)
	return g.q.Add(entries...)
}

func (g guardedQueue) Next(ctx context.Context) (l *frontier.Lease, err error) {
	defer g.recovered(&err)
	return g.q.Next(ctx)
}

func (g guardedQueue) NextAt(now time.Time) (l *frontier.Lease, at time.Time, err error) {
	defer g.recovered(&err)
	return g.q.NextAt(now)
}

func (g guardedQueue) Done(l *frontier.Lease, o frontier.Outcome) (s frontier.Settlement, err error) {
	defer g.recovered(&err)
	return g.q.Done(l, o)
}

func (g guardedQueue) BlockHost(host string, until time.Time) {
	defer g.recovered(nil)
	g.q.BlockHost(host, until)
}

func (g guardedQueue) Stats() (s frontier.Stats) {
	defer g.recovered(nil)
	return g.q.Stats()
}

func (g guardedQueue) Deduplicates() (ok bool) {
	defer g.recovered(nil)
	return g.q.Deduplicates()
}

// extender returns the user's Queue as an Extender, guarded, if it is one.
func (g guardedQueue) extender() (Extender, bool) {
	ex, ok := g.q.(Extender)
	if !ok {
		return nil, false
	}
	return guardedExtender{g, ex}, true
}

type guardedExtender struct {
	g  guardedQueue
	ex Extender
}

func (e guardedExtender) Extend(l *frontier.Lease, ttl time.Duration) (err error) {
	defer e.g.recovered(&err)
	return e.ex.Extend(l, ttl)
}
