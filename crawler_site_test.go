package crawlkit_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit"
)

// site is a small hand-written site on an httptest server, for behaviour the
// synthetic web does not exercise: sitemaps listed in robots.txt, nofollow
// in its three forms, and media links.
type site struct {
	srv  *httptest.Server
	mu   sync.Mutex
	hits map[string]int
}

func newSite(t *testing.T) *site {
	t.Helper()
	s := &site{hits: map[string]int{}}
	pages := map[string]string{
		"/": `<html><head><title>home</title></head><body>
			<a href="/a.html">a</a>
			<a href="/sponsored.html" rel="sponsored">ad</a>
			<a href="/nofollow-page.html">nofollow page</a>
			<img src="/logo.png" alt="logo"><img src="/photo.jpg">
		</body></html>`,
		"/a.html":             `<html><body><p>page a</p><a href="/">home</a></body></html>`,
		"/sponsored.html":     `<html><body>sponsored</body></html>`,
		"/nofollow-page.html": `<html><head><meta name="robots" content="nofollow, noindex"></head><body><a href="/hidden.html">hidden</a></body></html>`,
		"/hidden.html":        `<html><body>only linked from a nofollow page</body></html>`,
		"/from-sitemap.html":  `<html><body>listed only in the sitemap</body></html>`,
	}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.hits[r.URL.Path]++
		s.mu.Unlock()
		switch r.URL.Path {
		case "/robots.txt":
			fmt.Fprintf(w, "User-agent: *\nAllow: /\nSitemap: %s/sitemap.xml\n", s.srv.URL)
		case "/sitemap.xml":
			w.Header().Set("Content-Type", "application/xml")
			fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>%s/from-sitemap.html</loc></url></urlset>`, s.srv.URL)
		case "/logo.png":
			w.Header().Set("Content-Type", "image/png")
			w.Write([]byte("\x89PNG\r\n\x1a\nfake image"))
		case "/photo.jpg":
			w.Header().Set("Content-Type", "image/jpeg")
			w.Write([]byte("\xff\xd8\xff\xe0fake jpeg"))
		default:
			body, ok := pages[r.URL.Path]
			if !ok {
				http.NotFound(w, r)
				return
			}
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Write([]byte(body))
		}
	}))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *site) hit(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits[path]
}

func (s *site) crawl(t *testing.T, mutate func(*crawlkit.Config)) map[string]*crawlkit.Page {
	t.Helper()
	var mu sync.Mutex
	got := map[string]*crawlkit.Page{}
	cfg := crawlkit.Config{
		UserAgent:    testAgent,
		Seeds:        []string{s.srv.URL + "/"},
		Delay:        time.Millisecond,
		AllowPrivate: loopback,
		Handler: func(_ context.Context, p *crawlkit.Page) error {
			mu.Lock()
			got[strings.TrimPrefix(p.URL, s.srv.URL)] = p
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
	return got
}

func keys(m map[string]*crawlkit.Page) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func TestNofollowAndMediaDefaults(t *testing.T) {
	s := newSite(t)
	got := s.crawl(t, nil)
	want := []string{"/", "/a.html", "/nofollow-page.html"}
	if strings.Join(keys(got), " ") != strings.Join(want, " ") {
		t.Errorf("fetched %v, want %v (no sponsored link, nothing behind a nofollow page, no media, no sitemap)", keys(got), want)
	}
	for _, path := range []string{"/sponsored.html", "/hidden.html", "/logo.png", "/photo.jpg", "/from-sitemap.html", "/sitemap.xml"} {
		if n := s.hit(path); n != 0 {
			t.Errorf("%s requested %d times", path, n)
		}
	}
	np := got["/nofollow-page.html"]
	if np == nil || !np.Nofollow || !np.Noindex {
		t.Fatalf("meta robots not reported on the page: %+v", np)
	}
	home := got["/"]
	var media, sponsored int
	for _, l := range home.Links {
		switch {
		case strings.HasSuffix(l.URL, ".png") || strings.HasSuffix(l.URL, ".jpg"):
			media++
			if l.Followed || l.Rejected != "media" {
				t.Errorf("media link %s: followed=%v rejected=%q", l.URL, l.Followed, l.Rejected)
			}
		case strings.HasSuffix(l.URL, "/sponsored.html"):
			sponsored++
			if !l.Nofollow || l.Rejected != "nofollow" {
				t.Errorf("sponsored link: %+v", l)
			}
		}
	}
	if media != 2 || sponsored != 1 {
		t.Errorf("home page links: %d media, %d sponsored; want 2 and 1: %+v", media, sponsored, home.Links)
	}
}

func TestSitemapSeedsMediaOptInAndFollowNofollow(t *testing.T) {
	s := newSite(t)
	got := s.crawl(t, func(c *crawlkit.Config) {
		c.SitemapSeeds = true
		c.MediaTypes = []string{"image/png"}
		c.FollowNofollow = true
	})
	for _, path := range []string{"/from-sitemap.html", "/sponsored.html", "/hidden.html", "/logo.png"} {
		if got[path] == nil {
			t.Errorf("%s not handed to the handler; got %v", path, keys(got))
		}
	}
	if p := got["/logo.png"]; p != nil && (!p.Media || p.ContentType != "image/png") {
		t.Errorf("logo: Media=%v ContentType=%q", p.Media, p.ContentType)
	}
	// The JPEG is fetched (its type is only known from the response) but
	// not handed on, because only PNG was asked for.
	if got["/photo.jpg"] != nil {
		t.Error("a media type the user did not ask for reached the handler")
	}
	if n := s.hit("/photo.jpg"); n != 1 {
		t.Errorf("/photo.jpg requested %d times, want 1", n)
	}
}
