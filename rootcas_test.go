package crawlkit_test

import (
	"context"
	"crypto/x509"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit"
)

// TestRootCAs crawls an HTTPS site whose certificate only a private CA
// vouches for: refused with the system's roots (the page is not fetched),
// crawled with Config.RootCAs holding that CA.
func TestRootCAs(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		if r.URL.Path == "/" {
			w.Write([]byte(`<title>home</title><p>The private home page.</p><a href="/b">b</a>`))
			return
		}
		w.Write([]byte(`<title>leaf</title><p>A leaf with other words in it.</p>`))
	}))
	defer srv.Close()
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	for _, tc := range []struct {
		roots *x509.CertPool
		want  int64
	}{{nil, 0}, {pool, 2}} {
		c, err := crawlkit.New(crawlkit.Config{
			UserAgent: testAgent, Seeds: []string{srv.URL + "/"}, RootCAs: tc.roots,
			Delay: time.Millisecond, RobotsRetries: -1,
			AllowPrivate: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
		})
		if err != nil {
			t.Fatal(err)
		}
		_ = c.Run(context.Background()) // without the CA: ErrNothingFetched
		if got := c.Stats().URLs.Successful; got != tc.want {
			t.Errorf("RootCAs %v: %d pages fetched, want %d", tc.roots != nil, got, tc.want)
		}
	}
}

// TestSmallMaxRetryWaitWaitsOutPoliteness: a MaxRetryWait shorter than the
// host's politeness gap ends no crawl; it bounds waits for the server
// (Retry-After), not the crawl's own spacing.
func TestSmallMaxRetryWaitWaitsOutPoliteness(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte(`<title>` + r.URL.Path + `</title><p>page ` + r.URL.Path + `</p><a href="/a">a</a><a href="/b">b</a>`))
	}))
	defer srv.Close()
	c, err := crawlkit.New(crawlkit.Config{
		UserAgent: testAgent, Seeds: []string{srv.URL + "/"},
		Delay: 50 * time.Millisecond, MaxRetryWait: time.Millisecond, RobotsRetries: -1,
		AllowPrivate: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if s := c.Stats(); s.URLs.Successful != 3 || len(s.URLs.NotFetched) != 0 {
		t.Errorf("fetched %d of 3, not fetched %v", s.URLs.Successful, s.URLs.NotFetched)
	}
}
