package crawlkit_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit"
)

// crawlRedirectSite crawls s from its home page with one worker (so the
// frontier's order is the links' order) and returns the pages handed to
// the handler, as "URL -> FinalURL" by path, with the crawl's stats.
// handler, if set, is called for each page first; its error is the
// Handler's.
func crawlRedirectSite(t *testing.T, s *site, mutate func(*crawlkit.Config), handler func(*crawlkit.Page) error) ([]string, crawlkit.Stats) {
	t.Helper()
	var mu sync.Mutex
	var handled []string
	cfg := crawlkit.Config{
		UserAgent:    testAgent,
		Seeds:        []string{s.srv.URL + "/"},
		Delay:        time.Millisecond,
		RetryBackoff: time.Millisecond,
		AllowPrivate: loopback,
		Workers:      1,
		Handler: func(_ context.Context, p *crawlkit.Page) error {
			if handler != nil {
				if err := handler(p); err != nil {
					return err
				}
			}
			mu.Lock()
			handled = append(handled, strings.TrimPrefix(p.URL, s.srv.URL)+" -> "+strings.TrimPrefix(p.FinalURL, s.srv.URL))
			mu.Unlock()
			return nil
		},
	}
	if mutate != nil {
		mutate(&cfg)
	}
	c, err := crawlkit.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	return append([]string(nil), handled...), c.Stats()
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// TestQueuedRedirectTargetOfMediaFetchIsFetched checks that a page queued
// before a media URL redirected to it is still fetched as a page: the
// media fetch (an image redirecting to an HTML page, as hotlink protection
// does) neither handed the page on nor followed its links.
func TestQueuedRedirectTargetOfMediaFetchIsFetched(t *testing.T) {
	s := serveSite(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		switch r.URL.Path {
		case "/":
			writeHTML(w, `<html><body><img src="/img.png"> <a href="/new">new</a></body></html>`)
		case "/img.png":
			http.Redirect(w, r, "/new", http.StatusFound)
		case "/new":
			writeHTML(w, `<html><body><a href="/deep">deep</a></body></html>`)
		case "/deep":
			writeHTML(w, "<html><body>deep</body></html>")
		default:
			http.NotFound(w, r)
		}
	})
	handled, st := crawlRedirectSite(t, s, func(c *crawlkit.Config) {
		c.MediaTypes = []string{"image/*"}
	}, nil)
	if s.hit("/img.png") != 1 {
		t.Fatalf("/img.png requested %d times, want 1: the test needs the image fetched", s.hit("/img.png"))
	}
	if !contains(handled, "/new -> /new") || s.hit("/deep") != 1 {
		t.Errorf("pages handled %v, /deep requested %d times; want /new handled as a page and its link followed (stats %+v)",
			handled, s.hit("/deep"), st.URLs)
	}
}

// TestQueuedRedirectTargetNotSkippedAfterFailedRedirect checks that a
// queued URL is fetched under its own lease when the fetch that reached it
// through another URL's redirect did not settle that URL successfully: the
// target answered 429 (the redirecting URL is put back, here given up
// after one attempt), or the handler failed on the page.
func TestQueuedRedirectTargetNotSkippedAfterFailedRedirect(t *testing.T) {
	for _, tc := range []struct {
		name    string
		status  int // /new's first answer
		handler func(*crawlkit.Page) error
	}{
		{name: "target-429", status: http.StatusTooManyRequests},
		{name: "handler-error", status: http.StatusOK, handler: func(p *crawlkit.Page) error {
			if strings.HasSuffix(p.URL, "/old") {
				return errors.New("handler failed")
			}
			return nil
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// /new answers tc.status when requested through /old's
			// redirect (one worker: requests are sequential), 200 when
			// requested under its own URL.
			var mu sync.Mutex
			viaRedirect := false
			s := serveSite(t, func(w http.ResponseWriter, r *http.Request, _ int) {
				switch r.URL.Path {
				case "/":
					writeHTML(w, `<html><body><a href="/old">old</a> <a href="/new">new</a></body></html>`)
				case "/old":
					mu.Lock()
					viaRedirect = true
					mu.Unlock()
					http.Redirect(w, r, "/new", http.StatusMovedPermanently)
				case "/new":
					mu.Lock()
					via := viaRedirect
					viaRedirect = false
					mu.Unlock()
					if via && tc.status != http.StatusOK {
						// Retry-After 0: no host backoff, so the test
						// does not wait for one.
						w.Header().Set("Retry-After", "0")
						http.Error(w, "busy", tc.status)
						return
					}
					writeHTML(w, "<html><title>new</title><body>moved here</body></html>")
				default:
					http.NotFound(w, r)
				}
			})
			handled, st := crawlRedirectSite(t, s, func(c *crawlkit.Config) { c.MaxAttempts = 1 }, tc.handler)
			if !contains(handled, "/new -> /new") {
				t.Errorf("pages handled %v; want /new fetched and handled under its own lease (stats %+v)", handled, st.URLs)
			}
			if st.URLs.FetchedByRedirect != 0 {
				t.Errorf("Stats.URLs.FetchedByRedirect = %d, want 0", st.URLs.FetchedByRedirect)
			}
		})
	}
}

// TestLowercaseConfigHeaderReplacesDefault checks that a Config.Header
// field whose key is not in canonical form replaces the Crawler's default
// of that field instead of being sent next to it.
func TestLowercaseConfigHeaderReplacesDefault(t *testing.T) {
	var mu sync.Mutex
	var accept []string
	s := serveSite(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		if r.URL.Path == "/" {
			mu.Lock()
			accept = r.Header.Values("Accept")
			mu.Unlock()
		}
		writeHTML(w, "<html><body>home</body></html>")
	})
	handled, _ := crawlRedirectSite(t, s, func(c *crawlkit.Config) {
		c.Header = http.Header{"accept": {"text/html"}}
	}, nil)
	mu.Lock()
	defer mu.Unlock()
	if len(handled) != 1 || len(accept) != 1 || accept[0] != "text/html" {
		t.Errorf("pages %v; Accept sent %q, want [text/html]", handled, accept)
	}
}
