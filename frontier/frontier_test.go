package frontier

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"
	"testing"
	"time"
)

var t0 = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

func noClock(t *testing.T) func() time.Time {
	return func() time.Time { t.Error("wall clock read in a deterministic test"); return t0 }
}

func newTest(t *testing.T, opts Config) *Frontier {
	t.Helper()
	if opts.Now == nil {
		opts.Now = noClock(t)
	}
	f, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func mustAdd(t *testing.T, f *Frontier, now time.Time, es ...Entry) {
	t.Helper()
	if err := f.AddAt(now, es...); err != nil {
		t.Fatal(err)
	}
}

func mustNext(t *testing.T, f *Frontier, now time.Time) *Lease {
	t.Helper()
	l, _, err := f.NextAt(now)
	if err != nil {
		t.Fatal(err)
	}
	if l == nil {
		t.Fatalf("no lease at %v", now.Sub(t0))
	}
	return l
}

func mustNone(t *testing.T, f *Frontier, now time.Time) time.Time {
	t.Helper()
	l, wake, err := f.NextAt(now)
	if err != nil {
		t.Fatal(err)
	}
	if l != nil {
		t.Fatalf("unexpected lease of %s at %v", l.URL, now.Sub(t0))
	}
	return wake
}

func mustDone(t *testing.T, f *Frontier, now time.Time, l *Lease, o Outcome) Settlement {
	t.Helper()
	s, err := f.DoneAt(now, l, o)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestBandOrderWithinHost(t *testing.T) {
	for _, store := range []bool{false, true} {
		t.Run(fmt.Sprint("store=", store), func(t *testing.T) {
			opts := Config{Politeness: FixedDelay(0), Window: 2}
			if store {
				opts.Store = NewMemoryStore()
			}
			f := newTest(t, opts)
			for i := 0; i < 12; i++ {
				mustAdd(t, f, t0, Entry{URL: fmt.Sprintf("http://a.test/%d", i), Depth: 3 - i%4})
			}
			var got []string
			for i := 0; i < 12; i++ {
				l := mustNext(t, f, t0)
				got = append(got, l.URL)
				mustDone(t, f, t0, l, Success(0))
			}
			// Band = depth: depth 0 first (i%4 == 3), FIFO within a band.
			want := []string{
				"http://a.test/3", "http://a.test/7", "http://a.test/11",
				"http://a.test/2", "http://a.test/6", "http://a.test/10",
				"http://a.test/1", "http://a.test/5", "http://a.test/9",
				"http://a.test/0", "http://a.test/4", "http://a.test/8",
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("order\n got %v\nwant %v", got, want)
			}
			mustNone(t, f, t0)
		})
	}
}

func TestWeightedBandSelection(t *testing.T) {
	f := newTest(t, Config{Politeness: FixedDelay(0)})
	// 100 hosts per band, one URL each, all ready.
	for b := 0; b < 4; b++ {
		for i := 0; i < 100; i++ {
			mustAdd(t, f, t0, Entry{URL: fmt.Sprintf("http://b%d-%d.test/", b, i), Depth: b})
		}
	}
	// Over 5 periods of the weights 8+4+2+1, each band gets exactly its
	// weight per period.
	count := make([]int, 4)
	for i := 0; i < 75; i++ {
		l := mustNext(t, f, t0)
		count[l.Depth]++
	}
	if want := []int{40, 20, 10, 5}; fmt.Sprint(count) != fmt.Sprint(want) {
		t.Fatalf("leases per band %v, want %v", count, want)
	}
}

func TestPolitenessDelayAndWake(t *testing.T) {
	f := newTest(t, Config{Politeness: FixedDelay(3 * time.Second)})
	mustAdd(t, f, t0, Entry{URL: "http://a.test/1"}, Entry{URL: "http://a.test/2"})
	l := mustNext(t, f, t0)
	if wake := mustNone(t, f, t0); wake != l.Expires {
		t.Fatalf("with the host leased, wake = %v, want the lease expiry %v", wake, l.Expires)
	}
	done := t0.Add(500 * time.Millisecond)
	if s := mustDone(t, f, done, l, Success(0)); s != (Settlement{Kind: SettlementFinished}) {
		t.Fatalf("settlement of a success without a schedule %+v", s)
	}
	if wake := mustNone(t, f, done); !wake.Equal(done.Add(3 * time.Second)) {
		t.Fatalf("wake = %v, want settle + delay %v", wake.Sub(t0), done.Add(3*time.Second).Sub(t0))
	}
	mustNone(t, f, done.Add(3*time.Second-1))
	mustNext(t, f, done.Add(3*time.Second))
}

func TestMaxLeasesPerHost(t *testing.T) {
	f := newTest(t, Config{Politeness: FixedDelay(0), MaxLeasesPerHost: 2})
	for i := 0; i < 5; i++ {
		mustAdd(t, f, t0, Entry{URL: fmt.Sprintf("http://a.test/%d", i)})
	}
	a, b := mustNext(t, f, t0), mustNext(t, f, t0)
	mustNone(t, f, t0)
	mustDone(t, f, t0, a, Success(0))
	c := mustNext(t, f, t0)
	mustNone(t, f, t0)
	if a.URL == b.URL || b.URL == c.URL {
		t.Fatalf("same URL leased twice: %s %s %s", a.URL, b.URL, c.URL)
	}
}

func TestBlockHost(t *testing.T) {
	f := newTest(t, Config{Politeness: FixedDelay(0)})
	mustAdd(t, f, t0, Entry{URL: "http://a.test/"}, Entry{URL: "http://b.test/"})
	f.BlockHost("a.test", t0.Add(time.Hour))
	f.BlockHost("a.test", t0.Add(time.Minute)) // shorter: ignored
	l := mustNext(t, f, t0)
	if l.Host != "b.test" {
		t.Fatalf("leased %s of a blocked host", l.URL)
	}
	mustDone(t, f, t0, l, Success(0))
	if wake := mustNone(t, f, t0.Add(time.Second)); !wake.Equal(t0.Add(time.Hour)) {
		t.Fatalf("wake %v, want the end of the block", wake.Sub(t0))
	}
	mustNone(t, f, t0.Add(time.Hour-1))
	if l := mustNext(t, f, t0.Add(time.Hour)); l.Host != "a.test" {
		t.Fatalf("got %s", l.URL)
	}
}

func TestLeaseExpiryReturnsURL(t *testing.T) {
	f := newTest(t, Config{Politeness: FixedDelay(time.Second), LeaseTTL: 10 * time.Second})
	mustAdd(t, f, t0, Entry{URL: "http://a.test/1"}, Entry{URL: "http://a.test/2"})
	l := mustNext(t, f, t0)
	mustNone(t, f, t0.Add(9*time.Second))
	// Expired at 10 s; the politeness delay counts from the expiry.
	mustNone(t, f, t0.Add(10*time.Second))
	again := mustNext(t, f, t0.Add(11*time.Second))
	if again.URL != l.URL || again.ID == l.ID {
		t.Fatalf("after expiry leased %s (id %d), want %s with a new id", again.URL, again.ID, l.URL)
	}
	if _, err := f.DoneAt(t0.Add(11*time.Second), l, Success(0)); !errors.Is(err, ErrLeaseExpired) {
		t.Fatalf("Done on expired lease: %v", err)
	}
	if err := f.ExtendAt(t0.Add(11*time.Second), l, time.Hour); !errors.Is(err, ErrLeaseExpired) {
		t.Fatalf("Extend on expired lease: %v", err)
	}
	// Done exactly at the deadline is too late, and requeues.
	if _, err := f.DoneAt(t0.Add(21*time.Second), again, Success(0)); !errors.Is(err, ErrLeaseExpired) {
		t.Fatalf("Done at the deadline: %v", err)
	}
	if st := f.Stats(); st.Expired != 2 || st.Succeeded != 0 {
		t.Fatalf("stats %+v", st)
	}
}

func TestReleaseRequeuesWithoutAnAttempt(t *testing.T) {
	f := newTest(t, Config{Politeness: FixedDelay(time.Second), LeaseTTL: time.Minute})
	mustAdd(t, f, t0, Entry{URL: "http://a.test/1"}, Entry{URL: "http://a.test/2"})
	l := mustNext(t, f, t0)
	// Released at 5 s: the same URL comes back first, from the politeness
	// time after the release, with its attempt count unchanged.
	if err := f.ReleaseAt(t0.Add(5*time.Second), l); err != nil {
		t.Fatal(err)
	}
	mustNone(t, f, t0.Add(6*time.Second-1))
	for i := 0; i < 3; i++ {
		at := t0.Add(time.Duration(6+i) * time.Second)
		again := mustNext(t, f, at)
		if again.URL != l.URL || again.ID == l.ID || again.Attempt != l.Attempt {
			t.Fatalf("after release %d leased %s (id %d, attempt %d), want %s with a new id and attempt %d",
				i, again.URL, again.ID, again.Attempt, l.URL, l.Attempt)
		}
		if err := f.ReleaseAt(at, again); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.DoneAt(t0.Add(10*time.Second), l, Success(0)); !errors.Is(err, ErrLeaseExpired) {
		t.Fatalf("Done on a released lease: %v, want ErrLeaseExpired", err)
	}
	if err := f.ReleaseAt(t0.Add(10*time.Second), l); !errors.Is(err, ErrLeaseExpired) {
		t.Fatalf("second Release: %v, want ErrLeaseExpired", err)
	}
	if st := f.Stats(); st.Released != 4 || st.Expired != 0 || st.Failed != 0 || st.Leased != 0 {
		t.Fatalf("stats %+v, want 4 released and nothing else", st)
	}
	// The URL is still queued, and settles normally.
	last := mustNext(t, f, t0.Add(time.Minute))
	if last.URL != l.URL {
		t.Fatalf("leased %s, want %s", last.URL, l.URL)
	}
	mustDone(t, f, t0.Add(time.Minute), last, Success(0))
}

func TestDoneErrors(t *testing.T) {
	f := newTest(t, Config{Politeness: FixedDelay(0)})
	g := newTest(t, Config{Politeness: FixedDelay(0)})
	mustAdd(t, f, t0, Entry{URL: "http://a.test/"})
	l := mustNext(t, f, t0)
	if _, err := g.DoneAt(t0, l, Success(0)); !errors.Is(err, ErrForeignLease) {
		t.Fatalf("foreign: %v", err)
	}
	if _, err := f.DoneAt(t0, nil, Success(0)); !errors.Is(err, ErrForeignLease) {
		t.Fatalf("nil: %v", err)
	}
	if _, err := f.DoneAt(t0, l, Outcome{}); !errors.Is(err, ErrInvalidOutcome) {
		t.Fatalf("zero outcome: %v", err)
	}
	if s := mustDone(t, f, t0, l, Failed()); s != (Settlement{Kind: SettlementFailed}) {
		t.Fatalf("settlement of a failure %+v", s)
	}
	if _, err := f.DoneAt(t0, l, Success(0)); !errors.Is(err, ErrLeaseSettled) {
		t.Fatalf("twice: %v", err)
	}
	f.Close()
	if err := f.AddAt(t0, Entry{URL: "http://a.test/x"}); !errors.Is(err, ErrClosed) {
		t.Fatalf("Add after Close: %v", err)
	}
	if _, _, err := f.NextAt(t0); !errors.Is(err, ErrClosed) {
		t.Fatalf("Next after Close: %v", err)
	}
}

func TestInvalidEntries(t *testing.T) {
	f := newTest(t, Config{Politeness: FixedDelay(0)})
	bad := []Entry{
		{},
		{URL: "relative/path"},
		{URL: "http://a.test/", Host: "a test"},
		{URL: "http://a.test/", Priority: -1},
		{URL: "http://a.test/" + string(make([]byte, maxURLBytes))},
		{URL: "http://a.test/", Meta: make([]byte, maxMetaBytes+1)},
	}
	for i, e := range bad {
		err := f.AddAt(t0, Entry{URL: "http://ok.test/"}, e)
		if !errors.Is(err, ErrInvalidEntry) {
			t.Errorf("entry %d: err = %v, want ErrInvalidEntry", i, err)
		}
	}
	mustNone(t, f, t0) // nothing of a rejected call was queued
	mustAdd(t, f, t0, Entry{URL: "HTTP://Ex.TEST:8080/p"})
	if l := mustNext(t, f, t0); l.Host != "ex.test:8080" {
		t.Fatalf("derived host %q", l.Host)
	}
}

func TestNotBefore(t *testing.T) {
	f := newTest(t, Config{Politeness: FixedDelay(0)})
	mustAdd(t, f, t0, Entry{URL: "http://a.test/later", NotBefore: t0.Add(time.Minute)}, Entry{URL: "http://a.test/now"})
	l := mustNext(t, f, t0)
	if l.URL != "http://a.test/now" {
		t.Fatalf("got %s", l.URL)
	}
	mustDone(t, f, t0, l, Success(0))
	if wake := mustNone(t, f, t0); !wake.Equal(t0.Add(time.Minute)) {
		t.Fatalf("wake %v", wake.Sub(t0))
	}
	if l := mustNext(t, f, t0.Add(time.Minute)); l.URL != "http://a.test/later" {
		t.Fatalf("got %s", l.URL)
	}
}

func TestRetryBackoff(t *testing.T) {
	f := newTest(t, Config{Politeness: FixedDelay(0), RetryBase: 10 * time.Second, RetryMax: 25 * time.Second, MaxAttempts: 4})
	mustAdd(t, f, t0, Entry{URL: "http://a.test/", Meta: []byte("m")})
	now := t0
	// Waits: 10 s, then 20 s, then Retry-After 60 s beats the capped 25 s backoff.
	for i, o := range []Outcome{Retry(0), Retry(0), Retry(time.Minute)} {
		l := mustNext(t, f, now)
		if l.Attempt != i || string(l.Meta) != "m" {
			t.Fatalf("attempt %d: lease %+v", i, l)
		}
		s := mustDone(t, f, now, l, o)
		wait := []time.Duration{10 * time.Second, 20 * time.Second, time.Minute}[i]
		if want := (Settlement{Kind: SettlementRetrying, At: now.Add(wait), Attempt: i + 1}); !s.At.Equal(want.At) || s.Kind != want.Kind || s.Attempt != want.Attempt {
			t.Fatalf("attempt %d: settlement %+v, want %+v", i, s, want)
		}
		mustNone(t, f, now.Add(wait-1))
		now = now.Add(wait)
	}
	l := mustNext(t, f, now)
	if l.Attempt != 3 {
		t.Fatalf("attempt %d", l.Attempt)
	}
	if s := mustDone(t, f, now, l, Retry(0)); s != (Settlement{Kind: SettlementGivenUp, Attempt: 4}) { // fourth attempt: dropped
		t.Fatalf("settlement of the last attempt %+v, want given up after 4", s)
	}
	if wake := mustNone(t, f, now.Add(time.Hour)); !wake.IsZero() {
		t.Fatalf("wake %v after the URL was dropped", wake)
	}
	if st := f.Stats(); st.Retried != 3 || st.Dropped != 1 || st.Failed != 1 {
		t.Fatalf("stats %+v", st)
	}
}

func TestRecrawlAdaptive(t *testing.T) {
	sched := Adaptive{Initial: time.Hour, Min: time.Minute, Max: 2 * time.Hour}
	f := newTest(t, Config{Politeness: FixedDelay(0), Schedule: sched})
	mustAdd(t, f, t0, Entry{URL: "http://a.test/"})
	now := t0
	steps := []struct {
		o       Outcome
		changed bool
	}{
		{Success(7), true},  // first fetch
		{Success(7), false}, // same fingerprint
		{NotModified(), false},
		{Success(8), true},
		{Success(0), true}, // unknown fingerprint counts as changed
	}
	var iv time.Duration
	for i, s := range steps {
		l := mustNext(t, f, now)
		if l.Interval != iv {
			t.Fatalf("step %d: lease interval %v, want %v", i, l.Interval, iv)
		}
		st := mustDone(t, f, now, l, s.o)
		iv = sched.Next(iv, s.changed)
		if st.Kind != SettlementRecrawl || !st.At.Equal(now.Add(iv)) || st.Attempt != 0 {
			t.Fatalf("step %d: settlement %+v, want a recrawl at %v", i, st, now.Add(iv))
		}
		mustNone(t, f, now.Add(iv-1))
		now = now.Add(iv)
	}
	l := mustNext(t, f, now)
	if l.Fingerprint != 8 {
		t.Fatalf("fingerprint %d, want 8 kept from the last known", l.Fingerprint)
	}
	// An explicit recrawl time wins over the schedule.
	at := now.Add(5 * time.Second)
	if st := mustDone(t, f, now, l, Outcome{Kind: OutcomeSuccess, RecrawlAt: at}); st.Kind != SettlementRecrawl || !st.At.Equal(at) {
		t.Fatalf("settlement %+v, want a recrawl at %v", st, at)
	}
	mustNone(t, f, at.Add(-1))
	mustNext(t, f, at)
	if st := f.Stats(); st.Recrawls != 6 || st.NotModified != 1 {
		t.Fatalf("stats %+v", st)
	}
}

func TestAdaptiveClamps(t *testing.T) {
	a := Adaptive{Initial: time.Hour, Min: 50 * time.Minute, Max: 80 * time.Minute}
	if got := a.Next(time.Hour, true); got != 50*time.Minute {
		t.Errorf("changed: %v, want clamped to Min", got)
	}
	if got := a.Next(time.Hour, false); got != 80*time.Minute {
		t.Errorf("unchanged: %v, want clamped to Max", got)
	}
	var z Adaptive
	if got := z.Next(0, true); got != AdaptiveInitial {
		t.Errorf("zero value first interval %v", got)
	}
	if got := z.Next(AdaptiveMax, false); got != AdaptiveMax {
		t.Errorf("zero value max %v", got)
	}
	if got := FixedInterval(time.Hour).Next(time.Minute, true); got != time.Hour {
		t.Errorf("fixed %v", got)
	}
}

func TestOPICBands(t *testing.T) {
	o := OPIC{}
	cases := []struct {
		cash float64
		band int
	}{{0, 0}, {1, 0}, {5, 0}, {0.2, 0}, {0.1, 1}, {0.05, 1}, {0.01, 2}, {1e-9, 3}, {1e-300, 3}}
	for _, c := range cases {
		if got := o.Band(&Entry{Priority: c.cash}, 4); got != c.band {
			t.Errorf("cash %v: band %d, want %d", c.cash, got, c.band)
		}
	}
	// Cash survives the frontier's float32 narrowing without becoming a
	// seed's.
	f := newTest(t, Config{Politeness: FixedDelay(0), Prioritizer: o})
	mustAdd(t, f, t0, Entry{URL: "http://a.test/", Priority: 1e-60})
	if l := mustNext(t, f, t0); l.Priority <= 0 || o.Band(&Entry{Priority: l.Priority}, 4) != 3 {
		t.Fatalf("tiny cash came back as %v", l.Priority)
	}
}

func TestNextBlocking(t *testing.T) {
	f, err := New(Config{Politeness: FixedDelay(0)})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got := make(chan *Lease)
	go func() {
		l, err := f.Next(context.Background())
		if err != nil {
			t.Error(err)
		}
		got <- l
	}()
	// Wait until the goroutine is blocked on the notification channel.
	for {
		f.mu.Lock()
		waiting := len(f.waiters) > 0
		f.mu.Unlock()
		if waiting {
			break
		}
		runtime.Gosched()
	}
	if err := f.Add(Entry{URL: "http://a.test/"}); err != nil {
		t.Fatal(err)
	}
	if l := <-got; l == nil || l.URL != "http://a.test/" {
		t.Fatalf("Next returned %+v", l)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := f.Next(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled Next: %v", err)
	}

	errc := make(chan error)
	go func() {
		_, err := f.Next(context.Background())
		errc <- err
	}()
	for {
		f.mu.Lock()
		waiting := len(f.waiters) > 0
		f.mu.Unlock()
		if waiting {
			break
		}
		runtime.Gosched()
	}
	f.Close()
	if err := <-errc; !errors.Is(err, ErrClosed) {
		t.Fatalf("Next after Close: %v", err)
	}
}

func TestIdleHostsAreForgotten(t *testing.T) {
	f := newTest(t, Config{Politeness: FixedDelay(time.Second)})
	for i := 0; i < 50; i++ {
		mustAdd(t, f, t0, Entry{URL: fmt.Sprintf("http://h%d.test/", i)})
	}
	for i := 0; i < 50; i++ {
		mustDone(t, f, t0, mustNext(t, f, t0), Success(0))
	}
	if n := f.Stats().Hosts; n != 50 {
		t.Fatalf("%d hosts remembered during their delay, want 50", n)
	}
	// A host added again during its delay still waits for it.
	mustAdd(t, f, t0, Entry{URL: "http://h3.test/again"})
	mustNone(t, f, t0.Add(time.Second-1))
	mustDone(t, f, t0.Add(time.Second), mustNext(t, f, t0.Add(time.Second)), Success(0))
	mustNone(t, f, t0.Add(3*time.Second))
	if n := f.Stats().Hosts; n != 0 {
		t.Fatalf("%d hosts remembered after their delay passed", n)
	}
}

// countingStore records the Scans and Writes a frontier makes.
type countingStore struct {
	*MemoryStore
	mu     sync.Mutex
	scans  [][2][]byte
	writes int
	block  chan struct{} // when set, the next Write waits for it
}

func (c *countingStore) Scan(ctx context.Context, start, end []byte, limit int) ([]KV, error) {
	c.mu.Lock()
	c.scans = append(c.scans, [2][]byte{bytes.Clone(start), bytes.Clone(end)})
	c.mu.Unlock()
	return c.MemoryStore.Scan(ctx, start, end, limit)
}

func (c *countingStore) Write(ctx context.Context, muts []Mutation) error {
	c.mu.Lock()
	c.writes++
	b := c.block
	c.block = nil
	c.mu.Unlock()
	if b != nil {
		<-b
	}
	return c.MemoryStore.Write(ctx, muts)
}

func TestStoreWindowAndCursors(t *testing.T) {
	cs := &countingStore{MemoryStore: NewMemoryStore()}
	f := newTest(t, Config{Store: cs, Politeness: FixedDelay(0), Window: 8})
	var es []Entry
	for i := 0; i < 1000; i++ {
		es = append(es, Entry{URL: fmt.Sprintf("http://a.test/%04d", i)})
	}
	mustAdd(t, f, t0, es...)
	if st := f.Stats(); st.InMemory > 8 {
		t.Fatalf("%d URLs in memory with a window of 8", st.InMemory)
	}
	cs.mu.Lock()
	cs.scans = nil
	cs.mu.Unlock()
	for i := 0; i < 1000; i++ {
		l := mustNext(t, f, t0)
		if want := fmt.Sprintf("http://a.test/%04d", i); l.URL != want {
			t.Fatalf("lease %d is %s, want %s", i, l.URL, want)
		}
		mustDone(t, f, t0, l, Success(0))
		if st := f.Stats(); st.InMemory > 8 {
			t.Fatalf("%d URLs in memory with a window of 8", st.InMemory)
		}
	}
	// Each window load starts where the previous one ended: the scans of
	// the queue start at strictly increasing keys and stay within the
	// host's band.
	cs.mu.Lock()
	defer cs.mu.Unlock()
	var last []byte
	loads := 0
	for _, sc := range cs.scans {
		if sc[0][0] != kindQueued {
			continue
		}
		loads++
		if last != nil && bytes.Compare(sc[0], last) <= 0 {
			t.Fatalf("window load from %q after a load from %q: not a cursor", sc[0], last)
		}
		if !bytes.HasPrefix(sc[0], hostPrefix("a.test")) || !bytes.Equal(sc[1], append(hostPrefix("a.test"), 1)) {
			t.Fatalf("scan [%q, %q) is not bounded to the host's band", sc[0], sc[1])
		}
		last = sc[0]
	}
	if loads < (1000-8)/8 || loads > 1000/8+1 {
		t.Fatalf("%d window loads for 1000 URLs in windows of 8", loads)
	}
	if n := cs.Len(); n != 1 {
		t.Fatalf("%d keys left in the store, want only the sequence record", n)
	}
}

func TestGroupCommit(t *testing.T) {
	cs := &countingStore{MemoryStore: NewMemoryStore(), block: make(chan struct{})}
	release := cs.block
	f := newTest(t, Config{Store: cs, Politeness: FixedDelay(0)})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); mustAdd(t, f, t0, Entry{URL: "http://first.test/"}) }()
	// Wait for the first write to block, then queue 20 more Adds.
	for {
		cs.mu.Lock()
		started := cs.writes == 1
		cs.mu.Unlock()
		if started {
			break
		}
		runtime.Gosched()
	}
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); mustAdd(t, f, t0, Entry{URL: fmt.Sprintf("http://h%d.test/", i)}) }()
	}
	for {
		f.commit.mu.Lock()
		n := 0
		if f.commit.open != nil {
			n = len(f.commit.open.ops)
		}
		f.commit.mu.Unlock()
		if n == 20 {
			break
		}
		runtime.Gosched()
	}
	close(release)
	wg.Wait()
	if cs.writes != 2 {
		t.Fatalf("%d store writes for 21 Adds, want 2 (one group behind the blocked write)", cs.writes)
	}
	n := 0
	for {
		l, _, err := f.NextAt(t0)
		if err != nil {
			t.Fatal(err)
		}
		if l == nil {
			break
		}
		n++
	}
	if n != 21 {
		t.Fatalf("%d URLs leasable, want 21", n)
	}
}

