package fetch

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// serverAddr returns the address s listens on.
func serverAddr(t *testing.T, s *httptest.Server) netip.AddrPort {
	t.Helper()
	ap, err := netip.ParseAddrPort(s.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	return ap
}

// TestFetchRecordsRemoteAddr checks that the address of the connection that
// carried each response is reported, for the final response and each
// redirect hop, on new and on kept-alive connections, over plain HTTP
// (where the Fetcher installs no TLS trace), through a custom dial function
// and over HTTP/2 with TLS.
func TestFetchRecordsRemoteAddr(t *testing.T) {
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/a":
			http.Redirect(w, r, "/b", http.StatusFound)
		case "/b":
			http.Redirect(w, r, "/c", http.StatusMovedPermanently)
		default:
			fmt.Fprint(w, "ok")
		}
	})
	check := func(t *testing.T, f *Fetcher, base string, want netip.AddrPort) {
		t.Helper()
		for i := range 2 { // the second time over kept-alive connections
			resp, err := f.Fetch(context.Background(), base+"/a")
			if err != nil {
				t.Fatal(err)
			}
			if resp.RemoteAddr != want {
				t.Errorf("fetch %d: RemoteAddr %v, want %v (timing %+v)", i, resp.RemoteAddr, want, resp.Timing)
			}
			if len(resp.Redirects) != 2 {
				t.Fatalf("fetch %d: %d hops", i, len(resp.Redirects))
			}
			for _, h := range resp.Redirects {
				if h.RemoteAddr != want {
					t.Errorf("fetch %d: hop %s RemoteAddr %v, want %v", i, h.URL, h.RemoteAddr, want)
				}
			}
			if i == 1 && !resp.Timing.Reused {
				t.Errorf("fetch %d: connection not reused; the test wants the kept-alive path", i)
			}
		}
	}
	t.Run("plain", func(t *testing.T) {
		srv := httptest.NewServer(handler)
		defer srv.Close()
		f := newTestFetcher(t, nil, nil)
		check(t, f, srv.URL, serverAddr(t, srv))
	})
	t.Run("custom-dial", func(t *testing.T) {
		web := newVirtualWeb(t, handler)
		f := newTestFetcher(t, web, nil)
		check(t, f, "http://a.test", serverAddr(t, web.Server))
	})
	t.Run("http2", func(t *testing.T) {
		srv := httptest.NewUnstartedServer(handler)
		srv.EnableHTTP2 = true
		srv.StartTLS()
		defer srv.Close()
		f := newTestFetcher(t, nil, func(c *Config) { c.Client = srv.Client() })
		check(t, f, srv.URL, serverAddr(t, srv))
	})
}

// TestFetchRemoteAddrThroughProxy: through an HTTP proxy the connection is
// the proxy's, not the server's, so no address is reported.
func TestFetchRemoteAddrThroughProxy(t *testing.T) {
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "proxied "+r.Host)
	}))
	defer proxy.Close()
	proxyURL, _ := url.Parse(proxy.URL)
	for _, guard := range []bool{true, false} {
		f := newTestFetcher(t, nil, func(c *Config) {
			c.Transport = &http.Transport{Proxy: http.ProxyURL(proxyURL)}
			c.AllowCIDRs = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
			c.DNSConfig = DNSConfig{Resolver: newFakeResolver("public.test", "93.184.216.34")}
			c.DisableGuard = !guard
		})
		resp, err := f.Fetch(context.Background(), "http://public.test/")
		if err != nil || string(resp.Body) != "proxied public.test" {
			t.Fatalf("guard %v: %v", guard, err)
		}
		if resp.RemoteAddr.IsValid() {
			t.Errorf("guard %v: RemoteAddr %v through a proxy; want none (it would be the proxy's)", guard, resp.RemoteAddr)
		}
	}
}

// headerProbe records the request headers the server received, by path.
type headerProbe struct {
	mu   sync.Mutex
	seen map[string]http.Header
}

func (p *headerProbe) record(r *http.Request) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.seen == nil {
		p.seen = map[string]http.Header{}
	}
	p.seen[r.Host+r.URL.Path] = r.Header.Clone()
}

