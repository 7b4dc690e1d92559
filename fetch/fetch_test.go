package fetch

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/zstd"
)

func TestNewRequiresUserAgent(t *testing.T) {
	for _, ua := range []string{"", "   ", "bot\r\nX-Evil: 1"} {
		if _, err := New(Config{UserAgent: ua}); !errors.Is(err, ErrNoUserAgent) {
			t.Errorf("New(UserAgent %q) = %v, want ErrNoUserAgent", ua, err)
		}
	}
}

func TestFetchBasic(t *testing.T) {
	var gotUA, gotAE atomic.Value
	web := newVirtualWeb(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotUA.Store(r.UserAgent())
		gotAE.Store(r.Header.Get("Accept-Encoding"))
		w.Header().Set("Content-Type", "text/html; charset=ISO-8859-1")
		fmt.Fprintf(w, "<html>%s %s</html>", r.Host, r.URL.Path)
	}))
	f := newTestFetcher(t, web, nil)
	resp, err := f.Fetch(context.Background(), "http://Site.TEST/page")
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || string(resp.Body) != "<html>Site.TEST /page</html>" {
		t.Fatalf("got %d %q", resp.StatusCode, resp.Body)
	}
	if resp.ContentType != "text/html" || resp.Charset != "iso-8859-1" || resp.Sniffed {
		t.Errorf("content type %q charset %q sniffed %v", resp.ContentType, resp.Charset, resp.Sniffed)
	}
	if gotUA.Load() != "crawlkit-test/1.0 (+https://example.invalid/bot)" {
		t.Errorf("User-Agent sent = %q", gotUA.Load())
	}
	if gotAE.Load() != acceptEncoding {
		t.Errorf("Accept-Encoding sent = %q", gotAE.Load())
	}
	if resp.FinalURL.String() != "http://Site.TEST/page" || resp.Attempts != 1 || resp.WireBytes != int64(len(resp.Body)) {
		t.Errorf("final %v attempts %d wire %d", resp.FinalURL, resp.Attempts, resp.WireBytes)
	}
	if resp.Timing.Total <= 0 || resp.Timing.FirstByte <= 0 || resp.Timing.Connect <= 0 {
		t.Errorf("timing not filled: %+v", resp.Timing)
	}
	// Politeness is keyed by the normalized host.
	if f.Politeness().Len() != 1 || f.Politeness().ReadyAt("site.test", time.Time{}).IsZero() {
		t.Errorf("politeness did not record site.test")
	}
	resp, err = f.Fetch(context.Background(), "http://Site.TEST/again")
	if err != nil || !resp.Timing.Reused {
		t.Errorf("second fetch err %v reused %v; want a kept-alive connection", err, resp != nil && resp.Timing.Reused)
	}
	if _, err := f.Fetch(context.Background(), "ftp://site.test/"); !errors.Is(err, ErrUnsupportedScheme) {
		t.Errorf("ftp: %v", err)
	}
}

func TestFetchDecoding(t *testing.T) {
	page := bytes.Repeat([]byte("<p>crawlkit decodes this page</p>\n"), 200)
	encode := map[string]func(io.Writer) io.WriteCloser{
		"gzip":    func(w io.Writer) io.WriteCloser { return gzip.NewWriter(w) },
		"deflate": func(w io.Writer) io.WriteCloser { return zlib.NewWriter(w) },
		"raw-deflate": func(w io.Writer) io.WriteCloser {
			fw, _ := flate.NewWriter(w, flate.DefaultCompression)
			return fw
		},
		"br": func(w io.Writer) io.WriteCloser { return brotli.NewWriter(w) },
		"zstd": func(w io.Writer) io.WriteCloser {
			zw, _ := zstd.NewWriter(w)
			return zw
		},
	}
	web := newVirtualWeb(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := strings.TrimPrefix(r.URL.Path, "/")
		coding := name
		if name == "raw-deflate" {
			coding = "deflate"
		}
		w.Header().Set("Content-Encoding", coding)
		w.Header().Set("Content-Type", "text/html")
		enc := encode[name](w)
		enc.Write(page)
		enc.Close()
	}))
	f := newTestFetcher(t, web, nil)
	for name := range encode {
		resp, err := f.Fetch(context.Background(), "http://enc.test/"+name)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if !bytes.Equal(resp.Body, page) {
			t.Errorf("%s: body differs (%d bytes)", name, len(resp.Body))
		}
		if resp.WireBytes >= int64(len(page)) || resp.WireBytes == 0 {
			t.Errorf("%s: wire bytes %d vs decoded %d", name, resp.WireBytes, len(page))
		}
	}
}

