package crawlkit_test

import (
	"context"
	"math"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/crawlkit/crawlkit"
)

// A link the Handler gives a Priority is fetched before the page's other
// links, which go in document order; a bad Priority is taken as zero.
func TestLinkPriority(t *testing.T) {
	for _, tc := range []struct {
		prio float64
		want string
	}{
		{0, "/ /a /b /c /z"},
		{1, "/ /z /a /b /c"},
		{math.NaN(), "/ /a /b /c /z"},
		{-1, "/ /a /b /c /z"},
	} {
		var mu sync.Mutex
		var order []string
		s := serveHosts(t, func(w http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/robots.txt":
				http.NotFound(w, r)
			case "/":
				writeHTML(w, `<a href="/a">a</a><a href="/b">b</a><a href="/c">c</a><a href="/z">z</a>`)
			default:
				writeHTML(w, "<p>leaf</p>")
			}
		})
		c, err := crawlkit.New(crawlkit.Config{
			UserAgent: testAgent, Seeds: []string{"http://shop.test/"}, DialContext: s.dial, AllowPrivate: loopback,
			Delay: crawlkit.NoDelay, Workers: 1,
			Handler: func(_ context.Context, p *crawlkit.Page) error {
				mu.Lock()
				order = append(order, strings.TrimPrefix(p.URL, "http://shop.test"))
				mu.Unlock()
				for i := range p.Links {
					if strings.HasSuffix(p.Links[i].URL, "/z") {
						p.Links[i].Priority = tc.prio
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
		if got := strings.Join(order, " "); got != tc.want {
			t.Errorf("Priority %v: fetched %s, want %s", tc.prio, got, tc.want)
		}
	}
}

// TestEnqueuePriority checks that a URL a Handler enqueues with a positive
// priority is fetched before the page's links.
func TestEnqueuePriority(t *testing.T) {
	var mu sync.Mutex
	var order []string
	s := serveHosts(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			http.NotFound(w, r)
		case "/":
			writeHTML(w, `<a href="/a">a</a><a href="/b">b</a>`)
		default:
			writeHTML(w, "<p>leaf</p>")
		}
	})
	c, err := crawlkit.New(crawlkit.Config{
		UserAgent: testAgent, Seeds: []string{"http://shop.test/"}, DialContext: s.dial, AllowPrivate: loopback,
		Delay: crawlkit.NoDelay, Workers: 1,
		Handler: func(_ context.Context, p *crawlkit.Page) error {
			mu.Lock()
			order = append(order, strings.TrimPrefix(p.URL, "http://shop.test")+string(p.Data))
			mu.Unlock()
			if p.Depth == 0 {
				if err := p.Enqueue("/later", []byte("+plain")); err != nil {
					return err
				}
				return p.EnqueuePriority("/api/next", 5, []byte("+urgent"))
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
	if got, want := strings.Join(order, " "), "/ /api/next+urgent /a /b /later+plain"; got != want {
		t.Errorf("fetched %s, want %s", got, want)
	}
}
