package crawlkit_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/crawltest"
	"github.com/crawlkit/crawlkit/statetest"
)

// stallingStore answers the first UpdateState (at open) and then holds every
// later one until release is closed or its context ends, as a database that
// stops answering does.
type stallingStore struct {
	statetest.Memory
	calls    atomic.Int32
	stalled  atomic.Int32
	timedOut atomic.Int32
	release  chan struct{}
}

func (s *stallingStore) UpdateState(ctx context.Context, name string, update func([]byte) ([]byte, error)) error {
	if s.calls.Add(1) > 1 {
		s.stalled.Add(1)
		select {
		case <-s.release:
		case <-ctx.Done():
			s.timedOut.Add(1)
			return ctx.Err()
		}
	}
	return s.Memory.UpdateState(ctx, name, update)
}

// TestStalledStateStoreDoesNotDelayTheEnd: sharing the trap state with a
// StateStore that stops answering must not hold up the crawl. The crawl
// notices its end (Stats.Ended) while the store still holds its first share,
// before that share's timeout, and Run returns once the store answers again.
func TestStalledStateStoreDoesNotDelayTheEnd(t *testing.T) {
	web := newWeb(t, crawltest.Config{Hosts: 2, PagesPerHost: 30, Seed: 31, Agent: "crawlkit-test", NoTraps: true})
	store := &stallingStore{release: make(chan struct{})}
	var log pageLog
	cfg := crawlConfig(web, &log)
	cfg.Delay = 40 * time.Millisecond // long enough to span a state tick
	cfg.StateStore = store
	c, err := crawlkit.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- c.Run(context.Background()) }()
	deadline := time.Now().Add(60 * time.Second)
	for c.Stats().Ended == "" && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond) // polling a condition, with a deadline
	}
	if n := store.timedOut.Load(); n > 0 || c.Stats().Ended == "" {
		close(store.release)
		t.Fatalf("the crawl's end was noticed only after %d stalled shares timed out (Ended %q)", n, c.Stats().Ended)
	}
	if store.stalled.Load() == 0 {
		close(store.release)
		t.Fatal("no share reached the store during the crawl: the test proves nothing")
	}
	close(store.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if c.Stats().Ended != "complete" {
		t.Fatalf("Ended %q", c.Stats().Ended)
	}
	if missing := web.TruthFor("crawlkit-test", 0).Missing(log.urls()); len(missing) > 0 {
		t.Errorf("%d pages missing", len(missing))
	}
}