func TestFetchUnsupportedEncoding(t *testing.T) {
	web := newVirtualWeb(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Encoding", "compress")
		w.Write([]byte("x"))
	}))
	f := newTestFetcher(t, web, nil)
	if _, err := f.Fetch(context.Background(), "http://a.test/"); !errors.Is(err, ErrUnsupportedEncoding) {
		t.Fatalf("err = %v, want ErrUnsupportedEncoding", err)
	}
}

func TestFetchBodyLimit(t *testing.T) {
	body := bytes.Repeat([]byte("a"), 5000)
	web := newVirtualWeb(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/gzip" {
			w.Header().Set("Content-Encoding", "gzip")
			zw := gzip.NewWriter(w)
			zw.Write(body)
			zw.Close()
			return
		}
		w.Write(body)
	}))
	for _, path := range []string{"/plain", "/gzip"} {
		f := newTestFetcher(t, web, func(c *Config) { c.MaxBodyBytes = 1000 })
		resp, err := f.Fetch(context.Background(), "http://a.test"+path)
		if err != nil {
			t.Fatal(err)
		}
		if !resp.Truncated || len(resp.Body) != 1000 {
			t.Errorf("%s truncate mode: truncated %v, %d bytes", path, resp.Truncated, len(resp.Body))
		}
		f = newTestFetcher(t, web, func(c *Config) { c.MaxBodyBytes = 1000; c.OnTooLarge = Fail })
		if _, err := f.Fetch(context.Background(), "http://a.test"+path); !errors.Is(err, ErrBodyTooLarge) {
			t.Errorf("%s fail mode: err = %v, want ErrBodyTooLarge", path, err)
		}
		f = newTestFetcher(t, web, func(c *Config) { c.MaxBodyBytes = 5000; c.OnTooLarge = Fail })
		if resp, err := f.Fetch(context.Background(), "http://a.test"+path); err != nil || len(resp.Body) != 5000 || resp.Truncated {
			t.Errorf("%s exactly at the limit: %v", path, err)
		}
	}
}

// bombServer serves a gzip bomb decoding to size zero bytes: one gzip
// member holding 1 MiB of zeros (about 1 KiB compressed), repeated. Readers
// must accept concatenated members (RFC 1952 §2.2), so this is a valid body
// with an expansion of about 1000:1, built without compressing size bytes.
func bombServer(t *testing.T, size int64) *virtualWeb {
	var member bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&member, gzip.BestCompression)
	zw.Write(make([]byte, 1<<20))
	zw.Close()
	bomb := bytes.Repeat(member.Bytes(), int(size>>20))
	return newVirtualWeb(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Encoding", "gzip")
		w.Header().Set("Content-Type", "text/html")
		w.Write(bomb)
	}))
}

func TestFetchDecompressionBombBoundedMemory(t *testing.T) {
	const bombSize = 1 << 30 // 1 GiB decoded from ~1 MiB
	web := bombServer(t, bombSize)
	f := newTestFetcher(t, web, nil) // defaults: 10 MiB body, 100× expansion after 1 MiB
	fetchOnce := func() error {
		_, err := f.Fetch(context.Background(), "http://bomb.test/")
		return err
	}
	if err := fetchOnce(); !errors.Is(err, ErrDecompressionBomb) {
		t.Fatalf("err = %v, want ErrDecompressionBomb", err)
	}
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fetchOnce()
	runtime.ReadMemStats(&after)
	allocated := after.TotalAlloc - before.TotalAlloc
	t.Logf("allocated %d KiB to refuse a %d MiB bomb", allocated>>10, bombSize>>20)
	// The expansion check fires after ExpansionFloor (1 MiB) decoded bytes;
	// the body buffer doubles up to about 2 MiB. Allow slack for the HTTP
	// machinery and the gzip reader, but nothing near the bomb's size.
	if allocated > 8<<20 {
		t.Fatalf("allocated %d MiB refusing a bomb, want < 8 MiB", allocated>>20)
	}
}

