package crawlkit_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/httpcache"
	"github.com/crawlkit/crawlkit/urlnorm"
)

// Logging in before crawling: the site serves its pages only with the
// session cookie its login form sets. Config.Login posts the form once,
// before the host's first page; the page requests carry the cookie.
func ExampleConfig_login() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/robots.txt":
			http.NotFound(w, r)
		case r.URL.Path == "/login" && r.Method == http.MethodPost:
			if r.PostFormValue("user") != "ann" || r.PostFormValue("password") != "secret" {
				http.Error(w, "wrong password", http.StatusUnauthorized)
				return
			}
			http.SetCookie(w, &http.Cookie{Name: "sid", Value: "s3cr3t", Path: "/", HttpOnly: true})
			http.Redirect(w, r, "/", http.StatusSeeOther)
		default:
			if c, err := r.Cookie("sid"); err != nil || c.Value != "s3cr3t" {
				http.Error(w, "log in first", http.StatusForbidden)
				return
			}
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, `<a href="/orders">orders</a>`)
		}
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)

	var mu sync.Mutex
	var pages []string
	c, err := crawlkit.New(crawlkit.Config{
		UserAgent: "examplebot/1.0 (+https://example.com/bot)",
		Seeds:     []string{srv.URL + "/"},
		Login: map[string]crawlkit.LoginFunc{
			urlnorm.Host(u): func(ctx context.Context, s *crawlkit.Session) error {
				resp, err := s.PostForm(ctx, "/login", url.Values{"user": {"ann"}, "password": {"secret"}})
				if err != nil {
					return err
				}
				if resp.StatusCode != http.StatusOK {
					return fmt.Errorf("login answered %d", resp.StatusCode)
				}
				return nil
			},
		},
		Handler: func(_ context.Context, p *crawlkit.Page) error {
			mu.Lock()
			pages = append(pages, fmt.Sprint(p.StatusCode, " ", p.URL[len(srv.URL):]))
			mu.Unlock()
			return nil
		},
		Delay:        crawlkit.NoDelay,
		AllowPrivate: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
	})
	if err != nil {
		panic(err)
	}
	if err := c.Run(context.Background()); err != nil {
		panic(err)
	}
	sort.Strings(pages)
	for _, p := range pages {
		fmt.Println(p)
	}
	// Output:
	// 200 /
	// 200 /orders
}

// A development cache: the second crawl of a site whose pages carry an
// ETag gets no page again, only 304 answers to its conditional requests,
// and its Handler still sees every page.
func ExampleConfig_cache() {
	var full, notModified atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		etag := `"` + r.URL.Path + `-1"`
		w.Header().Set("ETag", etag)
		if r.Header.Get("If-None-Match") == etag {
			notModified.Add(1)
			w.WriteHeader(http.StatusNotModified)
			return
		}
		full.Add(1)
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<title>shop</title><a href="/p/1">one</a><a href="/p/2">two</a>`)
	}))
	defer srv.Close()

	dir, err := os.MkdirTemp("", "crawlcache-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	cache, err := httpcache.Open(dir, httpcache.Config{})
	if err != nil {
		panic(err)
	}
	for run := 1; run <= 2; run++ {
		full.Store(0)
		notModified.Store(0)
		var handled atomic.Int64
		c, err := crawlkit.New(crawlkit.Config{
			UserAgent: "examplebot/1.0 (+https://example.com/bot)",
			Seeds:     []string{srv.URL + "/"},
			Cache:     cache,
			Handler: func(context.Context, *crawlkit.Page) error {
				handled.Add(1)
				return nil
			},
			Delay:        crawlkit.NoDelay,
			AllowPrivate: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
		})
		if err != nil {
			panic(err)
		}
		if err := c.Run(context.Background()); err != nil {
			panic(err)
		}
		fmt.Printf("run %d: %d pages handled, %d sent in full, %d not modified, %d cache hits\n",
			run, handled.Load(), full.Load(), notModified.Load(), c.Stats().URLs.CacheHits)
	}
	// Output:
	// run 1: 3 pages handled, 3 sent in full, 0 not modified, 0 cache hits
	// run 2: 3 pages handled, 0 sent in full, 3 not modified, 3 cache hits
}
