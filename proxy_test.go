package crawlkit_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/fetch"
)

// forwardProxy is an HTTP forward proxy on loopback that records what it
// was asked for.
type forwardProxy struct {
	srv  *httptest.Server
	mu   sync.Mutex
	seen []string
}

func newForwardProxy(t *testing.T) *forwardProxy {
	p := &forwardProxy{}
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		p.seen = append(p.seen, r.URL.String())
		p.mu.Unlock()
		out, err := http.NewRequestWithContext(r.Context(), r.Method, r.URL.String(), nil)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		out.Header = r.Header.Clone()
		resp, err := http.DefaultTransport.RoundTrip(out)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		io.Copy(w, resp.Body)
	}))
	t.Cleanup(p.srv.Close)
	return p
}

// Every request of a crawl, robots.txt included, goes through the proxies
// Config.Proxy chooses, spread over two of them in turn.
func TestCrawlThroughProxies(t *testing.T) {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			http.NotFound(w, r)
		case "/":
			writeHTML(w, `<a href="/a">a</a><a href="/b">b</a><a href="/c">c</a>`)
		default:
			writeHTML(w, "<p>"+r.URL.Path+"</p>")
		}
	}))
	defer site.Close()
	a, b := newForwardProxy(t), newForwardProxy(t)
	ua, _ := url.Parse(a.srv.URL)
	ub, _ := url.Parse(b.srv.URL)
	rotate, err := fetch.RotateProxies(ua, ub)
	if err != nil {
		t.Fatal(err)
	}
	c, err := crawlkit.New(crawlkit.Config{
		UserAgent: testAgent, Seeds: []string{site.URL + "/"}, AllowPrivate: loopback,
		Delay: crawlkit.NoDelay, Proxy: rotate,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	a.mu.Lock()
	b.mu.Lock()
	defer a.mu.Unlock()
	defer b.mu.Unlock()
	all := map[string]bool{}
	for _, u := range append(append([]string(nil), a.seen...), b.seen...) {
		all[u] = true
	}
	for _, p := range []string{"/robots.txt", "/", "/a", "/b", "/c"} {
		if !all[site.URL+p] {
			t.Errorf("%s did not go through a proxy (proxied: %v %v)", p, a.seen, b.seen)
		}
	}
	if len(a.seen) == 0 || len(b.seen) == 0 {
		t.Errorf("requests not spread over both proxies: %d and %d", len(a.seen), len(b.seen))
	}
	if got := c.Stats().URLs.Fetched; got != 4 {
		t.Errorf("fetched %d pages, want 4", got)
	}
}
