package crawlkit_test

// Regression tests for "The Crawler on the real web": the crawler's
// identity (the robots.txt product token of a browser-compatible
// User-Agent, RobotsToken), a robots.txt Crawl-delay spacing the first
// page after robots.txt itself, and Delay (NoDelay; Delay with a Queue).

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/fetch"
	"github.com/crawlkit/crawlkit/frontier"
)

const compatibleAgent = "Mozilla/5.0 (compatible; mybot/1.0; +https://example.com/bot)"

// mybotSite serves a host whose robots.txt disallows everything to mybot
// and allows everything to every other crawler, and records the
// User-Agent of its requests.
func mybotSite(t *testing.T) (*vhostServer, *[]string, *sync.Mutex) {
	var mu sync.Mutex
	var agents []string
	s := newVhostServer(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		agents = append(agents, r.UserAgent())
		mu.Unlock()
		switch r.URL.Path {
		case "/robots.txt":
			fmt.Fprint(w, "User-agent: mybot\nDisallow: /\n\nUser-agent: *\nAllow: /\n")
		default:
			writeHTMLPage(w, `<html><body><p>page `+r.URL.Path+`</p></body></html>`)
		}
	})
	return s, &agents, &mu
}

var mybotSeeds = []string{"http://bots.test/", "http://bots.test/a", "http://bots.test/b"}

// crawlMybot crawls mybotSite's seeds with the given identity and returns
// Run's error and the stats.
func crawlMybot(t *testing.T, s *vhostServer, ua, token string) (error, crawlkit.Stats) {
	t.Helper()
	c, err := crawlkit.New(crawlkit.Config{
		UserAgent:    ua,
		RobotsToken:  token,
		Seeds:        mybotSeeds,
		Delay:        crawlkit.NoDelay,
		DialContext:  s.dial,
		AllowPrivate: loopback,
	})
	if err != nil {
		t.Fatalf("New(UserAgent %q, RobotsToken %q): %v", ua, token, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err = c.Run(ctx)
	if ctx.Err() != nil {
		t.Fatalf("Run did not end within 30 s: %v", err)
	}
	return err, c.Stats()
}

// pageRequests returns the requests other than robots.txt.
func pageRequests(s *vhostServer) int {
	n := 0
	for _, r := range s.requests() {
		if r.path != "/robots.txt" {
			n++
		}
	}
	return n
}

// TestCompatibleUserAgentObeysItsRobotsGroup crawls with the
// browser-compatible User-Agent form: its product token is the name in the
// comment ("mybot"), whose robots.txt group disallows everything, so no
// page is fetched and every seed counts as not fetched for robots.
func TestCompatibleUserAgentObeysItsRobotsGroup(t *testing.T) {
	s, agents, mu := mybotSite(t)
	err, st := crawlMybot(t, s, compatibleAgent, "")
	if n := pageRequests(s); n != 0 {
		t.Errorf("%d pages requested; robots.txt disallows everything to mybot (requests %v)", n, s.requests())
	}
	if n := st.URLs.NotFetched[crawlkit.ReasonRobots]; n != int64(len(mybotSeeds)) {
		t.Errorf("NotFetched[robots] = %d, want %d (not fetched %v)", n, len(mybotSeeds), st.URLs.NotFetched)
	}
	if st.URLs.BlockedByRobots != int64(len(mybotSeeds)) {
		t.Errorf("BlockedByRobots = %d, want %d", st.URLs.BlockedByRobots, len(mybotSeeds))
	}
	if !errors.Is(err, crawlkit.ErrNothingFetched) || !strings.Contains(err.Error(), "robots") {
		t.Errorf("Run = %v, want ErrNothingFetched naming robots", err)
	}
	mu.Lock()
	for _, a := range *agents {
		if a != compatibleAgent {
			t.Errorf("request sent with User-Agent %q, want %q", a, compatibleAgent)
		}
	}
	mu.Unlock()

	// The control: another crawler's token falls to the * group and
	// fetches every page, so the refusal above came from the token.
	other, _, _ := mybotSite(t)
	err, st = crawlMybot(t, other, "Mozilla/5.0 (compatible; otherbot/1.0; +https://example.com/bot)", "")
	if err != nil {
		t.Errorf("otherbot's Run = %v", err)
	}
	if n := pageRequests(other); n != len(mybotSeeds) {
		t.Errorf("otherbot requested %d pages, want %d", n, len(mybotSeeds))
	}
	if st.URLs.NotFetched[crawlkit.ReasonRobots] != 0 {
		t.Errorf("otherbot: NotFetched %v, want no robots refusal", st.URLs.NotFetched)
	}
}

// TestBrowserUserAgentNeedsRobotsToken: a User-Agent whose only token is
// a browser's is refused unless RobotsToken names the crawler, and with
// RobotsToken set the crawl obeys that token's robots.txt group.
func TestBrowserUserAgentNeedsRobotsToken(t *testing.T) {
	const browser = "Mozilla/5.0 (X11; Linux x86_64)"
	_, err := crawlkit.New(crawlkit.Config{UserAgent: browser, Seeds: []string{"http://bots.test/"}})
	if !errors.Is(err, crawlkit.ErrConfig) {
		t.Fatalf("New(UserAgent %q) = %v, want ErrConfig", browser, err)
	}
	if !strings.Contains(err.Error(), "RobotsToken") {
		t.Errorf("New's error %q does not mention RobotsToken", err)
	}

	s, _, _ := mybotSite(t)
	err, st := crawlMybot(t, s, browser, "mybot")
	if n := pageRequests(s); n != 0 {
		t.Errorf("with RobotsToken mybot, %d pages requested; robots.txt disallows everything to mybot", n)
	}
	if n := st.URLs.NotFetched[crawlkit.ReasonRobots]; n != int64(len(mybotSeeds)) {
		t.Errorf("NotFetched[robots] = %d, want %d", n, len(mybotSeeds))
	}
	if !errors.Is(err, crawlkit.ErrNothingFetched) {
		t.Errorf("Run = %v, want ErrNothingFetched", err)
	}
}

// TestCrawlDelaySpacesTheFirstPageAfterRobots crawls a host whose
// robots.txt asks for Crawl-delay: 1: the first page request comes at
// least a second after the robots.txt request, as every later one does
// after the one before (server-side times: lower bounds, which a loaded
// machine only makes longer).
func TestCrawlDelaySpacesTheFirstPageAfterRobots(t *testing.T) {
	s := newVhostServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			fmt.Fprint(w, "User-agent: *\nCrawl-delay: 1\nAllow: /\n")
		case "/":
			writeHTMLPage(w, `<html><body><a href="/a">a</a></body></html>`)
		default:
			writeHTMLPage(w, `<html><body><p>page a</p></body></html>`)
		}
	})
	runCrawl(t, crawlkit.Config{
		UserAgent:    testAgent,
		Seeds:        []string{"http://slow.test/"},
		Delay:        crawlkit.NoDelay,
		DialContext:  s.dial,
		AllowPrivate: loopback,
	}, time.Minute)
	reqs := s.requests()
	if len(reqs) != 3 || reqs[0].path != "/robots.txt" {
		t.Fatalf("requests %v, want robots.txt, /, /a", reqs)
	}
	const least = 950 * time.Millisecond // a second, less clock granularity
	if gap := reqs[1].at.Sub(reqs[0].at); gap < least {
		t.Errorf("first page requested %v after robots.txt; its Crawl-delay asks for 1 s", gap)
	}
	if gap := reqs[2].at.Sub(reqs[1].at); gap < least {
		t.Errorf("second page requested %v after the first; Crawl-delay asks for 1 s", gap)
	}
}

