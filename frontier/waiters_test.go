package frontier

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"
)

// waitFor spins until n goroutines are queued in f's Next.
func waitFor(f *Frontier, n int) {
	for {
		f.mu.Lock()
		q := len(f.waiters)
		f.mu.Unlock()
		if q >= n {
			return
		}
		runtime.Gosched()
	}
}

// TestNextWakesOneAndHandsOn checks the waiter queue of Next: an Add wakes
// only the leading waiter, and each lease hands the rest of the ready work
// on, so every URL of a batch reaches a blocked goroutine; Close then
// releases the ones left.
func TestNextWakesOneAndHandsOn(t *testing.T) {
	f, err := New(Config{Politeness: FixedDelay(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	const workers = 8
	type result struct {
		l   *Lease
		err error
	}
	results := make(chan result, workers)
	for i := 0; i < workers; i++ {
		go func() {
			l, err := f.Next(context.Background())
			results <- result{l, err}
		}()
	}
	waitFor(f, workers)

	// The leader alone holds a wake time; the others sleep without one.
	f.mu.Lock()
	for i, w := range f.waiters {
		if !w.queued {
			t.Errorf("waiter %d not marked queued", i)
		}
	}
	f.mu.Unlock()

	// Five hosts become ready at once: five waiters get a lease each.
	var batch []Entry
	for i := 0; i < 5; i++ {
		batch = append(batch, Entry{URL: fmt.Sprintf("http://h%d.test/", i)})
	}
	if err := f.Add(batch...); err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for i := 0; i < 5; i++ {
		r := <-results
		if r.err != nil || r.l == nil {
			t.Fatalf("Next: %v, %v", r.l, r.err)
		}
		got[r.l.Host] = true
	}
	if len(got) != 5 {
		t.Fatalf("leased hosts %v, want 5 distinct", got)
	}
	// A second URL of a leased host is not ready (an hour of politeness):
	// it wakes the leader, which goes back to sleep.
	if err := f.Add(Entry{URL: "http://h0.test/2"}); err != nil {
		t.Fatal(err)
	}
	waitFor(f, workers-5)
	f.mu.Lock()
	if n := len(f.waiters); n != workers-5 {
		t.Errorf("%d waiters queued, want %d", n, workers-5)
	}
	f.mu.Unlock()

	// A waiter whose context ends leaves the queue.
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := f.Next(ctx)
		done <- err
	}()
	waitFor(f, workers-5+1)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled Next: %v", err)
	}
	f.mu.Lock()
	if n := len(f.waiters); n != workers-5 {
		t.Errorf("%d waiters after a cancel, want %d", n, workers-5)
	}
	f.mu.Unlock()

	f.Close()
	for i := 0; i < workers-5; i++ {
		if r := <-results; !errors.Is(r.err, ErrClosed) {
			t.Fatalf("Next after Close: %v, %v", r.l, r.err)
		}
	}
}

// TestNextWaitersUnderChurn runs many goroutines leasing and settling
// through Next while URLs arrive, under the race detector: every URL is
// leased exactly once.
func TestNextWaitersUnderChurn(t *testing.T) {
	f, err := New(Config{Politeness: FixedDelay(0)})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	const urls = 2000
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	leased := make(chan string, urls)
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				l, err := f.Next(ctx)
				if err != nil {
					return
				}
				leased <- l.URL
				if _, err := f.Done(l, Outcome{Kind: OutcomeSuccess}); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < urls; i++ {
			if err := f.Add(Entry{URL: fmt.Sprintf("http://h%d.test/p%d", i%37, i)}); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	seen := map[string]bool{}
	for len(seen) < urls {
		u := <-leased
		if seen[u] {
			t.Fatalf("%s leased twice", u)
		}
		seen[u] = true
	}
}
