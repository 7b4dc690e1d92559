package frontier

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

// gateStore is a MemoryStore whose next read of a window of the given kind
// (a host's band, kindQueued, or the delayed URLs, kindDelayed), once
// armed, reads the store and then blocks, holding what it read, until
// released or until its context is done: a slow network store, with the
// test deciding when the reply arrives. Nothing here waits on a clock.
type gateStore struct {
	*MemoryStore
	kind    byte
	armed   atomic.Bool
	entered chan struct{} // receives when an armed read blocks
	release chan struct{} // a send lets the blocked read return
}

func newGateStore() *gateStore {
	return &gateStore{MemoryStore: NewMemoryStore(), kind: kindQueued, entered: make(chan struct{}), release: make(chan struct{})}
}

func (g *gateStore) Scan(ctx context.Context, start, end []byte, limit int) ([]KV, error) {
	kvs, err := g.MemoryStore.Scan(ctx, start, end, limit)
	if len(start) == 0 || start[0] != g.kind || !g.armed.CompareAndSwap(true, false) {
		return kvs, err
	}
	g.entered <- struct{}{}
	select {
	case <-g.release:
		return kvs, err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// loadSetup leaves host a.test with its band's window drained and a.test/3
// in the store only (Window 2), and a lease on b.test/1 open, then arms the
// store and starts a Next whose read of a.test's next window blocks. It
// returns the open lease, the Next's cancel function and its result.
func loadSetup(t *testing.T) (*Frontier, *gateStore, *Lease, context.CancelFunc, <-chan nextResult) {
	t.Helper()
	s := newGateStore()
	f := newTest(t, Config{Store: s, Politeness: FixedDelay(0), Window: 2, Now: func() time.Time { return t0 }})
	mustAdd(t, f, t0,
		Entry{URL: "http://a.test/1"}, Entry{URL: "http://a.test/2"}, Entry{URL: "http://a.test/3"},
		Entry{URL: "http://b.test/1"})
	la := mustNext(t, f, t0)
	lb := mustNext(t, f, t0)
	if la.URL != "http://a.test/1" || lb.URL != "http://b.test/1" {
		t.Fatalf("leased %s and %s", la.URL, lb.URL)
	}
	mustDone(t, f, t0, la, Success(0))
	if l := mustNext(t, f, t0); l.URL != "http://a.test/2" {
		t.Fatalf("leased %s, want a.test/2 from memory", l.URL)
	} else {
		mustDone(t, f, t0, l, Success(0))
	}
	s.armed.Store(true)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	res := make(chan nextResult, 1)
	go func() {
		l, err := f.Next(ctx)
		res <- nextResult{l, err}
	}()
	<-s.entered // the Next is reading a.test's window from the store
	return f, s, lb, cancel, res
}

type nextResult struct {
	l   *Lease
	err error
}

// TestLoadOutsideLock: while a Next waits for a slow store read of one
// host's window, Add, Stats, Done and NextAt of other hosts go on, the
// host being read is not leased by anyone else, and a URL of that band
// added meanwhile (which the read did not see) is not lost.
func TestLoadOutsideLock(t *testing.T) {
	f, s, lb, _, res := loadSetup(t)

	mustAdd(t, f, t0, Entry{URL: "http://c.test/1"}, Entry{URL: "http://a.test/4"})
	if st := f.Stats(); st.Leased != 1 || st.Added != 6 {
		t.Errorf("Stats during the read: %d leased, %d added; want 1 and 6", st.Leased, st.Added)
	}
	if st := mustDone(t, f, t0, lb, Success(0)); st.Kind != SettlementFinished {
		t.Errorf("Done during the read: %v", st.Kind)
	}
	lc := mustNext(t, f, t0)
	if lc.URL != "http://c.test/1" {
		t.Fatalf("NextAt during the read leased %s, want c.test/1 (a.test is being read)", lc.URL)
	}
	mustDone(t, f, t0, lc, Success(0))
	mustNone(t, f, t0)

	s.release <- struct{}{}
	r := <-res
	if r.err != nil || r.l == nil || r.l.URL != "http://a.test/3" {
		t.Fatalf("Next after the read: %v, %v; want a.test/3", r.l, r.err)
	}
	mustDone(t, f, t0, r.l, Success(0))
	if l := mustNext(t, f, t0); l.URL != "http://a.test/4" {
		t.Fatalf("leased %s, want a.test/4, added during the read", l.URL)
	} else {
		mustDone(t, f, t0, l, Success(0))
	}
	mustNone(t, f, t0)
	if st := f.Stats(); st.Succeeded != 6 || st.InMemory != 0 || st.Leased != 0 {
		t.Errorf("final stats %+v", st)
	}
}

// TestLoadBlockedMeanwhile: a host blocked while its window is read is not
// leased when the read ends; the reading Next goes on with another host.
func TestLoadBlockedMeanwhile(t *testing.T) {
	f, s, lb, _, res := loadSetup(t)
	mustDone(t, f, t0, lb, Success(0))
	f.BlockHost("a.test", t0.Add(time.Hour))
	mustAdd(t, f, t0, Entry{URL: "http://c.test/1"})
	s.release <- struct{}{}
	r := <-res
	if r.err != nil || r.l == nil || r.l.URL != "http://c.test/1" {
		t.Fatalf("Next after the read: %v, %v; want c.test/1 (a.test is blocked)", r.l, r.err)
	}
	mustDone(t, f, t0, r.l, Success(0))
	if wake := mustNone(t, f, t0); !wake.Equal(t0.Add(time.Hour)) {
		t.Errorf("wake %v, want the end of the block", wake)
	}
	if l := mustNext(t, f, t0.Add(time.Hour)); l.URL != "http://a.test/3" {
		t.Fatalf("leased %s after the block, want a.test/3", l.URL)
	}
}

// TestLoadCancel: cancelling the context of a Next ends its blocked store
// read; Next returns the context's error and the host is leased later
// with its URLs intact.
func TestLoadCancel(t *testing.T) {
	f, _, lb, cancel, res := loadSetup(t)
	cancel()
	r := <-res
	if !errors.Is(r.err, context.Canceled) || r.l != nil {
		t.Fatalf("Next after cancel: %v, %v; want context.Canceled", r.l, r.err)
	}
	mustDone(t, f, t0, lb, Success(0))
	l := mustNext(t, f, t0)
	if l.URL != "http://a.test/3" {
		t.Fatalf("leased %s after the cancelled read, want a.test/3", l.URL)
	}
	mustDone(t, f, t0, l, Success(0))
	mustNone(t, f, t0)
}

// TestLoadClose: Close ends a blocked store read and returns once it has
// ended (the store may be closed after Close); the Next returns ErrClosed.
func TestLoadClose(t *testing.T) {
	f, s, _, _, res := loadSetup(t)
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	r := <-res
	if !errors.Is(r.err, ErrClosed) {
		t.Fatalf("Next after Close: %v, %v; want ErrClosed", r.l, r.err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// drain leases and settles every URL leasable at now, one at a time, and
// returns them in lease order.
func drain(t *testing.T, f *Frontier, now time.Time) []string {
	t.Helper()
	var urls []string
	for {
		l, _, err := f.NextAt(now)
		if err != nil {
			t.Fatal(err)
		}
		if l == nil {
			return urls
		}
		urls = append(urls, l.URL)
		mustDone(t, f, now, l, Success(0))
	}
}

// delayedSetup queues x.test/1 and three URLs of d.test due at t0+1h
// (DelayedWindow 2, so they stay in the store), arms the store for the
// delayed window, and starts a Next at t0+2h whose read of that window
// blocks after reading d.test/1 and d.test/2.
func delayedSetup(t *testing.T) (*Frontier, *gateStore, context.CancelFunc, <-chan nextResult) {
	t.Helper()
	s := newGateStore()
	s.kind = kindDelayed
	now := t0.Add(2 * time.Hour)
	f := newTest(t, Config{Store: s, Politeness: FixedDelay(0), DelayedWindow: 2, Now: func() time.Time { return now }})
	due := t0.Add(time.Hour)
	mustAdd(t, f, t0, Entry{URL: "http://x.test/1"},
		Entry{URL: "http://d.test/1", NotBefore: due}, Entry{URL: "http://d.test/2", NotBefore: due},
		Entry{URL: "http://d.test/3", NotBefore: due})
	s.armed.Store(true)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	res := make(chan nextResult, 1)
	go func() {
		l, err := f.Next(ctx)
		res <- nextResult{l, err}
	}()
	<-s.entered
	return f, s, cancel, res
}

// TestDelayedLoadOutsideLock: while a Next waits for a slow read of the
// delayed window, other calls lease and settle the URLs in memory, and a
// URL delayed meanwhile whose due time sorts among the keys being read
// (which the read did not return) is neither lost nor leased twice.
func TestDelayedLoadOutsideLock(t *testing.T) {
	f, s, _, res := delayedSetup(t)
	now := t0.Add(2 * time.Hour)
	mustAdd(t, f, t0, Entry{URL: "http://d.test/4", NotBefore: t0.Add(30 * time.Minute)})
	if st := f.Stats(); st.Added != 5 {
		t.Errorf("Stats during the read: %d added, want 5", st.Added)
	}
	if got := drain(t, f, now); len(got) != 1 || got[0] != "http://x.test/1" {
		t.Fatalf("leased %v during the read, want x.test/1 alone", got)
	}
	s.release <- struct{}{}
	r := <-res
	if r.err != nil || r.l == nil {
		t.Fatalf("Next after the read: %v, %v", r.l, r.err)
	}
	got := []string{r.l.URL}
	mustDone(t, f, now, r.l, Success(0))
	got = append(got, drain(t, f, now)...)
	seen := map[string]int{}
	for _, u := range got {
		seen[u]++
	}
	for _, u := range []string{"http://d.test/1", "http://d.test/2", "http://d.test/3", "http://d.test/4"} {
		if seen[u] != 1 {
			t.Errorf("%s leased %d times; leases %v", u, seen[u], got)
		}
	}
	if len(got) != 4 {
		t.Errorf("leases after the read %v, want the four d.test URLs", got)
	}
	if st := f.Stats(); st.Succeeded != 5 || st.InMemory != 0 {
		t.Errorf("final stats %+v", st)
	}
}

// TestDelayedLoadCancel: cancelling a Next blocked in a read of the delayed
// window ends it; the delayed URLs are all leased later, once.
func TestDelayedLoadCancel(t *testing.T) {
	f, _, cancel, res := delayedSetup(t)
	now := t0.Add(2 * time.Hour)
	cancel()
	if r := <-res; !errors.Is(r.err, context.Canceled) {
		t.Fatalf("Next after cancel: %v, %v; want context.Canceled", r.l, r.err)
	}
	got := drain(t, f, now)
	if len(got) != 4 {
		t.Fatalf("leased %v, want x.test/1 and the three d.test URLs", got)
	}
}
