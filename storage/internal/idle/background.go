package idle

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// Background runs a queue handle's background goroutines (its listener and
// notifier): each Task at most once, none once Stop has been called. Stop
// waits for those that run. The zero value is ready to use.
type Background struct {
	mu      sync.Mutex
	stopped bool
	wg      sync.WaitGroup
}

// Task is one background goroutine of a Background.
type Task struct {
	started atomic.Bool
}

// Started reports whether the task has been started.
func (t *Task) Started() bool { return t.started.Load() }

// Start runs run in a goroutine of b unless t has been started before or b
// has been stopped. It costs an atomic load once t has started.
func (b *Background) Start(t *Task, run func()) {
	if t.started.Load() {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.stopped || t.started.Load() {
		return
	}
	t.started.Store(true)
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		run()
	}()
}

// Stop keeps further tasks from starting and waits for those that run,
// which must end on their own (their context ended before Stop).
func (b *Background) Stop() {
	b.mu.Lock()
	b.stopped = true
	b.mu.Unlock()
	b.wg.Wait()
}

// Backoff is the pause of a background loop after a failure: Min, then
// twice as long after each further failure, up to Max, until Reset.
type Backoff struct {
	Min, Max time.Duration
	next     time.Duration
}

// Wait pauses for the current backoff and doubles it. It returns false at
// once if ctx ends first.
func (b *Backoff) Wait(ctx context.Context) bool {
	d := max(b.next, b.Min)
	b.next = min(2*d, b.Max)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// Current returns the pause the next Wait makes.
func (b *Backoff) Current() time.Duration { return max(b.next, b.Min) }

// Reset makes the next pause Min again (after a success).
func (b *Backoff) Reset() { b.next = 0 }