func TestStoreWriteFailureKeepsLease(t *testing.T) {
	fs := &failingStore{MemoryStore: NewMemoryStore()}
	f := newTest(t, Config{Store: fs, Politeness: FixedDelay(0)})
	mustAdd(t, f, t0, Entry{URL: "http://a.test/"})
	l := mustNext(t, f, t0)
	fs.fail = true
	if _, err := f.DoneAt(t0, l, Success(0)); !errors.Is(err, errDisk) {
		t.Fatalf("Done with a failing store: %v", err)
	}
	if err := f.AddAt(t0, Entry{URL: "http://b.test/"}); !errors.Is(err, errDisk) {
		t.Fatalf("Add with a failing store: %v", err)
	}
	mustNone(t, f, t0) // b.test was not acknowledged, a.test is still leased
	fs.fail = false
	mustDone(t, f, t0, l, Success(0))
	mustNone(t, f, t0.Add(time.Hour))
}

var errDisk = errors.New("disk on fire")

type failingStore struct {
	*MemoryStore
	fail bool
}

func (s *failingStore) Write(ctx context.Context, muts []Mutation) error {
	if s.fail {
		return errDisk
	}
	return s.MemoryStore.Write(ctx, muts)
}

func TestRecordRoundTrip(t *testing.T) {
	rs := []record{
		{url: "http://a.test/"},
		{url: "http://a.test/x", depth: 300, attempts: 4, prio: 0.25, meta: "meta", recrawl: true, fp: 1 << 60, interval: -5},
		{url: "u", host: "h.test:8080", band: 3},
	}
	for _, r := range rs {
		for _, delayed := range []bool{false, true} {
			if delayed && r.host == "" {
				continue
			}
			got, err := decodeRecord(appendRecord(nil, &r, delayed), delayed)
			if err != nil {
				t.Fatal(err)
			}
			if !delayed {
				got.host, got.band = r.host, r.band
			}
			if got != r {
				t.Fatalf("round trip %+v -> %+v", r, got)
			}
		}
	}
}

