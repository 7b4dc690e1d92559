package crawltest

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// FuzzResolve feeds arbitrary request targets to the server's request
// parsing: it must not panic, every target it maps to a page must be that
// page's canonical target, and trap pages must render.
func FuzzResolve(f *testing.F) {
	for _, s := range []string{
		"/", "/index.html", "/docs/beacon-falcon-1.html", "/shop/item?cat=maple&id=5&print=1",
		"/%7Eteam/juniper-saffron-4.html?utm_source=x", "/calendar/2026/06/", "/loop/a/b/a/",
		"/account/orders?sessionid=0123456789abcdef", "/search?q=alpha+beta", "/robots.txt",
		"/docs/-0.html", "/shop/item?cat=&id=00005", "/calendar/0/13/", "/../x/./y?&&",
	} {
		f.Add(1, s)
	}
	cfg := Config{Hosts: 12, PagesPerHost: 30}
	if err := cfg.ensureDefaults(); err != nil {
		f.Fatal(err)
	}
	g := newGenerator(&cfg)
	f.Fuzz(func(t *testing.T, h int, target string) {
		if h < 0 || h >= cfg.Hosts || !strings.HasPrefix(target, "/") {
			return
		}
		r := &http.Request{Host: HostName(h), RequestURI: target}
		res := g.resolve(h, r)
		switch res.kind {
		case resPage:
			if got := g.target(h, res.nd); got != res.target {
				t.Fatalf("%q resolved to page %+v with target %q, not %q", target, res.nd, got, res.target)
			}
			if res.nd.variant == variantPrint && !hasPrint(res.nd.n) {
				t.Fatalf("%q: print variant of page %d, which has none", target, res.nd.n)
			}
		case resTrap:
			hrefs, texts, _ := g.trapLinks(res.trap, res.target)
			if len(hrefs) != len(texts) {
				t.Fatalf("%q: %d hrefs, %d texts", target, len(hrefs), len(texts))
			}
		}
	})
}

func TestEveryPageResolvesToItself(t *testing.T) {
	cfg := Config{Hosts: 13, PagesPerHost: 45}
	if err := cfg.ensureDefaults(); err != nil {
		t.Fatal(err)
	}
	g := newGenerator(&cfg)
	for h := 0; h < cfg.Hosts; h++ {
		for n := 0; n < cfg.PagesPerHost; n++ {
			for v := uint8(0); v < 3; v++ {
				if v == variantPrint && !hasPrint(n) || v == variantIndex && n != 0 {
					continue
				}
				nd := node{n, v}
				target := g.target(h, nd)
				res := g.resolve(h, &http.Request{Host: HostName(h), RequestURI: target})
				if res.kind != resPage || res.nd != nd || res.canonical != g.pageURL(h, nd) {
					t.Fatalf("%s resolves to %+v", g.pageURL(h, nd), res)
				}
			}
		}
	}
}

func BenchmarkRenderPage(b *testing.B) {
	cfg := Config{Hosts: 1000, PagesPerHost: 100}
	if err := cfg.ensureDefaults(); err != nil {
		b.Fatal(err)
	}
	g := newGenerator(&cfg)
	buf := make([]byte, 0, 64<<10)
	var bytes int64
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		buf = g.renderPage(buf[:0], i%1000, node{i / 1000 % 100, variantPrimary})
		bytes += int64(len(buf))
	}
	b.SetBytes(bytes / int64(b.N))
}

func TestHostName(t *testing.T) {
	for _, i := range []int{0, 7, 42, 999, 1000, 9999, 10000, 123456, 999999} {
		if got, want := HostName(i), fmt.Sprintf("h%04d.test", i); got != want {
			t.Errorf("HostName(%d) = %q, want %q", i, got, want)
		}
	}
}

// heldClock is a Config.Now that returns base plus one millisecond per
// call, and that can hold one call until released.
type heldClock struct {
	mu      sync.Mutex
	base    time.Time
	calls   int
	hold    bool          // hold the next call
	entered chan struct{} // closed when the held call starts
	release chan struct{} // closed to let it return
}

func (c *heldClock) Now() time.Time {
	c.mu.Lock()
	c.calls++
	t := c.base.Add(time.Duration(c.calls) * time.Millisecond)
	hold := c.hold
	c.hold = false
	c.mu.Unlock()
	if hold {
		close(c.entered)
		<-c.release
	}
	return t
}

// The accounting orders a request's arrival and another's end by the
// clock readings it records: B reads the clock (arrives) before A's end
// reads it, so B overlapped A, whatever order the two then take the lock
// in. Reading the clock outside the lock let A's end slip in between and
// leave B measuring a negative gap from an end that came after it.
func TestAccountingClockOrder(t *testing.T) {
	clock := &heldClock{base: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC), entered: make(chan struct{}), release: make(chan struct{})}
	web, err := NewWeb(Config{Hosts: 1, PagesPerHost: 3, MaxPerHost: 2, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer web.Close()
	req := func(target string) *http.Request {
		return &http.Request{Host: "h0000.test", RequestURI: target, Header: http.Header{"User-Agent": {"crawlkit/1.0"}}}
	}
	robots := req("/robots.txt")
	web.acct.begin(0, robots, web.gen.resolve(0, robots))()
	a := req("/")
	endA := web.acct.begin(0, a, web.gen.resolve(0, a))
	// A ends on time; then B and A's end race.
	clock.mu.Lock()
	clock.hold = true
	clock.mu.Unlock()
	b := req("/index.html")
	beganB := make(chan struct{})
	go func() {
		defer close(beganB)
		endB := web.acct.begin(0, b, web.gen.resolve(0, b))
		endB()
	}()
	<-clock.entered // B has read the clock, A is still in flight
	endedA := make(chan struct{})
	go func() {
		defer close(endedA)
		endA()
	}()
	select {
	case <-endedA:
	case <-time.After(200 * time.Millisecond): // A's end waits for B's accounting
	}
	close(clock.release)
	<-beganB
	<-endedA

	rep := web.Report()
	h := rep.Hosts["h0000.test"]
	if rep.SpacingViolations != 0 || rep.ConcurrencyViolations != 0 || h.MaxInFlight != 2 || h.MinGap < 0 {
		t.Errorf("B arrived while A was in flight (MaxPerHost 2): spacing %d, concurrency %d, MaxInFlight %d, MinGap %v",
			rep.SpacingViolations, rep.ConcurrencyViolations, h.MaxInFlight, h.MinGap)
	}
}

// The same for the JavaScript site's accounting.
func TestJSAccountingClockOrder(t *testing.T) {
	clock := &heldClock{base: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC), entered: make(chan struct{}), release: make(chan struct{})}
	var a jsAccounting
	req := func(path string) *http.Request {
		return httptest.NewRequest(http.MethodGet, "http://"+JSHost+path, nil)
	}
	ra, rb := req("/"), req("/p/1")
	a.begin(ra, clock.Now)
	clock.mu.Lock()
	clock.hold = true
	clock.mu.Unlock()
	beganB := make(chan struct{})
	go func() {
		defer close(beganB)
		a.begin(rb, clock.Now)
	}()
	<-clock.entered
	endedA := make(chan struct{})
	go func() {
		defer close(endedA)
		a.end(ra, clock.Now)
	}()
	select {
	case <-endedA:
	case <-time.After(200 * time.Millisecond):
	}
	close(clock.release)
	<-beganB
	<-endedA
	a.end(rb, clock.Now)
	if a.rep.MaxInFlight != 2 || a.rep.Gaps != 0 || a.rep.MinGap < 0 {
		t.Errorf("B arrived while A was in flight: %+v", a.rep)
	}
}
