package fetch

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// hostLog records, per virtual host, when each request arrived and when its
// handler finished, and the most requests ever in flight at once.
type hostLog struct {
	mu          sync.Mutex
	inflight    map[string]int
	maxInflight map[string]int
	visits      map[string][][2]time.Time // arrival, finish
}

func newHostLog() *hostLog {
	return &hostLog{inflight: map[string]int{}, maxInflight: map[string]int{}, visits: map[string][][2]time.Time{}}
}

func (l *hostLog) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	arrived := time.Now()
	l.mu.Lock()
	l.inflight[r.Host]++
	l.maxInflight[r.Host] = max(l.maxInflight[r.Host], l.inflight[r.Host])
	l.mu.Unlock()
	fmt.Fprintf(w, "<html>%s%s</html>", r.Host, r.URL.Path)
	l.mu.Lock()
	l.inflight[r.Host]--
	// Recorded before the handler returns, so before the client can have
	// read the end of the response: the true gap is at least as large as
	// the one measured here.
	l.visits[r.Host] = append(l.visits[r.Host], [2]time.Time{arrived, time.Now()})
	l.mu.Unlock()
}

// TestPolitenessHeldUnderConcurrency runs 50 workers against 5 hosts and
// checks, from the server's own records, that no host ever saw two
// requests at once or a request sooner than Delay after the previous one
// finished. The assertion is a lower bound the Fetcher guarantees by
// construction (the next request is sent only after the previous response
// was read plus Delay), so scheduling noise can only widen the gaps.
func TestPolitenessHeldUnderConcurrency(t *testing.T) {
	const (
		workers  = 50
		hosts    = 5
		perHost  = 8
		minDelay = 15 * time.Millisecond
	)
	log := newHostLog()
	web := newVirtualWeb(t, log)
	f := newTestFetcher(t, web, func(c *Config) {
		UseClock(c, nil)
		c.PolitenessConfig = PolitenessConfig{Delay: minDelay, DelayFactor: -1}
	})
	jobs := make(chan string)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for u := range jobs {
				if _, err := f.Fetch(context.Background(), u); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	for i := range perHost {
		for h := range hosts {
			jobs <- fmt.Sprintf("http://h%d.test/p%d", h, i)
		}
	}
	close(jobs)
	wg.Wait()

	log.mu.Lock()
	defer log.mu.Unlock()
	if len(log.visits) != hosts {
		t.Fatalf("server saw %d hosts, want %d", len(log.visits), hosts)
	}
	for host, v := range log.visits {
		if len(v) != perHost {
			t.Errorf("%s: %d requests, want %d", host, len(v), perHost)
		}
		if log.maxInflight[host] > 1 {
			t.Errorf("%s: %d concurrent requests, cap is 1", host, log.maxInflight[host])
		}
		// visits are appended in finish order; with at most one in flight
		// that is also arrival order.
		for i := 1; i < len(v); i++ {
			if gap := v[i][0].Sub(v[i-1][1]); gap < minDelay {
				t.Errorf("%s: request %d arrived %v after the previous finished, minimum gap %v", host, i, gap, minDelay)
			}
		}
	}
}

// TestPolitenessConcurrencyCapUnderLoad checks a cap above one: with
// MaxConcurrent 3 and no delay, a host never sees more than 3 requests at
// once although 50 workers want it.
func TestPolitenessConcurrencyCapUnderLoad(t *testing.T) {
	gate := make(chan struct{})
	var once sync.Once
	log := newHostLog()
	web := newVirtualWeb(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		log.mu.Lock()
		log.inflight[r.Host]++
		log.maxInflight[r.Host] = max(log.maxInflight[r.Host], log.inflight[r.Host])
		n := log.inflight[r.Host]
		log.mu.Unlock()
		if n == 3 {
			once.Do(func() { close(gate) })
		}
		// Hold the first requests until three are in flight together (or
		// give up, so that a Fetcher admitting fewer fails instead of hanging).
		select {
		case <-gate:
		case <-time.After(10 * time.Second):
		}
		log.mu.Lock()
		log.inflight[r.Host]--
		log.mu.Unlock()
	}))
	f := newTestFetcher(t, web, func(c *Config) {
		UseClock(c, nil)
		c.PolitenessConfig = PolitenessConfig{Delay: -1, DelayFactor: -1, MaxConcurrent: 3}
	})
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := f.Fetch(context.Background(), fmt.Sprintf("http://one.test/%d", i)); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if got := log.maxInflight["one.test"]; got != 3 {
		t.Fatalf("max in flight = %d, want exactly the cap 3", got)
	}
}

