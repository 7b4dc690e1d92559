package crawltest_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptrace"
	"strings"
	"testing"
	"time"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/zstd"

	"github.com/crawlkit/crawlkit/crawltest"
)

func newHostileWeb(t *testing.T, clock *fakeClock) *crawltest.Web {
	t.Helper()
	web, err := crawltest.NewWeb(crawltest.Config{
		Hosts: 1, PagesPerHost: 2, NoTraps: true,
		DripInterval: time.Millisecond, BombSize: 8 << 20, EndlessSize: 64 << 20,
		Now: clock.Now,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(web.Close)
	return web
}

// rawClient does not decompress or follow redirects.
func rawClient(web *crawltest.Web) *http.Client {
	tr := web.Transport().Clone()
	tr.DisableCompression = true
	return &http.Client{
		Transport:     tr,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

func TestHostileBombs(t *testing.T) {
	web := newHostileWeb(t, newFakeClock())
	client := rawClient(web)
	for _, c := range []struct {
		kind, encoding string
		decode         func(io.Reader) (io.Reader, error)
	}{
		{crawltest.HostileGzipBomb, "gzip", func(r io.Reader) (io.Reader, error) { return gzip.NewReader(r) }},
		{crawltest.HostileZstdBomb, "zstd", func(r io.Reader) (io.Reader, error) { return zstd.NewReader(r) }},
		{crawltest.HostileBrotliBomb, "br", func(r io.Reader) (io.Reader, error) { return brotli.NewReader(r), nil }},
	} {
		resp, err := client.Get(web.HostileURL(c.kind))
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatalf("%s: %v", c.kind, err)
		}
		if got := resp.Header.Get("Content-Encoding"); got != c.encoding {
			t.Errorf("%s: Content-Encoding %q", c.kind, got)
		}
		d, err := c.decode(bytes.NewReader(body))
		if err != nil {
			t.Fatalf("%s: %v", c.kind, err)
		}
		n, err := io.Copy(io.Discard, d)
		if err != nil {
			t.Fatalf("%s: decoding: %v", c.kind, err)
		}
		if n != 8<<20 || int64(len(body))*100 > n {
			t.Errorf("%s: %d compressed bytes decode to %d, want 8 MiB at a ratio over 100", c.kind, len(body), n)
		}
	}
}

func TestHostileEndpoints(t *testing.T) {
	clock := newFakeClock()
	web := newHostileWeb(t, clock)
	client := rawClient(web)
	get := func(kind string) *http.Response {
		t.Helper()
		resp, err := client.Get(web.HostileURL(kind))
		if err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}

	// The redirect loop never ends; the default client gives up.
	_, err := web.Client().Get(web.HostileURL(crawltest.HostileRedirectLoop))
	if err == nil || !strings.Contains(err.Error(), "stopped after 10 redirects") {
		t.Errorf("redirect loop: %v", err)
	}
	// Redirects to private addresses are only headers; following them
	// with the web's client is refused before dialing.
	for kind, loc := range map[string]string{
		crawltest.HostilePrivateRedirect:  "http://10.0.0.1/admin",
		crawltest.HostileMetadataRedirect: "http://169.254.169.254/latest/meta-data/",
	} {
		if got := get(kind).Header.Get("Location"); got != loc {
			t.Errorf("%s: Location %q", kind, got)
		}
		if _, err := web.Client().Get(web.HostileURL(kind)); !errors.Is(err, crawltest.ErrUnknownHost) {
			t.Errorf("%s followed: %v, want ErrUnknownHost", kind, err)
		}
	}

	resp := get(crawltest.HostileWrongLength)
	if b, err := io.ReadAll(resp.Body); !errors.Is(err, io.ErrUnexpectedEOF) || resp.ContentLength != 100000 || len(b) != 1000 {
		t.Errorf("wrong-length: Content-Length %d, read %d bytes, error %v", resp.ContentLength, len(b), err)
	}

	resp = get(crawltest.HostileBadCharset)
	if ct := resp.Header.Get("Content-Type"); !strings.Contains(ct, "x-no-such-charset") {
		t.Errorf("bad-charset: Content-Type %q", ct)
	}

	resp = get(crawltest.HostileBinary)
	body, _ := io.ReadAll(resp.Body)
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") || !bytes.HasPrefix(body, []byte("\x89PNG")) || len(body) != 64<<10 {
		t.Errorf("binary-html: %q, %d bytes", resp.Header.Get("Content-Type"), len(body))
	}

	resp = get(crawltest.HostileHugeHeaders)
	size := 0
	for k, vs := range resp.Header {
		for _, v := range vs {
			size += len(k) + len(v)
		}
	}
	if size < 4<<20 {
		t.Errorf("huge-headers: %d bytes of headers", size)
	}

	if resp = get(crawltest.HostileTooManyRequests); resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "120" {
		t.Errorf("too-many-requests: %d %q", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	resp = get(crawltest.HostileUnavailable)
	want := clock.Now().Add(time.Hour).Format(http.TimeFormat)
	if resp.StatusCode != 503 || resp.Header.Get("Retry-After") != want {
		t.Errorf("unavailable: %d %q, want Retry-After %q", resp.StatusCode, resp.Header.Get("Retry-After"), want)
	}

	if resp = get("no-such-kind"); resp.StatusCode != 404 {
		t.Errorf("unknown kind: %d", resp.StatusCode)
	}
	rep := web.Report()
	if rep.PerURL[web.HostileURL(crawltest.HostileBinary)] != 1 || rep.RobotsViolations != 0 || rep.BeforeRobots != 0 {
		t.Errorf("hostile accounting: %+v", rep)
	}
}

// The endless, slow and stalling endpoints end when the client goes away,
// and Close ends them in any case.
func TestHostileEndpointsAreBounded(t *testing.T) {
	web := newHostileWeb(t, newFakeClock())
	client := rawClient(web)

	resp, err := client.Get(web.HostileURL(crawltest.HostileEndless))
	if err != nil {
		t.Fatal(err)
	}
	n, err := io.CopyN(io.Discard, resp.Body, 4<<20)
	if n != 4<<20 || err != nil {
		t.Fatalf("endless: read %d bytes: %v", n, err)
	}
	resp.Body.Close()

	resp, err = client.Get(web.HostileURL(crawltest.HostileSlowDrip))
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 8)
	if n, err := io.ReadFull(resp.Body, buf); err != nil || string(buf[:n]) != "<!DOCTYP" {
		t.Fatalf("slow-drip: %q, %v", buf[:n], err)
	}
	resp.Body.Close()

	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, web.HostileURL(crawltest.HostileStall), nil)
	errc := make(chan error, 1)
	go func() {
		resp, err := client.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		errc <- err
	}()
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("stall: %v", err)
	}

	// A slow drip still being read when the web closes: Close returns
	// (it waits for every handler), and the reader sees the end.
	resp, err = client.Get(web.HostileURL(crawltest.HostileSlowDrip))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	web.Close()
	if _, err := io.ReadAll(resp.Body); err == nil {
		t.Error("slow-drip: body ended cleanly after Close")
	}
}

func TestDialContextRefusesOtherHosts(t *testing.T) {
	web, err := crawltest.NewWeb(crawltest.Config{Hosts: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer web.Close()
	for _, addr := range []string{"10.0.0.1:80", "127.0.0.1:80", "example.com:80", "h0003.test:80", "h3.test:80", "h0001.test.evil:80", "test:80"} {
		if _, err := web.DialContext(context.Background(), "tcp", addr); !errors.Is(err, crawltest.ErrUnknownHost) {
			t.Errorf("DialContext(%s) = %v, want ErrUnknownHost", addr, err)
		}
	}
	for _, addr := range []string{"h0002.test:80", "H0000.TEST:80", "h0001.test.:80", "hostile.test:80", "h0000.test"} {
		conn, err := web.DialContext(context.Background(), "tcp", addr)
		if err != nil {
			t.Errorf("DialContext(%s): %v", addr, err)
			continue
		}
		if got := conn.RemoteAddr().String(); got != web.Addr() || !strings.HasPrefix(got, "127.0.0.1:") {
			t.Errorf("DialContext(%s) reached %s", addr, got)
		}
		conn.Close()
	}
}

// Responses that Close (or a time limit) cuts short end with a broken
// connection, never with a clean, empty 200 that a client could take for
// the whole answer: the stalling endpoint, and pages and JavaScript-site
// pages held by Config.Latency.
func TestCloseCutsHeldResponses(t *testing.T) {
	for i := 0; i < 10; i++ {
		web, err := crawltest.NewWeb(crawltest.Config{Hosts: 1, PagesPerHost: 3, JSPages: 3, Latency: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		urls := []string{web.HostileURL(crawltest.HostileStall), "http://h0000.test/", "http://h0000.test/index.html", "http://app.test/"}
		type result struct {
			url    string
			status int
			n      int
			err    error
		}
		results := make(chan result, len(urls))
		arrived := make(chan struct{}, len(urls))
		client := web.Client()
		for _, u := range urls {
			go func() {
				trace := &httptrace.ClientTrace{WroteRequest: func(httptrace.WroteRequestInfo) { arrived <- struct{}{} }}
				req, _ := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace), http.MethodGet, u, nil)
				resp, err := client.Do(req)
				if err != nil {
					results <- result{url: u, err: err}
					return
				}
				body, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				results <- result{u, resp.StatusCode, len(body), err}
			}()
		}
		for range urls {
			<-arrived
		}
		time.Sleep(20 * time.Millisecond) // let the handlers start waiting
		web.Close()
		for range urls {
			if r := <-results; r.err == nil {
				t.Fatalf("%s: a clean %d response of %d bytes after Close", r.url, r.status, r.n)
			}
		}
	}
}
