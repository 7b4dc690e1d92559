package frontier

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// flakyStore fails the Writes its failIf selects.
type flakyStore struct {
	*MemoryStore
	mu     sync.Mutex
	failIf func([]Mutation) bool
	failed int
}

func (s *flakyStore) Write(ctx context.Context, muts []Mutation) error {
	s.mu.Lock()
	fail := s.failIf != nil && s.failIf(muts)
	if fail {
		s.failed++
	}
	s.mu.Unlock()
	if fail {
		return errDisk
	}
	return s.MemoryStore.Write(ctx, muts)
}

func (s *flakyStore) setFail(failIf func([]Mutation) bool) {
	s.mu.Lock()
	s.failIf = failIf
	s.mu.Unlock()
}

func (s *flakyStore) failures() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.failed
}

// isMove reports whether muts re-file delayed URLs as queued ones: they
// delete a delayed key and put a queued key.
func isMove(muts []Mutation) bool {
	var del, put bool
	for _, m := range muts {
		del = del || (m.Delete && m.Key[0] == kindDelayed)
		put = put || (!m.Delete && m.Key[0] == kindQueued)
	}
	return del && put
}

// driver leases and settles everything a frontier on a Store hands out, on
// an explicit clock, checking the memory bound after every call.
type driver struct {
	t       *testing.T
	store   Store
	opts    Config
	f       *Frontier
	now     time.Time
	bound   int // Stats().InMemory may not exceed it
	peak    int
	leased  map[string]int // leases per URL
	settled map[string]int // final outcomes per URL
	// outcome settles a lease; nil means success.
	outcome func(l *Lease) Outcome
}

func newDriver(t *testing.T, s Store, opts Config, bound int) *driver {
	opts.Store = s
	opts.Now = noClock(t)
	d := &driver{t: t, store: s, opts: opts, now: t0, bound: bound, leased: map[string]int{}, settled: map[string]int{}}
	d.open()
	return d
}

func (d *driver) open() {
	d.t.Helper()
	f, err := New(d.opts)
	if err != nil {
		d.t.Fatal(err)
	}
	d.f = f
	d.t.Cleanup(func() { f.Close() })
}

// reopen closes the frontier (no lease is outstanding between steps) and
// opens a new one on the same store, as after a restart.
func (d *driver) reopen() {
	d.t.Helper()
	if err := d.f.Close(); err != nil {
		d.t.Fatal(err)
	}
	d.open()
}

func (d *driver) check(when string) {
	d.t.Helper()
	n := d.f.Stats().InMemory
	d.peak = max(d.peak, n)
	if n > d.bound {
		d.t.Fatalf("%s: %d URLs in memory, bound %d", when, n, d.bound)
	}
}

// step leases and settles one URL, or advances the clock to the next wake
// time. It returns false when nothing is left, and the NextAt error.
func (d *driver) step() (bool, error) {
	d.t.Helper()
	l, wake, err := d.f.NextAt(d.now)
	d.check("after NextAt")
	if err != nil {
		return true, err
	}
	if l == nil {
		if wake.IsZero() {
			return false, nil
		}
		if !wake.After(d.now) {
			d.t.Fatalf("NextAt at %v returned no lease and wake time %v", d.now.Sub(t0), wake.Sub(t0))
		}
		d.now = wake
		return true, nil
	}
	d.leased[l.URL]++
	o := Success(0)
	if d.outcome != nil {
		o = d.outcome(l)
	}
	if _, err := d.f.DoneAt(d.now, l, o); err != nil {
		d.t.Fatalf("DoneAt %s: %v", l.URL, err)
	}
	if o.Kind != OutcomeRetry {
		d.settled[l.URL]++
	}
	d.check("after DoneAt")
	return true, nil
}