// TestFetcherContactedSpacesAnotherPoliteness fetches robots.txt through a
// Fetcher with a politeness model of its own, as a crawler does, reporting
// its requests to the page Fetcher's through Config.Contacted: the first
// page then waits the host's Crawl-delay after robots.txt instead of
// following it at once.
func TestFetcherContactedSpacesAnotherPoliteness(t *testing.T) {
	web := newVirtualWeb(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "User-agent: *\nCrawl-delay: 5\n")
	}))
	clock := newFakeClock()
	pages := newTestFetcher(t, web, func(c *Config) {
		UseClock(c, clock)
		c.PolitenessConfig = PolitenessConfig{Delay: time.Second, DelayFactor: -1}
	})
	robots := newTestFetcher(t, web, func(c *Config) {
		UseClock(c, clock)
		c.PolitenessConfig = PolitenessConfig{Delay: time.Second, DelayFactor: -1}
		c.Contacted = pages.Politeness().Contacted
	})
	if _, err := robots.Fetch(context.Background(), "http://a.test/robots.txt"); err != nil {
		t.Fatal(err)
	}
	pages.Politeness().SetCrawlDelay("a.test", 5*time.Second)
	if _, err := pages.Fetch(context.Background(), "http://a.test/"); err != nil {
		t.Fatal(err)
	}
	if w := clock.Waited(); w != 5*time.Second {
		t.Fatalf("first page waited %v after robots.txt, want the 5 s Crawl-delay", w)
	}
}

// TestFetcherNoDelay: with Delay and DelayFactor negative, requests to one
// host go back to back, and the Politeness tells a scheduler sharing it
// that the host is ready at once. With Delay negative alone, the adaptive
// delay (5 × each request's 10 ms) still spaces them.
func TestFetcherNoDelay(t *testing.T) {
	for _, c := range []struct {
		cfg  PolitenessConfig
		wait time.Duration // per request after the first
	}{
		{PolitenessConfig{Delay: -1, DelayFactor: -1}, 0},
		{PolitenessConfig{Delay: -1}, 50 * time.Millisecond},
	} {
		clock := newFakeClock()
		var hits atomic.Int32
		web := newVirtualWeb(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			hits.Add(1)
			clock.Advance(10 * time.Millisecond) // each request takes 10 ms
			fmt.Fprint(w, "ok")
		}))
		f := newTestFetcher(t, web, func(cf *Config) {
			UseClock(cf, clock)
			cf.PolitenessConfig = c.cfg
		})
		const n = 20
		for i := range n {
			if _, err := f.Fetch(context.Background(), fmt.Sprintf("http://a.test/%d", i)); err != nil {
				t.Fatal(err)
			}
		}
		now := clock.Now()
		if w, ready := clock.Waited(), f.Politeness().ReadyAt("a.test", now); hits.Load() != n || w != (n-1)*c.wait ||
			!ready.Equal(now.Add(c.wait)) {
			t.Errorf("%+v: %d requests, waited %v, ready in %v; want %d, %v, %v",
				c.cfg, hits.Load(), w, ready.Sub(now), n, (n-1)*c.wait, c.wait)
		}
	}
}