func TestFetchBombWithoutRatioStopsAtCap(t *testing.T) {
	web := bombServer(t, 64<<20)
	f := newTestFetcher(t, web, func(c *Config) { c.MaxExpansion = -1; c.MaxBodyBytes = 2 << 20; c.OnTooLarge = Fail })
	if _, err := f.Fetch(context.Background(), "http://bomb.test/"); !errors.Is(err, ErrBodyTooLarge) {
		t.Fatalf("err = %v, want ErrBodyTooLarge at the decoded cap", err)
	}
}

func TestFetchRedirects(t *testing.T) {
	web := newVirtualWeb(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/start":
			http.Redirect(w, r, "http://other.test/mid", http.StatusMovedPermanently)
		case r.URL.Path == "/mid":
			http.Redirect(w, r, "/end", http.StatusFound)
		case r.URL.Path == "/end":
			fmt.Fprint(w, "end at "+r.Host)
		case r.URL.Path == "/loop":
			http.Redirect(w, r, "/loop", http.StatusFound)
		case r.URL.Path == "/private":
			http.Redirect(w, r, "/secret", http.StatusFound)
		case r.URL.Path == "/empty-gzip":
			w.Header().Set("Content-Encoding", "gzip")
			w.WriteHeader(http.StatusNoContent)
		case r.URL.Path == "/backslash":
			w.Header().Set("Location", `\\other.test\end`)
			w.WriteHeader(http.StatusFound)
		case r.URL.Path == "/frag":
			http.Redirect(w, r, "/end#there", http.StatusFound)
		case r.URL.Path == "/to-ftp":
			http.Redirect(w, r, "ftp://a.test/", http.StatusFound)
		}
	}))
	var checked []string
	f := newTestFetcher(t, web, func(c *Config) {
		c.Check = func(_ context.Context, u *url.URL) error {
			checked = append(checked, u.String())
			if u.Path == "/secret" {
				return errors.New("robots.txt disallows /secret")
			}
			return nil
		}
	})
	resp, err := f.Fetch(context.Background(), "http://a.test/start")
	if err != nil {
		t.Fatal(err)
	}
	if string(resp.Body) != "end at other.test" || resp.FinalURL.String() != "http://other.test/end" {
		t.Fatalf("body %q final %v", resp.Body, resp.FinalURL)
	}
	if len(resp.Redirects) != 2 || resp.Redirects[0].Status != 301 || resp.Redirects[1].URL.String() != "http://other.test/mid" {
		t.Fatalf("redirect chain %+v", resp.Redirects)
	}
	if want := "http://a.test/start http://other.test/mid http://other.test/end"; strings.Join(checked, " ") != want {
		t.Fatalf("checked %v, want %s", checked, want)
	}
	if _, err := f.Fetch(context.Background(), "http://a.test/loop"); !errors.Is(err, ErrTooManyRedirects) {
		t.Fatalf("loop: %v, want ErrTooManyRedirects", err)
	}
	_, err = f.Fetch(context.Background(), "http://a.test/private")
	if !errors.Is(err, ErrDisallowed) || !strings.Contains(err.Error(), "robots.txt disallows") {
		t.Fatalf("disallowed hop: %v", err)
	}
	if resp, err := f.Fetch(context.Background(), "http://a.test/backslash"); err != nil || resp.FinalURL.String() != "http://other.test/end" {
		t.Fatalf("backslashed Location: %v %v, want it resolved as browsers do", err, resp.FinalURL)
	}
	if resp, err := f.Fetch(context.Background(), "http://a.test/frag#here"); err != nil || resp.FinalURL.Fragment != "there" {
		t.Fatalf("fragment: %v %v, want the Location's own fragment", err, resp.FinalURL)
	}
	if resp, err := f.Fetch(context.Background(), "http://a.test/mid#here"); err != nil || resp.FinalURL.Fragment != "here" {
		t.Fatalf("fragment: %v %v, want the original fragment inherited", err, resp.FinalURL)
	}
	if resp, err := f.Fetch(context.Background(), "http://a.test/empty-gzip"); err != nil || resp.StatusCode != 204 || len(resp.Body) != 0 {
		t.Fatalf("empty gzip body: %v %+v", err, resp)
	}
	if _, err := f.Fetch(context.Background(), "http://a.test/to-ftp"); !errors.Is(err, ErrUnsupportedScheme) {
		t.Fatalf("redirect to ftp: %v", err)
	}

	nf := newTestFetcher(t, web, func(c *Config) { c.MaxRedirects = -1 })
	resp, err = nf.Fetch(context.Background(), "http://a.test/start")
	if err != nil || resp.StatusCode != 301 || len(resp.Redirects) != 0 {
		t.Fatalf("MaxRedirects -1: %v %+v", err, resp)
	}
}

