package crawlkit_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"testing"

	"github.com/crawlkit/crawlkit"
)

// A Handler walks a JSON API the page's links do not reach: it enqueues
// each next page with its cursor, which comes back as that page's Data.
// An out-of-scope URL it adds is refused and counted like a link.
func TestHandlerEnqueues(t *testing.T) {
	s := serveHosts(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			http.NotFound(w, r)
		case "/":
			writeHTML(w, `<p>catalogue</p>`)
		case "/api/items":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"page":%q}`, r.URL.Query().Get("page"))
		}
	})
	var mu sync.Mutex
	data := map[string]string{}
	c, err := crawlkit.New(crawlkit.Config{
		UserAgent: testAgent, Seeds: []string{"http://api.test/"}, DialContext: s.dial, AllowPrivate: loopback,
		Delay: crawlkit.NoDelay,
		Handler: func(_ context.Context, p *crawlkit.Page) error {
			mu.Lock()
			data[p.URL] = string(p.Data)
			mu.Unlock()
			next := 1
			if p.Data != nil {
				n, _ := strconv.Atoi(string(bytes.TrimPrefix(p.Data, []byte("cursor-"))))
				next = n + 1
			}
			if next <= 3 {
				if err := p.Enqueue("/api/items?page="+strconv.Itoa(next), []byte("cursor-"+strconv.Itoa(next))); err != nil {
					return err
				}
			}
			if p.Data == nil {
				if err := p.Enqueue("http://elsewhere.test/", nil); err != nil {
					return err
				}
				if err := p.Enqueue("/x", make([]byte, crawlkit.MaxPageData+1)); !errors.Is(err, crawlkit.ErrEnqueue) {
					t.Errorf("Enqueue with too much data: %v, want ErrEnqueue", err)
				}
				if err := p.Enqueue("mailto:a@b", nil); !errors.Is(err, crawlkit.ErrEnqueue) {
					t.Errorf("Enqueue of a mailto URL: %v, want ErrEnqueue", err)
				}
			}
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"http://api.test/": "", "http://api.test/api/items?page=1": "cursor-1",
		"http://api.test/api/items?page=2": "cursor-2", "http://api.test/api/items?page=3": "cursor-3",
	}
	if fmt.Sprint(data) != fmt.Sprint(want) {
		t.Errorf("pages and their data %v, want %v", data, want)
	}
	if n := c.Stats().LinksRejected[crawlkit.ReasonScope]; n != 1 {
		t.Errorf("%d enqueued URLs refused for scope, want 1", n)
	}
	if err := (&crawlkit.Page{}).Enqueue("http://a.test/", nil); !errors.Is(err, crawlkit.ErrEnqueue) {
		t.Errorf("Enqueue on a Page the caller built: %v, want ErrEnqueue", err)
	}
}

// The Handler sees the page before its links are queued, and a link it
// skips is never requested; the Sink sees how each link was settled.
func TestHandlerSkipsLinks(t *testing.T) {
	s := serveHosts(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			http.NotFound(w, r)
		case "/":
			writeHTML(w, `<a href="/keep">keep</a><a href="/logout">log out</a>`)
		default:
			writeHTML(w, `<p>page</p>`)
		}
	})
	var sunk sinkFunc = func(p *crawlkit.Page) {
		for _, l := range p.Links {
			if l.URL == "http://skip.test/logout" && (l.Followed || l.Rejected != "skipped") {
				t.Errorf("the skipped link reached the Sink as followed=%v rejected=%q", l.Followed, l.Rejected)
			}
		}
	}
	c, err := crawlkit.New(crawlkit.Config{
		UserAgent: testAgent, Seeds: []string{"http://skip.test/"}, DialContext: s.dial, AllowPrivate: loopback,
		Delay: crawlkit.NoDelay, Sink: sunk,
		Handler: func(_ context.Context, p *crawlkit.Page) error {
			for i := range p.Links {
				if p.Links[i].Followed || p.Links[i].Rejected != "" {
					t.Errorf("link %s settled before the Handler ran", p.Links[i].URL)
				}
				if p.Links[i].Text == "log out" {
					p.Links[i].Skip = true
				}
			}
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if got := fmt.Sprint(s.paths["skip.test"]); got != "[/ /keep]" {
		t.Errorf("requested %s, want [/ /keep]", got)
	}
	if n := c.Stats().LinksRejected[crawlkit.ReasonSkipped]; n != 1 {
		t.Errorf("%d links counted as skipped, want 1", n)
	}
}

// sinkFunc is a Sink that calls itself.
type sinkFunc func(*crawlkit.Page)

func (f sinkFunc) Write(_ context.Context, p *crawlkit.Page) error { f(p); return nil }
func (sinkFunc) Close() error                                      { return nil }
