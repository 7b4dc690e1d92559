package crawlkit_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/crawltest"
	"github.com/crawlkit/crawlkit/storage/pebble"
)

// TestRestartKeepsPoliteness stops a crawl right after a host answered 429
// with Retry-After and another was fetched, and starts it again on the same
// DataDir: the blocked host is left alone, and the other is not contacted
// again sooner than its delay after the first process's last request.
func TestRestartKeepsPoliteness(t *testing.T) {
	s := serveHosts(t, func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/robots.txt":
			http.NotFound(w, r)
		case hostOf(r) == "busy.test":
			w.Header().Set("Retry-After", "120")
			http.Error(w, "slow down", http.StatusTooManyRequests)
		case r.URL.Path == "/":
			writeHTML(w, `<html><body><a href="/a">a</a><a href="/b">b</a></body></html>`)
		default:
			writeHTML(w, `<html><body>`+r.URL.Path+`</body></html>`)
		}
	})
	dir := t.TempDir()
	const delay = 1500 * time.Millisecond
	run := func(stop bool, limit time.Duration) *crawlkit.Crawler {
		ctx, cancel := context.WithTimeout(context.Background(), limit)
		defer cancel()
		var mu sync.Mutex
		seen := map[string]bool{}
		c, err := crawlkit.New(crawlkit.Config{
			UserAgent: testAgent, Seeds: []string{"http://busy.test/", "http://calm.test/"}, Scope: crawlkit.ScopeAny,
			DialContext: s.dial, AllowPrivate: loopback, DataDir: dir, Delay: delay, Workers: 2,
			Handler: func(_ context.Context, p *crawlkit.Page) error {
				mu.Lock()
				defer mu.Unlock()
				seen[p.URL[:strings.Index(p.URL[7:], "/")+7]] = true
				if stop && seen["http://busy.test"] && seen["http://calm.test"] {
					cancel()
				}
				return nil
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		c.Run(ctx)
		return c
	}
	// The first process sees the 429 and one page of calm.test.
	run(true, time.Minute)
	s.mu.Lock()
	busy1, calm1 := len(s.starts["busy.test"]), len(s.starts["calm.test"])
	lastCalm := s.starts["calm.test"][calm1-1]
	s.mu.Unlock()
	if busy1 != 1 || calm1 != 1 {
		t.Fatalf("first process: busy.test %d requests, calm.test %d; want 1 and 1", busy1, calm1)
	}
	// The second resumes at once and fetches calm.test's other pages.
	run(false, 6*time.Second)
	s.mu.Lock()
	defer s.mu.Unlock()
	if n := len(s.starts["busy.test"]); n != 1 {
		t.Errorf("busy.test got %d requests over the restart, within its Retry-After of 120 s", n)
	}
	calm := s.starts["calm.test"]
	if len(calm) < 2 {
		t.Fatalf("the second process fetched nothing from calm.test (%d requests)", len(calm))
	}
	// Lower bound only; 50 ms of slack for the order of clock readings.
	if gap := calm[1].Sub(lastCalm); gap < delay-50*time.Millisecond {
		t.Errorf("calm.test contacted %v after the first process's last request, want at least %v", gap, delay)
	}
}

// TestRestartKeepsTrapVerdicts interrupts a crawl of crawltest's web ten
// times and resumes it on the same DataDir: the restored trap detector
// keeps the trap fetches within 10 % of an uninterrupted crawl's, where an
// empty detector at each restart learned every trap again.
func TestRestartKeepsTrapVerdicts(t *testing.T) {
	crawl := func(web *crawltest.Web, dir string, stopAfter int) error {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var n atomic.Int64
		cfg := crawlConfig(web, &pageLog{})
		cfg.DataDir, cfg.Workers, cfg.Delay = dir, 4, crawlkit.NoDelay
		cfg.Handler = func(context.Context, *crawlkit.Page) error {
			if stopAfter > 0 && int(n.Add(1)) == stopAfter {
				cancel()
			}
			return nil
		}
		c, err := crawlkit.New(cfg)
		if err != nil {
			return err
		}
		if err := c.Run(ctx); err != nil && !errors.Is(err, context.Canceled) {
			return err
		}
		return nil
	}
	webCfg := crawltest.Config{Hosts: 12, PagesPerHost: 8, Seed: 11, Agent: "crawlkit-test", CrawlDelay: 10 * time.Millisecond}
	whole := newWeb(t, webCfg)
	if err := crawl(whole, t.TempDir(), 0); err != nil {
		t.Fatal(err)
	}
	want := whole.Report().TrapFetches

	parts := newWeb(t, webCfg)
	dir := t.TempDir()
	for i := 0; i < 10; i++ {
		if err := crawl(parts, dir, 6); err != nil {
			t.Fatal(err)
		}
	}
	if err := crawl(parts, dir, 0); err != nil {
		t.Fatal(err)
	}
	got := parts.Report().TrapFetches
	t.Logf("trap fetches: uninterrupted %d, interrupted 10 times %d", want, got)
	if want == 0 {
		t.Fatal("the web's traps were never entered; the test shows nothing")
	}
	if float64(got) > 1.1*float64(want)+1 {
		t.Errorf("interrupted crawl made %d trap fetches, uninterrupted %d", got, want)
	}
}

// TestRestartWithUnreadablePolitenessState damages the politeness record of
// a DataDir between two processes: the second says so at Warn, resumes the
// crawl (its queue is intact) and spaces every host from its start, as
// after a crash, instead of refusing the DataDir.
func TestRestartWithUnreadablePolitenessState(t *testing.T) {
	s := serveHosts(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			http.NotFound(w, r)
		case "/":
			writeHTML(w, `<html><body><a href="/a">a</a><a href="/b">b</a></body></html>`)
		default:
			writeHTML(w, `<html><body>`+r.URL.Path+`</body></html>`)
		}
	})
	dir := t.TempDir()
	const delay = 800 * time.Millisecond
	run := func(stopAfter int, logs *logCounter) (time.Time, error) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		var n atomic.Int64
		cfg := crawlkit.Config{
			UserAgent: testAgent, Seeds: []string{"http://calm.test/"}, Scope: crawlkit.ScopeAny,
			DialContext: s.dial, AllowPrivate: loopback, DataDir: dir, Delay: delay, Workers: 2,
			Handler: func(context.Context, *crawlkit.Page) error {
				if int(n.Add(1)) == stopAfter {
					cancel()
				}
				return nil
			},
		}
		if logs != nil {
			cfg.Logger = slog.New(logs)
		}
		c, err := crawlkit.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		if err := c.Run(ctx); err != nil && !errors.Is(err, context.Canceled) {
			return start, err
		}
		return start, nil
	}
	if _, err := run(1, nil); err != nil {
		t.Fatal(err)
	}
	db, err := pebble.Open(dir, pebble.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.PutState("politeness/v1", []byte(`[{"host":"calm.test","last_end":`)); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	logs := &logCounter{msgs: map[string]int{}}
	start, err := run(0, logs)
	if err != nil {
		t.Fatalf("second process on the damaged DataDir: %v", err)
	}
	if n := logs.msgs["WARN politeness state of the earlier run unreadable; every host waits its delay from this start"]; n != 1 {
		t.Errorf("warned %d times about the damaged politeness state, want once (logged: %v)", n, logs.msgs)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	calm := s.starts["calm.test"]
	if len(calm) != 3 {
		t.Fatalf("calm.test got %d requests over both processes, want 3 (/, /a, /b)", len(calm))
	}
	if gap := calm[1].Sub(start); gap < delay-50*time.Millisecond {
		t.Errorf("the second process contacted calm.test %v after its start, want at least its delay %v", gap, delay)
	}
}
