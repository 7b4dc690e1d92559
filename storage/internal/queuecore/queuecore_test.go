package queuecore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/frontier"
	"github.com/crawlkit/crawlkit/storage/internal/idle"
	"github.com/crawlkit/crawlkit/storage/sharedqueue"
	"github.com/crawlkit/crawlkit/urlnorm"
)

var (
	errUnavailable = errors.New("fake: unavailable")
	errClosed      = fmt.Errorf("fake: closed: %w", frontier.ErrClosed)
	t0             = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
)

// fake is a Backend whose operations are the test's functions; it records
// what the core passed.
type fake struct {
	mu      sync.Mutex
	closed  bool
	added   [][]Entry
	addFn   func(es []Entry) (int, error)
	leaseFn func(now time.Time, n int, expires time.Time) (LeaseResult, error)
	leases  int
	settle  func(work []Planned) ([]Code, bool, error)
	work    []Planned
	extend  func(l *frontier.Lease, expires time.Time) (Code, error)
	blocked map[string]time.Time
	countFn func() (Counts, error)
	counts  int
	listen  chan struct{} // receives when Listen starts
}

func (f *fake) Closed() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.closed
}

func (f *fake) Round(t time.Time) time.Time { return t.Truncate(time.Millisecond) }

func (f *fake) Add(_ context.Context, _ time.Time, es []Entry) (int, error) {
	f.mu.Lock()
	f.added = append(f.added, es)
	f.mu.Unlock()
	if f.addFn != nil {
		return f.addFn(es)
	}
	return len(es), nil
}

func (f *fake) Lease(_ context.Context, now time.Time, n int, expires time.Time) (LeaseResult, error) {
	f.mu.Lock()
	f.leases++
	f.mu.Unlock()
	if f.leaseFn != nil {
		return f.leaseFn(now, n, expires)
	}
	return LeaseResult{}, nil
}

func (f *fake) Settle(_ context.Context, _ time.Time, work []Planned) ([]Code, bool, error) {
	f.work = append([]Planned(nil), work...)
	if f.settle != nil {
		return f.settle(work)
	}
	return make([]Code, len(work)), false, nil
}

func (f *fake) Extend(_ context.Context, _ time.Time, l *frontier.Lease, expires time.Time) (Code, error) {
	if f.extend != nil {
		return f.extend(l, expires)
	}
	return Applied, nil
}

func (f *fake) Block(_ context.Context, host string, until time.Time) error {
	if f.blocked == nil {
		f.blocked = map[string]time.Time{}
	}
	f.blocked[host] = until
	return nil
}

func (f *fake) Counts(context.Context, time.Time) (Counts, error) {
	f.counts++
	if f.countFn != nil {
		return f.countFn()
	}
	return Counts{Hosts: 1, Queued: 2, Delayed: 3}, nil
}

func (f *fake) Listen(ctx context.Context, g *idle.Gate) {
	if f.listen != nil {
		f.listen <- struct{}{}
	}
	g.Listening()
	<-ctx.Done()
}

// notifying is a fake that is also a Notifier.
type notifying struct {
	*fake
	notified chan struct{}
}

func (n *notifying) Notify(context.Context) error {
	n.notified <- struct{}{}
	return nil
}

// clock is an injected clock that tests move by hand.
type clock struct{ ns atomic.Int64 }

func (c *clock) Now() time.Time  { return time.Unix(0, c.ns.Load()).UTC() }
func (c *clock) Set(t time.Time) { c.ns.Store(t.UnixNano()) }

var testConfig = Config{Name: "fake", Server: "the fake", Unavailable: errUnavailable, Closed: errClosed}

func newQueue(t *testing.T, b Backend, opts Options, cfg Config) (*Queue, *clock) {
	t.Helper()
	c := &clock{}
	c.Set(t0)
	if opts.Now == nil {
		opts.Now = c.Now
	}
	q, err := New(context.Background(), opts, b, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.Close() })
	return q, c
}

