package frontier_test

import (
	"context"
	"fmt"
	"time"

	"github.com/crawlkit/crawlkit/frontier"
)

// A crawl on a fake clock: two hosts, one request per second per host. While
// a.test waits for its politeness delay, b.test is served.
func Example() {
	start := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	f, err := frontier.New(frontier.Config{}) // in memory, 1 s per host, BFS bands
	if err != nil {
		panic(err)
	}
	defer f.Close()

	_ = f.AddAt(start,
		frontier.Entry{URL: "http://a.test/", Host: "a.test"},
		frontier.Entry{URL: "http://a.test/deep", Host: "a.test", Depth: 2},
		frontier.Entry{URL: "http://a.test/about", Host: "a.test", Depth: 1},
		frontier.Entry{URL: "http://b.test/", Host: "b.test"},
	)
	now := start
	for {
		l, wake, err := f.NextAt(now)
		if err != nil {
			panic(err)
		}
		if l == nil {
			if wake.IsZero() {
				break // nothing queued, nothing leased
			}
			now = wake // a real worker would block in Next instead
			continue
		}
		fmt.Printf("t=%v %s\n", now.Sub(start), l.URL)
		now = now.Add(100 * time.Millisecond) // the fetch
		if _, err := f.DoneAt(now, l, frontier.Success(0)); err != nil {
			panic(err)
		}
	}
	// Output:
	// t=0s http://a.test/
	// t=100ms http://b.test/
	// t=1.1s http://a.test/about
	// t=2.2s http://a.test/deep
}

// Worker loop with the blocking wrappers: Next waits for a host to become
// ready; Done settles the lease.
func ExampleFrontier_Next() {
	f, err := frontier.New(frontier.Config{Politeness: frontier.FixedDelay(0)})
	if err != nil {
		panic(err)
	}
	defer f.Close()
	if err := f.Add(frontier.Entry{URL: "http://example.test/"}); err != nil {
		panic(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	l, err := f.Next(ctx)
	if err != nil {
		panic(err)
	}
	fmt.Println(l.Host, l.URL)
	// ... fetch l.URL ...
	s, err := f.Done(l, frontier.Success(0))
	fmt.Println(s.Kind, err)
	// Output:
	// example.test http://example.test/
	// finished <nil>
}

// Retries back off exponentially; Retry-After can ask for longer.
func ExampleRetry() {
	start := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	f, _ := frontier.New(frontier.Config{Politeness: frontier.FixedDelay(0), RetryBase: 10 * time.Second, MaxAttempts: 3})
	defer f.Close()
	_ = f.AddAt(start, frontier.Entry{URL: "http://flaky.test/"})
	now := start
	for {
		l, wake, _ := f.NextAt(now)
		if l == nil {
			if wake.IsZero() {
				break
			}
			now = wake
			continue
		}
		s, _ := f.DoneAt(now, l, frontier.Retry(0)) // a 503
		fmt.Printf("t=%v attempt %d: %v", now.Sub(start), l.Attempt, s.Kind)
		if s.Kind == frontier.SettlementRetrying {
			fmt.Printf(" until t=%v", s.At.Sub(start))
		}
		fmt.Println()
	}
	fmt.Println("failed:", f.Stats().Failed)
	// Output:
	// t=0s attempt 0: retrying until t=10s
	// t=10s attempt 1: retrying until t=30s
	// t=30s attempt 2: given-up
	// failed: 1
}

// The adaptive schedule shortens the recrawl interval of pages that change
// and lengthens it for pages that do not.
func ExampleAdaptive() {
	s := frontier.Adaptive{Initial: 24 * time.Hour, Min: time.Hour, Max: 30 * 24 * time.Hour}
	iv := s.Next(0, true)
	fmt.Println("first:", iv)
	iv = s.Next(iv, false)
	fmt.Println("unchanged:", iv)
	iv = s.Next(iv, true)
	fmt.Println("changed:", iv)
	// Output:
	// first: 24h0m0s
	// unchanged: 33h36m0s
	// changed: 26h52m48s
}

// OPIC hands a page's cash to its links; pages reached through few links
// rank higher.
func ExampleOPIC() {
	o := frontier.OPIC{}
	links := make([]frontier.Entry, 20)
	o.Distribute(0, links) // found on a seed
	fmt.Println(links[0].Priority, o.Band(&links[0], 4))
	few := make([]frontier.Entry, 2)
	o.Distribute(0, few)
	fmt.Println(few[0].Priority, o.Band(&few[0], 4))
	// Output:
	// 0.05 1
	// 0.5 0
}
