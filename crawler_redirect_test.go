package crawlkit_test

import (
	"context"
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
