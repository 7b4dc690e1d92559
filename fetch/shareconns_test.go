package fetch

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// TestShareConns checks that a Fetcher made with Config.ShareConns sends its
// requests over the other Fetcher's connections: a robots.txt fetch and the
// page fetches after it open one connection to the host, not two, and
// closing the sharing Fetcher leaves the connection open.
func TestShareConns(t *testing.T) {
	var conns atomic.Int32
	s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		if r.URL.Path == "/whoami" {
			w.Write([]byte(r.UserAgent()))
			return
		}
		w.Write([]byte("ok " + r.URL.Path))
	}))
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			conns.Add(1)
		}
	}
	s.Start()
	t.Cleanup(s.Close)
	web := &virtualWeb{s}
	ctx := context.Background()
	get := func(f *Fetcher, path string) {
		t.Helper()
		resp, err := f.Fetch(ctx, "http://h.example"+path)
		if err != nil {
			t.Fatal(err)
		}
		if got := string(resp.Body); got != "ok "+path {
			t.Fatalf("body %q", got)
		}
	}

	// Two independent Fetchers: one connection each (the control).
	a := newTestFetcher(t, web, nil)
	b := newTestFetcher(t, web, nil)
	get(b, "/robots.txt")
	get(a, "/page")
	if n := conns.Load(); n != 2 {
		t.Fatalf("independent fetchers opened %d connections, want 2", n)
	}
	a.Close()
	b.Close()

	conns.Store(0)
	owner := newTestFetcher(t, web, nil)
	robots := newTestFetcher(t, nil, func(c *Config) {
		c.ShareConns = owner
		c.DialContext = nil           // taken from owner
		c.AllowCIDRs = nil            // the owner's guard applies
		c.UserAgent = "robotsbot/2.0" // per-request settings stay this Fetcher's
	})
	resp, err := robots.Fetch(ctx, "http://h.example/whoami")
	if err != nil {
		t.Fatal(err)
	}
	if string(resp.Body) != "robotsbot/2.0" {
		t.Fatalf("sharing fetcher sent User-Agent %q", resp.Body)
	}
	get(robots, "/robots.txt")
	get(owner, "/page")
	get(owner, "/page2")
	if n := conns.Load(); n != 1 {
		t.Fatalf("sharing fetchers opened %d connections, want 1", n)
	}
	if err := robots.Close(); err != nil {
		t.Fatal(err)
	}
	get(owner, "/page3")
	if n := conns.Load(); n != 1 {
		t.Fatalf("closing the sharing fetcher closed the shared connection: %d connections", n)
	}
	if robots.DNS() != owner.DNS() {
		t.Error("the sharing fetcher does not use the owner's DNS cache")
	}

	// Connection settings of its own cannot be combined with sharing.
	_, err = New(Config{UserAgent: "x/1.0", ShareConns: owner, Transport: http.DefaultTransport})
	if err == nil || !strings.Contains(err.Error(), "ShareConns") {
		t.Fatalf("ShareConns with Transport: %v", err)
	}
}
