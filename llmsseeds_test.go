package crawlkit_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit"
)

// TestLLMsTxtSeeds crawls a site whose pages are linked only from its
// llms.txt: LLMsTxtSeeds finds them, and the entries it cannot use are
// counted by reason, not dropped.
func TestLLMsTxtSeeds(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			w.Write([]byte("User-agent: *\nDisallow: /private\n"))
		case "/llms.txt":
			w.Write([]byte("# Example\n\n> Docs for models.\n\n## Docs\n\n" +
				"- [Guide](/docs/guide.md): the guide\n" +
				"- [API](docs/api.html)\n" +
				"- [Broken](http://[::1/x)\n" +
				"- [Elsewhere](https://other.example/page)\n" +
				"- [Secret](/private/notes.md)\n"))
		case "/", "/docs/guide.md", "/docs/api.html":
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte("<title>page</title><p>no links here</p>"))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()

	var mu sync.Mutex
	got := map[string]bool{}
	c, err := crawlkit.New(crawlkit.Config{
		UserAgent:    testAgent,
		Seeds:        []string{srv.URL + "/"},
		LLMsTxtSeeds: true,
		Delay:        time.Millisecond,
		AllowPrivate: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
		Handler: func(_ context.Context, p *crawlkit.Page) error {
			mu.Lock()
			got[p.URL] = true
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
	for _, path := range []string{"/", "/docs/guide.md", "/docs/api.html"} {
		if !got[srv.URL+path] {
			t.Errorf("%s not fetched; fetched %v", path, got)
		}
	}
	s := c.Stats()
	if s.LinksRejected[crawlkit.ReasonInvalidURL] != 1 || s.LinksRejected[crawlkit.ReasonScope] != 1 {
		t.Errorf("links rejected %v, want one invalid URL and one out of scope", s.LinksRejected)
	}
	if s.URLs.NotFetched[crawlkit.ReasonRobots] != 1 {
		t.Errorf("not fetched %v, want the disallowed entry under robots", s.URLs.NotFetched)
	}
}
