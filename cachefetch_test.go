package crawlkit_test

import (
	"context"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/httpcache"
)

// A second Run with Config.Cache gets no full response: the page with
// max-age is served without a request, the pages with an ETag are
// revalidated (304) and served from the cache. Each still goes to the
// Handler with its body, and robots.txt still rules: a page robots.txt
// disallows since the first Run is not served from the cache.
func TestCacheSecondRun(t *testing.T) {
	var mu sync.Mutex
	var full, conditional []string
	disallow := ""
	s := serveHosts(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if r.URL.Path == "/robots.txt" {
			w.Write([]byte("User-agent: *\nDisallow: " + disallow + "\n"))
			return
		}
		if r.URL.Path == "/fresh" {
			w.Header().Set("Cache-Control", "max-age=3600")
		} else {
			w.Header().Set("ETag", `"`+r.URL.Path+`-v1"`)
			if r.Header.Get("If-None-Match") == `"`+r.URL.Path+`-v1"` {
				conditional = append(conditional, r.URL.Path)
				w.WriteHeader(http.StatusNotModified)
				return
			}
		}
		full = append(full, r.URL.Path)
		writeHTML(w, `<title>`+r.URL.Path+`</title><a href="/fresh">f</a><a href="/b">b</a>`)
	})
	cache, err := httpcache.Open(t.TempDir(), httpcache.Config{})
	if err != nil {
		t.Fatal(err)
	}
	run := func() (*crawlkit.Crawler, map[string]string) {
		var hmu sync.Mutex
		titles := map[string]string{}
		c, err := crawlkit.New(crawlkit.Config{
			UserAgent: testAgent, Seeds: []string{"http://dev.test/"}, DialContext: s.dial, AllowPrivate: loopback,
			Delay: crawlkit.NoDelay, Cache: cache,
			Handler: func(_ context.Context, p *crawlkit.Page) error {
				hmu.Lock()
				defer hmu.Unlock()
				titles[strings.TrimPrefix(p.URL, "http://dev.test")] = p.Title
				return nil
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		return c, titles
	}
	run()
	slices.Sort(full)
	if got := strings.Join(full, " "); got != "/ /b /fresh" || len(conditional) != 0 {
		t.Fatalf("first Run: full answers %v, conditional %v", full, conditional)
	}

	mu.Lock()
	full, conditional, disallow = nil, nil, "/b"
	mu.Unlock()
	c, titles := run()
	if len(full) != 0 || strings.Join(conditional, " ") != "/" {
		t.Errorf("second Run: full answers %v, conditional %v; want none and [/]", full, conditional)
	}
	if want := map[string]string{"/": "/", "/fresh": "/fresh"}; !maps.Equal(titles, want) {
		t.Errorf("second Run handled %v, want %v", titles, want)
	}
	st := c.Stats()
	if st.URLs.CacheHits != 2 || st.URLs.NotFetched[crawlkit.ReasonRobots] != 1 {
		t.Errorf("second Run: %d cache hits and %d blocked by robots, want 2 and 1", st.URLs.CacheHits, st.URLs.NotFetched[crawlkit.ReasonRobots])
	}
}

// A response the server marks no-store is fetched again every Run.
func TestCacheNoStore(t *testing.T) {
	var mu sync.Mutex
	n := 0
	s := serveHosts(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		mu.Lock()
		n++
		mu.Unlock()
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("ETag", `"x"`)
		writeHTML(w, "<p>secret</p>")
	})
	cache, err := httpcache.Open(t.TempDir(), httpcache.Config{Now: func() time.Time { return time.Unix(1e9, 0) }})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		c, err := crawlkit.New(crawlkit.Config{UserAgent: testAgent, Seeds: []string{"http://dev.test/"}, DialContext: s.dial,
			AllowPrivate: loopback, Delay: crawlkit.NoDelay, Cache: cache})
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		if h := c.Stats().URLs.CacheHits; h != 0 {
			t.Errorf("%d cache hits", h)
		}
	}
	if n != 2 {
		t.Errorf("the server answered %d times, want 2", n)
	}
}