func TestDefaults(t *testing.T) {
	q, _ := newQueue(t, &fake{}, Options{}, testConfig)
	o := q.Options()
	if o.Bands != sharedqueue.DefaultBands || o.LeaseTTL != sharedqueue.DefaultLeaseTTL || o.MaxAttempts != sharedqueue.DefaultMaxAttempts ||
		o.RetryBase != sharedqueue.DefaultRetryBase || o.RetryMax != sharedqueue.DefaultRetryMax || o.PollInterval != sharedqueue.DefaultPollInterval ||
		o.OpTimeout != sharedqueue.DefaultOpTimeout {
		t.Fatalf("defaults not filled in: %+v", o)
	}
	if q.polite == nil || q.prio == nil || q.log == nil {
		t.Fatal("nil Politeness, Prioritizer or Logger left")
	}
	for _, bands := range []int{-1, 17} {
		_, err := New(context.Background(), Options{Bands: bands}, &fake{}, testConfig)
		if !errors.Is(err, sharedqueue.ErrConfig) || !strings.HasPrefix(err.Error(), "fake: queue: ") {
			t.Errorf("Bands %d: err %v", bands, err)
		}
	}
}

func TestAddValidatesBeforeWriting(t *testing.T) {
	f := &fake{}
	q, _ := newQueue(t, f, Options{}, Config{Name: "fake", TextOnly: true, Closed: errClosed})
	good := frontier.Entry{URL: "https://a.example/"}
	for _, bad := range []frontier.Entry{
		{URL: ""},
		{URL: "https://a.example/m", Meta: make([]byte, MaxMeta+1)},
		{URL: "https://a.example/\x00"},
		{URL: "https://a.example/\xff"},
		{URL: "no host"},
		{URL: "https://a.example/h", Host: "a\x00"},
	} {
		n, err := q.AddAt(context.Background(), t0, good, bad)
		if !errors.Is(err, frontier.ErrInvalidEntry) || n != 0 {
			t.Errorf("%q: %d, %v; want ErrInvalidEntry", bad.URL, n, err)
		}
	}
	if len(f.added) != 0 {
		t.Fatalf("written despite an invalid entry: %v", f.added)
	}
	// Without TextOnly, NUL bytes pass.
	q2, _ := newQueue(t, f, Options{}, testConfig)
	if _, err := q2.AddAt(context.Background(), t0, frontier.Entry{URL: "https://a.example/\x00"}); err != nil {
		t.Fatal(err)
	}
}

func TestAddPrepares(t *testing.T) {
	f := &fake{}
	q, _ := newQueue(t, f, Options{Bands: 2, Prioritizer: frontier.PrioritizerFunc(func(e *frontier.Entry, bands int) int {
		return e.Depth - 5 // negative for shallow entries, past the last band for deep ones
	})}, testConfig)
	later := t0.Add(time.Hour)
	n, err := q.AddAt(context.Background(), t0,
		frontier.Entry{URL: "https://a.example/1", Depth: -3, NotBefore: t0.Add(-time.Hour)},
		frontier.Entry{URL: "https://a.example/2", Depth: 1 << 40, NotBefore: later, Priority: 0.5, Meta: []byte("m")},
		frontier.Entry{URL: "https://a.example/1", Depth: 9}, // a repeat: dropped
		frontier.Entry{URL: "https://b.example/3", Host: "other.example"},
	)
	if err != nil || n != 3 {
		t.Fatalf("AddAt: %d, %v", n, err)
	}
	if len(f.added) != 1 || len(f.added[0]) != 3 {
		t.Fatalf("backend got %v", f.added)
	}
	es := f.added[0]
	want0 := Entry{Key: urlnorm.Key("https://a.example/1"), URL: "https://a.example/1", Host: "a.example", Depth: 0, Band: 0, Due: t0}
	if fmt.Sprint(es[0]) != fmt.Sprint(want0) {
		t.Errorf("entry 0: %+v, want %+v", es[0], want0)
	}
	if es[1].Depth != 1<<31-1 || es[1].Band != 1 || !es[1].Due.Equal(later) || es[1].Priority != 0.5 || string(es[1].Meta) != "m" {
		t.Errorf("entry 1: %+v", es[1])
	}
	if es[2].Host != "other.example" {
		t.Errorf("entry 2 host %q", es[2].Host)
	}
	if s := q.Stats(); s.Added != 3 {
		t.Errorf("Stats.Added %d", s.Added)
	}
}

func TestAddCountsPartialWrites(t *testing.T) {
	boom := errors.New("boom")
	f := &fake{addFn: func(es []Entry) (int, error) { return 1, boom }}
	q, _ := newQueue(t, f, Options{}, testConfig)
	n, err := q.AddAt(context.Background(), t0, frontier.Entry{URL: "https://a.example/1"}, frontier.Entry{URL: "https://a.example/2"})
	if n != 1 || !errors.Is(err, boom) {
		t.Fatalf("%d, %v", n, err)
	}
	if s := q.Stats(); s.Added != 1 {
		t.Errorf("Stats.Added %d, want 1", s.Added)
	}
}