// run steps until nothing is left or n URLs were settled (n < 0: no limit).
func (d *driver) run(n int) {
	d.t.Helper()
	for steps := 0; n < 0 || d.total() < n; steps++ {
		if steps > 1_000_000 {
			d.t.Fatal("the frontier does not drain")
		}
		more, err := d.step()
		if err != nil {
			d.t.Fatal(err)
		}
		if !more {
			return
		}
	}
}

func (d *driver) total() int {
	n := 0
	for _, c := range d.settled {
		n += c
	}
	return n
}

// checkAll checks that exactly want were settled, each once, and that the
// store holds nothing but its sequence record.
func (d *driver) checkAll(want []string) {
	d.t.Helper()
	var got []string
	for u, c := range d.settled {
		if c != 1 {
			d.t.Errorf("%s settled %d times", u, c)
		}
		got = append(got, u)
	}
	sort.Strings(got)
	w := append([]string(nil), want...)
	sort.Strings(w)
	if fmt.Sprint(got) != fmt.Sprint(w) {
		d.t.Fatalf("settled %d URLs, want %d:\n got %v\nwant %v", len(got), len(w), got, w)
	}
	if ms, ok := d.store.(interface{ Len() int }); ok {
		if n := ms.Len(); n != 1 {
			d.t.Fatalf("%d keys left in the store, want only the sequence record", n)
		}
	}
}

func dueEntries(host string, n int, notBefore time.Time) ([]Entry, []string) {
	var es []Entry
	var urls []string
	for i := 0; i < n; i++ {
		u := fmt.Sprintf("http://%s/%03d", host, i)
		es = append(es, Entry{URL: u, Host: host, NotBefore: notBefore})
		urls = append(urls, u)
	}
	return es, urls
}

func TestDueCohortStaysBounded(t *testing.T) {
	// 100 URLs of one host come due together: one NextAt must not load
	// them all into memory.
	const window, dwindow = 2, 4
	s := NewMemoryStore()
	d := newDriver(t, s, Config{Politeness: FixedDelay(0), Window: window, DelayedWindow: dwindow}, window+dwindow)
	es, urls := dueEntries("a.test", 100, t0.Add(time.Hour))
	mustAdd(t, d.f, t0, es...)
	d.now = t0.Add(2 * time.Hour)
	l := mustNext(t, d.f, d.now)
	if n := d.f.Stats().InMemory; n > window+dwindow {
		t.Fatalf("%d URLs in memory after one NextAt with Window %d and DelayedWindow %d", n, window, dwindow)
	}
	// The first due URLs fit in the band's window and keep their place;
	// the rest are leased in due order too, from the band's tail.
	d.leased[l.URL]++
	d.settled[l.URL]++
	mustDone(t, d.f, d.now, l, Success(0))
	var order []string
	order = append(order, l.URL)
	for {
		l, _, err := d.f.NextAt(d.now)
		if err != nil {
			t.Fatal(err)
		}
		if l == nil {
			break
		}
		d.check("after NextAt")
		order = append(order, l.URL)
		d.leased[l.URL]++
		d.settled[l.URL]++
		mustDone(t, d.f, d.now, l, Success(0))
	}
	d.checkAll(urls)
	t.Logf("peak InMemory %d; lease order starts %v", d.peak, order[:8])
}

