package crawlkit_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/crawltest"
	"github.com/crawlkit/crawlkit/fetch"
	"github.com/crawlkit/crawlkit/frontier"
	"github.com/crawlkit/crawlkit/metrics/prometheus"
)

// hostsSite serves several virtual hosts (told apart by the Host header)
// from one httptest server, and records when each request of each host
// began, in the server's clock.
type hostsSite struct {
	srv    *httptest.Server
	mu     sync.Mutex
	starts map[string][]time.Time // host -> start times, robots.txt excluded
	paths  map[string][]string    // host -> paths requested, robots.txt excluded
}

func serveHosts(t *testing.T, serve func(w http.ResponseWriter, r *http.Request)) *hostsSite {
	t.Helper()
	s := &hostsSite{starts: map[string][]time.Time{}, paths: map[string][]string{}}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/robots.txt" {
			host := hostOf(r)
			s.mu.Lock()
			s.starts[host] = append(s.starts[host], time.Now())
			s.paths[host] = append(s.paths[host], r.URL.Path)
			s.mu.Unlock()
		}
		serve(w, r)
	}))
	t.Cleanup(s.srv.Close)
	return s
}

// hostOf returns r's host name, without a port.
func hostOf(r *http.Request) string {
	if host, _, err := net.SplitHostPort(r.Host); err == nil {
		return host
	}
	return r.Host
}

// dial routes every virtual host to the server.
func (s *hostsSite) dial(ctx context.Context, _, _ string) (net.Conn, error) {
	var d net.Dialer
	return d.DialContext(ctx, "tcp", s.srv.Listener.Addr().String())
}

// minGap returns the shortest time between the starts of two requests to
// host, and how many requests it got.
func (s *hostsSite) minGap(host string) (time.Duration, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.starts[host]
	gap := time.Duration(-1)
	for i := 1; i < len(st); i++ {
		if d := st[i].Sub(st[i-1]); gap < 0 || d < gap {
			gap = d
		}
	}
	return gap, len(st)
}

// crawl runs a Crawler from seed over the site's hosts, with the Config
// changed by mutate if not nil, and returns it once it has finished.
func (s *hostsSite) crawl(t *testing.T, seed string, mutate func(*crawlkit.Config)) *crawlkit.Crawler {
	t.Helper()
	cfg := crawlkit.Config{
		UserAgent:    testAgent,
		Seeds:        []string{seed},
		Scope:        crawlkit.ScopeAny,
		Delay:        time.Millisecond,
		DialContext:  s.dial,
		AllowPrivate: loopback,
		Workers:      4,
	}
	if mutate != nil {
		mutate(&cfg)
	}
	c, err := crawlkit.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	return c
}

// slowHostCrawlDelay is the Crawl-delay of slow.test in the tests below.
const slowHostCrawlDelay = 300 * time.Millisecond

// redirectsToSlowHost serves fast.test, whose home page links to three
// pages that redirect to pages of slow.test, whose robots.txt asks for
// crawlDelay between requests. slow.test is only ever reached through
// those redirects.
func redirectsToSlowHost(t *testing.T, crawlDelay string) *hostsSite {
	return serveHosts(t, func(w http.ResponseWriter, r *http.Request) {
		host := hostOf(r)
		switch {
		case host == "fast.test" && r.URL.Path == "/robots.txt":
			io.WriteString(w, "User-agent: *\nAllow: /\n")
		case host == "fast.test" && r.URL.Path == "/":
			writeHTML(w, `<html><body><a href="/r1">1</a> <a href="/r2">2</a> <a href="/r3">3</a></body></html>`)
		case host == "fast.test" && strings.HasPrefix(r.URL.Path, "/r"):
			http.Redirect(w, r, "http://slow.test/p"+strings.TrimPrefix(r.URL.Path, "/r"), http.StatusFound)
		case host == "slow.test" && r.URL.Path == "/robots.txt":
			fmt.Fprintf(w, "User-agent: *\nCrawl-delay: %s\nAllow: /\n", crawlDelay)
		case host == "slow.test":
			writeHTML(w, `<html><body><p>slow page `+r.URL.Path+`</p></body></html>`)
		default:
			http.NotFound(w, r)
		}
	})
}