// TestNoDelayCrawlsBackToBack: Delay NoDelay is accepted and a 50-page
// site is not spaced a second a page (the zero Delay's default).
func TestNoDelayCrawlsBackToBack(t *testing.T) {
	const pages = 50
	s := newVhostServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch p := r.URL.Path; {
		case p == "/robots.txt":
			fmt.Fprint(w, "User-agent: *\nAllow: /\n")
		case p == "/":
			var b strings.Builder
			b.WriteString(`<html><body>`)
			for i := 1; i < pages; i++ {
				fmt.Fprintf(&b, `<a href="/p/%d">page %d</a> `, i, i)
			}
			b.WriteString(`</body></html>`)
			writeHTMLPage(w, b.String())
		default:
			writeHTMLPage(w, `<html><head><title>`+p+`</title></head><body><p>the page `+p+`</p></body></html>`)
		}
	})
	c := runCrawl(t, crawlkit.Config{
		UserAgent:    testAgent,
		Seeds:        []string{"http://fast.test/"},
		Delay:        crawlkit.NoDelay,
		DialContext:  s.dial,
		AllowPrivate: loopback,
	}, 2*time.Minute)
	if n := pageRequests(s); n != pages {
		t.Errorf("%d pages requested, want %d", n, pages)
	}
	reqs := s.requests()
	span := serverSpan(reqs)
	// At the 1 s default the crawl takes 50 s or more; without a delay it
	// takes well under a second on an idle machine.
	if span >= 25*time.Second {
		t.Errorf("%d requests took %v on the server's clock: spaced as with a delay", len(reqs), span)
	}
	t.Logf("%d requests in %v; stats %+v", len(reqs), span, c.Stats().URLs)
}

// TestQueueWithDelayNeedsPoliteness: Delay does not reach a Queue's
// schedule, so New refuses it without a Politeness, and accepts a Queue
// with a Politeness, or with the zero Delay.
func TestQueueWithDelayNeedsPoliteness(t *testing.T) {
	q, err := frontier.New(frontier.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	base := crawlkit.Config{UserAgent: testAgent, Seeds: []string{"http://q.test/"}, Queue: onceQueue{q}}

	cfg := base
	cfg.Delay = 200 * time.Millisecond
	_, err = crawlkit.New(cfg)
	if !errors.Is(err, crawlkit.ErrConfig) {
		t.Fatalf("New(Queue, Delay, no Politeness) = %v, want ErrConfig", err)
	}
	if !strings.Contains(err.Error(), "Politeness") {
		t.Errorf("New's error %q does not name Politeness", err)
	}

	cfg.Politeness = fetch.NewPoliteness(fetch.PolitenessConfig{Delay: 200 * time.Millisecond})
	if _, err := crawlkit.New(cfg); err != nil {
		t.Errorf("New(Queue, Delay, Politeness) = %v, want nil", err)
	}
	if _, err := crawlkit.New(base); err != nil {
		t.Errorf("New(Queue, zero Delay) = %v, want nil", err)
	}
	noQueue := base
	noQueue.Queue = nil
	noQueue.Delay = crawlkit.NoDelay
	if _, err := crawlkit.New(noQueue); err != nil {
		t.Errorf("New(Delay NoDelay) = %v, want nil", err)
	}
}