func TestFetchHeadersTooLarge(t *testing.T) {
	web := newVirtualWeb(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for i := range 100 {
			w.Header().Add("X-Filler", fmt.Sprintf("%d-%s", i, strings.Repeat("x", 1000)))
		}
	}))
	f := newTestFetcher(t, web, func(c *Config) { c.MaxHeaderBytes = 16 << 10; c.MaxRetries = -1 })
	if _, err := f.Fetch(context.Background(), "http://a.test/"); !errors.Is(err, ErrHeadersTooLarge) {
		t.Fatalf("err = %v, want ErrHeadersTooLarge", err)
	}
}

func TestFetchSlowDrip(t *testing.T) {
	stop := make(chan struct{})
	defer close(stop)
	web := newVirtualWeb(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "100000")
		w.WriteHeader(200)
		for {
			w.Write([]byte("x"))
			w.(http.Flusher).Flush()
			select {
			case <-stop:
				return
			case <-r.Context().Done():
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}))
	f := newTestFetcher(t, web, func(c *Config) {
		c.MinTransferRate = 1000
		c.TransferRateWindow = 100 * time.Millisecond
		c.Timeout = time.Minute
		c.MaxRetries = -1
	})
	_, err := f.Fetch(context.Background(), "http://drip.test/")
	if !errors.Is(err, ErrTimeout) || !errors.Is(err, errSlowTransfer) {
		t.Fatalf("err = %v, want ErrTimeout from the transfer-rate floor", err)
	}
}