func FuzzDecodeRecord(f *testing.F) {
	f.Add(appendRecord(nil, &record{url: "http://a.test/"}, false), false)
	f.Add(appendRecord(nil, &record{url: "u", host: "h", meta: "m", recrawl: true, prio: 1}, true), true)
	f.Add([]byte{1, 7, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, true)
	f.Fuzz(func(t *testing.T, b []byte, delayed bool) {
		r, err := decodeRecord(b, delayed)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v is not ErrCorrupt", err)
			}
			return
		}
		// A record that decodes re-encodes to something that decodes to
		// the same record.
		again, err := decodeRecord(appendRecord(nil, &r, delayed), delayed)
		if err != nil || again != r {
			t.Fatalf("re-encode of %+v: %+v, %v", r, again, err)
		}
	})
}

func FuzzParseKeys(f *testing.F) {
	f.Add(queuedKey("a.test", 2, 9))
	f.Add(delayedKey(-5, 3))
	f.Add([]byte("q\x00\x00"))
	f.Fuzz(func(t *testing.T, k []byte) {
		if h, b, s, err := parseQueuedKey(k); err == nil {
			if !bytes.Equal(queuedKey(h, b, s), k) {
				t.Fatalf("queued key %q does not round-trip", k)
			}
		}
		if d, s, err := parseDelayedKey(k); err == nil {
			if !bytes.Equal(delayedKey(d, s), k) {
				t.Fatalf("delayed key %q does not round-trip", k)
			}
		}
	})
}

