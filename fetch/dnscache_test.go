package fetch

import (
	"context"
	"errors"
	"net"
	"sync"
	"testing"
	"time"
)

func TestDNSSingleFlight(t *testing.T) {
	r := newFakeResolver("a.test", "192.0.2.1")
	r.gate = make(chan struct{})
	c := NewDNSCache(DNSConfig{Resolver: r, Now: newFakeClock().Now})
	defer c.Close()

	const n = 100
	var started, wg sync.WaitGroup
	started.Add(n)
	errs := make(chan error, n)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			started.Done()
			addrs, err := c.Lookup(context.Background(), "a.test")
			if err == nil && (len(addrs) != 1 || addrs[0].String() != "192.0.2.1") {
				err = errors.New("wrong answer")
			}
			errs <- err
		}()
	}
	started.Wait()
	// Every goroutine has at least started; the lookup cannot finish before
	// the gate opens, so all that reached Lookup share it, and any that
	// arrive later find the cached answer.
	close(r.gate)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if got := r.Calls("a.test"); got != 1 {
		t.Fatalf("resolver called %d times for 100 concurrent lookups, want 1", got)
	}
}

func TestDNSTTL(t *testing.T) {
	clock := newFakeClock()
	r := newFakeResolver("a.test", "192.0.2.1")
	r.ttl = 2 * time.Minute
	c := NewDNSCache(DNSConfig{Resolver: r, Now: clock.Now, MinTTL: time.Minute, MaxTTL: 10 * time.Minute})
	defer c.Close()
	ctx := context.Background()
	lookup := func() {
		t.Helper()
		if _, err := c.Lookup(ctx, "a.test"); err != nil {
			t.Fatal(err)
		}
	}
	lookup()
	clock.Advance(2*time.Minute - time.Second)
	lookup()
	if got := r.Calls("a.test"); got != 1 {
		t.Fatalf("calls before expiry = %d, want 1", got)
	}
	clock.Advance(time.Second)
	lookup()
	if got := r.Calls("a.test"); got != 2 {
		t.Fatalf("calls after TTL = %d, want 2", got)
	}

	// A TTL below MinTTL is raised to it; one above MaxTTL lowered.
	r.ttl = time.Second
	c.Invalidate("a.test")
	lookup() // call 3, cached for MinTTL
	clock.Advance(59 * time.Second)
	lookup()
	if got := r.Calls("a.test"); got != 3 {
		t.Fatalf("short TTL not raised to MinTTL: calls = %d, want 3", got)
	}
	r.ttl = 24 * time.Hour
	clock.Advance(time.Second)
	lookup() // call 4, cached for MaxTTL
	clock.Advance(10 * time.Minute)
	lookup()
	if got := r.Calls("a.test"); got != 5 {
		t.Fatalf("long TTL not capped at MaxTTL: calls = %d, want 5", got)
	}
}

func TestDNSNegativeCaching(t *testing.T) {
	clock := newFakeClock()
	r := newFakeResolver()
	c := NewDNSCache(DNSConfig{Resolver: r, Now: clock.Now, NegativeTTL: 30 * time.Second})
	defer c.Close()
	ctx := context.Background()
	for range 3 {
		_, err := c.Lookup(ctx, "gone.test")
		var de *net.DNSError
		if !errors.As(err, &de) || !de.IsNotFound {
			t.Fatalf("err = %v, want a not-found DNSError", err)
		}
	}
	if got := r.Calls("gone.test"); got != 1 {
		t.Fatalf("negative answer not cached: %d calls", got)
	}
	clock.Advance(30 * time.Second)
	c.Lookup(ctx, "gone.test")
	if got := r.Calls("gone.test"); got != 2 {
		t.Fatalf("negative answer outlived NegativeTTL: %d calls", got)
	}
}

func TestDNSBoundedLRU(t *testing.T) {
	r := newFakeResolver("a.test", "192.0.2.1", "b.test", "192.0.2.2", "c.test", "192.0.2.3")
	c := NewDNSCache(DNSConfig{Resolver: r, Now: newFakeClock().Now, MaxEntries: 2})
	defer c.Close()
	ctx := context.Background()
	c.Lookup(ctx, "a.test")
	c.Lookup(ctx, "b.test")
	c.Lookup(ctx, "a.test") // a is now the most recently used
	c.Lookup(ctx, "c.test") // evicts b
	if c.Len() != 2 {
		t.Fatalf("Len = %d, want 2", c.Len())
	}
	c.Lookup(ctx, "a.test")
	c.Lookup(ctx, "b.test")
	if r.Calls("a.test") != 1 || r.Calls("b.test") != 2 {
		t.Fatalf("LRU evicted the wrong entry: a=%d b=%d calls", r.Calls("a.test"), r.Calls("b.test"))
	}
}

func TestDNSInvalidateAfterConnectFailures(t *testing.T) {
	r := newFakeResolver("a.test", "192.0.2.1")
	c := NewDNSCache(DNSConfig{Resolver: r, Now: newFakeClock().Now, FailureThreshold: 3})
	defer c.Close()
	ctx := context.Background()
	c.Lookup(ctx, "a.test")
	fail := errors.New("connection refused")
	c.ReportConnect("a.test", fail)
	c.ReportConnect("a.test", fail)
	c.ReportConnect("a.test", nil) // a success resets the count
	c.ReportConnect("a.test", fail)
	c.ReportConnect("a.test", fail)
	c.Lookup(ctx, "a.test")
	if got := r.Calls("a.test"); got != 1 {
		t.Fatalf("invalidated before threshold: %d calls", got)
	}
	c.ReportConnect("a.test", fail)
	c.Lookup(ctx, "a.test")
	if got := r.Calls("a.test"); got != 2 {
		t.Fatalf("not invalidated after 3 consecutive failures: %d calls", got)
	}
}

func TestDNSPrefetchAndClose(t *testing.T) {
	r := newFakeResolver("a.test", "192.0.2.1", "b.test", "192.0.2.2")
	c := NewDNSCache(DNSConfig{Resolver: r, Now: newFakeClock().Now})
	c.Prefetch("a.test", "b.test", "192.0.2.9")
	ctx := context.Background()
	c.Lookup(ctx, "a.test")
	c.Lookup(ctx, "b.test")
	if r.Calls("a.test") != 1 || r.Calls("b.test") != 1 || c.resolverCalls() != 2 {
		t.Fatalf("prefetch: calls a=%d b=%d total=%d, want 1 1 2", r.Calls("a.test"), r.Calls("b.test"), c.resolverCalls())
	}

	// Close cancels a lookup stuck in the resolver and waits for it.
	r.gate = make(chan struct{})
	c.Prefetch("stuck.test")
	c.Close()
	if _, err := c.Lookup(ctx, "a.test"); !errors.Is(err, errCacheClosed) {
		t.Fatalf("Lookup after Close = %v, want errCacheClosed", err)
	}
}

func TestDNSCallerCancelDoesNotFailOthers(t *testing.T) {
	r := newFakeResolver("a.test", "192.0.2.1")
	r.gate = make(chan struct{})
	c := NewDNSCache(DNSConfig{Resolver: r, Now: newFakeClock().Now})
	defer c.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.Lookup(ctx, "a.test"); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled Lookup = %v", err)
	}
	close(r.gate)
	if addrs, err := c.Lookup(context.Background(), "a.test"); err != nil || len(addrs) != 1 {
		t.Fatalf("second Lookup = %v, %v", addrs, err)
	}
	if r.Calls("a.test") != 1 {
		t.Fatalf("calls = %d, want 1", r.Calls("a.test"))
	}
}
