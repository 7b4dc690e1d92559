package fetch

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// visit acquires host at start (which must be allowed) and releases it at
// end with o.
func visit(t *testing.T, p *Politeness, host string, start, end time.Time, o Outcome) {
	t.Helper()
	if ok, at := p.TryAcquire(host, start); !ok {
		t.Fatalf("TryAcquire(%s, %v) refused, retry at %v", host, start.Sub(t0), at.Sub(t0))
	}
	p.Release(host, start, end, o)
}

func TestPolitenessDefaultDelay(t *testing.T) {
	p := NewPoliteness(PolitenessConfig{DelayFactor: -1})
	if got := p.ReadyAt("a.test", t0); !got.Equal(t0) {
		t.Fatalf("unknown host ready at %v, want now", got)
	}
	visit(t, p, "a.test", t0, t0.Add(200*time.Millisecond), Outcome{Status: 200})
	want := t0.Add(1200 * time.Millisecond)
	if got := p.ReadyAt("a.test", t0.Add(300*time.Millisecond)); !got.Equal(want) {
		t.Fatalf("ReadyAt = %v, want end + 1 s = %v", got.Sub(t0), want.Sub(t0))
	}
	if ok, at := p.TryAcquire("a.test", want.Add(-time.Nanosecond)); ok || !at.Equal(want) {
		t.Fatalf("TryAcquire just before ready = %v, %v", ok, at.Sub(t0))
	}
	if ok, _ := p.TryAcquire("a.test", want); !ok {
		t.Fatal("TryAcquire at ready time refused")
	}
	// Other hosts are unaffected.
	if got := p.ReadyAt("b.test", t0); !got.Equal(t0) {
		t.Fatalf("b.test ready at %v", got)
	}
}

func TestPolitenessConcurrencyCap(t *testing.T) {
	p := NewPoliteness(PolitenessConfig{Delay: -1, DelayFactor: -1, MaxConcurrent: 2})
	for i := range 2 {
		if ok, _ := p.TryAcquire("a.test", t0); !ok {
			t.Fatalf("slot %d refused", i)
		}
	}
	ok, at, released := p.tryAcquire("a.test", t0)
	if ok || !at.IsZero() || released == nil {
		t.Fatalf("third slot: ok=%v at=%v released=%v; want refused, zero time, a channel", ok, at, released)
	}
	p.Release("a.test", t0, t0, Outcome{Status: 200})
	select {
	case <-released:
	default:
		t.Fatal("Release did not signal waiters")
	}
	if ok, _ := p.TryAcquire("a.test", t0); !ok {
		t.Fatal("slot not freed by Release")
	}
}

func TestPolitenessStartSpacingWithConcurrency(t *testing.T) {
	p := NewPoliteness(PolitenessConfig{Delay: time.Second, DelayFactor: -1, MaxConcurrent: 3})
	if ok, _ := p.TryAcquire("a.test", t0); !ok {
		t.Fatal("first refused")
	}
	// The second request may overlap the first but not start within Delay
	// of it.
	ok, at := p.TryAcquire("a.test", t0.Add(500*time.Millisecond))
	if ok || at.Before(t0.Add(time.Second)) || at.After(t0.Add(time.Second+time.Millisecond)) {
		t.Fatalf("second start: ok=%v at=%v, want refused until ~1 s", ok, at.Sub(t0))
	}
	if ok, _ := p.TryAcquire("a.test", t0.Add(time.Second)); !ok {
		t.Fatal("second refused at 1 s")
	}
}

func TestPolitenessCrawlDelay(t *testing.T) {
	p := NewPoliteness(PolitenessConfig{DelayFactor: -1, MaxCrawlDelay: 20 * time.Second})
	p.SetCrawlDelay("a.test", 5*time.Second)
	p.SetCrawlDelay("b.test", time.Hour)
	visit(t, p, "a.test", t0, t0, Outcome{Status: 200})
	visit(t, p, "b.test", t0, t0, Outcome{Status: 200})
	if got := p.ReadyAt("a.test", t0); got.Sub(t0) != 5*time.Second {
		t.Errorf("crawl-delay 5 s: ready after %v", got.Sub(t0))
	}
	if got := p.ReadyAt("b.test", t0); got.Sub(t0) != 20*time.Second {
		t.Errorf("crawl-delay 1 h capped at 20 s: ready after %v", got.Sub(t0))
	}
}

