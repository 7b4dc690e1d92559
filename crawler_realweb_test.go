package crawlkit_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit"
)

// Regression tests for sites nobody here wrote, whose shapes once made the
// Crawler lose pages without a word: numbered documentation, templated
// shops, a host with one broken page, an intranet seed, a browser-style
// User-Agent.

// boilerplate is the template text every page of a generated site shares:
// on real sites it dwarfs what tells the pages apart.
var boilerplate = strings.Repeat("Free shipping on orders over fifty euros. Returns are accepted within thirty days of delivery. "+
	"Our customer service team answers every question within one working day. Secure payment by card or bank transfer. ", 6)

// requested returns the paths host got, robots.txt excluded, as a set.
func (s *hostsSite) requested(host string) map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := map[string]int{}
	for _, p := range s.paths[host] {
		m[p]++
	}
	return m
}

// TestNumberedDocsAreCrawledInFull crawls documentation whose pages are
// mostly section numbers (as rustdoc and numbered manuals are): once they
// all got one fingerprint and a content rule stopped the host.
func TestNumberedDocsAreCrawledInFull(t *testing.T) {
	const chapters, sections = 8, 16
	sidebar := `<nav>` + boilerplate + `</nav>`
	for c := 1; c <= chapters; c++ {
		sidebar += fmt.Sprintf(`<a href="/ch%d/">Chapter %d</a>`, c, c)
	}
	s := serveHosts(t, func(w http.ResponseWriter, r *http.Request) {
		var c, sec int
		switch {
		case r.URL.Path == "/":
			writeHTML(w, `<html><head><title>Manual</title></head><body>`+sidebar+`</body></html>`)
		case func() bool { n, _ := fmt.Sscanf(r.URL.Path, "/ch%d/s%d.html", &c, &sec); return n == 2 }():
			var b strings.Builder
			fmt.Fprintf(&b, `<html><head><title>%d.%d</title></head><body>%s<h1>%d.%d</h1>`, c, sec, sidebar, c, sec)
			for k := 1; k <= 30; k++ {
				fmt.Fprintf(&b, `<p>%d.%d.%d</p>`, c, sec, k)
			}
			writeHTML(w, b.String()+`</body></html>`)
		case func() bool { n, _ := fmt.Sscanf(r.URL.Path, "/ch%d/", &c); return n == 1 }():
			var b strings.Builder
			fmt.Fprintf(&b, `<html><head><title>Chapter %d</title></head><body>%s`, c, sidebar)
			for k := 1; k <= sections; k++ {
				fmt.Fprintf(&b, `<a href="/ch%d/s%d.html">%d.%d</a> `, c, k, c, k)
			}
			writeHTML(w, b.String()+`</body></html>`)
		default:
			http.NotFound(w, r)
		}
	})
	c := s.crawl(t, "http://docs.test/", func(cfg *crawlkit.Config) { cfg.Delay = crawlkit.NoDelay })
	got := s.requested("docs.test")
	if want := 1 + chapters + chapters*sections; len(got) != want {
		t.Errorf("fetched %d distinct pages of %d", len(got), want)
	}
	st := c.Stats()
	if st.URLs.TrapRejected != 0 || st.Hosts.Blocked != 0 || len(st.URLs.NotFetched) != 0 {
		t.Errorf("trap-rejected %d, hosts blocked %d, not fetched %v; want none", st.URLs.TrapRejected, st.Hosts.Blocked, st.URLs.NotFetched)
	}
}

