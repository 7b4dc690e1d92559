package crawlkit_test

import (
	"context"
	"net/http"
	"sync"
	"testing"

	"github.com/crawlkit/crawlkit"
)

// A site that hands out a session cookie on its home page and serves its
// other pages only with it: crawled with Config.Cookies, without it not.
func TestCookies(t *testing.T) {
	for _, on := range []bool{true, false} {
		var mu sync.Mutex
		status := map[string]int{}
		s := serveHosts(t, func(w http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/robots.txt":
				http.NotFound(w, r)
			case "/":
				http.SetCookie(w, &http.Cookie{Name: "session", Value: "abc", Path: "/"})
				writeHTML(w, `<a href="/members">m</a>`)
			default:
				if c, err := r.Cookie("session"); err != nil || c.Value != "abc" {
					http.Error(w, "log in first", http.StatusForbidden)
					return
				}
				writeHTML(w, "<p>welcome</p>")
			}
		})
		c, err := crawlkit.New(crawlkit.Config{
			UserAgent: testAgent, Seeds: []string{"http://club.test/"}, DialContext: s.dial, AllowPrivate: loopback,
			Delay: crawlkit.NoDelay, Cookies: on,
			Handler: func(_ context.Context, p *crawlkit.Page) error {
				mu.Lock()
				status[p.URL] = p.StatusCode
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
		want := http.StatusForbidden
		if on {
			want = http.StatusOK
		}
		if got := status["http://club.test/members"]; got != want {
			t.Errorf("Cookies %v: /members answered %d, want %d", on, got, want)
		}
	}
}