// compare checks that reported is the header the server received for key,
// apart from the fields the transport adds itself.
func (p *headerProbe) compare(t *testing.T, key string, reported http.Header) {
	t.Helper()
	p.mu.Lock()
	got := p.seen[key]
	p.mu.Unlock()
	if got == nil {
		t.Fatalf("%s: server saw no request", key)
	}
	got = got.Clone()
	for _, k := range []string{"Connection", "Content-Length"} {
		got.Del(k)
	}
	if fmt.Sprint(got) != fmt.Sprint(reported) {
		t.Errorf("%s: reported request header\n %v\nserver received\n %v", key, reported, got)
	}
}

// TestFetchReportsRequestHeader checks that the Fetcher reports the header
// of each request as it sent it, for the final request and each redirect
// hop: its defaults, Config.Header, Request.Header, the conditional headers
// of the first request, cookies from the client's jar, and credentials
// dropped once a redirect leaves the site.
func TestFetchReportsRequestHeader(t *testing.T) {
	var probe headerProbe
	web := newVirtualWeb(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		probe.record(r)
		switch r.URL.Path {
		case "/start":
			http.Redirect(w, r, "http://other.test/end", http.StatusFound)
		default:
			fmt.Fprint(w, "done")
		}
	}))
	jar, _ := cookiejar.New(nil)
	jar.SetCookies(&url.URL{Scheme: "http", Host: "site.test"}, []*http.Cookie{{Name: "j", Value: "1"}})
	f := newTestFetcher(t, web, func(c *Config) {
		c.Header = http.Header{"Accept-Language": {"en, fr;q=0.5"}, "From": {"bot@example.invalid"}}
		c.Client = &http.Client{Jar: jar}
	})
	h := http.Header{"X-Extra": {"1"}, "Authorization": {"Bearer secret"}}
	h["user-agent"] = []string{"sneaky"} // not canonical: must not be sent next to the Fetcher's
	resp, err := f.Do(context.Background(), &Request{URL: "http://site.test/start", Header: h,
		Validators: Validators{ETag: `"e1"`, LastModified: "Mon, 02 Jan 2006 15:04:05 GMT"}})
	if err != nil || len(resp.Redirects) != 1 {
		t.Fatalf("err %v resp %+v", err, resp)
	}
	first := resp.Redirects[0].RequestHeader
	probe.compare(t, "site.test/start", first)
	probe.compare(t, "other.test/end", resp.RequestHeader)
	for k, want := range map[string]string{
		"User-Agent":        "crawlkit-test/1.0 (+https://example.invalid/bot)",
		"Accept":            defaultAccept,
		"Accept-Encoding":   acceptEncoding,
		"Accept-Language":   "en, fr;q=0.5",
		"From":              "bot@example.invalid",
		"X-Extra":           "1",
		"Authorization":     "Bearer secret",
		"If-None-Match":     `"e1"`,
		"If-Modified-Since": "Mon, 02 Jan 2006 15:04:05 GMT",
		"Cookie":            "j=1",
	} {
		if got := strings.Join(first[k], "|"); got != want {
			t.Errorf("first request %s = %q, want %q", k, got, want)
		}
	}
	if len(first["user-agent"]) != 0 {
		t.Errorf("non-canonical user-agent from Request.Header sent: %v", first)
	}
	for _, k := range []string{"Authorization", "If-None-Match", "If-Modified-Since", "Cookie"} {
		if v := resp.RequestHeader.Get(k); v != "" {
			t.Errorf("final request carries %s %q", k, v)
		}
	}
	if resp.RequestHeader.Get("X-Extra") != "1" || resp.RequestHeader.Get("From") == "" {
		t.Errorf("final request header %v", resp.RequestHeader)
	}
	if h.Get("X-Extra") != "1" || len(h) != 3 {
		t.Errorf("caller's header modified: %v", h)
	}
}

// gzipped returns parts, each compressed as its own gzip member.
func gzipped(parts ...string) []byte {
	var b bytes.Buffer
	for _, p := range parts {
		zw := gzip.NewWriter(&b)
		io.WriteString(zw, p)
		zw.Close()
	}
	return b.Bytes()
}

