package crawlkit_test

import (
	"io"
	"net/http"
	"net/url"
	"reflect"
	"sync"
	"testing"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/frontier"
	"github.com/crawlkit/crawlkit/urlnorm"
)

// TestScopeFuncSeesRedirectTargetsNormalized follows a redirect whose
// Location is spelled differently from its normalized form (a tracking
// parameter, an unsorted query, an escaped unreserved character): the
// ScopeFunc is called with the normalized form, as it is for links, while
// the request goes to the URL the server named.
func TestScopeFuncSeesRedirectTargetsNormalized(t *testing.T) {
	var mu sync.Mutex
	var rawQuery string
	s := serveSite(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		switch r.URL.Path {
		case "/robots.txt":
			io.WriteString(w, "User-agent: *\nAllow: /\n")
		case "/":
			writeHTML(w, `<html><body><a href="/old">old</a></body></html>`)
		case "/old":
			w.Header().Set("Location", "/new%7Epage?b=2&utm_source=feed&a=1")
			w.WriteHeader(http.StatusMovedPermanently)
		case "/new~page":
			mu.Lock()
			rawQuery = r.URL.RawQuery
			mu.Unlock()
			writeHTML(w, `<html><body><p>The page that moved.</p></body></html>`)
		default:
			http.NotFound(w, r)
		}
	})
	var seenMu sync.Mutex
	var seen []string
	got := s.crawl(t, func(c *crawlkit.Config) {
		c.ScopeFunc = func(u *url.URL) bool {
			seenMu.Lock()
			seen = append(seen, u.String())
			seenMu.Unlock()
			return true
		}
	})
	seenMu.Lock()
	defer seenMu.Unlock()
	target := s.srv.URL + "/new~page?a=1&b=2"
	found := false
	for _, u := range seen {
		if n, err := urlnorm.Normalize(u); err != nil || n != u {
			t.Errorf("ScopeFunc called with %q, which normalizes to %q (err %v)", u, n, err)
		}
		found = found || u == target
	}
	if !found {
		t.Errorf("ScopeFunc never saw the redirect target %s; it saw %q", target, seen)
	}
	// What is fetched is unchanged: the URL the server redirected to.
	mu.Lock()
	defer mu.Unlock()
	if s.hit("/new~page") != 1 || rawQuery != "b=2&utm_source=feed&a=1" {
		t.Errorf("redirect target requested %d times with query %q; want once with the Location's query", s.hit("/new~page"), rawQuery)
	}
	if p := got["/old"]; p == nil || p.FinalURL != s.srv.URL+"/new%7Epage?b=2&utm_source=feed&a=1" {
		t.Errorf("redirected page: %+v", p)
	}
}

// TestScopeFuncAllowListAdmitsRedirectTarget crawls with a ScopeFunc that
// admits a list of URLs in their normalized form, one of which a page
// redirects to under another spelling: the redirect is followed.
func TestScopeFuncAllowListAdmitsRedirectTarget(t *testing.T) {
	s := serveSite(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		switch r.URL.Path {
		case "/robots.txt":
			io.WriteString(w, "User-agent: *\nAllow: /\n")
		case "/":
			writeHTML(w, `<html><body><a href="/old">old</a></body></html>`)
		case "/old":
			w.Header().Set("Location", "/new%7Epage?b=2&a=1")
			w.WriteHeader(http.StatusFound)
		default:
			writeHTML(w, `<html><body><p>page</p></body></html>`)
		}
	})
	allowed := map[string]bool{}
	for _, p := range []string{"/", "/old", "/new~page?a=1&b=2"} {
		allowed[s.srv.URL+p] = true
	}
	got := s.crawl(t, func(c *crawlkit.Config) {
		c.ScopeFunc = func(u *url.URL) bool { return allowed[u.String()] }
	})
	if n := s.hit("/new~page"); n != 1 {
		t.Errorf("allowed redirect target fetched %d times, want 1; pages handed on: %v", n, keys(got))
	}
	if p := got["/old"]; p == nil || p.StatusCode != http.StatusOK {
		t.Errorf("redirected page: %+v", p)
	}
}

// A bare frontier keeps no seen set: passed as a Queue, a second Run on
// it would fetch every page again, so it must not satisfy Queue.
func TestBareFrontierIsNotAQueue(t *testing.T) {
	queue := reflect.TypeOf((*crawlkit.Queue)(nil)).Elem()
	if reflect.TypeOf((*frontier.Frontier)(nil)).Implements(queue) {
		t.Fatal("*frontier.Frontier satisfies crawlkit.Queue; it does not deduplicate finished URLs")
	}
}
