package fetch

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sync"
	"testing"
	"time"
)

// fakeClock is a testClock whose After advances time at once, so politeness
// waits take no real time and tests see exactly how long was waited.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	waited time.Duration
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func (c *fakeClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	c.waited += d
	ch := make(chan time.Time, 1)
	ch <- c.now
	return ch
}

func (c *fakeClock) Waited() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.waited
}

// fakeResolver answers from a table and counts calls; it never touches the
// network.
type fakeResolver struct {
	mu    sync.Mutex
	table map[string][]netip.Addr
	ttl   time.Duration
	calls map[string]int
	gate  chan struct{} // if non-nil, lookups block until it is closed
}

func newFakeResolver(pairs ...string) *fakeResolver {
	r := &fakeResolver{table: map[string][]netip.Addr{}, calls: map[string]int{}}
	for i := 0; i+1 < len(pairs); i += 2 {
		r.table[pairs[i]] = append(r.table[pairs[i]], netip.MustParseAddr(pairs[i+1]))
	}
	return r
}

func (r *fakeResolver) Resolve(ctx context.Context, host string) ([]netip.Addr, time.Duration, error) {
	r.mu.Lock()
	r.calls[host]++
	gate := r.gate
	addrs, ok := r.table[host]
	ttl := r.ttl
	r.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return nil, 0, ctx.Err()
		}
	}
	if !ok {
		return nil, 0, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	return addrs, ttl, nil
}

func (r *fakeResolver) Calls(host string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls[host]
}

// virtualWeb serves every virtual host name from one httptest server: its
// dial function connects to the server whatever address is asked for, as
// crawltest's does.
type virtualWeb struct {
	*httptest.Server
}

func newVirtualWeb(t testing.TB, h http.Handler) *virtualWeb {
	t.Helper()
	s := httptest.NewServer(h)
	t.Cleanup(s.Close)
	return &virtualWeb{s}
}

func (w *virtualWeb) Dial(ctx context.Context, network, _ string) (net.Conn, error) {
	var d net.Dialer
	return d.DialContext(ctx, network, w.Listener.Addr().String())
}

var loopback = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}

// fastPoliteness switches off waiting so functional tests run at full speed.
var fastPoliteness = PolitenessConfig{Delay: -1, DelayFactor: -1, BackoffBase: -1}

// backoffPoliteness is fastPoliteness with the error backoff on, for tests
// that check what counts as a failure of the host.
var backoffPoliteness = PolitenessConfig{Delay: -1, DelayFactor: -1}

// newTestFetcher returns a Fetcher over web with test defaults, modified by
// mod.
func newTestFetcher(t testing.TB, web *virtualWeb, mod func(*Config)) *Fetcher {
	t.Helper()
	cfg := Config{
		UserAgent:        "crawlkit-test/1.0 (+https://example.invalid/bot)",
		AllowCIDRs:       loopback,
		PolitenessConfig: fastPoliteness,
		Rand:             func() float64 { return 0.5 },
	}
	UseClock(&cfg, newFakeClock())
	if web != nil {
		cfg.DialContext = web.Dial
	}
	if mod != nil {
		mod(&cfg)
	}
	f, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// useIOClock makes f read c for its I/O deadlines and request timing instead
// of real time, so a test can move time on and run the deadline checks
// itself (checkDeadlines). f must have a fake clock (UseClock) and no request in
// flight.
func useIOClock(f *Fetcher, c *fakeClock) {
	f.watch.mu.Lock()
	defer f.watch.mu.Unlock()
	f.watch.now = c.Now
}

// checkDeadlines runs f's deadline checks now, as its ticker would.
func checkDeadlines(f *Fetcher) { f.watch.check() }

// stuckClock is a testClock whose After never fires and reports each call on
// waiting, so a test knows when a fetch is waiting for politeness.
type stuckClock struct {
	now     time.Time
	waiting chan time.Duration
}

func (c *stuckClock) Now() time.Time { return c.now }

func (c *stuckClock) After(d time.Duration) <-chan time.Time {
	select {
	case c.waiting <- d:
	default:
	}
	return nil
}
