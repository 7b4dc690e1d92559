package crawlkit_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/frontier"
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

// serveSite serves a site written as a function on an httptest server and
// counts its requests by path; serve gets the request's number for its
// path, from 1.
func serveSite(t *testing.T, serve func(w http.ResponseWriter, r *http.Request, n int)) *site {
	t.Helper()
	s := &site{hits: map[string]int{}}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.hits[r.URL.Path]++
		n := s.hits[r.URL.Path]
		s.mu.Unlock()
		serve(w, r, n)
	}))
	t.Cleanup(s.srv.Close)
	return s
}

func writeHTML(w http.ResponseWriter, body string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	io.WriteString(w, body)
}

// homeText is the unchanging text of refetchSite's home page and its copy.
const homeText = `<p>The home page, whose text about apples, pears and plums never changes.</p>`

// refetchSite serves a home page whose text never changes and which links
// (with empty anchors, so that its text stays the same) to /copy.html, a
// page of the same text, and, from its fetch number linkFrom on, to
// /new.html.
func refetchSite(t *testing.T, linkFrom int) *site {
	return serveSite(t, func(w http.ResponseWriter, r *http.Request, n int) {
		switch r.URL.Path {
		case "/robots.txt":
			io.WriteString(w, "User-agent: *\nAllow: /\n")
		case "/":
			links := `<a href="/copy.html"></a>`
			if n >= linkFrom {
				links += `<a href="/new.html"></a>`
			}
			writeHTML(w, `<html><body>`+homeText+links+`</body></html>`)
		case "/copy.html":
			writeHTML(w, `<html><body>`+homeText+`</body></html>`)
		case "/new.html":
			writeHTML(w, `<html><body><p>A page the home page links to only after some fetches.</p></body></html>`)
		default:
			http.NotFound(w, r)
		}
	})
}