func TestFetchTotalTimeout(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	web := newVirtualWeb(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	f := newTestFetcher(t, web, func(c *Config) { c.Timeout = 50 * time.Millisecond; c.MaxRetries = -1 })
	_, err := f.Fetch(context.Background(), "http://hang.test/")
	if !errors.Is(err, ErrTimeout) || !errors.Is(err, errTotalTimeout) {
		t.Fatalf("err = %v, want ErrTimeout (total)", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := f.Fetch(ctx, "http://hang.test/"); !errors.Is(err, context.Canceled) || errors.Is(err, ErrTimeout) {
		t.Fatalf("cancelled: %v, want context.Canceled", err)
	}
}

func TestFetchConditionalGET(t *testing.T) {
	const etag = `"v1"`
	const lastMod = "Mon, 02 Jan 2006 15:04:05 GMT"
	web := newVirtualWeb(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("If-None-Match") == etag && r.Header.Get("If-Modified-Since") == lastMod {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("ETag", etag)
		w.Header().Set("Last-Modified", lastMod)
		fmt.Fprint(w, "content")
	}))
	f := newTestFetcher(t, web, nil)
	first, err := f.Fetch(context.Background(), "http://a.test/doc")
	if err != nil || first.NotModified {
		t.Fatal(err)
	}
	v := first.Validators()
	if v.ETag != etag || v.LastModified != lastMod {
		t.Fatalf("validators %+v", v)
	}
	again, err := f.Do(context.Background(), &Request{URL: "http://a.test/doc", Validators: v})
	if !errors.Is(err, ErrNotModified) || again == nil || !again.NotModified || again.StatusCode != 304 {
		t.Fatalf("conditional refetch: %v %+v", err, again)
	}
}

func TestFetchRetries(t *testing.T) {
	var hits atomic.Int32
	web := newVirtualWeb(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hits.Add(1) < 3 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		fmt.Fprint(w, "ok")
	}))
	clock := newFakeClock()
	f := newTestFetcher(t, web, func(c *Config) {
		c.Clock = clock
		c.PolitenessConfig = PolitenessConfig{Delay: 2 * time.Second, DelayFactor: -1}
	})
	resp, err := f.Fetch(context.Background(), "http://flaky.test/")
	if err != nil || string(resp.Body) != "ok" || resp.Attempts != 3 {
		t.Fatalf("err %v resp %+v", err, resp)
	}
	// Retry waits: 1 s × [0.5,1) then 2 s × [0.5,1) with Rand 0.5 → 0.75 s
	// and 1.5 s, each followed by the rest of the 2 s politeness delay.
	if w := clock.Waited(); w != 4*time.Second {
		t.Fatalf("waited %v on the clock, want 4 s (politeness delay bounds each retry)", w)
	}
	// Interim failures did not trigger the error backoff.
	if n := f.Politeness().Failures("flaky.test"); n != 0 {
		t.Fatalf("failures = %d after a successful retry", n)
	}

	// Retries exhausted: the last response is returned and the failure
	// backoff recorded.
	hits.Store(-10)
	resp, err = f.Fetch(context.Background(), "http://flaky.test/")
	if err != nil || resp.StatusCode != 503 || resp.Attempts != 3 {
		t.Fatalf("exhausted: %v %+v", err, resp)
	}
	if n := f.Politeness().Failures("flaky.test"); n != 1 {
		t.Fatalf("failures = %d after exhausted retries, want 1", n)
	}
}

func TestFetchRetryAfterBlocksHostOnInjectedClock(t *testing.T) {
	var limited atomic.Bool
	limited.Store(true)
	var aHits atomic.Int32
	web := newVirtualWeb(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Host == "a.test" {
			aHits.Add(1)
			if limited.Load() {
				w.Header().Set("Retry-After", "120")
				w.WriteHeader(http.StatusTooManyRequests)
				return
			}
		}
		fmt.Fprint(w, "ok")
	}))
	clock := newFakeClock()
	f := newTestFetcher(t, web, func(c *Config) {
		c.Clock = clock
		c.PolitenessConfig = PolitenessConfig{DelayFactor: -1}
	})
	ctx := context.Background()
	resp, err := f.Fetch(ctx, "http://a.test/")
	if err != nil || resp.StatusCode != 429 || resp.Attempts != 1 {
		t.Fatalf("first: %v %+v", err, resp)
	}
	start := clock.Now()
	if got := f.Politeness().ReadyAt("a.test", start); got.Sub(start) != 120*time.Second {
		t.Fatalf("a.test ready after %v, want 120 s", got.Sub(start))
	}
	limited.Store(false)
	_, err = f.Fetch(ctx, "http://a.test/")
	var hb *HostBlockedError
	if !errors.As(err, &hb) || !errors.Is(err, ErrHostBlocked) || hb.Until.Sub(start) != 120*time.Second {
		t.Fatalf("blocked host: %v", err)
	}
	if aHits.Load() != 1 {
		t.Fatalf("a.test contacted %d times while blocked", aHits.Load())
	}
	// Other hosts proceed.
	for i := range 5 {
		if _, err := f.Fetch(ctx, "http://b.test/"); err != nil {
			t.Fatalf("b.test fetch %d: %v", i, err)
		}
	}
	if elapsed := clock.Now().Sub(start); elapsed >= 120*time.Second {
		t.Fatalf("b.test fetches took %v of clock time", elapsed)
	}
	clock.Advance(120*time.Second - clock.Now().Sub(start))
	if resp, err := f.Fetch(ctx, "http://a.test/"); err != nil || resp.StatusCode != 200 {
		t.Fatalf("after 120 s: %v", err)
	}
}