func TestPolitenessAdaptiveDelay(t *testing.T) {
	p := NewPoliteness(PolitenessConfig{Delay: time.Second, DelayFactor: 5, MaxAdaptiveDelay: 30 * time.Second})
	// A 2 s fetch → 10 s delay.
	visit(t, p, "a.test", t0, t0.Add(2*time.Second), Outcome{Status: 200})
	if got := p.Delay("a.test"); got != 10*time.Second {
		t.Fatalf("delay after 2 s fetch = %v, want 10 s", got)
	}
	// A 100 ms fetch → 500 ms, below the 1 s floor.
	now := t0.Add(12 * time.Second)
	visit(t, p, "a.test", now, now.Add(100*time.Millisecond), Outcome{Status: 200})
	if got := p.Delay("a.test"); got != time.Second {
		t.Fatalf("delay after 100 ms fetch = %v, want the 1 s floor", got)
	}
	// A 60 s fetch → clamped to 30 s.
	now = now.Add(2 * time.Second)
	visit(t, p, "a.test", now, now.Add(time.Minute), Outcome{Status: 200})
	if got := p.Delay("a.test"); got != 30*time.Second {
		t.Fatalf("delay after 60 s fetch = %v, want 30 s cap", got)
	}
}

func TestPolitenessRetryAfterBlocksOnlyThatHost(t *testing.T) {
	p := NewPoliteness(PolitenessConfig{DelayFactor: -1})
	visit(t, p, "a.test", t0, t0, Outcome{Status: 429, RetryAfter: 120 * time.Second, HasRetryAfter: true})
	if got := p.ReadyAt("a.test", t0); got.Sub(t0) != 120*time.Second {
		t.Fatalf("a.test ready after %v, want 120 s", got.Sub(t0))
	}
	// Other hosts proceed at their normal pace meanwhile.
	now := t0
	for i := range 5 {
		visit(t, p, "b.test", now, now, Outcome{Status: 200})
		now = p.ReadyAt("b.test", now)
		if i < 4 && now.Sub(t0) >= 120*time.Second {
			t.Fatal("b.test was held back")
		}
	}
	if ok, _ := p.TryAcquire("a.test", t0.Add(119*time.Second)); ok {
		t.Fatal("a.test admitted before Retry-After elapsed")
	}
	if ok, _ := p.TryAcquire("a.test", t0.Add(120*time.Second)); !ok {
		t.Fatal("a.test refused after Retry-After elapsed")
	}
}

func TestPolitenessRetryAfterCapped(t *testing.T) {
	p := NewPoliteness(PolitenessConfig{DelayFactor: -1, MaxRetryAfter: 10 * time.Minute})
	visit(t, p, "a.test", t0, t0, Outcome{Status: 503, RetryAfter: 48 * time.Hour, HasRetryAfter: true})
	if got := p.ReadyAt("a.test", t0); got.Sub(t0) != 10*time.Minute {
		t.Fatalf("ready after %v, want the 10 min cap", got.Sub(t0))
	}
}

// errNoAnswer stands for a transport error: no answer at all.
var errNoAnswer = errors.New("connection refused")