func TestAddNotifies(t *testing.T) {
	n := &notifying{fake: &fake{}, notified: make(chan struct{}, 4)}
	q, _ := newQueue(t, n, Options{}, testConfig)
	if err := q.Add(frontier.Entry{URL: "https://a.example/"}); err != nil {
		t.Fatal(err)
	}
	<-n.notified // the notifier ran; a missing one hangs the test
	// An Add that adds nothing does not notify.
	n.addFn = func([]Entry) (int, error) { return 0, nil }
	if err := q.Add(frontier.Entry{URL: "https://a.example/"}); err != nil {
		t.Fatal(err)
	}
	q.Close() // waits for the notifier
	if len(n.notified) != 0 {
		t.Fatal("notified of an Add that added nothing")
	}
}

func TestLeaseAt(t *testing.T) {
	f := &fake{}
	q, c := newQueue(t, f, Options{LeaseTTL: time.Minute}, testConfig)
	now := t0.Add(1500 * time.Microsecond)
	cases := []struct {
		next, want time.Time
	}{
		{time.Time{}, time.Time{}},                       // nothing queued or leased
		{now.Add(-time.Hour), now.Add(time.Millisecond)}, // ready but held
		{now, now.Add(time.Millisecond)},
		{now.Add(time.Second), now.Add(time.Second)},
	}
	for _, tc := range cases {
		f.leaseFn = func(time.Time, int, time.Time) (LeaseResult, error) { return LeaseResult{Next: tc.next}, nil }
		ls, at, err := q.LeaseAt(context.Background(), now, 3)
		if err != nil || ls != nil || !at.Equal(tc.want) {
			t.Errorf("next %v: %v, %v, %v; want %v", tc.next, ls, at, err, tc.want)
		}
	}
	if ls, at, err := q.LeaseAt(context.Background(), now, 0); ls != nil || !at.IsZero() || err != nil || f.leases != len(cases) {
		t.Errorf("n=0 asked the backend or returned %v %v %v", ls, at, err)
	}

	var gotExpires time.Time
	f.leaseFn = func(_ time.Time, n int, expires time.Time) (LeaseResult, error) {
		gotExpires = expires
		return LeaseResult{Leases: []*frontier.Lease{{ID: 1, Expires: expires}, {ID: 2, Expires: expires}}, Expired: 1, Corrupt: 2, Next: now}, nil
	}
	ls, at, err := q.LeaseAt(context.Background(), now, 2)
	if err != nil || len(ls) != 2 || !at.IsZero() {
		t.Fatalf("%v, %v, %v", ls, at, err)
	}
	if want := now.Add(time.Minute).Truncate(time.Millisecond); !gotExpires.Equal(want) {
		t.Errorf("expires %v, want the backend's rounding of now+LeaseTTL %v", gotExpires, want)
	}
	c.Set(now)
	s := q.Stats()
	if s.Leases != 2 || s.Expired != 1 || s.Corrupt != 2 || s.Leased != 2 {
		t.Errorf("stats %+v", s)
	}
	c.Set(gotExpires) // the leases expire from Leased
	if s := q.Stats(); s.Leased != 0 {
		t.Errorf("Leased %d after expiry", s.Leased)
	}

	boom := errors.New("boom")
	f.leaseFn = func(time.Time, int, time.Time) (LeaseResult, error) { return LeaseResult{}, boom }
	if _, _, err := q.NextAt(now); !errors.Is(err, boom) {
		t.Errorf("NextAt: %v", err)
	}
}

// politeness is a frontier.Politeness of a function.
type politeness func(host string, finished time.Time) time.Time

func (p politeness) ReadyAt(host string, finished time.Time) time.Time { return p(host, finished) }

func lease(id uint64, host string) *frontier.Lease {
	return &frontier.Lease{ID: id, URL: fmt.Sprintf("https://%s/%d", host, id), Host: host}
}

// leaseAll has q lease ls, so that they count in Stats.Leased.
func leaseAll(t *testing.T, f *fake, q *Queue, ls ...*frontier.Lease) {
	t.Helper()
	f.leaseFn = func(time.Time, int, time.Time) (LeaseResult, error) { return LeaseResult{Leases: ls}, nil }
	for _, l := range ls {
		l.Expires = t0.Add(time.Hour)
	}
	if _, _, err := q.LeaseAt(context.Background(), t0, len(ls)); err != nil {
		t.Fatal(err)
	}
}