// TestFetchGzipTrailingGarbage: bytes after the last gzip member that do not
// start another member are ignored, as browsers and curl do, rather than
// failing the fetch (and retrying it, to get the same bytes again).
// Concatenated members are still all decoded, and a member that starts but
// is corrupt still fails.
func TestFetchGzipTrailingGarbage(t *testing.T) {
	var hits atomic.Int32
	bodies := map[string][]byte{
		"/junk":     append(gzipped("<html>page</html>"), "trailing junk\r\n"...),
		"/nul":      append(gzipped("<html>page</html>"), make([]byte, 512)...),
		"/one-byte": append(gzipped("<html>page</html>"), 0x1f),
		"/members":  append(gzipped("<html>pa", "ge</html>"), "\n\n"...),
		"/big-junk": append(gzipped("<html>page</html>"), bytes.Repeat([]byte("junk "), 20000)...),
		"/bad-member": append(gzipped("<html>page</html>"),
			0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff, 'n', 'o', 't', ' ', 'd', 'e', 'f', 'l', 'a', 't', 'e'),
		"/truncated": gzipped("<html>page</html>")[:20],
	}
	web := newVirtualWeb(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Encoding", "gzip")
		w.Header().Set("Content-Type", "text/html")
		w.Write(bodies[r.URL.Path])
	}))
	f := newTestFetcher(t, web, nil)
	for _, path := range []string{"/junk", "/nul", "/one-byte", "/members", "/big-junk"} {
		hits.Store(0)
		resp, err := f.Fetch(context.Background(), "http://gz.test"+path)
		if err != nil {
			t.Errorf("%s: %v", path, err)
			continue
		}
		if string(resp.Body) != "<html>page</html>" || resp.Attempts != 1 || hits.Load() != 1 {
			t.Errorf("%s: body %q, %d attempts, %d requests", path, resp.Body, resp.Attempts, hits.Load())
		}
	}
	for _, path := range []string{"/bad-member", "/truncated"} {
		if _, err := f.Fetch(context.Background(), "http://gz.test"+path); err == nil {
			t.Errorf("%s: no error for a corrupt gzip body", path)
		}
	}

	// The limits still hold with junk after the members.
	var member bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&member, gzip.BestCompression)
	zw.Write(make([]byte, 1<<20))
	zw.Close()
	bodies["/bomb"] = append(bytes.Repeat(member.Bytes(), 8), "junk"...)
	bodies["/large"] = append(gzipped(strings.Repeat("x", 3000)), "junk"...)
	if _, err := f.Fetch(context.Background(), "http://gz.test/bomb"); !errors.Is(err, ErrDecompressionBomb) {
		t.Errorf("bomb with trailing junk: err %v, want ErrDecompressionBomb", err)
	}
	small := newTestFetcher(t, web, func(c *Config) { c.MaxBodyBytes = 1000 })
	if resp, err := small.Fetch(context.Background(), "http://gz.test/large"); err != nil || !resp.Truncated || len(resp.Body) != 1000 {
		t.Errorf("over the body limit with trailing junk: %v %+v", err, resp)
	}
	failing := newTestFetcher(t, web, func(c *Config) { c.MaxBodyBytes = 1000; c.OnTooLarge = Fail })
	if _, err := failing.Fetch(context.Background(), "http://gz.test/large"); !errors.Is(err, ErrBodyTooLarge) {
		t.Errorf("over the body limit with trailing junk: err %v, want ErrBodyTooLarge", err)
	}
}

// TestFetchGzipTrailingGarbageKeepsConnection: a little junk after the gzip
// body is read past, so the kept-alive connection can carry the next
// request.
func TestFetchGzipTrailingGarbageKeepsConnection(t *testing.T) {
	var conns atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Encoding", "gzip")
		w.Write(append(gzipped("<html>page</html>"), "junk"...))
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	f := newTestFetcher(t, nil, nil)
	for range 3 {
		if _, err := f.Fetch(context.Background(), srv.URL+"/"); err != nil {
			t.Fatal(err)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("%d connections for 3 fetches; want the first one kept alive", n)
	}
}