// TestRedirectTargetHostCrawlDelay follows redirects to another host, whose
// robots.txt asks for a Crawl-delay: that host's requests are spaced by its
// Crawl-delay, although none of its URLs was ever leased from the frontier.
func TestRedirectTargetHostCrawlDelay(t *testing.T) {
	s := redirectsToSlowHost(t, fmt.Sprintf("%.3f", slowHostCrawlDelay.Seconds()))
	s.crawl(t, "http://fast.test/", nil)
	gap, n := s.minGap("slow.test")
	if n != 3 {
		t.Fatalf("slow.test got %d page requests (%v), want 3", n, s.paths["slow.test"])
	}
	if gap < slowHostCrawlDelay {
		t.Errorf("requests to slow.test, reached by redirects, %v apart; its robots.txt asks for a Crawl-delay of %v", gap, slowHostCrawlDelay)
	}
}

// TestRedirectToSkippedSlowHost redirects to a host whose Crawl-delay is
// over MaxCrawlDelay, with SkipSlowHosts: the host is not crawled, through
// redirects either.
func TestRedirectToSkippedSlowHost(t *testing.T) {
	s := redirectsToSlowHost(t, "60")
	s.crawl(t, "http://fast.test/", func(c *crawlkit.Config) {
		c.MaxCrawlDelay = time.Second
		c.CrawlDelayPolicy = crawlkit.SkipSlowHosts
	})
	if _, n := s.minGap("slow.test"); n != 0 {
		t.Errorf("slow.test, skipped for its Crawl-delay, got %d page requests through redirects: %v", n, s.paths["slow.test"])
	}
}