// refetchCrawl crawls s with the home page fetched again and again: with
// Recrawl, or (retry) by a Handler that fails its first failures calls for
// the home page. The recrawl, which never drains, is cancelled once
// /new.html was handed on or the home page 20 times. It returns the pages
// handed on by path, and the crawl's Stats.
func refetchCrawl(t *testing.T, s *site, retry bool, failures int, mutate func(*crawlkit.Config)) (map[string][]*crawlkit.Page, crawlkit.Stats) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	got := map[string][]*crawlkit.Page{}
	calls := 0
	cfg := crawlkit.Config{
		UserAgent:    testAgent,
		Seeds:        []string{s.srv.URL + "/"},
		Delay:        time.Millisecond,
		AllowPrivate: loopback,
		Handler: func(_ context.Context, p *crawlkit.Page) error {
			mu.Lock()
			defer mu.Unlock()
			path := strings.TrimPrefix(p.URL, s.srv.URL)
			if retry && path == "/" {
				if calls++; calls <= failures {
					return errors.New("storage unavailable")
				}
			}
			got[path] = append(got[path], p)
			if !retry && (path == "/new.html" || len(got["/"]) >= 20) {
				cancel()
			}
			return nil
		},
	}
	if retry {
		cfg.RetryBackoff = time.Millisecond
		cfg.MaxAttempts = failures + 1
	} else {
		cfg.Recrawl = frontier.FixedInterval(20 * time.Millisecond)
	}
	if mutate != nil {
		mutate(&cfg)
	}
	c, err := crawlkit.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	err = c.Run(ctx)
	if retry && err != nil || !retry && !errors.Is(err, context.Canceled) {
		t.Fatalf("Run: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	return got, c.Stats()
}

// TestRefetchIsNotAContentTrap fetches a page of unchanging content more
// often than the trap detector's content-repetition threshold (5): a
// page fetched again is not another URL serving its content, so its links
// are still followed.
func TestRefetchIsNotAContentTrap(t *testing.T) {
	for _, retry := range []bool{false, true} {
		name := map[bool]string{false: "recrawl", true: "retry"}[retry]
		t.Run(name, func(t *testing.T) {
			s := refetchSite(t, 7)
			got, stats := refetchCrawl(t, s, retry, 6, nil)
			if s.hit("/") < 7 {
				t.Fatalf("home page fetched %d times, want at least 7", s.hit("/"))
			}
			if len(got["/new.html"]) == 0 {
				var rejected []string
				for _, p := range got["/"] {
					for _, l := range p.Links {
						if l.Rejected != "" {
							rejected = append(rejected, l.URL+": "+l.Rejected)
						}
					}
				}
				t.Errorf("/new.html, linked from the home page's 7th fetch on, was not fetched; rejected links: %v", rejected)
			}
			if stats.URLs.TrapRejected != 0 {
				t.Errorf("%d links rejected as traps", stats.URLs.TrapRejected)
			}
		})
	}
}

// TestRefetchIsNotItsOwnDuplicate fetches pages again and checks that a
// page is not reported as a near-duplicate of its own earlier fetch, while
// a copy of it on another URL still is.
func TestRefetchIsNotItsOwnDuplicate(t *testing.T) {
	for _, retry := range []bool{false, true} {
		name := map[bool]string{false: "recrawl", true: "retry"}[retry]
		t.Run(name, func(t *testing.T) {
			s := refetchSite(t, 3)
			// With SkipDuplicateLinks, a home page taken for a duplicate
			// of itself would not have its link to /new.html followed.
			got, stats := refetchCrawl(t, s, retry, 2, func(c *crawlkit.Config) { c.SkipDuplicateLinks = true })
			if s.hit("/") < 3 {
				t.Fatalf("home page fetched %d times, want at least 3", s.hit("/"))
			}
			for i, p := range got["/"] {
				if p.DuplicateOf != "" {
					t.Errorf("home page, handed on %d: DuplicateOf %q at %d bits, want none", i+1, p.DuplicateOf, p.Distance)
				}
			}
			if len(got["/new.html"]) == 0 {
				t.Error("/new.html, linked from the home page's 3rd fetch on, was not fetched")
			}
			home := s.srv.URL + "/"
			if len(got["/copy.html"]) == 0 {
				t.Fatal("/copy.html not fetched")
			}
			for _, p := range got["/copy.html"] {
				if p.DuplicateOf != home || p.Distance != 0 {
					t.Errorf("/copy.html: DuplicateOf %q at %d bits, want %s at 0", p.DuplicateOf, p.Distance, home)
				}
			}
			// Every fetch of the copy is a duplicate, and nothing else is.
			if n := int64(s.hit("/copy.html")); stats.URLs.Duplicates != n {
				t.Errorf("Stats.Duplicates = %d, want %d (the fetches of /copy.html)", stats.URLs.Duplicates, n)
			}
		})
	}
}

// TestSitemapURLsAreNormalized lists in a sitemap other spellings of a page
// the home page links to: the page is fetched once, under its normalized
// URL.
func TestSitemapURLsAreNormalized(t *testing.T) {
	s := serveSite(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		origin := "http://" + r.Host
		switch r.URL.Path {
		case "/robots.txt":
			fmt.Fprintf(w, "User-agent: *\nAllow: /\nSitemap: %s/sitemap.xml\n", origin)
		case "/sitemap.xml":
			w.Header().Set("Content-Type", "application/xml")
			fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
<url><loc>%[1]s/a.html#top</loc></url>
<url><loc>%[1]s/x/../a.html</loc></url>
<url><loc>%[1]s/b.html?</loc></url>
</urlset>`, origin)
		case "/":
			writeHTML(w, `<html><body><a href="/a.html">a</a></body></html>`)
		case "/a.html", "/b.html":
			writeHTML(w, `<html><body>`+r.URL.Path+`</body></html>`)
		default:
			http.NotFound(w, r)
		}
	})
	var mu sync.Mutex
	var urls []string
	got := s.crawl(t, func(c *crawlkit.Config) {
		c.SitemapSeeds = true
		handle := c.Handler
		c.Handler = func(ctx context.Context, p *crawlkit.Page) error {
			mu.Lock()
			urls = append(urls, p.URL)
			mu.Unlock()
			return handle(ctx, p)
		}
	})
	if n := s.hit("/a.html"); n != 1 {
		t.Errorf("/a.html fetched %d times, want 1; pages handed on: %v", n, urls)
	}
	if len(urls) != 3 || got["/a.html"] == nil || got["/b.html"] == nil {
		t.Errorf("pages handed on: %v, want /, /a.html and /b.html once each", urls)
	}
}

// TestTruncatedSitemapIsSkipped checks that a sitemap over MaxMediaBytes is
// skipped, not parsed as cut: a text sitemap's last line would otherwise be
// a prefix of its URL, fetched as a URL of its own.
func TestTruncatedSitemapIsSkipped(t *testing.T) {
	long := "/long/" + strings.Repeat("z", 4000) + ".html"
	s := serveSite(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		origin := "http://" + r.Host
		switch {
		case r.URL.Path == "/robots.txt":
			fmt.Fprintf(w, "User-agent: *\nAllow: /\nSitemap: %s/sitemap.txt\n", origin)
		case r.URL.Path == "/sitemap.txt":
			w.Header().Set("Content-Type", "text/plain")
			fmt.Fprintf(w, "%s/a.html\n%s%s\n", origin, origin, long)
		case r.URL.Path == "/":
			writeHTML(w, `<html><body>home</body></html>`)
		case r.URL.Path == "/a.html" || r.URL.Path == long:
			writeHTML(w, `<html><body>`+r.URL.Path+`</body></html>`)
		default:
			http.NotFound(w, r)
		}
	})
	got := s.crawl(t, func(c *crawlkit.Config) {
		c.SitemapSeeds = true
		c.MaxMediaBytes = 2048 // a.html's line fits, the long URL's does not
	})
	for path := range got {
		if strings.HasPrefix(path, "/long/") {
			t.Errorf("fetched %.40s... (%d bytes) from a truncated sitemap", path, len(path))
		}
	}
	if got["/a.html"] != nil {
		t.Errorf("a page of the truncated sitemap was queued: %v", keys(got))
	}
}

// TestRedirectTargetIsNotFetchedAgain follows a redirect to a page that
// links to itself and is linked from a page found after it: the page is
// fetched once, and handed on under the URL that redirected to it.
func TestRedirectTargetIsNotFetchedAgain(t *testing.T) {
	s := serveSite(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		switch r.URL.Path {
		case "/robots.txt":
			io.WriteString(w, "User-agent: *\nAllow: /\n")
		case "/":
			writeHTML(w, `<html><body><a href="/old">old</a></body></html>`)
		case "/old":
			http.Redirect(w, r, "/new", http.StatusMovedPermanently)
		case "/new":
			writeHTML(w, `<html><body><p>The page that moved.</p><a href="/new">itself</a> <a href="/b.html">b</a></body></html>`)
		case "/b.html":
			writeHTML(w, `<html><body><p>Page b links back.</p><a href="/new">the moved page</a></body></html>`)
		default:
			http.NotFound(w, r)
		}
	})
	got := s.crawl(t, nil)
	if n := s.hit("/new"); n != 1 {
		t.Errorf("/new fetched %d times, want 1; pages handed on: %v", n, keys(got))
	}
	if want := []string{"/", "/b.html", "/old"}; strings.Join(keys(got), " ") != strings.Join(want, " ") {
		t.Errorf("pages handed on: %v, want %v", keys(got), want)
	}
	if p := got["/old"]; p == nil || p.FinalURL != s.srv.URL+"/new" || p.DuplicateOf != "" {
		t.Errorf("redirected page: %+v", p)
	}
	if b := got["/b.html"]; b != nil {
		for _, l := range b.Links {
			if l.URL == s.srv.URL+"/new" && (!l.Followed || l.Rejected != "") {
				t.Errorf("link to the redirect target: Followed %v, Rejected %q; want it known to the crawl", l.Followed, l.Rejected)
			}
		}
	}
}