func TestFetchGuardRefusesResolvedInternalAddresses(t *testing.T) {
	r := newFakeResolver(
		"loopback.test", "127.0.0.1",
		"loopback6.test", "::1",
		"private.test", "10.1.2.3",
		"metadata.test", "169.254.169.254",
		"mapped.test", "::ffff:10.0.0.1",
	)
	f := newTestFetcher(t, nil, func(c *Config) {
		c.AllowCIDRs = nil
		c.DNSConfig = DNSConfig{Resolver: r}
	})
	f.dialer.dialIP = func(_ context.Context, _, addr string) (net.Conn, error) {
		t.Errorf("dialled %s although the guard should refuse it", addr)
		return nil, errors.New("test refuses to dial")
	}
	for _, host := range []string{"loopback.test", "loopback6.test", "private.test", "metadata.test", "mapped.test", "169.254.169.254", "[::1]", "127.0.0.1:8080"} {
		_, err := f.Fetch(context.Background(), "http://"+host+"/")
		var be *BlockedAddressError
		if !errors.As(err, &be) || !errors.Is(err, ErrBlockedAddress) {
			t.Errorf("%s: err = %v, want ErrBlockedAddress", host, err)
		}
	}
}

func TestFetchGuardRefusesRedirectToInternal(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://"+r.URL.Query().Get("to")+"/latest/meta-data/", http.StatusFound)
	}))
	defer srv.Close()
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	r := newFakeResolver(
		"public.test", "127.0.0.1", // stands in for a public server; allowed below
		"internal.test", "10.0.0.5",
		"metadata.test", "169.254.169.254",
		"loop6.test", "::1",
	)
	f := newTestFetcher(t, nil, func(c *Config) {
		c.AllowCIDRs = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
		c.DNSConfig = DNSConfig{Resolver: r}
	})
	f.dialer.dialIP = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if !strings.HasPrefix(addr, "127.0.0.1:") {
			t.Errorf("dialled %s although the guard should refuse it", addr)
			return nil, errors.New("test refuses to dial")
		}
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}
	for _, to := range []string{"internal.test", "metadata.test", "loop6.test", "169.254.169.254", "127.0.0.2"} {
		_, err := f.Fetch(context.Background(), fmt.Sprintf("http://public.test:%d/?to=%s", port, to))
		if !errors.Is(err, ErrBlockedAddress) {
			t.Errorf("redirect to %s: err = %v, want ErrBlockedAddress", to, err)
		}
	}
	// The allow-list lets the loopback server itself through.
	srv2 := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "hi") }))
	defer srv2.Close()
	if resp, err := f.Fetch(context.Background(), srv2.URL); err != nil || string(resp.Body) != "hi" {
		t.Fatalf("allow-listed loopback: %v", err)
	}
}

func TestFetchGuardChecksCustomDialerConnection(t *testing.T) {
	web := newVirtualWeb(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Error("request reached the server although the guard should refuse the connection")
	}))
	// The custom dialer reaches 127.0.0.1 whatever the name; without an
	// allow-list the connection is refused before the request is written.
	f := newTestFetcher(t, web, func(c *Config) { c.AllowCIDRs = nil })
	if _, err := f.Fetch(context.Background(), "http://looks-public.test/"); !errors.Is(err, ErrBlockedAddress) {
		t.Fatalf("err = %v, want ErrBlockedAddress", err)
	}
}