// drainAll leases and settles with success everything leasable at now and
// returns the URLs in lease order.
func drainAll(t *testing.T, f *Frontier, now time.Time) []string {
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

func TestRecoverWithFewerBands(t *testing.T) {
	// A store written with 8 bands, reopened with 4 (frontierd -bands):
	// the URLs of bands 4 to 7 are kept, after the configured bands.
	s := NewMemoryStore()
	f := newTest(t, Config{Store: s, Bands: 8, Politeness: FixedDelay(0)})
	for _, d := range []int{7, 0, 5, 3, 6, 1, 4, 2} {
		mustAdd(t, f, t0,
			Entry{URL: fmt.Sprintf("http://a.test/%d", d), Depth: d},
			Entry{URL: fmt.Sprintf("http://b.test/%d", d), Depth: d})
	}
	f.Close()
	g := newTest(t, Config{Store: s, Bands: 4, Politeness: FixedDelay(0)})
	got := map[string][]string{}
	for _, u := range drainAll(t, g, t0) {
		h := u[len("http://") : len("http://")+len("a.test")]
		got[h] = append(got[h], u)
	}
	for _, h := range []string{"a.test", "b.test"} {
		var want []string
		for d := 0; d < 8; d++ {
			want = append(want, fmt.Sprintf("http://%s/%d", h, d))
		}
		if fmt.Sprint(got[h]) != fmt.Sprint(want) {
			t.Errorf("%s after reopening with fewer bands:\n got %v\nwant %v", h, got[h], want)
		}
	}
	if n := s.Len(); n != 1 {
		t.Fatalf("%d keys left in the store, want only the sequence record", n)
	}
}

func TestFarFutureTimesDoNotWrap(t *testing.T) {
	// Times after 2262 and huge durations mean "not for a very long
	// time"; in int64 nanoseconds they must not wrap into the past.
	far := time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC)
	later := t0.Add(24 * time.Hour)
	cases := []struct {
		name string
		opts Config
		// run adds a.test/ and leaves it waiting for a far time.
		run func(t *testing.T, f *Frontier)
	}{
		{"BlockHost", Config{}, func(t *testing.T, f *Frontier) {
			mustAdd(t, f, t0, Entry{URL: "http://a.test/"})
			f.BlockHost("a.test", far)
		}},
		{"NotBefore", Config{}, func(t *testing.T, f *Frontier) {
			mustAdd(t, f, t0, Entry{URL: "http://a.test/", NotBefore: far})
		}},
		{"LeaseTTL", Config{LeaseTTL: forever()}, func(t *testing.T, f *Frontier) {
			mustAdd(t, f, t0, Entry{URL: "http://a.test/"})
			mustNext(t, f, t0)
		}},
		{"Extend", Config{}, func(t *testing.T, f *Frontier) {
			mustAdd(t, f, t0, Entry{URL: "http://a.test/"})
			if err := f.ExtendAt(t0, mustNext(t, f, t0), forever()); err != nil {
				t.Fatal(err)
			}
		}},
		{"RetryAfter", Config{}, func(t *testing.T, f *Frontier) {
			mustAdd(t, f, t0, Entry{URL: "http://a.test/"})
			mustDone(t, f, t0, mustNext(t, f, t0), Retry(forever()))
		}},
		{"Schedule", Config{Schedule: FixedInterval(forever())}, func(t *testing.T, f *Frontier) {
			mustAdd(t, f, t0, Entry{URL: "http://a.test/"})
			mustDone(t, f, t0, mustNext(t, f, t0), Success(0))
		}},
		{"RecrawlAt", Config{}, func(t *testing.T, f *Frontier) {
			mustAdd(t, f, t0, Entry{URL: "http://a.test/"})
			mustDone(t, f, t0, mustNext(t, f, t0), Outcome{Kind: OutcomeSuccess, RecrawlAt: far})
		}},
	}
	for _, store := range []bool{false, true} {
		for _, c := range cases {
			t.Run(fmt.Sprintf("%s/store=%v", c.name, store), func(t *testing.T) {
				opts := c.opts
				opts.Politeness = FixedDelay(0)
				if store {
					opts.Store = NewMemoryStore()
				}
				f := newTest(t, opts)
				c.run(t, f)
				mustNone(t, f, later)
			})
		}
	}
}