// shop serves templated product pages: /cat/K lists perCat products, and
// each product links to the next four.
func shop(products, perCat int) func(w http.ResponseWriter, r *http.Request) {
	adjectives := []string{"Blue", "Red", "Green", "Oak", "Steel", "Wool", "Linen", "Glass", "Amber", "Slate"}
	nouns := []string{"Chair", "Lamp", "Shelf", "Table", "Rug", "Vase", "Clock", "Mirror", "Stool", "Desk"}
	name := func(i int) string {
		return fmt.Sprintf("%s %s %s no. %d", adjectives[i%10], adjectives[(i/10)%10], nouns[(i/100)%10], i)
	}
	return func(w http.ResponseWriter, r *http.Request) {
		var i int
		switch {
		case r.URL.Path == "/":
			var b strings.Builder
			for k := 0; k*perCat < products; k++ {
				fmt.Fprintf(&b, `<a href="/cat/%d">Category %d</a> `, k, k)
			}
			writeHTML(w, `<html><head><title>Shop</title></head><body>`+b.String()+`</body></html>`)
		case func() bool { n, _ := fmt.Sscanf(r.URL.Path, "/cat/%d", &i); return n == 1 }():
			var b strings.Builder
			for p := i * perCat; p < min(products, (i+1)*perCat); p++ {
				fmt.Fprintf(&b, `<a href="/product/%d">%s</a> `, p, name(p))
			}
			writeHTML(w, `<html><head><title>Category</title></head><body>`+b.String()+boilerplate+`</body></html>`)
		case func() bool { n, _ := fmt.Sscanf(r.URL.Path, "/product/%d", &i); return n == 1 }():
			var b strings.Builder
			fmt.Fprintf(&b, `<html><head><title>%s</title></head><body><h1>%s</h1><p>SKU %06d</p><p>Price %d.%02d EUR</p><p>%s</p>`,
				name(i), name(i), 7919*i%1000003, 5+i%97, (i*37)%100, boilerplate)
			for k := 1; k <= 4; k++ {
				fmt.Fprintf(&b, `<a href="/product/%d">more</a> `, (i+k)%products)
			}
			writeHTML(w, b.String()+`<a href="/">Home</a></body></html>`)
		default:
			http.NotFound(w, r)
		}
	}
}

// TestTemplatedShopIsCrawledInFull crawls 3 hosts of 30 products and one
// of 1,000, all on one template with distinct names and prices, with the
// default content rules: once only a third of them were fetched.
func TestTemplatedShopIsCrawledInFull(t *testing.T) {
	small := shop(30, 10)
	big := shop(1000, 50)
	s := serveHosts(t, func(w http.ResponseWriter, r *http.Request) {
		if hostOf(r) == "big.test" {
			big(w, r)
			return
		}
		small(w, r)
	})
	var handled atomic.Int64
	c := s.crawl(t, "http://a.test/", func(cfg *crawlkit.Config) {
		cfg.Seeds = []string{"http://a.test/", "http://b.test/", "http://c.test/", "http://big.test/"}
		cfg.Delay = crawlkit.NoDelay
		cfg.MaxConnsPerHost = 4
		cfg.Workers = 16
		cfg.Handler = func(_ context.Context, p *crawlkit.Page) error {
			if strings.Contains(p.URL, "/product/") {
				handled.Add(1)
			}
			return nil
		}
	})
	for host, want := range map[string]int{"a.test": 30, "b.test": 30, "c.test": 30, "big.test": 1000} {
		n := 0
		for p := range s.requested(host) {
			if strings.HasPrefix(p, "/product/") {
				n++
			}
		}
		if n != want {
			t.Errorf("%s: %d of %d products fetched", host, n, want)
		}
	}
	if handled.Load() != 1090 {
		t.Errorf("Handler got %d product pages, want 1090", handled.Load())
	}
	if st := c.Stats(); st.URLs.TrapRejected != 0 || st.Hosts.Blocked != 0 {
		t.Errorf("trap-rejected %d, hosts blocked %d; want none (near-duplicates %d)", st.URLs.TrapRejected, st.Hosts.Blocked, st.URLs.Duplicates)
	}
}

