package crawlkit_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/usage"
)

// A crawl that collects training data and honours what sites say about it:
// robots.txt reserves /news/ for training, so it is not fetched; /blog/2
// reserves itself with a Content-Usage header, so it is fetched (its links
// are followed) but not handed on.
func ExampleUsagePolicy() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			fmt.Fprint(w, "User-agent: *\nAllow: /\nContent-Usage: /news/ train-ai=n\nContent-Signal: search=yes\n")
			return
		case "/blog/2":
			w.Header().Set("Content-Usage", "train-ai=n")
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<a href="/blog/1">1</a> <a href="/blog/2">2</a> <a href="/news/today">news</a>`)
	}))
	defer srv.Close()

	var mu sync.Mutex
	var kept []string
	c, err := crawlkit.New(crawlkit.Config{
		UserAgent:    "examplebot/1.0 (+https://example.com/bot)",
		Seeds:        []string{srv.URL + "/"},
		Delay:        time.Millisecond,
		AllowPrivate: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
		Usage:        crawlkit.UsagePolicy{Purpose: usage.AITraining, Action: crawlkit.UsageSkip},
		Handler: func(_ context.Context, p *crawlkit.Page) error {
			mu.Lock()
			kept = append(kept, fmt.Sprintf("%s train-ai=%v search=%v", strings.TrimPrefix(p.URL, srv.URL), p.Usage.AITraining, p.Usage.Search))
			mu.Unlock()
			return nil
		},
	})
	if err != nil {
		panic(err)
	}
	if err := c.Run(context.Background()); err != nil {
		panic(err)
	}
	sort.Strings(kept)
	for _, k := range kept {
		fmt.Println(k)
	}
	st := c.Stats()
	fmt.Println("not fetched:", st.URLs.NotFetched[crawlkit.ReasonUsage], "withheld:", st.Usage.Withheld)
	// Output:
	// / train-ai=unknown search=allowed
	// /blog/1 train-ai=unknown search=allowed
	// not fetched: 1 withheld: 1
}
