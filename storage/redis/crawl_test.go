package redis

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/crawltest"
	"github.com/crawlkit/crawlkit/fetch"
)

// TestTwoCrawlersShareOneCrawl runs two Crawlers, each with its own Queue
// handle and politeness model as two processes would have, on one Redis
// crawl of a crawltest web: together they fetch every page once, and the
// server sees no politeness violation.
func TestTwoCrawlersShareOneCrawl(t *testing.T) {
	if testing.Short() {
		t.Skip("crawl skipped in -short mode")
	}
	db := openTestDB(t)
	const agent = "crawlkit-redis"
	web, err := crawltest.NewWeb(crawltest.Config{
		Hosts: 12, PagesPerHost: 12, Seed: 5, Agent: agent, NoTraps: true,
		MinGap: 20 * time.Millisecond, MaxPerHost: 1, CrawlDelay: 60 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer web.Close()

	var mu sync.Mutex
	fetched := map[string]int{}
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range errs {
		polite := fetch.NewPoliteness(fetch.PolitenessConfig{Delay: 40 * time.Millisecond})
		q, err := db.Queue(QueueConfig{Politeness: polite, LeaseTTL: 10 * time.Second, PollInterval: 20 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		defer q.Close()
		c, err := crawlkit.New(crawlkit.Config{
			UserAgent:     agent + "/1.0",
			Seeds:         web.Seeds(),
			Scope:         crawlkit.ScopeAny,
			Workers:       4,
			Delay:         40 * time.Millisecond,
			DialContext:   web.DialContext,
			AllowPrivate:  []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
			RobotsRetries: -1,
			Queue:         q,
			Politeness:    polite,
			Handler: func(_ context.Context, p *crawlkit.Page) error {
				mu.Lock()
				fetched[p.URL]++
				mu.Unlock()
				return nil
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			errs[i] = c.Run(ctx)
		}(i)
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("crawler %d: %v", i, err)
		}
	}
	var urls []string
	for u, n := range fetched {
		urls = append(urls, u)
		if n != 1 {
			t.Errorf("%s fetched %d times", u, n)
		}
	}
	truth := web.TruthFor(agent, 0)
	if missing := truth.Missing(urls); len(missing) > 0 {
		t.Errorf("coverage: %d of %d pages never fetched, e.g. %v", len(missing), len(truth.Unique()), missing[:min(5, len(missing))])
	}
	rep := web.Report()
	if v := rep.PolitenessViolations(); v != 0 {
		t.Errorf("%d politeness violations (spacing %d, concurrency %d)", v, rep.SpacingViolations, rep.ConcurrencyViolations)
	}
	if rep.RobotsViolations != 0 {
		t.Errorf("%d robots violations", rep.RobotsViolations)
	}
	t.Logf("%d pages fetched by two crawlers sharing one Redis crawl; %d requests served", len(fetched), rep.Requests)
}

// TestCrawlerCountsGiveUpOfSharedQueue runs a Crawler on a Redis queue
// whose MaxAttempts differs from the Crawler's: the Crawler learns from
// Done that the queue gave the broken page up, and counts it as failed
// after the queue's number of attempts, not its own.
func TestCrawlerCountsGiveUpOfSharedQueue(t *testing.T) {
	var mu sync.Mutex
	hits := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits[r.URL.Path]++
		mu.Unlock()
		switch r.URL.Path {
		case "/robots.txt":
			io.WriteString(w, "User-agent: *\nAllow: /\n")
		case "/":
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, `<html><body><a href="/broken">broken</a></body></html>`)
		default:
			// 507: retried by the crawler, not by the fetcher.
			http.Error(w, "full", http.StatusInsufficientStorage)
		}
	}))
	defer srv.Close()
	db := openTestDB(t)
	const attempts = 3
	polite := fetch.NewPoliteness(fetch.PolitenessConfig{Delay: time.Millisecond, BackoffBase: time.Millisecond})
	q, err := db.Queue(QueueConfig{Politeness: polite, MaxAttempts: attempts, RetryBase: time.Millisecond,
		RetryMax: time.Millisecond, PollInterval: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	c, err := crawlkit.New(crawlkit.Config{
		UserAgent:    "crawlkit-redis/1.0",
		Seeds:        []string{srv.URL + "/"},
		Delay:        time.Millisecond,
		AllowPrivate: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
		MaxAttempts:  attempts + 2, // the queue's own MaxAttempts applies
		Queue:        q,
		Politeness:   polite,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	n := hits["/broken"]
	mu.Unlock()
	if n != attempts {
		t.Fatalf("/broken requested %d times, want %d", n, attempts)
	}
	if u := c.Stats().URLs; u.Failed != 1 || u.Retried != attempts-1 {
		t.Errorf("stats %+v; want 1 failed (/broken, given up by the queue), %d retried", u, attempts-1)
	}
}