// TestOneFailingURLDoesNotBlockItsHost crawls 200 pages of a host one of
// whose pages always answers 500: that page is retried on its own clock
// and given up, counted, while the host goes on. It once blocked the host
// for minutes, doubling at every retry.
func TestOneFailingURLDoesNotBlockItsHost(t *testing.T) {
	s := serveHosts(t, func(w http.ResponseWriter, r *http.Request) {
		var i int
		switch {
		case r.URL.Path == "/bad":
			http.Error(w, "broken", http.StatusInternalServerError)
		case r.URL.Path == "/":
			var b strings.Builder
			b.WriteString(`<a href="/bad">bad</a>`)
			for k := 0; k < 200; k++ {
				fmt.Fprintf(&b, `<a href="/p%d">page %d</a> `, k, k)
			}
			writeHTML(w, `<html><body>`+b.String()+`</body></html>`)
		case func() bool { n, _ := fmt.Sscanf(r.URL.Path, "/p%d", &i); return n == 1 }():
			writeHTML(w, fmt.Sprintf(`<html><head><title>Page %d</title></head><body><p>Page %d of the site, about topic %d.</p></body></html>`, i, i, i*7919))
		default:
			http.NotFound(w, r)
		}
	})
	// With the host blocked a minute at the first 500, as it was, this
	// crawl could not end inside the Crawler's one-minute context.
	c := s.crawl(t, "http://one.test/", func(cfg *crawlkit.Config) {
		cfg.Delay = crawlkit.NoDelay
		cfg.RetryBackoff = 20 * time.Millisecond
		cfg.MaxAttempts = 3
	})
	got := s.requested("one.test")
	s.mu.Lock()
	var first, lastGood time.Time
	for i, p := range s.paths["one.test"] {
		at := s.starts["one.test"][i]
		if first.IsZero() {
			first = at
		}
		if strings.HasPrefix(p, "/p") {
			lastGood = at
		}
	}
	s.mu.Unlock()
	t.Logf("the 200 good pages were fetched within %v of the first request; the crawl took %v", lastGood.Sub(first), c.Stats().Elapsed)
	for k := 0; k < 200; k++ {
		if got[fmt.Sprintf("/p%d", k)] != 1 {
			t.Fatalf("/p%d requested %d times, want 1", k, got[fmt.Sprintf("/p%d", k)])
		}
	}
	// One request per attempt: the retries are the frontier's, per URL.
	if n := got["/bad"]; n != 3 {
		t.Errorf("/bad requested %d times, want 3 (MaxAttempts)", n)
	}
	st := c.Stats()
	if st.URLs.NotFetched[crawlkit.ReasonRetryBudget] != 1 || st.URLs.Deferred[crawlkit.ReasonHTTPError] != 2 {
		t.Errorf("not fetched %v, deferred %v; want retry-budget 1, http-error 2", st.URLs.NotFetched, st.URLs.Deferred)
	}
}

// TestPrivateSeedWithoutAllowPrivateFailsFast starts a crawl at a loopback
// address without AllowPrivate: the address guard refuses robots.txt, and
// Run says so in seconds instead of retrying robots.txt for minutes and
// calling the seed "blocked by robots".
func TestPrivateSeedWithoutAllowPrivateFailsFast(t *testing.T) {
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		writeHTML(w, `<html><body>intranet</body></html>`)
	}))
	defer srv.Close()
	c, err := crawlkit.New(crawlkit.Config{UserAgent: testAgent, Seeds: []string{srv.URL + "/"}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err = c.Run(ctx)
	if !errors.Is(err, crawlkit.ErrNothingFetched) || !strings.Contains(err.Error(), "guard") || !strings.Contains(err.Error(), "AllowPrivate") {
		t.Fatalf("Run() = %v, want ErrNothingFetched naming the guard and AllowPrivate", err)
	}
	st := c.Stats()
	if st.URLs.NotFetched[crawlkit.ReasonGuard] != 1 || st.URLs.BlockedByRobots != 0 || requests.Load() != 0 {
		t.Errorf("not fetched %v, blocked by robots %d, server requests %d; want guard 1, 0, 0",
			st.URLs.NotFetched, st.URLs.BlockedByRobots, requests.Load())
	}
}

// TestCompatibleUserAgentMatchesItsToken crawls with the User-Agent form
// Googlebot and bingbot use: robots.txt must be matched as "mybot", not as
// "Mozilla".
func TestCompatibleUserAgentMatchesItsToken(t *testing.T) {
	s := serveHosts(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			fmt.Fprint(w, "User-agent: mybot\nDisallow: /\n\nUser-agent: *\nAllow: /\n")
			return
		}
		writeHTML(w, `<html><body><a href="/a">a</a></body></html>`)
	})
	cfg := crawlkit.Config{
		UserAgent: "Mozilla/5.0 (compatible; mybot/1.0; +https://example.com/bot)",
		Seeds:     []string{"http://ua.test/"}, DialContext: s.dial, AllowPrivate: loopback, Delay: crawlkit.NoDelay,
	}
	c, err := crawlkit.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.Run(ctx); !errors.Is(err, crawlkit.ErrNothingFetched) || !strings.Contains(err.Error(), "robots") {
		t.Errorf("Run() = %v, want ErrNothingFetched naming robots", err)
	}
	if got := s.requested("ua.test"); len(got) != 0 {
		t.Errorf("pages fetched against robots.txt: %v", got)
	}
	if n := c.Stats().URLs.NotFetched[crawlkit.ReasonRobots]; n != 1 {
		t.Errorf("not fetched for robots: %d, want 1", n)
	}
}