// TestPolitenessBackoff walks the error-backoff rules step by step: each
// step is a request to one host at the time the previous step made it
// ready, taking no time, and the row gives its URL and outcome and the
// wait it leaves (the 1 s delay, or a block) and Politeness.Failures after
// it. Backoffs are 1 min doubling to at most 5 min, without jitter.
func TestPolitenessBackoff(t *testing.T) {
	type step struct {
		url      string
		o        Outcome
		wait     time.Duration
		failures int
	}
	const s = time.Second
	fail500 := Outcome{Status: 500}
	repeat := func(n int, st step) []step {
		out := make([]step, n)
		for i := range out {
			out[i] = st
		}
		return out
	}
	for _, c := range []struct {
		name  string
		steps []step
	}{
		{"one URL failing forever never blocks its host", repeat(12, step{"/broken", fail500, s, 1})},
		{"nor one URL that never answers", repeat(12, step{"/heavy", Outcome{Err: errTotalTimeout}, s, 1})},
		{"two URLs failing in turn never block it", []step{
			{"/a", fail500, s, 1}, {"/b", fail500, s, 2}, {"/a", fail500, s, 2}, {"/b", fail500, s, 2},
			{"/a", Outcome{Err: errNoAnswer}, s, 2}, {"/b", Outcome{Status: 502}, s, 2},
		}},
		{"the third different URL blocks it, each further one doubles", []step{
			{"/a", fail500, s, 1}, {"/b", Outcome{Err: errNoAnswer}, s, 2}, {"/c", Outcome{Status: 503}, time.Minute, 3},
			{"/c", fail500, s, 3}, // a URL known to fail says nothing new
			{"/d", fail500, 2 * time.Minute, 4}, {"/e", fail500, 4 * time.Minute, 5},
			{"/f", fail500, 5 * time.Minute, 6}, {"/g", fail500, 5 * time.Minute, 7},
		}},
		{"a success resets the count", []step{
			{"/a", fail500, s, 1}, {"/b", fail500, s, 2}, {"/ok", Outcome{Status: 200}, s, 0},
			{"/c", fail500, s, 1}, {"/d", fail500, s, 2}, {"/missing", Outcome{Status: 404}, s, 0},
			{"/e", fail500, s, 1}, {"/f", fail500, s, 2}, {"/g", fail500, time.Minute, 3},
		}},
		{"interim failures do not count", []step{
			{"/a", Outcome{Status: 500, Interim: true}, s, 0}, {"/b", Outcome{Err: errNoAnswer, Interim: true}, s, 0},
			{"/c", Outcome{Status: 503, Interim: true}, s, 0}, {"/d", fail500, s, 1},
		}},
		{"Retry-After blocks it at once and counts as no failure", []step{
			{"/a", Outcome{Status: 503, HasRetryAfter: true, RetryAfter: 2 * time.Minute}, 2 * time.Minute, 0},
			{"/a", Outcome{Status: 429, HasRetryAfter: true, RetryAfter: 30 * s}, 30 * s, 0},
			{"/b", fail500, s, 1}, {"/c", Outcome{Status: 429, HasRetryAfter: true, RetryAfter: 0}, s, 1},
		}},
		{"a 429 without Retry-After backs it off at once", []step{
			{"/a", Outcome{Status: 429}, time.Minute, 0}, {"/a", Outcome{Status: 429}, 2 * time.Minute, 0},
		}},
		{"unnamed URLs count as different ones", []step{
			{"", fail500, s, 1}, {"", fail500, s, 2}, {"", fail500, time.Minute, 3},
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := NewPoliteness(PolitenessConfig{
				Delay: time.Second, DelayFactor: -1,
				BackoffBase: time.Minute, BackoffMax: 5 * time.Minute, ForgiveAfter: 10 * time.Minute,
				Rand: func() float64 { return 0.5 }, // jitter factor exactly 1
			})
			now := t0
			for i, st := range c.steps {
				o := st.o
				o.URL = "http://a.test" + st.url
				if st.url == "" {
					o.URL = ""
				}
				visit(t, p, "a.test", now, now, o)
				ready := p.ReadyAt("a.test", now)
				if wait, n := ready.Sub(now), p.Failures("a.test"); wait != st.wait || n != st.failures {
					t.Fatalf("step %d (%q %+v): wait %v, failures %d; want %v, %d", i, st.url, st.o, wait, n, st.wait, st.failures)
				}
				now = ready
			}
		})
	}
}

// TestPolitenessBackoffForgiven: after ForgiveAfter of quiet past the end of
// the last backoff, the doubling starts over at BackoffBase.
func TestPolitenessBackoffForgiven(t *testing.T) {
	p := NewPoliteness(PolitenessConfig{
		Delay: time.Second, DelayFactor: -1, BackoffBase: time.Minute, ForgiveAfter: 10 * time.Minute,
		Rand: func() float64 { return 0.5 },
	})
	now := t0
	for i := range 4 {
		visit(t, p, "a.test", now, now, Outcome{URL: fmt.Sprintf("http://a.test/%d", i), Status: 500})
		now = p.ReadyAt("a.test", now)
	}
	if got := now.Sub(t0); got != 2*time.Second+time.Minute+2*time.Minute {
		t.Fatalf("backoffs took %v, want 2 s + 1 min + 2 min", got)
	}
	now = now.Add(10 * time.Minute)
	visit(t, p, "a.test", now, now, Outcome{URL: "http://a.test/4", Status: 500})
	if d := p.ReadyAt("a.test", now).Sub(now); d != time.Minute {
		t.Fatalf("after a quiet period: backoff %v, want 1 min again", d)
	}
}

