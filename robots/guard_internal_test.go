package robots

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
)

// TestDefaultFetcherOverLoopback runs the zero Config's fetcher with the
// guard told to pass loopback (which only the package can do), so that
// what it does besides guarding is checked: a redirect comes back to the
// Cache unfollowed and the Cache follows it, the User-Agent is the
// default, and the body stops one octet past MaxFileBytes.
func TestDefaultFetcherOverLoopback(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if ua := r.Header.Get("User-Agent"); ua != defaultUserAgent {
			t.Errorf("User-Agent %q, want %q", ua, defaultUserAgent)
		}
		switch r.URL.Path {
		case "/robots.txt":
			http.Redirect(w, r, "/real-robots.txt", http.StatusMovedPermanently)
		default:
			io.WriteString(w, "User-agent: *\nDisallow: /private\n# "+strings.Repeat("x", 200)+"\n")
		}
	}))
	defer srv.Close()

	const maxFile = 64
	fc := defaultFetchConfig("", maxFile)
	fc.AllowCIDRs = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}
	fetched := fetchWith(fc)
	resp, err := fetched(context.Background(), srv.URL+"/robots.txt")
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusMovedPermanently || resp.Header.Get("Location") == "" {
		t.Fatalf("status %d, Location %q: the redirect was followed by the fetcher", resp.StatusCode, resp.Header.Get("Location"))
	}

	c := NewCache(Config{Fetch: fetched, MaxFileBytes: maxFile})
	p, err := c.Policy(context.Background(), srv.URL+"/page")
	if err != nil {
		t.Fatal(err)
	}
	if info := p.FetchInfo(); info.Err != "" || info.Status != http.StatusOK || !strings.HasSuffix(info.URL, "/real-robots.txt") {
		t.Fatalf("FetchInfo %+v, want a 200 from /real-robots.txt", info)
	}
	if d, _ := p.Allowed("anybot", srv.URL+"/private"); d.Allowed {
		t.Error("/private allowed")
	}
	if !p.Truncated() || p.Size() > maxFile {
		t.Errorf("Truncated %v, Size %d: want the body cut at %d octets", p.Truncated(), p.Size(), maxFile)
	}
	if n := hits.Load(); n != 3 {
		t.Errorf("%d requests, want 3 (the redirect twice, its target once)", n)
	}
}