// TestRobotsRequestCountsTowardCrawlDelay checks that the first page of a
// host whose robots.txt asks for a Crawl-delay waits that delay after the
// robots.txt request, as it waits after any other request.
func TestRobotsRequestCountsTowardCrawlDelay(t *testing.T) {
	var mu sync.Mutex
	var robotsAt time.Time
	s := serveHosts(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			mu.Lock()
			robotsAt = time.Now()
			mu.Unlock()
			fmt.Fprint(w, "User-agent: *\nCrawl-delay: 1\n")
			return
		}
		writeHTML(w, `<html><body>home</body></html>`)
	})
	c := s.crawl(t, "http://cd.test/", func(cfg *crawlkit.Config) { cfg.Delay = crawlkit.NoDelay })
	if w := c.Stats().Waiting; w.CrawlDelayHosts != 1 || w.LongestCrawlDelay != time.Second {
		t.Errorf("Stats.Waiting = %+v, want the one Crawl-delay host of 1 s", w)
	}
	s.mu.Lock()
	starts := s.starts["cd.test"]
	s.mu.Unlock()
	mu.Lock()
	defer mu.Unlock()
	if len(starts) != 1 || robotsAt.IsZero() {
		t.Fatalf("page requests %d, robots.txt at %v", len(starts), robotsAt)
	}
	// A lower bound, so a loaded machine cannot break it; 50 ms of slack
	// for the two clocks' reading order.
	if gap := starts[0].Sub(robotsAt); gap < 950*time.Millisecond {
		t.Errorf("first page %v after robots.txt, want the 1 s Crawl-delay", gap)
	}
}

// TestNoDelay asks for no delay: 50 pages of one host are fetched without
// the 1 s default between them.
func TestNoDelay(t *testing.T) {
	s := serveHosts(t, func(w http.ResponseWriter, r *http.Request) {
		var b strings.Builder
		for k := 0; k < 50; k++ {
			fmt.Fprintf(&b, `<a href="/p%d">%d</a>`, k, k)
		}
		writeHTML(w, `<html><body>`+b.String()+`</body></html>`)
	})
	s.crawl(t, "http://fast.test/", func(cfg *crawlkit.Config) { cfg.Delay = crawlkit.NoDelay })
	s.mu.Lock()
	starts := s.starts["fast.test"]
	s.mu.Unlock()
	if len(starts) != 51 {
		t.Fatalf("%d requests, want 51", len(starts))
	}
	// With the 1 s default this takes 50 s; anything near that is a delay.
	if span := starts[len(starts)-1].Sub(starts[0]); span > 20*time.Second {
		t.Errorf("51 requests took %v with NoDelay", span)
	}
}