// TestPolitenessBackoffJitter: a backoff is its length times a factor in
// [0.75, 1.25).
func TestPolitenessBackoffJitter(t *testing.T) {
	for _, c := range []struct {
		r    float64
		want time.Duration
	}{{0, 45 * time.Second}, {0.999, 75*time.Second - 30*time.Millisecond}} {
		p := NewPoliteness(PolitenessConfig{DelayFactor: -1, Rand: func() float64 { return c.r }})
		for i := range hostFailureURLs {
			visit(t, p, "a.test", t0, t0, Outcome{URL: fmt.Sprintf("http://a.test/%d", i), Status: 500})
			p.hosts["a.test"].lastEnd = time.Time{} // let the next visit start at t0
		}
		if got := p.ReadyAt("a.test", t0).Sub(t0); got != c.want {
			t.Errorf("rand %v: backoff %v, want %v", c.r, got, c.want)
		}
	}
}

func TestPolitenessBlockUntil(t *testing.T) {
	p := NewPoliteness(PolitenessConfig{})
	p.BlockUntil("a.test", t0.Add(time.Hour))
	p.BlockUntil("a.test", t0.Add(time.Minute)) // never shortens
	if got := p.ReadyAt("a.test", t0); got.Sub(t0) != time.Hour {
		t.Fatalf("ready after %v, want 1 h", got.Sub(t0))
	}
}

func TestPolitenessEviction(t *testing.T) {
	p := NewPoliteness(PolitenessConfig{Delay: time.Second, DelayFactor: -1, MaxHosts: 8})
	busy := "busy.test"
	visit(t, p, busy, t0, t0, Outcome{Status: 200})
	p.BlockUntil(busy, t0.Add(time.Hour))
	for i := range 100 {
		h := string(rune('a'+i%26)) + string(rune('a'+i/26)) + ".test"
		visit(t, p, h, t0.Add(time.Duration(i)*2*time.Second), t0.Add(time.Duration(i)*2*time.Second), Outcome{Status: 200})
	}
	if p.Len() > 8 {
		t.Fatalf("Len = %d, want ≤ 8", p.Len())
	}
	// A blocked host is never forgotten.
	if got := p.ReadyAt(busy, t0.Add(200*time.Second)); got.Sub(t0) != time.Hour {
		t.Fatalf("blocked host forgotten: ready after %v", got.Sub(t0))
	}
}

// schedulerPoliteness is the frontier's politeness interface, restated
// here because fetch and frontier do not import each other.
type schedulerPoliteness interface {
	ReadyAt(host string, finished time.Time) time.Time
}

var _ schedulerPoliteness = (*Politeness)(nil)

func TestPolitenessReadyAtNeverBeforeQueryTime(t *testing.T) {
	p := NewPoliteness(PolitenessConfig{DelayFactor: -1})
	visit(t, p, "a.test", t0, t0, Outcome{Status: 200})
	// Asked long after the host became ready, the answer is the query
	// time itself, never a time in the past.
	late := t0.Add(time.Hour)
	if got := p.ReadyAt("a.test", late); !got.Equal(late) {
		t.Fatalf("ReadyAt = %v, want the query time", got.Sub(t0))
	}
}

// TestPolitenessEvictionAmortizedWhenNothingIsEvictable fills the table past
// MaxHosts with hosts that may not be forgotten (each in its error backoff).
// A sweep that frees nothing must not be repeated for every new host: that
// made each new host scan the whole table under the lock (about 1.5 ms per
// host at 20 000 hosts), so a crawl meeting many dead domains slowed to a
// crawl itself. Once the hosts may be forgotten, the table shrinks again.
func TestPolitenessEvictionAmortizedWhenNothingIsEvictable(t *testing.T) {
	const maxHosts = 64
	p := NewPoliteness(PolitenessConfig{DelayFactor: -1, MaxHosts: maxHosts, Rand: func() float64 { return 0.5 }})
	const n = 20 * maxHosts
	for i := range n {
		visit(t, p, fmt.Sprintf("dead%d.test", i), t0, t0, Outcome{Err: errors.New("no such host")})
	}
	if p.Len() != n {
		t.Fatalf("Len = %d, want all %d hosts kept (none may be forgotten yet)", p.Len(), n)
	}
	// Geometric spacing: about log(20)/log(1.125) ≈ 26 sweeps, not one
	// per host beyond the cap (1216).
	if p.sweeps > 40 {
		t.Fatalf("%d sweeps for %d hosts over the cap, want amortized sweeping", p.sweeps, n-maxHosts)
	}
	// Long after every backoff and its forgiveness, new hosts make room.
	later := t0.Add(24 * time.Hour)
	for i := 0; p.Len() > maxHosts; i++ {
		if i > n/8+2 {
			t.Fatalf("Len still %d after %d new hosts, want the table swept back under %d", p.Len(), i, maxHosts)
		}
		visit(t, p, fmt.Sprintf("live%d.test", i), later, later, Outcome{Status: 200})
	}
}

