package crawlkit_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit"
)

// TestQueuedRedirectTargetFetchedOnce checks that a URL queued before a
// redirect of another URL fetched it is not requested again when it is
// leased: the home page links to /old, which redirects to /new, and to
// /new itself, so /new is queued before /old is fetched.
func TestQueuedRedirectTargetFetchedOnce(t *testing.T) {
	s := serveSite(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		switch r.URL.Path {
		case "/":
			writeHTML(w, `<html><body><a href="/old">old</a> <a href="/new">new</a></body></html>`)
		case "/old":
			http.Redirect(w, r, "/new", http.StatusMovedPermanently)
		case "/new":
			writeHTML(w, "<html><title>new</title><body>moved here</body></html>")
		default:
			http.NotFound(w, r)
		}
	})
	var mu sync.Mutex
	var handled []string
	c, err := crawlkit.New(crawlkit.Config{
		UserAgent:    testAgent,
		Seeds:        []string{s.srv.URL + "/"},
		Delay:        time.Millisecond,
		AllowPrivate: loopback,
		Workers:      1,
		Handler: func(_ context.Context, p *crawlkit.Page) error {
			mu.Lock()
			handled = append(handled, strings.TrimPrefix(p.URL, s.srv.URL)+" -> "+strings.TrimPrefix(p.FinalURL, s.srv.URL))
			mu.Unlock()
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := s.hit("/new"); n != 1 {
		t.Errorf("/new requested %d times, want 1 (pages handled: %v)", n, handled)
	}
	st := c.Stats()
	if st.URLs.FetchedByRedirect != 1 {
		t.Errorf("Stats.URLs.FetchedByRedirect = %d, want 1", st.URLs.FetchedByRedirect)
	}
	if len(handled) != 2 || handled[0] != "/ -> /" || handled[1] != "/old -> /new" {
		t.Errorf("pages handled %v, want [/ -> /, /old -> /new]", handled)
	}
}

// TestRedirectToHostWithUnreachableRobotsIsRetried checks that a URL that
// redirects to a host whose robots.txt cannot be fetched (503: the whole
// host is disallowed for now, RFC 9309 §2.3.1.3) is put back to be tried
// when that robots.txt is fetched again, as a URL of that host would be,
// instead of being given up as disallowed.
func TestRedirectToHostWithUnreachableRobotsIsRetried(t *testing.T) {
	s := serveHosts(t, func(w http.ResponseWriter, r *http.Request) {
		host := hostOf(r)
		switch {
		case host == "a.test" && r.URL.Path == "/robots.txt":
			io.WriteString(w, "User-agent: *\nAllow: /\n")
		case host == "a.test" && r.URL.Path == "/":
			writeHTML(w, `<html><body><a href="/moved">moved</a></body></html>`)
		case host == "a.test" && r.URL.Path == "/moved":
			http.Redirect(w, r, "http://down.test/page", http.StatusMovedPermanently)
		case host == "down.test" && r.URL.Path == "/robots.txt":
			http.Error(w, "maintenance", http.StatusServiceUnavailable)
		default:
			writeHTML(w, "<html><body>page</body></html>")
		}
	})
	c, err := crawlkit.New(crawlkit.Config{
		UserAgent:     testAgent,
		Seeds:         []string{"http://a.test/"},
		Scope:         crawlkit.ScopeAny,
		Delay:         time.Millisecond,
		DialContext:   s.dial,
		AllowPrivate:  loopback,
		RobotsRetries: 2,
	})
	if err != nil {
		t.Fatal(err)
	}
	// The retry waits for down.test's robots.txt to expire, minutes away:
	// the crawl is stopped once /moved has been put back.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	deadline := time.After(30 * time.Second)
	for c.Stats().URLs.Retried == 0 {
		select {
		case err := <-done:
			t.Fatalf("crawl ended (err %v) without putting /moved back: %+v", err, c.Stats().URLs)
		case <-deadline:
			t.Fatalf("/moved not put back within 30s: %+v", c.Stats().URLs)
		case <-time.After(5 * time.Millisecond):
		}
	}
	cancel()
	if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
	u := c.Stats().URLs
	if u.BlockedByRobots != 0 || u.Retried != 1 {
		t.Errorf("stats %+v; want /moved retried once and nothing blocked by robots.txt", u)
	}
	s.mu.Lock()
	got := s.paths["down.test"]
	s.mu.Unlock()
	if len(got) != 0 {
		t.Errorf("down.test requested %v while its robots.txt was unreachable", got)
	}
}

// TestMaxPagesCountsRefusedRedirects checks that MaxPages bounds a site
// whose every link redirects out of the crawl's scope: each such fetch got
// a response (the redirect), so it uses the budget up although no page
// comes of it.
func TestMaxPagesCountsRefusedRedirects(t *testing.T) {
	s := serveSite(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		switch {
		case r.URL.Path == "/robots.txt":
			io.WriteString(w, "User-agent: *\nAllow: /\n")
		case r.URL.Path == "/":
			var b strings.Builder
			for i := range 20 {
				fmt.Fprintf(&b, `<a href="/r%d">%d</a> `, i, i)
			}
			writeHTML(w, `<html><body>`+b.String()+`</body></html>`)
		case strings.HasPrefix(r.URL.Path, "/r"):
			http.Redirect(w, r, "http://elsewhere.test"+r.URL.Path, http.StatusFound)
		default:
			http.NotFound(w, r)
		}
	})
	const maxPages = 4
	s.crawl(t, func(c *crawlkit.Config) {
		c.MaxPages = maxPages
		c.Workers = 2
	})
	redirects := 0
	for i := range 20 {
		redirects += s.hit(fmt.Sprintf("/r%d", i))
	}
	if redirects != maxPages-1 {
		t.Errorf("%d redirecting pages requested with MaxPages %d (the home page is the first); want %d", redirects, maxPages, maxPages-1)
	}
}

// TestMediaRedirectToPageKeepsThePage checks that an image that redirects
// to an HTML page (hotlink protection often sends images to a landing page)
// does not mark that page as seen: the media fetch neither handles it nor
// follows its links, so a link to it found later must still crawl it.
func TestMediaRedirectToPageKeepsThePage(t *testing.T) {
	s := serveSite(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		switch r.URL.Path {
		case "/robots.txt":
			io.WriteString(w, "User-agent: *\nAllow: /\n")
		case "/":
			writeHTML(w, `<html><body><img src="/img.png" alt="i"><a href="/next">next</a></body></html>`)
		case "/img.png":
			http.Redirect(w, r, "/landing", http.StatusFound)
		case "/next":
			writeHTML(w, `<html><body><a href="/deeper">deeper</a></body></html>`)
		case "/deeper":
			writeHTML(w, `<html><body><a href="/landing">landing</a></body></html>`)
		case "/landing":
			writeHTML(w, `<html><body><p>The landing page.</p><a href="/beyond">beyond</a></body></html>`)
		case "/beyond":
			writeHTML(w, `<html><body><p>Only linked from the landing page.</p></body></html>`)
		default:
			http.NotFound(w, r)
		}
	})
	got := s.crawl(t, func(c *crawlkit.Config) {
		c.Workers = 1
		c.MediaTypes = []string{"image/*"}
	})
	if got["/landing"] == nil || got["/beyond"] == nil {
		t.Errorf("pages handed on %v; want /landing (linked from /deeper) and /beyond", keys(got))
	}
}