func TestDoneBatchAt(t *testing.T) {
	f := &fake{}
	polite := politeness(func(host string, now time.Time) time.Time {
		if host == "slow.example" {
			return now.Add(time.Minute)
		}
		return now.Add(-time.Minute) // before now: clamped
	})
	q, _ := newQueue(t, f, Options{Politeness: polite, MaxAttempts: 2, RetryBase: time.Second}, testConfig)
	a, b, c, d, e := lease(1, "slow.example"), lease(2, "a.example"), lease(3, "b.example"), lease(4, "c.example"), lease(5, "d.example")
	e.Attempt = 1
	leaseAll(t, f, q, a, b, c, d, e)
	// The backend reverses the work, as a store that sorts it may: codes
	// follow the work's order.
	f.settle = func(work []Planned) ([]Code, bool, error) {
		for i, j := 0, len(work)-1; i < j; i, j = i+1, j-1 {
			work[i], work[j] = work[j], work[i]
		}
		codes := make([]Code, len(work))
		for k, w := range work {
			switch w.Lease {
			case b:
				codes[k] = Settled
			case c:
				codes[k] = Expired
			}
		}
		return codes, false, nil
	}
	batch := []Settlement{
		{Lease: a, Outcome: frontier.Outcome{Kind: frontier.OutcomeSuccess}},
		{Lease: b, Outcome: frontier.Outcome{Kind: frontier.OutcomeSuccess}},
		{Lease: c, Outcome: frontier.Outcome{Kind: frontier.OutcomeSuccess}},
		{Lease: d, Outcome: frontier.Outcome{Kind: frontier.OutcomeRetry}},
		{Lease: e, Outcome: frontier.Outcome{Kind: frontier.OutcomeRetry}}, // past MaxAttempts: dropped
		{Lease: nil},
		{Lease: lease(6, "e.example"), Outcome: frontier.Outcome{Kind: 99}},
		{Lease: lease(7, "f.example"), Outcome: frontier.Outcome{Kind: frontier.OutcomeNotModified}},
		{Lease: lease(8, "g.example"), Outcome: frontier.Outcome{Kind: frontier.OutcomeFailed}},
	}
	if err := q.DoneBatchAt(context.Background(), t0, batch); err != nil {
		t.Fatal(err)
	}
	if len(f.work) != 7 {
		t.Fatalf("backend got %d settlements, want 7", len(f.work))
	}
	for _, w := range f.work {
		want := t0
		if w.Lease == a {
			want = t0.Add(time.Minute)
		}
		if !w.Polite.Equal(want) || batch[w.I].Lease != w.Lease {
			t.Errorf("lease %d: polite %v (want %v), index %d", w.Lease.ID, w.Polite, want, w.I)
		}
	}
	wantErr := []error{nil, frontier.ErrLeaseSettled, frontier.ErrLeaseExpired, nil, nil,
		frontier.ErrForeignLease, frontier.ErrInvalidOutcome, nil, nil}
	for i, st := range batch {
		if !errors.Is(st.Err, wantErr[i]) || (wantErr[i] == nil) != (st.Err == nil) {
			t.Errorf("settlement %d: err %v, want %v", i, st.Err, wantErr[i])
		}
	}
	if k := batch[0].Result.Kind; k != frontier.SettlementFinished {
		t.Errorf("success: %v", k)
	}
	if r := batch[3].Result; r.Kind != frontier.SettlementRetrying || !r.At.Equal(t0.Add(time.Second)) {
		t.Errorf("retry: %+v", r)
	}
	if k := batch[4].Result.Kind; k != frontier.SettlementGivenUp {
		t.Errorf("retry past MaxAttempts: %v", k)
	}
	s := q.Stats()
	if s.Succeeded != 1 || s.NotModified != 1 || s.Retried != 1 || s.Failed != 2 || s.Dropped != 1 {
		t.Errorf("stats %+v", s)
	}
	// b was settled before: its lease stays this handle's (its own settle
	// removed it); the others left Leased.
	if s.Leased != 1 {
		t.Errorf("Leased %d, want 1", s.Leased)
	}

	// After a retry, Settled is the call's own earlier attempt.
	f.settle = func(work []Planned) ([]Code, bool, error) { return []Code{Settled}, true, nil }
	if _, err := q.DoneAt(context.Background(), t0, b, frontier.Outcome{Kind: frontier.OutcomeSuccess}); err != nil {
		t.Errorf("retried settle: %v", err)
	}
	// A failed batch is the error.
	boom := errors.New("boom")
	f.settle = func([]Planned) ([]Code, bool, error) { return nil, false, boom }
	if _, err := q.DoneAt(context.Background(), t0, a, frontier.Outcome{Kind: frontier.OutcomeSuccess}); !errors.Is(err, boom) {
		t.Errorf("failed settle: %v", err)
	}
	f.settle = func([]Planned) ([]Code, bool, error) { return nil, false, nil }
	if _, err := q.DoneAt(context.Background(), t0, a, frontier.Outcome{Kind: frontier.OutcomeSuccess}); err == nil {
		t.Error("missing codes accepted")
	}
}