// TestPolitenessContacted: a request made through another fetcher counts
// toward the host's spacing from its end, and sets the adaptive delay; one
// reported late, ending before the latest request recorded, changes
// nothing.
func TestPolitenessContacted(t *testing.T) {
	p := NewPoliteness(PolitenessConfig{DelayFactor: -1})
	p.SetCrawlDelay("a.test", 5*time.Second)
	p.Contacted("a.test", t0, t0.Add(200*time.Millisecond))
	want := t0.Add(5200 * time.Millisecond)
	if got := p.ReadyAt("a.test", t0.Add(300*time.Millisecond)); !got.Equal(want) {
		t.Fatalf("ready after %v, want the Crawl-delay after the other request's end (5.2 s)", got.Sub(t0))
	}
	if ok, at := p.TryAcquire("a.test", t0.Add(time.Second)); ok || !at.Equal(want) {
		t.Fatalf("TryAcquire at 1 s = %v, %v; want refused until 5.2 s", ok, at.Sub(t0))
	}
	p.Contacted("a.test", t0.Add(-time.Minute), t0)
	if got := p.ReadyAt("a.test", t0); !got.Equal(want) {
		t.Fatalf("a request reported late moved the ready time to %v", got.Sub(t0))
	}
	if got := p.ReadyAt("b.test", t0); !got.Equal(t0) {
		t.Fatalf("b.test ready at %v, want now", got.Sub(t0))
	}

	q := NewPoliteness(PolitenessConfig{DelayFactor: 5})
	q.Contacted("a.test", t0, t0.Add(2*time.Second))
	if d := q.Delay("a.test"); d != 10*time.Second {
		t.Fatalf("delay after another fetcher's 2 s request = %v, want 10 s (factor 5)", d)
	}
}

// TestPolitenessDelayConfig: zero means the 1 s default, negative means
// none; the adaptive delay stays on unless DelayFactor is negative too.
func TestPolitenessDelayConfig(t *testing.T) {
	for _, c := range []struct {
		cfg        PolitenessConfig
		delay, gap time.Duration // Config().Delay; gap after a 10 ms request
	}{
		{PolitenessConfig{}, time.Second, time.Second},
		{PolitenessConfig{Delay: -1}, 0, 50 * time.Millisecond},
		{PolitenessConfig{Delay: -1, DelayFactor: -1}, 0, 0},
	} {
		p := NewPoliteness(c.cfg)
		visit(t, p, "a.test", t0, t0.Add(10*time.Millisecond), Outcome{Status: 200})
		end := t0.Add(10 * time.Millisecond)
		if d, gap := p.Config().Delay, p.ReadyAt("a.test", end).Sub(end); d != c.delay || gap != c.gap {
			t.Errorf("%+v: Delay %v, gap %v; want %v, %v", c.cfg, d, gap, c.delay, c.gap)
		}
	}
}

// TestMaxGap checks that MaxGap is the largest of the spacing rules'
// bounds, defaults included.
func TestMaxGap(t *testing.T) {
	for _, c := range []struct {
		cfg  PolitenessConfig
		want time.Duration
	}{
		{PolitenessConfig{}, time.Minute}, // MaxCrawlDelay's default
		{PolitenessConfig{Delay: 2 * time.Minute}, 2 * time.Minute},
		{PolitenessConfig{MaxCrawlDelay: 5 * time.Second, MaxAdaptiveDelay: 40 * time.Second}, 40 * time.Second},
	} {
		if got := NewPoliteness(c.cfg).MaxGap(); got != c.want {
			t.Errorf("%+v: MaxGap = %v, want %v", c.cfg, got, c.want)
		}
	}
}
