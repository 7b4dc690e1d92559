package crawlkit_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/crawlkit/crawlkit"
)

// A host's credentials go to that host only; BeforeRequest adds a header
// per request and skips a URL; OnError hears of the fetch that failed.
func TestRequestHooks(t *testing.T) {
	var mu sync.Mutex
	auth := map[string]string{}
	extra := map[string]string{}
	s := serveHosts(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auth[hostOf(r)+r.URL.Path] = r.Header.Get("Authorization")
		extra[hostOf(r)+r.URL.Path] = r.Header.Get("X-Depth")
		mu.Unlock()
		switch r.URL.Path {
		case "/robots.txt":
			http.NotFound(w, r)
		case "/":
			if hostOf(r) != "api.test" {
				writeHTML(w, "<p>other</p>")
				return
			}
			writeHTML(w, `<a href="/private">p</a><a href="/skip-me">s</a><a href="http://other.test/">o</a><a href="/broken">b</a>`)
		case "/broken":
			hj, _ := w.(http.Hijacker)
			conn, _, _ := hj.Hijack()
			conn.Close()
		default:
			writeHTML(w, "<p>ok</p>")
		}
	})
	var failed []string
	c, err := crawlkit.New(crawlkit.Config{
		UserAgent: testAgent, Seeds: []string{"http://api.test/"}, Scope: crawlkit.ScopeAny,
		DialContext: s.dial, AllowPrivate: loopback, Delay: crawlkit.NoDelay, MaxAttempts: 1,
		HostHeader: map[string]http.Header{"api.test": crawlkit.BearerAuth("s3cret")},
		BeforeRequest: func(_ context.Context, r *crawlkit.Request) error {
			if strings.HasSuffix(r.URL, "/skip-me") {
				return crawlkit.ErrSkip
			}
			r.Header.Set("X-Depth", string(rune('0'+r.Depth)))
			return nil
		},
		OnError: func(_ context.Context, url string, err error) {
			mu.Lock()
			failed = append(failed, url)
			mu.Unlock()
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if auth["api.test/private"] != "Bearer s3cret" || auth["api.test/"] != "Bearer s3cret" {
		t.Errorf("api.test's pages got Authorization %q and %q", auth["api.test/"], auth["api.test/private"])
	}
	if auth["other.test/"] != "" || auth["api.test/robots.txt"] != "" {
		t.Errorf("credentials leaked: other.test got %q, robots.txt %q", auth["other.test/"], auth["api.test/robots.txt"])
	}
	if extra["api.test/private"] != "1" || extra["api.test/"] != "0" {
		t.Errorf("BeforeRequest's header: %q, %q", extra["api.test/"], extra["api.test/private"])
	}
	if _, asked := auth["api.test/skip-me"]; asked {
		t.Error("a URL BeforeRequest skipped was requested")
	}
	if n := c.Stats().URLs.NotFetched[crawlkit.ReasonSkipped]; n != 1 {
		t.Errorf("%d URLs not fetched as skipped, want 1", n)
	}
	if len(failed) != 1 || !strings.HasSuffix(failed[0], "/broken") {
		t.Errorf("OnError heard of %v, want the broken page", failed)
	}
	if _, err := crawlkit.New(crawlkit.Config{UserAgent: testAgent, Seeds: []string{"http://a.test/"},
		HostHeader: map[string]http.Header{"a.test": {"X-Key": {"a\nb"}}}}); !errors.Is(err, crawlkit.ErrConfig) {
		t.Errorf("a HostHeader value with a line break: %v, want ErrConfig", err)
	}
	if h := crawlkit.BasicAuth("u", "p"); h.Get("Authorization") != "Basic dTpw" {
		t.Errorf("BasicAuth = %q", h.Get("Authorization"))
	}
}