func TestDoneBatchSetsResults(t *testing.T) {
	f := &fake{}
	q, _ := newQueue(t, f, Options{}, testConfig)
	batch := []Settlement{{Lease: lease(1, "a.example"), Outcome: frontier.Outcome{Kind: frontier.OutcomeSuccess}, Err: errors.New("stale")}, {}}
	if err := q.DoneBatchAt(context.Background(), t0, batch); err != nil {
		t.Fatal(err)
	}
	if batch[0].Err != nil || batch[0].Result.Kind != frontier.SettlementFinished || !errors.Is(batch[1].Err, frontier.ErrForeignLease) {
		t.Fatalf("%+v", batch)
	}
}

func TestExtendAt(t *testing.T) {
	f := &fake{}
	q, c := newQueue(t, f, Options{}, testConfig)
	l := lease(1, "a.example")
	leaseAll(t, f, q, l)
	if err := q.ExtendAt(context.Background(), t0, nil, time.Minute); !errors.Is(err, frontier.ErrForeignLease) {
		t.Errorf("nil lease: %v", err)
	}
	want := t0.Add(2 * time.Hour).Truncate(time.Millisecond)
	if err := q.ExtendAt(context.Background(), t0.Add(time.Hour), l, time.Hour+time.Microsecond); err != nil {
		t.Fatal(err)
	}
	if !l.Expires.Equal(want) {
		t.Errorf("Expires %v, want %v", l.Expires, want)
	}
	c.Set(t0.Add(90 * time.Minute)) // past the lease's first expiry
	if s := q.Stats(); s.Leased != 1 {
		t.Errorf("extended lease not counted: Leased %d", s.Leased)
	}
	for code, want := range map[Code]error{Settled: frontier.ErrLeaseSettled, Expired: frontier.ErrLeaseExpired} {
		f.extend = func(*frontier.Lease, time.Time) (Code, error) { return code, nil }
		if err := q.Extend(l, time.Minute); !errors.Is(err, want) {
			t.Errorf("code %d: %v, want %v", code, err, want)
		}
	}
	if !l.Expires.Equal(want) {
		t.Errorf("a failed Extend moved Expires to %v", l.Expires)
	}
}

func TestBlockHost(t *testing.T) {
	f := &fake{}
	q, _ := newQueue(t, f, Options{}, testConfig)
	q.BlockHost("a.example", t0)
	if !f.blocked["a.example"].Equal(t0) {
		t.Fatalf("blocked %v", f.blocked)
	}
}

func TestStatsCounts(t *testing.T) {
	f := &fake{}
	q, _ := newQueue(t, f, Options{}, testConfig)
	for range 2 {
		if s := q.Stats(); s.Hosts != 1 || s.InMemory != 2 || s.Delayed != 3 {
			t.Fatalf("stats %+v", s)
		}
	}
	if f.counts != 2 {
		t.Errorf("without CountsMaxAge, %d counts for 2 Stats", f.counts)
	}
	cached := testConfig
	cached.CountsMaxAge = time.Hour
	f2 := &fake{}
	q2, _ := newQueue(t, f2, Options{}, cached)
	q2.Stats()
	f2.countFn = func() (Counts, error) { return Counts{}, errors.New("boom") }
	if s := q2.Stats(); s.Hosts != 1 || f2.counts != 1 {
		t.Errorf("cached counts not reused: %+v, %d counts", s, f2.counts)
	}
	// A failure reports no crawl-wide counts.
	f.countFn = f2.countFn
	if s := q.Stats(); s.Hosts != 0 || s.InMemory != 0 {
		t.Errorf("failed count reported %+v", s)
	}
	q.Close()
	if q.Stats(); f.counts != 3 {
		t.Errorf("a closed queue counted")
	}
}