func TestRetryBackoffShiftDoesNotWrap(t *testing.T) {
	// RetryBase<<29 wraps int64 to half a second for this base; the
	// thirtieth retry must wait RetryMax, not that.
	base := time.Duration(1<<35 + 1)
	f := newTest(t, Config{Politeness: FixedDelay(0), RetryBase: base, RetryMax: forever(), MaxAttempts: 40})
	mustAdd(t, f, t0, Entry{URL: "http://a.test/"})
	l := mustNext(t, f, t0)
	l.it.attempts = 29 // as if leased after 29 retries
	mustDone(t, f, t0, l, Retry(0))
	mustNone(t, f, t0.Add(time.Hour))
}

func forever() time.Duration { return time.Duration(math.MaxInt64) }

func TestReadyHostMovesToBetterBand(t *testing.T) {
	// x.test becomes ready with a deep URL behind 20 other deep hosts,
	// then gets a seed: it must be served at the seeds' rate (it waits in
	// the ready list of its best URL's band), not at the deep band's.
	f := newTest(t, Config{Politeness: FixedDelay(0)})
	for i := 0; i < 20; i++ {
		mustAdd(t, f, t0, Entry{URL: fmt.Sprintf("http://deep%d.test/", i), Depth: 3})
	}
	mustAdd(t, f, t0, Entry{URL: "http://x.test/deep", Depth: 3})
	for i := 0; i < 20; i++ {
		mustAdd(t, f, t0, Entry{URL: fmt.Sprintf("http://seed%d.test/", i), Depth: 0})
	}
	mustAdd(t, f, t0, Entry{URL: "http://x.test/", Depth: 0})
	// Band 0 gets 8 leases in 9 while bands 0 and 3 have ready hosts: x
	// is the 21st seed host, leased within the first 24 leases.
	for i := 0; i < 24; i++ {
		if l := mustNext(t, f, t0); l.Host == "x.test" {
			if l.URL != "http://x.test/" {
				t.Fatalf("x.test served %s before its seed", l.URL)
			}
			return
		}
	}
	t.Fatal("x.test's seed not leased in 24 leases: the host waited in the deep band's ready list")
}