// TestSitemapFetchesHonourCrawlDelay seeds a crawl from a sitemap index of
// three sitemaps on a host with a Crawl-delay: the sitemaps, fetched before
// any page of the host is leased, are spaced by the Crawl-delay too.
func TestSitemapFetchesHonourCrawlDelay(t *testing.T) {
	s := serveHosts(t, func(w http.ResponseWriter, r *http.Request) {
		origin := "http://" + r.Host
		switch {
		case r.URL.Path == "/robots.txt":
			fmt.Fprintf(w, "User-agent: *\nCrawl-delay: %.3f\nAllow: /\nSitemap: %s/index.xml\n", slowHostCrawlDelay.Seconds(), origin)
		case r.URL.Path == "/index.xml":
			w.Header().Set("Content-Type", "application/xml")
			fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?>
<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
<sitemap><loc>%[1]s/s1.txt</loc></sitemap>
<sitemap><loc>%[1]s/s2.txt</loc></sitemap>
</sitemapindex>`, origin)
		case strings.HasPrefix(r.URL.Path, "/s"):
			w.Header().Set("Content-Type", "text/plain")
			fmt.Fprintf(w, "%s/page%s.html\n", origin, strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/s"), ".txt"))
		default:
			writeHTML(w, `<html><body><p>page `+r.URL.Path+`</p></body></html>`)
		}
	})
	s.crawl(t, "http://slow.test/", func(c *crawlkit.Config) { c.SitemapSeeds = true })
	gap, n := s.minGap("slow.test")
	// index.xml, s1.txt, s2.txt, /, /page1.html, /page2.html
	if n != 6 {
		t.Fatalf("slow.test got %d requests (%v), want 6", n, s.paths["slow.test"])
	}
	if gap < slowHostCrawlDelay {
		t.Errorf("requests to slow.test (%v) %v apart; its robots.txt asks for a Crawl-delay of %v", s.paths["slow.test"], gap, slowHostCrawlDelay)
	}
}

// TestStatsCountRetriesGivenUpAsFailed fetches a page that always answers
// with a server error: once its attempts are used up it is given up on, and
// Stats count it as failed, not as put back to be tried again.
func TestStatsCountRetriesGivenUpAsFailed(t *testing.T) {
	s := serveSite(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		switch r.URL.Path {
		case "/robots.txt":
			io.WriteString(w, "User-agent: *\nAllow: /\n")
		case "/":
			writeHTML(w, `<html><body><a href="/broken">broken</a></body></html>`)
		default:
			// 507: retried by the crawler, not by the fetcher.
			http.Error(w, "full", http.StatusInsufficientStorage)
		}
	})
	const attempts = 3
	c, err := crawlkit.New(crawlkit.Config{
		UserAgent:    testAgent,
		Seeds:        []string{s.srv.URL + "/"},
		Delay:        time.Millisecond,
		AllowPrivate: loopback,
		MaxAttempts:  attempts,
		RetryBackoff: time.Millisecond,
		// The host's error backoff (a minute by default) kept short.
		Politeness: fetch.NewPoliteness(fetch.PolitenessConfig{Delay: time.Millisecond, BackoffBase: time.Millisecond}),
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := s.hit("/broken"); n != attempts {
		t.Fatalf("/broken requested %d times, want %d", n, attempts)
	}
	u := c.Stats().URLs
	if u.Fetched != attempts+1 || u.Successful != 1 || u.Failed != 1 || u.Retried != attempts-1 {
		t.Errorf("stats %+v; want %d fetched, 1 successful, 1 failed (/broken, given up), %d retried", u, attempts+1, attempts-1)
	}
}

// failingSink refuses every page.
type failingSink struct{ writes atomic.Int32 }

func (s *failingSink) Write(context.Context, *crawlkit.Page) error {
	s.writes.Add(1)
	return errors.New("disk full")
}

func (s *failingSink) Close() error { return nil }

// TestSinkErrorsAreCounted checks that the Sink's failures are counted, as
// Sink's documentation says, in Stats and in the metrics.
func TestSinkErrorsAreCounted(t *testing.T) {
	web := newWeb(t, crawltest.Config{Hosts: 2, PagesPerHost: 4, Seed: 37, Agent: "crawlkit-test", NoTraps: true,
		CrawlDelay: 20 * time.Millisecond})
	var log pageLog
	cfg := crawlConfig(web, &log)
	sink := &failingSink{}
	cfg.Sink = sink
	c, err := crawlkit.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	n := int64(sink.writes.Load())
	if n == 0 {
		t.Fatal("the sink was not called")
	}
	if got := c.Stats().SinkErrors; got != n {
		t.Errorf("Stats.SinkErrors = %d, the sink failed %d times", got, n)
	}
	rec := httptest.NewRecorder()
	prometheus.Handler(c).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if want := fmt.Sprintf("crawlkit_sink_errors_total %d", n); !strings.Contains(rec.Body.String(), want) {
		t.Errorf("metrics lack %q", want)
	}
}

// TestNewRejectsNegativeLimits checks that limits documented with a default
// are refused when negative, as the other limits are, rather than silently
// replaced by their defaults; and an unknown CrawlDelayPolicy as well.
func TestNewRejectsNegativeLimits(t *testing.T) {
	base := func() crawlkit.Config {
		return crawlkit.Config{UserAgent: testAgent, Seeds: []string{"http://a.test/"}}
	}
	for name, mutate := range map[string]func(*crawlkit.Config){
		"negative body limit":   func(c *crawlkit.Config) { c.MaxBodyBytes = -1 },
		"negative media limit":  func(c *crawlkit.Config) { c.MaxMediaBytes = -1 },
		"negative grace":        func(c *crawlkit.Config) { c.ShutdownGrace = -time.Second },
		"unknown delay policy":  func(c *crawlkit.Config) { c.CrawlDelayPolicy = crawlkit.CrawlDelayPolicy(7) },
		"negative max attempts": func(c *crawlkit.Config) { c.MaxAttempts = -1 },
		"negative retry wait":   func(c *crawlkit.Config) { c.MaxRetryWait = -1 },
		"negative delay":        func(c *crawlkit.Config) { c.Delay = -2 * time.Second },
		"negative link cap":     func(c *crawlkit.Config) { c.MaxLinksPerPage = -1 },
		"NUL in User-Agent":     func(c *crawlkit.Config) { c.UserAgent = "testbot/1.0\x00" },
		"line break in header":  func(c *crawlkit.Config) { c.Header = http.Header{"X-A": {"a\r\nX-B: b"}} },
		"a million workers":     func(c *crawlkit.Config) { c.Workers = 1_000_000 },
		"browser token only":    func(c *crawlkit.Config) { c.UserAgent = "Mozilla/5.0 (X11; Linux x86_64)" },
		"digit in robots token": func(c *crawlkit.Config) { c.RobotsToken = "bot2" },
		"delay with a queue": func(c *crawlkit.Config) {
			f, err := frontier.New(frontier.Config{})
			if err != nil {
				t.Fatal(err)
			}
			c.Queue = onceQueue{f}
			c.Delay = 2 * time.Second
		},
		// A recrawl schedule the Crawler would not use: a Queue has its own.
		"recrawl with a queue": func(c *crawlkit.Config) {
			f, err := frontier.New(frontier.Config{})
			if err != nil {
				t.Fatal(err)
			}
			c.Queue = onceQueue{f}
			c.Recrawl = frontier.FixedInterval(time.Hour)
		},
	} {
		cfg := base()
		mutate(&cfg)
		if _, err := crawlkit.New(cfg); !errors.Is(err, crawlkit.ErrConfig) {
			t.Errorf("%s: New() error = %v, want ErrConfig", name, err)
		}
	}
	if _, err := crawlkit.New(base()); err != nil {
		t.Errorf("zero limits: %v", err)
	}
	for name, mutate := range map[string]func(*crawlkit.Config){
		"no delay": func(c *crawlkit.Config) { c.Delay = crawlkit.NoDelay },
		"compatible form": func(c *crawlkit.Config) {
			c.UserAgent = "Mozilla/5.0 (compatible; testbot/1.0; +https://example.com/bot)"
		},
		"browser UA, token named": func(c *crawlkit.Config) { c.UserAgent, c.RobotsToken = "Mozilla/5.0 (X11; Linux x86_64)", "testbot" },
	} {
		cfg := base()
		mutate(&cfg)
		if _, err := crawlkit.New(cfg); err != nil {
			t.Errorf("%s: New() error = %v", name, err)
		}
	}
}

// TestMaxPagesCountsResponsesNotFailedRequests crawls a site whose home
// page links first to five hosts that do not resolve and then to six pages
// of its own: MaxPages counts pages fetched (responses, as Stats.Fetched
// counts them), so the requests that got no response do not use it up and
// the crawl still fetches MaxPages pages.
func TestMaxPagesCountsResponsesNotFailedRequests(t *testing.T) {
	s := serveHosts(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			writeHTML(w, `<html><body><p>A page of live.test.</p></body></html>`)
			return
		}
		var b strings.Builder
		for i := 1; i <= 5; i++ {
			fmt.Fprintf(&b, `<a href="http://dead%d.test/">dead %d</a>`, i, i)
		}
		for i := 1; i <= 6; i++ {
			fmt.Fprintf(&b, `<a href="/p%d">page %d</a>`, i, i)
		}
		writeHTML(w, `<html><body>`+b.String()+`</body></html>`)
	})
	var dead atomic.Int32
	const maxPages = 5
	var handled atomic.Int32
	c := s.crawl(t, "http://live.test/", func(c *crawlkit.Config) {
		c.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			if strings.HasPrefix(addr, "dead") {
				dead.Add(1)
				return nil, &net.DNSError{Err: "no such host", Name: addr, IsNotFound: true}
			}
			return s.dial(ctx, network, addr)
		}
		c.MaxPages = maxPages
		c.MaxAttempts = 2
		c.RetryBackoff = time.Millisecond
		// The dead hosts' error backoff kept short; robots.txt off, so
		// that the dead hosts' pages are requested.
		c.Politeness = fetch.NewPoliteness(fetch.PolitenessConfig{Delay: time.Millisecond, BackoffBase: time.Millisecond})
		c.DangerouslyIgnoreRobotsTxt = true
		c.Handler = func(context.Context, *crawlkit.Page) error {
			handled.Add(1)
			return nil
		}
	})
	_, requests := s.minGap("live.test")
	u := c.Stats().URLs
	if u.Fetched != maxPages || handled.Load() != maxPages || requests != maxPages {
		t.Errorf("MaxPages %d: Stats.Fetched %d, handler saw %d, server saw %d requests (%d requests to dead hosts)",
			maxPages, u.Fetched, handled.Load(), requests, dead.Load())
	}
}

// onceQueue is a frontier as a Queue for a test that never runs it.
type onceQueue struct{ *frontier.Frontier }

func (onceQueue) Deduplicates() bool { return true }