func TestDueCohortEveryURLOnceAcrossRestarts(t *testing.T) {
	// Several hosts with due cohorts, queued URLs and retries, through
	// restarts: every URL is settled exactly once, retried ones leased
	// exactly twice.
	const window, dwindow = 3, 5
	const hosts = 4
	s := NewMemoryStore()
	d := newDriver(t, s, Config{Politeness: FixedDelay(0), Window: window, DelayedWindow: dwindow, RetryBase: time.Second}, hosts*(window+1)+3*dwindow)
	var all []string
	for h := 0; h < hosts; h++ {
		name := fmt.Sprintf("h%d.test", h)
		es, urls := dueEntries(name, 40, t0.Add(time.Duration(h)*time.Minute))
		mustAdd(t, d.f, t0, es...)
		all = append(all, urls...)
		for i := 0; i < 10; i++ {
			u := fmt.Sprintf("http://%s/now/%d", name, i)
			mustAdd(t, d.f, t0, Entry{URL: u, Host: name})
			all = append(all, u)
		}
	}
	retried := map[string]bool{}
	d.outcome = func(l *Lease) Outcome {
		// Every third URL is retried once.
		if l.Attempt == 0 && l.URL[len(l.URL)-1]%3 == 0 {
			retried[l.URL] = true
			return Retry(0)
		}
		return Success(0)
	}
	d.now = t0.Add(time.Hour)
	for i := 0; ; i++ {
		before := d.total()
		d.run(before + 23)
		if d.total() == before {
			break
		}
		d.reopen()
	}
	d.checkAll(all)
	for _, u := range all {
		want := 1
		if retried[u] {
			want = 2
		}
		if d.leased[u] != want {
			t.Errorf("%s leased %d times, want %d", u, d.leased[u], want)
		}
	}
	if len(retried) == 0 {
		t.Fatal("no URL was retried")
	}
	t.Logf("peak InMemory %d, %d retried", d.peak, len(retried))
}

func TestFailedMoveLosesNothing(t *testing.T) {
	const window, dwindow = 1, 4
	fs := &flakyStore{MemoryStore: NewMemoryStore()}
	d := newDriver(t, fs, Config{Politeness: FixedDelay(0), Window: window, DelayedWindow: dwindow}, window+1+3*dwindow)
	es, urls := dueEntries("a.test", 30, t0.Add(time.Hour))
	mustAdd(t, d.f, t0, es...)
	es, more := dueEntries("b.test", 30, t0.Add(time.Hour))
	mustAdd(t, d.f, t0, es...)
	urls = append(urls, more...)
	fs.setFail(isMove)
	d.now = t0.Add(2 * time.Hour)

	// The moves fail: the URL that fits in memory is leased (the failed
	// move is not reported with a lease), the others stay delayed.
	l := mustNext(t, d.f, d.now)
	d.check("after a failed move")
	if fs.failures() == 0 {
		t.Fatal("no move was attempted")
	}
	// a.test is leased; the next call finds no host ready and reports
	// the failed move.
	if l, _, err := d.f.NextAt(d.now); l != nil || !errors.Is(err, errDisk) {
		t.Fatalf("NextAt with a failing move: %v, %v", l, err)
	}
	d.check("after a failed move")
	d.leased[l.URL]++
	d.settled[l.URL]++
	mustDone(t, d.f, d.now, l, Success(0))
	// Keep going with the moves failing: URLs still come through the
	// window.
	for i := 0; i < 20; i++ {
		if _, err := d.step(); err != nil && !errors.Is(err, errDisk) {
			t.Fatal(err)
		}
	}
	fs.setFail(nil)
	d.run(d.total() + 10)
	// A restart with moves failing again, then recovery.
	d.reopen()
	fs.setFail(isMove)
	for i := 0; i < 10; i++ {
		if _, err := d.step(); err != nil && !errors.Is(err, errDisk) {
			t.Fatal(err)
		}
	}
	fs.setFail(nil)
	d.run(-1)
	d.checkAll(urls)
	for u, n := range d.leased {
		if n != 1 {
			t.Errorf("%s leased %d times", u, n)
		}
	}
	t.Logf("peak InMemory %d, %d failed moves", d.peak, fs.failures())
}

