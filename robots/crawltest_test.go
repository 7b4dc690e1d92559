package robots_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/crawltest"
	"github.com/crawlkit/crawlkit/robots"
)

// TestSyntheticWeb checks the cache against crawltest's ground truth: every
// robots.txt variant, every page the truth says is allowed or blocked, one
// robots.txt fetch per host for many concurrent workers.
func TestSyntheticWeb(t *testing.T) {
	const agent = "crawlkit"
	web, err := crawltest.NewWeb(crawltest.Config{Hosts: 12, PagesPerHost: 15, Seed: 7, Agent: agent})
	if err != nil {
		t.Fatal(err)
	}
	defer web.Close()
	cache := robots.NewCache(robots.Config{Client: web.Client(), UserAgent: agent + "/1.0"})
	ctx := context.Background()

	for _, h := range web.Hosts() {
		p, err := cache.Policy(ctx, "http://"+h.Name+"/")
		if err != nil {
			t.Fatal(err)
		}
		want := robots.SourceFile
		switch h.Robots {
		case crawltest.RobotsMissing:
			want = robots.SourceUnavailable
		case crawltest.RobotsUnavailable:
			want = robots.SourceUnreachable
		}
		if p.Source() != want {
			t.Errorf("%s (%v): Source %v, want %v", h.Name, h.Robots, p.Source(), want)
		}
		cd, err := p.CrawlDelay(agent)
		if err != nil {
			t.Fatal(err)
		}
		if cd.Capped() != h.CrawlDelay {
			t.Errorf("%s (%v): Crawl-delay %v, want %v", h.Name, h.Robots, cd.Capped(), h.CrawlDelay)
		}
	}

	truth := web.Truth()
	if len(truth.Pages) == 0 || len(truth.Blocked) == 0 {
		t.Fatalf("truth has %d pages and %d blocked URLs; the test needs both", len(truth.Pages), len(truth.Blocked))
	}
	var urls []string
	want := map[string]bool{}
	for u := range truth.Pages {
		urls, want[u] = append(urls, u), true
	}
	for _, u := range truth.Blocked {
		urls, want[u] = append(urls, u), false
	}
	// A fresh cache and concurrent workers: still one fetch per host.
	web.ResetReport()
	cache = robots.NewCache(robots.Config{Client: web.Client(), UserAgent: agent + "/1.0"})
	var wg sync.WaitGroup
	var mu sync.Mutex
	for w := 0; w < 16; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(urls); i += 16 {
				d, err := cache.Allowed(ctx, agent, urls[i])
				mu.Lock()
				if err != nil {
					t.Errorf("%s: %v", urls[i], err)
				} else if d.Allowed != want[urls[i]] {
					t.Errorf("%s: allowed=%v (%v %v), truth says %v", urls[i], d.Allowed, d.Reason, d.Rule, want[urls[i]])
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	for host, n := range web.Report().RobotsFetches {
		if n != 1 {
			t.Errorf("%s: robots.txt fetched %d times, want 1", host, n)
		}
	}
}

// TestSyntheticWebHostile serves crawltest's hostile endpoints as
// robots.txt: each must end as an unreachable (or harmlessly parsed) file
// with bounded reads, never hang.
func TestSyntheticWebHostile(t *testing.T) {
	web, err := crawltest.NewWeb(crawltest.Config{Hosts: 1, DripInterval: 20 * time.Millisecond, BombSize: 8 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer web.Close()
	noFollow := web.Client()
	noFollow.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	// Each virtual host "<kind>.example" has the hostile endpoint <kind> as
	// its robots.txt; its other paths are those of the hostile host, so
	// relative redirects stay within the synthetic web.
	fetch := func(ctx context.Context, u string) (*http.Response, error) {
		host, path, _ := strings.Cut(strings.TrimPrefix(u, "http://"), "/")
		target := "http://" + crawltest.HostileHost + "/" + path
		if path == "robots.txt" {
			target = web.HostileURL(strings.TrimSuffix(host, ".example"))
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
		if err != nil {
			return nil, err
		}
		resp, err := noFollow.Do(req)
		if resp != nil && resp.Header.Get("Location") != "" {
			// Keep redirects on the "<kind>.example" host.
			resp.Header.Set("Location", strings.Replace(resp.Header.Get("Location"), crawltest.HostileHost, host, 1))
		}
		return resp, err
	}
	// Endpoints that never finish need a short timeout to end as
	// unreachable; the others get a generous one, so a loaded machine
	// does not turn them into timeouts.
	quick := robots.NewCache(robots.Config{Fetch: fetch, FetchTimeout: 300 * time.Millisecond})
	patient := robots.NewCache(robots.Config{Fetch: fetch, FetchTimeout: time.Minute})
	tests := []struct {
		kind string
		want robots.Source
	}{
		{crawltest.HostileRedirectLoop, robots.SourceUnreachable},
		{crawltest.HostileSlowDrip, robots.SourceUnreachable},
		{crawltest.HostileStall, robots.SourceUnreachable},
		{crawltest.HostileTooManyRequests, robots.SourceUnreachable},
		{crawltest.HostileUnavailable, robots.SourceUnreachable},
		{crawltest.HostileWrongLength, robots.SourceUnreachable},
		{crawltest.HostileGzipBomb, robots.SourceFile},
		{crawltest.HostileEndless, robots.SourceFile},
		{crawltest.HostileBinary, robots.SourceFile},
	}
	for _, tt := range tests {
		cache := patient
		if tt.kind == crawltest.HostileSlowDrip || tt.kind == crawltest.HostileStall {
			cache = quick
		}
		p, err := cache.PolicyAt(context.Background(), "http://"+tt.kind+".example/", t0)
		if err != nil {
			t.Fatalf("%s: %v", tt.kind, err)
		}
		if p.Source() != tt.want {
			t.Errorf("%s: Source %v (%+v), want %v", tt.kind, p.Source(), p.FetchInfo(), tt.want)
		}
		if tt.kind == crawltest.HostileRedirectLoop && !strings.Contains(p.FetchInfo().Err, "too many redirects") {
			t.Errorf("redirect loop: Err %q, want too many redirects", p.FetchInfo().Err)
		}
		if p.Size() > robots.DefaultMaxBytes {
			t.Errorf("%s: parsed %d octets, more than the cap", tt.kind, p.Size())
		}
	}
}