// TestHandlerPanicIsRecovered: a Handler that panics fails its page, which
// is fetched again; the crawl goes on and Run returns nil.
func TestHandlerPanicIsRecovered(t *testing.T) {
	s := serveHosts(t, func(w http.ResponseWriter, r *http.Request) {
		writeHTML(w, `<html><body><a href="/a">a</a><a href="/b">b</a></body></html>`)
	})
	var once atomic.Bool
	c := s.crawl(t, "http://p.test/", func(cfg *crawlkit.Config) {
		cfg.Delay = crawlkit.NoDelay
		cfg.RetryBackoff = time.Millisecond
		cfg.Handler = func(_ context.Context, p *crawlkit.Page) error {
			if strings.HasSuffix(p.URL, "/a") && once.CompareAndSwap(false, true) {
				panic("handler bug")
			}
			return nil
		}
	})
	st := c.Stats()
	if st.URLs.Deferred[crawlkit.ReasonHandlerError] != 1 || st.URLs.Successful != 3 {
		t.Errorf("deferred %v, successful %d; want handler-error 1, 3", st.URLs.Deferred, st.URLs.Successful)
	}
	if got := s.requested("p.test")["/a"]; got != 2 {
		t.Errorf("/a requested %d times, want 2", got)
	}
}

// TestHandlerIgnoringContextIsAbandoned: a Handler that never returns does
// not hold Run past ShutdownGrace once ctx ends.
func TestHandlerIgnoringContextIsAbandoned(t *testing.T) {
	s := serveHosts(t, func(w http.ResponseWriter, r *http.Request) {
		writeHTML(w, `<html><body>stuck</body></html>`)
	})
	release := make(chan struct{})
	defer close(release)
	entered := make(chan struct{}, 1)
	c, err := crawlkit.New(crawlkit.Config{
		UserAgent: testAgent, Seeds: []string{"http://stuck.test/"}, DialContext: s.dial, AllowPrivate: loopback,
		Delay: crawlkit.NoDelay, ShutdownGrace: 100 * time.Millisecond,
		Handler: func(context.Context, *crawlkit.Page) error {
			entered <- struct{}{}
			<-release
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	<-entered
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, crawlkit.ErrAbandoned) {
			t.Errorf("Run() = %v, want ErrAbandoned", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("Run did not return a minute after its context ended")
	}
}

// TestUnreachableSeedIsNamed: a seed whose host cannot be reached (here a
// dialer that fails as an unknown name does) ends Run with an error that
// says so, rather than nil and zero pages.
func TestUnreachableSeedIsNamed(t *testing.T) {
	c, err := crawlkit.New(crawlkit.Config{
		UserAgent: testAgent, Seeds: []string{"http://gone.test/"}, AllowPrivate: loopback, RobotsRetries: -1,
		DialContext: func(context.Context, string, string) (net.Conn, error) {
			return nil, errors.New("lookup gone.test: no such host")
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err = c.Run(ctx)
	if !errors.Is(err, crawlkit.ErrNothingFetched) || !strings.Contains(err.Error(), "no such host") {
		t.Errorf("Run() = %v, want ErrNothingFetched naming the lookup failure", err)
	}
}

// TestScopeFuncPanicIsRecovered: a ScopeFunc that panics on one URL leaves
// that URL out of scope, counted, and the crawl goes on.
func TestScopeFuncPanicIsRecovered(t *testing.T) {
	s := serveHosts(t, func(w http.ResponseWriter, r *http.Request) {
		writeHTML(w, `<html><body><a href="/ok">ok</a><a href="/boom">boom</a></body></html>`)
	})
	c := s.crawl(t, "http://sf.test/", func(cfg *crawlkit.Config) {
		cfg.Delay = crawlkit.NoDelay
		cfg.ScopeFunc = func(u *url.URL) bool {
			if u.Path == "/boom" {
				panic("scope bug")
			}
			return true
		}
	})
	got := s.requested("sf.test")
	if got["/ok"] != 1 || got["/boom"] != 0 {
		t.Errorf("requested %v; want /ok once and /boom never", got)
	}
	if n := c.Stats().LinksRejected[crawlkit.ReasonScope]; n == 0 {
		t.Error("the URL ScopeFunc panicked on was not counted as out of scope")
	}
}