func TestCorruptQueuedKeyIsSkipped(t *testing.T) {
	// With a window of 1 the truncated key fills a window on its own;
	// with 2 the long key shares one with the first URL.
	for _, window := range []int{1, 2} {
		t.Run(fmt.Sprint("window=", window), func(t *testing.T) { testCorruptQueuedKey(t, window) })
	}
}

func testCorruptQueuedKey(t *testing.T, window int) {
	s := NewMemoryStore()
	f := newTest(t, Config{Store: s, Window: 1, Politeness: FixedDelay(0)})
	mustAdd(t, f, t0, Entry{URL: "http://a.test/1"}, Entry{URL: "http://a.test/2"}, Entry{URL: "http://a.test/3"})
	f.Close()
	// Malformed keys in band 0 of a.test: one with trailing bytes after
	// the first URL's key, and one with a truncated sequence number after
	// all of them.
	long := append(queuedKey("a.test", 0, 1), 0xff)
	short := append(append(hostPrefix("a.test"), 0), 0, 0, 0, 0, 0, 0, 9)
	if err := s.Write(context.Background(), []Mutation{{Key: short, Value: []byte("x")}, {Key: long, Value: []byte("y")}}); err != nil {
		t.Fatal(err)
	}
	// No Close cleanup: a frontier that spins with its lock held would
	// block it.
	g, err := New(Config{Store: s, Window: window, Politeness: FixedDelay(0), Now: noClock(t)})
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan []string, 1)
	go func() {
		var urls []string
		for {
			l, _, err := g.NextAt(t0)
			if err != nil || l == nil {
				got <- urls
				return
			}
			urls = append(urls, l.URL)
			if _, err := g.DoneAt(t0, l, Success(0)); err != nil {
				got <- urls
				return
			}
		}
	}()
	select {
	case urls := <-got:
		if want := "[http://a.test/1 http://a.test/2 http://a.test/3]"; fmt.Sprint(urls) != want {
			t.Fatalf("leased %v, want %s", urls, want)
		}
		if st := g.Stats(); st.Corrupt == 0 {
			t.Fatal("no corrupt record counted")
		}
		g.Close()
	case <-time.After(10 * time.Second):
		t.Fatal("NextAt does not return: the frontier spins on the corrupt key")
	}
}