func TestClosed(t *testing.T) {
	f := &fake{}
	q, _ := newQueue(t, f, Options{}, testConfig)
	f.closed = true // the DB closed under the queue
	if _, err := q.AddAt(context.Background(), t0, frontier.Entry{URL: "https://a.example/"}); err != errClosed {
		t.Errorf("AddAt: %v", err)
	}
	f.closed = false
	q.Close()
	q.Close() // idempotent
	checks := map[string]error{
		"Add":       q.Add(frontier.Entry{URL: "https://a.example/"}),
		"DoneBatch": q.DoneBatchAt(context.Background(), t0, nil),
		"Extend":    q.Extend(lease(1, "a.example"), time.Minute),
		"Block":     q.BlockHostAt(context.Background(), "a.example", t0),
	}
	_, _, checks["NextAt"] = q.NextAt(t0)
	_, checks["Next"] = q.Next(context.Background())
	for name, err := range checks {
		if !errors.Is(err, frontier.ErrClosed) {
			t.Errorf("%s after Close: %v", name, err)
		}
	}
	if f.leases != 0 || len(f.added) != 0 {
		t.Error("a closed queue used its backend")
	}
}

func TestNext(t *testing.T) {
	want := lease(1, "a.example")
	calls := 0
	f := &fake{listen: make(chan struct{}, 1)}
	f.leaseFn = func(time.Time, int, time.Time) (LeaseResult, error) {
		calls++
		if calls == 1 {
			return LeaseResult{}, fmt.Errorf("lost: %w", errUnavailable) // waited out
		}
		return LeaseResult{Leases: []*frontier.Lease{want}}, nil
	}
	q, _ := newQueue(t, f, Options{PollInterval: time.Millisecond}, testConfig)
	got, err := q.Next(context.Background())
	if err != nil || got != want {
		t.Fatalf("Next: %v, %v", got, err)
	}
	<-f.listen // the first Next started the listener
	if !q.ListenerStarted() {
		t.Error("listener not started")
	}
	boom := errors.New("boom")
	f.leaseFn = func(time.Time, int, time.Time) (LeaseResult, error) { return LeaseResult{}, boom }
	if _, err := q.Next(context.Background()); !errors.Is(err, boom) {
		t.Errorf("Next: %v, want the backend's error", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := q.Next(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Next with a done context: %v", err)
	}
}

func TestNextEndsAtClose(t *testing.T) {
	asked := make(chan struct{}, 1)
	f := &fake{leaseFn: func(now time.Time, _ int, _ time.Time) (LeaseResult, error) {
		select {
		case asked <- struct{}{}:
		default:
		}
		return LeaseResult{Next: now.Add(time.Hour)}, nil
	}}
	q, _ := newQueue(t, f, Options{NoListen: true, PollInterval: time.Hour}, testConfig)
	done := make(chan error)
	go func() {
		_, err := q.Next(context.Background())
		done <- err
	}()
	<-asked
	q.Close()
	if err := <-done; !errors.Is(err, frontier.ErrClosed) {
		t.Errorf("Next after Close: %v", err)
	}
	if q.ListenerStarted() {
		t.Error("listener started despite NoListen")
	}
}

func TestAddWakesNext(t *testing.T) {
	// A Next asleep for an hour polls again when this handle adds.
	var mu sync.Mutex
	ready := false
	asked := make(chan struct{}, 8)
	want := lease(1, "a.example")
	f := &fake{leaseFn: func(now time.Time, _ int, _ time.Time) (LeaseResult, error) {
		mu.Lock()
		defer mu.Unlock()
		asked <- struct{}{}
		if ready {
			return LeaseResult{Leases: []*frontier.Lease{want}}, nil
		}
		return LeaseResult{Next: now.Add(time.Hour)}, nil
	}}
	q, _ := newQueue(t, f, Options{NoListen: true, PollInterval: time.Hour}, testConfig)
	done := make(chan *frontier.Lease)
	go func() {
		l, _ := q.Next(context.Background())
		done <- l
	}()
	<-asked
	mu.Lock()
	ready = true
	mu.Unlock()
	if err := q.Add(frontier.Entry{URL: "https://a.example/"}); err != nil {
		t.Fatal(err)
	}
	if l := <-done; l != want {
		t.Fatalf("Next: %v", l)
	}
}

func TestCodeOf(t *testing.T) {
	for c, want := range map[int64]Code{0: Applied, 1: Expired, 2: Settled, -1: Expired, 7: Expired} {
		if got := CodeOf(c); got != want {
			t.Errorf("CodeOf(%d) = %d, want %d", c, got, want)
		}
	}
}
