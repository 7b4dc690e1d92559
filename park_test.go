package crawlkit_test

import (
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit"
)

// TestParkedPageFreesItsWorker crawls three hosts with one worker and a 1 s
// politeness delay. Each host's page must wait the delay after its
// robots.txt; a parked page waits without the worker, and the lot holds
// more pages than there are workers, so every host's robots.txt is
// requested before the first page, and the pages come about one delay
// after the start rather than one after the other. Every page is fetched
// once and nothing stays parked.
func TestParkedPageFreesItsWorker(t *testing.T) {
	var mu sync.Mutex
	var order []string // every request, robots.txt included, as host+path
	s := serveHosts(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		order = append(order, hostOf(r)+r.URL.Path)
		mu.Unlock()
		if r.URL.Path == "/robots.txt" {
			fmt.Fprint(w, "User-agent: *\nAllow: /\n")
			return
		}
		writeHTML(w, "<html><body><p>a page</p></body></html>")
	})
	c := s.crawl(t, "http://a.test/", func(cfg *crawlkit.Config) {
		cfg.Seeds = []string{"http://a.test/", "http://b.test/", "http://c.test/"}
		cfg.Workers, cfg.Delay = 1, time.Second
	})
	mu.Lock()
	defer mu.Unlock()
	t.Logf("requests in order: %v", order)
	firstPage := slices.IndexFunc(order, func(s string) bool { return s == "a.test/" || s == "b.test/" || s == "c.test/" })
	robots := 0
	for _, s := range order[:max(firstPage, 0)] {
		if s == "a.test/robots.txt" || s == "b.test/robots.txt" || s == "c.test/robots.txt" {
			robots++
		}
	}
	if firstPage < 0 || robots != 3 {
		t.Errorf("requests %v: want every robots.txt before the first page (the first pages parked, the worker free)", order)
	}
	st := c.Stats()
	if st.URLs.Fetched != 3 || len(order) != 6 {
		t.Errorf("fetched %d pages in %d requests, want 3 in 6", st.URLs.Fetched, len(order))
	}
	if st.Workers.Parked != 0 || st.Workers.Active != 0 {
		t.Errorf("after the crawl: %d parked, %d active workers", st.Workers.Parked, st.Workers.Active)
	}
}