func TestRecoverAllocatesLaterBandsWhenNeeded(t *testing.T) {
	// Recovery learns each host's first band with URLs and leaves the
	// later bands unallocated until they are needed, so a reopened
	// frontier holds one band per host, not Bands. The URLs of the later
	// bands, and those added to them after reopening, still come out in
	// band order.
	s := NewMemoryStore()
	f := newTest(t, Config{Store: s, Window: 1, Politeness: FixedDelay(0)})
	mustAdd(t, f, t0,
		Entry{URL: "http://a.test/0", Depth: 0}, Entry{URL: "http://a.test/0b", Depth: 0},
		Entry{URL: "http://b.test/1", Depth: 1}, Entry{URL: "http://b.test/3", Depth: 3},
		Entry{URL: "http://c.test/2", Depth: 2})
	f.Close()
	g := newTest(t, Config{Store: s, Window: 1, Politeness: FixedDelay(0)})
	g.mu.Lock()
	for name, want := range map[string]int{"a.test": 1, "b.test": 2, "c.test": 3} {
		if h := g.hosts[name]; h == nil || len(h.bands) != want || int(h.unread) != 4-want {
			t.Errorf("%s after recovery: %+v, want %d bands allocated and %d unread", name, h, want, 4-want)
		}
	}
	g.mu.Unlock()
	mustAdd(t, g, t0, Entry{URL: "http://b.test/2", Depth: 2}, Entry{URL: "http://c.test/0", Depth: 0},
		Entry{URL: "http://a.test/3", Depth: 3})
	got := map[string][]string{}
	for _, u := range drainAll(t, g, t0) {
		h := u[len("http://") : len("http://")+len("a.test")]
		got[h] = append(got[h], u[len("http://a.test/"):])
	}
	want := map[string][]string{"a.test": {"0", "0b", "3"}, "b.test": {"1", "2", "3"}, "c.test": {"0", "2"}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("leased after reopening:\n got %v\nwant %v", got, want)
	}
	if n := s.Len(); n != 1 {
		t.Fatalf("%d keys left in the store, want only the sequence record", n)
	}
}