func TestDelayedHeapBoundedUnderShortRetries(t *testing.T) {
	// A delayed window reaching a day ahead, then 200 URLs retried after
	// a second: their keys sort before the window's end, and must not all
	// stay in memory.
	const dwindow = 4
	s := NewMemoryStore()
	d := newDriver(t, s, Config{Politeness: FixedDelay(0), DelayedWindow: dwindow, RetryBase: time.Second, MaxAttempts: 3}, 0)
	var all []string
	es, far := dueEntries("far.test", 8, t0.Add(24*time.Hour))
	mustAdd(t, d.f, t0, es...)
	all = append(all, far...)
	mustNone(t, d.f, t0) // loads the delayed window
	var ls []*Lease
	for i := 0; i < 200; i++ {
		u := fmt.Sprintf("http://r%03d.test/", i)
		mustAdd(t, d.f, t0, Entry{URL: u})
		all = append(all, u)
		ls = append(ls, mustNext(t, d.f, t0))
	}
	maxDelayed := 0
	for _, l := range ls {
		d.leased[l.URL]++
		mustDone(t, d.f, t0, l, Retry(0))
		maxDelayed = max(maxDelayed, d.f.Stats().Delayed)
	}
	if maxDelayed > 2*dwindow {
		t.Fatalf("%d delayed URLs in memory with DelayedWindow %d", maxDelayed, dwindow)
	}
	// Retry once more, then succeed; restart half-way.
	d.outcome = func(l *Lease) Outcome {
		if l.Attempt < 2 {
			return Retry(0)
		}
		return Success(0)
	}
	// Each retried host holds its due URL in memory (Window per host).
	d.bound = 200 + 3*dwindow + 8
	d.check("after the retries")
	d.run(100)
	d.reopen()
	d.run(-1)
	d.checkAll(all)
	for _, u := range all {
		if d.leased[u] != 3 {
			t.Errorf("%s leased %d times, want 3", u, d.leased[u])
		}
	}
	t.Logf("max delayed in memory %d, peak InMemory %d", maxDelayed, d.peak)
}

