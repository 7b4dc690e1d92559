package crawlkit

import (
	"context"
	"fmt"
	"runtime/debug"
)

// Stage 5 of the path of a URL: handle. The fetched page goes to the
// user's Handler, before its links are queued, and to the Sink after. A panic in either is recovered: the
// page fails with a PanicError, and the crawl goes on.

// PanicError is the error a Handler or Sink panic becomes: the page is
// fetched again (a Handler's) or counted as a sink error (a Sink's), and
// the crawl goes on.
type PanicError struct {
	// Where names the callback: "handler", "sink" or "queue".
	Where string
	// Value is what was passed to panic; Stack the goroutine's stack.
	Value any
	Stack []byte
}

func (e *PanicError) Error() string {
	return fmt.Sprintf("crawlkit: %s panicked: %v", e.Where, e.Value)
}

// callHandler hands p to the Handler. A Handler error is recorded on res,
// so the page is fetched again.
func (cr *Crawler) callHandler(ctx context.Context, p *Page, res *result) {
	if cr.cfg.Handler != nil {
		if err := callRecovered("handler", func() error { return cr.cfg.Handler(ctx, p) }); err != nil {
			res.handlerErr = err
			cr.cfg.Logger.Warn("handler failed; the URL will be fetched again", "url", p.URL, "err", err)
		}
	}
}

// sink hands p, its links settled, to the Sink.
func (cr *Crawler) sink(ctx context.Context, p *Page) {
	if cr.cfg.Sink != nil {
		if err := callRecovered("sink", func() error { return cr.cfg.Sink.Write(ctx, p) }); err != nil {
			cr.stats.sinkErrors.Add(1)
			cr.cfg.Logger.Warn("sink failed", "url", p.URL, "err", err)
		}
	}
}

// debugStack is the panicking goroutine's stack, for a PanicError.
func debugStack() []byte { return debug.Stack() }

// callRecovered calls fn, turning a panic into a *PanicError.
func callRecovered(where string, fn func() error) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &PanicError{Where: where, Value: v, Stack: debugStack()}
		}
	}()
	return fn()
}