func TestRecoverScansManySmallHostsTogether(t *testing.T) {
	// Reopening reads a store of one-URL hosts several hosts per scan,
	// and one of large hosts in about one scan per host; either way it
	// finds every host and every URL comes out once.
	for _, c := range []struct {
		hosts, perHost int
		maxScans       int
	}{
		{hosts: 200, perHost: 1, maxScans: 200/recoverScan + 4},
		{hosts: 12, perHost: 3, maxScans: 12*3/recoverScan + 4},
		{hosts: 10, perHost: 60, maxScans: 10 + 4},
	} {
		t.Run(fmt.Sprintf("%dx%d", c.hosts, c.perHost), func(t *testing.T) {
			s := &countingStore{MemoryStore: NewMemoryStore()}
			f := newTest(t, Config{Store: s, Window: 2, Politeness: FixedDelay(0)})
			want := map[string]bool{}
			for h := 0; h < c.hosts; h++ {
				for i := 0; i < c.perHost; i++ {
					u := fmt.Sprintf("http://h%03d.test/%d", h, i)
					want[u] = true
					mustAdd(t, f, t0, Entry{URL: u, Depth: i % 5})
				}
			}
			f.Close()
			s.mu.Lock()
			s.scans = nil
			s.mu.Unlock()
			g := newTest(t, Config{Store: s, Window: 2, Politeness: FixedDelay(0)})
			s.mu.Lock()
			scans := len(s.scans)
			s.mu.Unlock()
			if st := g.Stats(); st.Hosts != c.hosts {
				t.Errorf("%d hosts after reopening, want %d", st.Hosts, c.hosts)
			}
			// One scan reads the sequence record.
			if scans-1 > c.maxScans {
				t.Errorf("reopening took %d scans for %d hosts of %d URLs, want at most %d", scans-1, c.hosts, c.perHost, c.maxScans)
			}
			got := drainAll(t, g, t0)
			if len(got) != len(want) {
				t.Errorf("%d URLs leased after reopening, want %d", len(got), len(want))
			}
			for _, u := range got {
				if !want[u] {
					t.Errorf("%s leased twice or never added", u)
				}
				delete(want, u)
			}
		})
	}
}