func TestDueCohortConcurrent(t *testing.T) {
	// Workers lease and settle due cohorts concurrently, each URL retried
	// once, while moves and trims run: every URL is leased twice and
	// settled once, and memory stays bounded.
	const window, dwindow, hosts, perHost, workers = 2, 4, 6, 50, 4
	s := NewMemoryStore()
	f := newTest(t, Config{Store: s, Politeness: FixedDelay(0), Window: window, DelayedWindow: dwindow,
		RetryBase: time.Millisecond, MaxLeasesPerHost: 2, LeaseTTL: time.Hour})
	// URLs due far ahead, added first, move the delayed window's end far
	// out, so that the cohort and the retries sort before it (trims).
	far, _ := dueEntries("far.test", 2*dwindow, t0.Add(48*time.Hour))
	mustAdd(t, f, t0, far...)
	mustNone(t, f, t0) // loads the delayed window
	total := 0
	for h := 0; h < hosts; h++ {
		es, _ := dueEntries(fmt.Sprintf("h%d.test", h), perHost, t0.Add(time.Hour))
		mustAdd(t, f, t0, es...)
		total += perHost
	}
	bound := hosts*(window+2) + 3*dwindow
	var clock atomic.Int64
	clock.Store(t0.Add(2 * time.Hour).UnixNano())
	var remaining atomic.Int64
	remaining.Store(int64(total))
	var mu sync.Mutex
	leased, settled := map[string]int{}, map[string]int{}
	deadline := time.Now().Add(30 * time.Second)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for remaining.Load() > 0 {
				if time.Now().After(deadline) {
					t.Error("the frontier does not drain")
					return
				}
				now := time.Unix(0, clock.Add(int64(time.Microsecond)))
				l, wake, err := f.NextAt(now)
				if err != nil {
					t.Error(err)
					return
				}
				if n := f.Stats().InMemory; n > bound {
					t.Errorf("%d URLs in memory, bound %d", n, bound)
					return
				}
				if l == nil {
					// Advance the clock to the wake time, unless it is
					// another worker's lease expiring (or zero, while
					// another worker's Done is in flight).
					for !wake.IsZero() {
						c := clock.Load()
						if wake.UnixNano() <= c || wake.UnixNano()-c > int64(time.Second) || clock.CompareAndSwap(c, wake.UnixNano()) {
							break
						}
					}
					runtime.Gosched()
					continue
				}
				o := Success(0)
				if l.Attempt == 0 {
					// Waits from 1 ms to 1 s: retries sort before the
					// delayed window's end (trims).
					h := fnv.New32a()
					h.Write([]byte(l.URL))
					o = Retry(time.Duration(h.Sum32()%1000) * time.Millisecond)
				}
				mu.Lock()
				leased[l.URL]++
				mu.Unlock()
				if _, err := f.DoneAt(now, l, o); err != nil {
					t.Error(err)
					return
				}
				if o.Kind == OutcomeSuccess {
					mu.Lock()
					settled[l.URL]++
					mu.Unlock()
					remaining.Add(-1)
				}
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	if len(settled) != total {
		t.Fatalf("%d URLs settled, want %d", len(settled), total)
	}
	for u, n := range settled {
		if n != 1 || leased[u] != 2 {
			t.Errorf("%s settled %d times, leased %d times", u, n, leased[u])
		}
	}
	if n := s.Len(); n != 1+len(far) {
		t.Fatalf("%d keys left in the store, want the sequence record and %d far URLs", n, len(far))
	}
}

func TestWindowFor(t *testing.T) {
	for _, c := range []struct{ window, maxMem, hosts, want int }{
		{8, 1 << 20, 0, 8},
		{8, 1 << 20, 131072, 8},
		{8, 1 << 20, 131073, 7},
		{8, 1 << 20, 1 << 20, 1},
		{8, 1 << 20, 1<<20 + 1, 0},
		{8, 1 << 20, 1 << 24, 0},
		{8, 100, 25, 4},
		{1, 100, 100, 1},
		{1, 100, 1000, 0},
	} {
		if got := windowFor(c.window, c.maxMem, c.hosts); got != c.want {
			t.Errorf("windowFor(%d, %d, %d) = %d, want %d", c.window, c.maxMem, c.hosts, got, c.want)
		}
	}
}

func TestMaxInMemoryBoundsWindowsAcrossHosts(t *testing.T) {
	// 200 hosts discovered breadth-first, 10 URLs each, against a budget
	// of 100: memory stays at most one URL per host (the driver's bound)
	// instead of Window per host (1,600), and every URL is still leased
	// once, through a restart.
	const hosts, window, budget = 200, 8, 100
	d := newDriver(t, NewMemoryStore(), Config{Politeness: FixedDelay(0), Window: window, MaxInMemory: budget}, hosts)
	all := addBreadthFirst(d, hosts, 10)
	d.run(len(all) / 2)
	d.reopen()
	d.run(-1)
	d.checkAll(all)
}

func TestMaxInMemoryBelowHosts(t *testing.T) {
	// More hosts than the budget: bands hold no URL in memory until their
	// host is leased, then read one, and every URL is still leased once.
	const hosts, budget = 120, 40
	d := newDriver(t, NewMemoryStore(), Config{Politeness: FixedDelay(0), MaxInMemory: budget}, budget+1)
	all := addBreadthFirst(d, hosts, 5)
	d.run(len(all) / 3)
	d.reopen()
	d.run(-1)
	d.checkAll(all)
}

// addBreadthFirst adds perHost URLs to each of hosts hosts a round at a
// time, as a crawl discovers them, checking the memory bound after each
// round, and returns the URLs.
func addBreadthFirst(d *driver, hosts, perHost int) []string {
	d.t.Helper()
	var all []string
	for i := 0; i < perHost; i++ {
		var es []Entry
		for h := 0; h < hosts; h++ {
			host := fmt.Sprintf("h%03d.test", h)
			u := fmt.Sprintf("http://%s/%02d", host, i)
			es = append(es, Entry{URL: u, Host: host})
			all = append(all, u)
		}
		mustAdd(d.t, d.f, d.now, es...)
		d.check("after Add")
	}
	return all
}