func TestFetchGuardOpaqueRoundTripper(t *testing.T) {
	var served atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { served.Add(1) }))
	defer srv.Close()
	// A RoundTripper the Fetcher cannot clone: the guard falls back to the
	// connection httptrace reports.
	opaque := struct{ http.RoundTripper }{srv.Client().Transport}
	f := newTestFetcher(t, nil, func(c *Config) { c.Transport = opaque; c.AllowCIDRs = nil; c.MaxRetries = -1 })
	if _, err := f.Fetch(context.Background(), srv.URL); !errors.Is(err, ErrBlockedAddress) {
		t.Fatalf("err = %v, want ErrBlockedAddress", err)
	}
	if served.Load() != 0 {
		t.Fatalf("server saw %d requests", served.Load())
	}
}

func TestFetchSniffsLyingContentType(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01")
	web := newVirtualWeb(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write(png)
	}))
	f := newTestFetcher(t, web, nil)
	resp, err := f.Fetch(context.Background(), "http://a.test/img")
	if err != nil || resp.ContentType != "image/png" || !resp.Sniffed || resp.DeclaredType != "text/html" {
		t.Fatalf("%v: type %q sniffed %v declared %q", err, resp.ContentType, resp.Sniffed, resp.DeclaredType)
	}
}

func TestFetchHTTP2OverTLS(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, r.Proto)
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()
	// The test server's client transport trusts its certificate; the
	// Fetcher clones it and installs its own dialler.
	f := newTestFetcher(t, nil, func(c *Config) { c.Client = srv.Client() })
	resp, err := f.Fetch(context.Background(), srv.URL+"/")
	if err != nil {
		t.Fatal(err)
	}
	if resp.Proto != "HTTP/2.0" || string(resp.Body) != "HTTP/2.0" {
		t.Fatalf("proto %q body %q, want HTTP/2.0", resp.Proto, resp.Body)
	}
	if resp.Timing.TLS <= 0 || resp.Timing.Connect <= 0 || resp.Timing.Reused {
		t.Errorf("timing %+v: want TLS and connect times on a new connection", resp.Timing)
	}
	resp, err = f.Fetch(context.Background(), srv.URL+"/")
	if err != nil || !resp.Timing.Reused || resp.Timing.TLS != 0 {
		t.Errorf("second fetch: %v, timing %+v; want the HTTP/2 connection reused", err, resp.Timing)
	}
}

func TestFetchRetriesTransientNetworkError(t *testing.T) {
	var hits atomic.Int32
	web := newVirtualWeb(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hits.Add(1) == 1 {
			// Drop the connection without an answer.
			conn, _, err := http.NewResponseController(w).Hijack()
			if err == nil {
				conn.Close()
			}
			return
		}
		fmt.Fprint(w, "ok")
	}))
	f := newTestFetcher(t, web, nil)
	resp, err := f.Fetch(context.Background(), "http://flaky.test/")
	if err != nil || string(resp.Body) != "ok" || resp.Attempts != 2 {
		t.Fatalf("err %v resp %+v; want success on the second attempt", err, resp)
	}
}

func TestFetchDNSPrefetchAndCache(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "ok") }))
	defer srv.Close()
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	r := newFakeResolver("a.test", "127.0.0.1")
	f := newTestFetcher(t, nil, func(c *Config) { c.DNSConfig = DNSConfig{Resolver: r} })
	f.DNS().Prefetch("a.test")
	for i := range 3 {
		if _, err := f.Fetch(context.Background(), fmt.Sprintf("http://a.test:%d/%d", port, i)); err != nil {
			t.Fatal(err)
		}
		f.client.CloseIdleConnections() // force a dial, hence a lookup, each time
	}
	if got := r.Calls("a.test"); got != 1 {
		t.Fatalf("resolver calls = %d, want 1 (prefetched, then cached)", got)
	}
	if _, err := f.Fetch(context.Background(), fmt.Sprintf("http://nowhere.test:%d/", port)); err == nil || errors.Is(err, ErrBlockedAddress) {
		t.Fatalf("unresolvable name: err = %v", err)
	}
}
