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
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"runtime"
	"strconv"
	"strings"
	"sync"
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
	// Each hop keeps its response's header, for archiving.
	for i, want := range []string{"http://other.test/mid", "/end"} {
		h := resp.Redirects[i]
		if got := h.Header.Get("Location"); got != want || h.Date.IsZero() {
			t.Fatalf("hop %d: Location %q, Date %v; want %q and a date", i, got, h.Date, want)
		}
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
		UseClock(c, clock)
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
		UseClock(c, clock)
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
		"teredo.test", "2001:0:4136:e378:8000:63bf:80ff:fffe", // Teredo client 127.0.0.1
	)
	f := newTestFetcher(t, nil, func(c *Config) {
		c.AllowCIDRs = nil
		c.DNSConfig = DNSConfig{Resolver: r}
	})
	f.dialer.dialIP = func(_ context.Context, _, addr string) (net.Conn, error) {
		t.Errorf("dialled %s although the guard should refuse it", addr)
		return nil, errors.New("test refuses to dial")
	}
	for _, host := range []string{"loopback.test", "loopback6.test", "private.test", "metadata.test", "mapped.test", "teredo.test", "169.254.169.254", "[::1]", "127.0.0.1:8080", "[2001:0:a9fe:a9fe:8000:63bf:f7f7:f7f7]"} {
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

// credentialProbe records, per host and path, the credential headers (and
// one ordinary header) each request carried.
type credentialProbe struct {
	mu   sync.Mutex
	seen map[string]string
}

func (p *credentialProbe) record(r *http.Request) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.seen == nil {
		p.seen = map[string]string{}
	}
	p.seen[r.Host+r.URL.Path] = fmt.Sprintf("auth=%q cookie=%q cookie2=%q proxy-auth=%q trace=%q",
		r.Header.Get("Authorization"), r.Header.Get("Cookie"), r.Header.Get("Cookie2"),
		r.Header.Get("Proxy-Authorization"), r.Header.Get("X-Trace"))
}

func (p *credentialProbe) check(t *testing.T, want map[string]string) {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	for k, w := range want {
		if got, ok := p.seen[k]; !ok || got != w {
			t.Errorf("%s received %s, want %s", k, got, w)
		}
	}
	if len(p.seen) != len(want) {
		t.Errorf("requests %v, want %d", p.seen, len(want))
	}
}

// TestFetchRedirectDropsCredentials follows a chain to a subdomain on
// another port (credentials kept, as net/http's Client keeps them), on to
// another site (dropped) and back to the first host (still dropped: once
// they left, they stay off), and checks what each hop received, from the
// request's headers and from Config.Header.
func TestFetchRedirectDropsCredentials(t *testing.T) {
	var probe credentialProbe
	web := newVirtualWeb(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		probe.record(r)
		switch r.URL.Path {
		case "/start":
			http.Redirect(w, r, "http://www.example.test:8080/sub", http.StatusFound)
		case "/sub":
			http.Redirect(w, r, "http://evil.test/steal", http.StatusFound)
		case "/steal":
			http.Redirect(w, r, "http://example.test/back", http.StatusFound)
		case "/back":
			fmt.Fprint(w, "done")
		}
	}))
	f := newTestFetcher(t, web, func(c *Config) { c.Header = http.Header{"Cookie2": {"from-config"}} })
	h := http.Header{}
	h.Set("Authorization", "Bearer secret")
	h.Set("Cookie", "session=abc")
	h["proxy-authorization"] = []string{"Basic c2VjcmV0"} // not in canonical form
	h.Set("X-Trace", "t1")
	resp, err := f.Do(context.Background(), &Request{URL: "http://Example.TEST/start", Header: h})
	if err != nil || string(resp.Body) != "done" || len(resp.Redirects) != 3 {
		t.Fatalf("err %v, resp %+v", err, resp)
	}
	with := `auth="Bearer secret" cookie="session=abc" cookie2="from-config" proxy-auth="Basic c2VjcmV0" trace="t1"`
	without := `auth="" cookie="" cookie2="" proxy-auth="" trace="t1"`
	probe.check(t, map[string]string{
		"Example.TEST/start":        with,
		"www.example.test:8080/sub": with,
		"evil.test/steal":           without,
		"example.test/back":         without,
	})
	// The caller's header is left as it was.
	if h.Get("Authorization") != "Bearer secret" || h.Get("Cookie") != "session=abc" {
		t.Errorf("request header modified: %v", h)
	}
}

// TestFetchRedirectDropsCredentialsOnDowngrade checks that credentials
// sent over https do not follow a redirect to plain http on the same host,
// while an upgrade from http to https keeps them.
func TestFetchRedirectDropsCredentialsOnDowngrade(t *testing.T) {
	var probe credentialProbe
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		probe.record(r)
		switch r.URL.Path {
		case "/secure":
			http.Redirect(w, r, "http://example.com/plain", http.StatusFound)
		case "/upgrade":
			http.Redirect(w, r, "https://example.com/secure-end", http.StatusFound)
		default:
			fmt.Fprint(w, "end")
		}
	})
	tlsSrv := httptest.NewTLSServer(handler) // its certificate is valid for example.com
	defer tlsSrv.Close()
	plain := httptest.NewServer(handler)
	defer plain.Close()
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		target := plain.Listener.Addr().String()
		if _, port, _ := net.SplitHostPort(addr); port == "443" {
			target = tlsSrv.Listener.Addr().String()
		}
		var d net.Dialer
		return d.DialContext(ctx, network, target)
	}
	f := newTestFetcher(t, nil, func(c *Config) { c.Client = tlsSrv.Client(); c.DialContext = dial })
	h := http.Header{}
	h.Set("Authorization", "Bearer secret")
	h.Set("X-Trace", "t1")
	for _, u := range []string{"https://example.com/secure", "http://example.com/upgrade"} {
		if _, err := f.Do(context.Background(), &Request{URL: u, Header: h}); err != nil {
			t.Fatalf("%s: %v", u, err)
		}
	}
	with := `auth="Bearer secret" cookie="" cookie2="" proxy-auth="" trace="t1"`
	without := `auth="" cookie="" cookie2="" proxy-auth="" trace="t1"`
	probe.check(t, map[string]string{
		"example.com/secure":     with,
		"example.com/plain":      without,
		"example.com/upgrade":    with,
		"example.com/secure-end": with,
	})
}

func TestCredentialsFollow(t *testing.T) {
	cases := []struct {
		from, to string
		keep     bool
	}{
		{"http://example.com/", "http://example.com:8080/x", true},
		{"http://example.com/", "http://www.example.com/", true},
		{"http://Example.COM./", "http://a.b.example.com/", true},
		{"http://example.com/", "https://example.com/", true},
		{"https://example.com/", "http://example.com/", false},
		{"https://example.com/", "http://www.example.com/", false},
		{"http://www.example.com/", "http://example.com/", false},
		{"http://example.com/", "http://notexample.com/", false},
		{"http://example.com/", "http://example.com.evil.test/", false},
		{"http://192.0.2.1/", "http://192.0.2.1:81/", true},
		{"http://192.0.2.1/", "http://x.192.0.2.1/", false},
		{"http://[2001:db8::1]/", "http://[2001:db8::1]:81/", true},
		{"http://[2001:db8::1]/", "http://[2001:db8::2]/", false},
	}
	for _, c := range cases {
		from, _ := url.Parse(c.from)
		to, _ := url.Parse(c.to)
		if got := credentialsFollow(from, to); got != c.keep {
			t.Errorf("credentialsFollow(%s, %s) = %v, want %v", c.from, c.to, got, c.keep)
		}
	}
}

// textPage returns n bytes of text that compresses about as well as HTML
// does (words drawn from a small vocabulary), unlike a repeated string,
// which the expansion check rightly takes for a bomb.
func textPage(n int) []byte {
	words := strings.Fields(`the crawler fetches pages politely and follows links to other hosts
		<p> </p> <a href="/next"> </a> <li> with limits on size time rate 2026 index of`)
	rng := rand.New(rand.NewPCG(1, 2))
	b := make([]byte, 0, n+16)
	for len(b) < n {
		b = append(b, words[rng.IntN(len(words))]...)
		b = append(b, ' ')
	}
	return b[:n]
}

// zstdStream encodes page as one zstd frame written as a stream, so that
// the frame declares a window (of size window) rather than its content
// size.
func zstdStream(t *testing.T, page []byte, opts ...zstd.EOption) []byte {
	t.Helper()
	var b bytes.Buffer
	zw, err := zstd.NewWriter(&b, opts...)
	if err != nil {
		t.Fatal(err)
	}
	half := len(page) / 2
	zw.Write(page[:half])
	zw.Flush() // the frame header goes out before the size is known
	zw.Write(page[half:])
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	var h zstd.Header
	if err := h.Decode(b.Bytes()); err != nil || h.SingleSegment {
		t.Fatalf("frame header %+v, %v: want a streamed frame with a window", h, err)
	}
	return b.Bytes()
}

// TestFetchZstdLargerThanMaxBody fetches zstd bodies longer than
// MaxBodyBytes, in a streamed frame with the encoder's default 8 MiB window
// and in a single-segment frame declaring its 2 MiB size. Both are
// truncated (or refused with ErrBodyTooLarge) like any other coding, at
// the first attempt and without counting against the host.
func TestFetchZstdLargerThanMaxBody(t *testing.T) {
	page := textPage(2 << 20)
	stream := zstdStream(t, page) // default window: 8 MiB
	enc, _ := zstd.NewWriter(nil)
	single := enc.EncodeAll(page, nil)
	var h zstd.Header
	if err := h.Decode(single); err != nil || !h.SingleSegment || h.FrameContentSize != uint64(len(page)) {
		t.Fatalf("single-segment frame header %+v, %v", h, err)
	}
	bodies := map[string][]byte{"/stream": stream, "/single": single}
	var hits atomic.Int32
	web := newVirtualWeb(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Encoding", "zstd")
		w.Header().Set("Content-Type", "text/html")
		w.Write(bodies[r.URL.Path])
	}))
	ctx := context.Background()
	for path := range bodies {
		hits.Store(0)
		f := newTestFetcher(t, web, func(c *Config) { c.MaxBodyBytes = 1 << 20 })
		resp, err := f.Fetch(ctx, "http://z.test"+path)
		if err != nil || !resp.Truncated || !bytes.Equal(resp.Body, page[:1<<20]) || hits.Load() != 1 {
			t.Errorf("%s, truncate: err %v, %d requests", path, err, hits.Load())
		}

		hits.Store(0)
		f = newTestFetcher(t, web, func(c *Config) {
			c.MaxBodyBytes = 1 << 20
			c.OnTooLarge = Fail
			c.PolitenessConfig = backoffPoliteness
		})
		_, err = f.Fetch(ctx, "http://z.test"+path)
		if !errors.Is(err, ErrBodyTooLarge) || hits.Load() != 1 || f.Politeness().Failures("z.test") != 0 {
			t.Errorf("%s, fail: err %v after %d requests, %d host failures; want ErrBodyTooLarge at once",
				path, err, hits.Load(), f.Politeness().Failures("z.test"))
		}

		f = newTestFetcher(t, web, func(c *Config) { c.MaxBodyBytes = 4 << 20 })
		resp, err = f.Fetch(ctx, "http://z.test"+path)
		if err != nil || resp.Truncated || !bytes.Equal(resp.Body, page) {
			t.Errorf("%s, under the limit: err %v", path, err)
		}
	}
}

// TestFetchZstdWindowOverLimit serves zstd frames needing more than the
// 8 MiB window RFC 9659 allows: a streamed frame declaring a 16 MiB window
// and a single-segment frame declaring 9 MiB of content (its window). Each
// is refused at once with ErrUnsupportedEncoding, not retried and not
// counted against the host.
func TestFetchZstdWindowOverLimit(t *testing.T) {
	enc, _ := zstd.NewWriter(nil, zstd.WithWindowSize(16<<20))
	bodies := map[string][]byte{
		"/window-16m": zstdStream(t, textPage(64<<10), zstd.WithWindowSize(16<<20)),
		"/single-9m":  enc.EncodeAll(textPage(9<<20), nil),
	}
	var hits atomic.Int32
	web := newVirtualWeb(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Encoding", "zstd")
		w.Write(bodies[r.URL.Path])
	}))
	for path := range bodies {
		hits.Store(0)
		f := newTestFetcher(t, web, func(c *Config) { c.PolitenessConfig = backoffPoliteness })
		_, err := f.Fetch(context.Background(), "http://z.test"+path)
		if !errors.Is(err, ErrUnsupportedEncoding) || !strings.Contains(err.Error(), "8 MiB window") {
			t.Errorf("%s: err = %v, want ErrUnsupportedEncoding naming the window limit", path, err)
		}
		if hits.Load() != 1 || f.Politeness().Failures("z.test") != 0 {
			t.Errorf("%s: %d requests, %d host failures; want 1 and 0", path, hits.Load(), f.Politeness().Failures("z.test"))
		}
	}
}

// TestFetchZstdBombBoundedMemory refuses a zstd bomb (64 MiB of zeros in a
// frame with the largest window allowed, 8 MiB) by the expansion ratio and,
// with the ratio off, by the body limit, and measures what that costs.
func TestFetchZstdBombBoundedMemory(t *testing.T) {
	var b bytes.Buffer
	zw, _ := zstd.NewWriter(&b, zstd.WithWindowSize(8<<20))
	zeros := make([]byte, 1<<20)
	for range 64 {
		zw.Write(zeros)
	}
	zw.Close()
	bomb := b.Bytes()
	var h zstd.Header
	if err := h.Decode(bomb); err != nil || h.WindowSize != 8<<20 {
		t.Fatalf("bomb frame header %+v, %v", h, err)
	}
	web := newVirtualWeb(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Encoding", "zstd")
		w.Write(bomb)
	}))
	for _, c := range []struct {
		name string
		mod  func(*Config)
		want error
	}{
		{"defaults", nil, ErrDecompressionBomb},
		{"no ratio", func(c *Config) { c.MaxExpansion = -1; c.MaxBodyBytes = 2 << 20; c.OnTooLarge = Fail }, ErrBodyTooLarge},
	} {
		f := newTestFetcher(t, web, c.mod)
		if _, err := f.Fetch(context.Background(), "http://bomb.test/"); !errors.Is(err, c.want) {
			t.Fatalf("%s: err = %v, want %v", c.name, err, c.want)
		}
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := f.Fetch(context.Background(), "http://bomb.test/")
		runtime.ReadMemStats(&after)
		if !errors.Is(err, c.want) {
			t.Fatalf("%s: err = %v, want %v", c.name, err, c.want)
		}
		allocated := after.TotalAlloc - before.TotalAlloc
		t.Logf("%s: allocated %d KiB refusing a 64 MiB zstd bomb with an 8 MiB window", c.name, allocated>>10)
		// The decoder's history is bounded by the 8 MiB window, the body
		// buffer by MaxBodyBytes (or the expansion check's 1 MiB floor).
		if allocated > 24<<20 {
			t.Errorf("%s: allocated %d MiB, want < 24 MiB", c.name, allocated>>20)
		}
	}
}

// TestFetchEmptyEncodedBody fetches empty bodies labelled with each
// supported coding (a 204, an empty 404 and an empty 200): each is an empty
// body, at the first attempt.
func TestFetchEmptyEncodedBody(t *testing.T) {
	var hits atomic.Int32
	web := newVirtualWeb(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Encoding", r.URL.Query().Get("ce"))
		status, _ := strconv.Atoi(r.URL.Query().Get("status"))
		w.WriteHeader(status)
	}))
	f := newTestFetcher(t, web, func(c *Config) {
		c.PolitenessConfig = backoffPoliteness
	})
	for i, ce := range []string{"gzip", "x-gzip", "deflate", "br", "zstd", "gzip, br"} {
		for _, status := range []int{http.StatusOK, http.StatusNoContent, http.StatusNotFound} {
			hits.Store(0)
			host := fmt.Sprintf("e%d-%d.test", i, status)
			u := fmt.Sprintf("http://%s/?ce=%s&status=%d", host, url.QueryEscape(ce), status)
			resp, err := f.Fetch(context.Background(), u)
			if err != nil || resp.StatusCode != status || len(resp.Body) != 0 || hits.Load() != 1 {
				t.Errorf("%s %d: err %v, resp %+v, %d requests; want an empty body at once", ce, status, err, resp, hits.Load())
			}
			if n := f.Politeness().Failures(host); n != 0 {
				t.Errorf("%s %d: %d host failures, want 0", ce, status, n)
			}
		}
	}
}

// TestFetchCallerCancelIsNotHostFailure cancels a fetch in flight and
// starts one with a deadline already past: neither counts against the host
// or starts its error backoff. The Fetcher's own Timeout still does.
func TestFetchCallerCancelIsNotHostFailure(t *testing.T) {
	entered := make(chan struct{}, 1)
	release := make(chan struct{})
	io := newFakeClock()
	var timed atomic.Pointer[Fetcher]
	web := newVirtualWeb(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			// Past the Fetcher's Timeout on its I/O clock.
			io.Advance(time.Minute)
			checkDeadlines(timed.Load())
		}
		select {
		case entered <- struct{}{}:
		default:
		}
		select {
		case <-r.Context().Done():
		case <-release: // lets the server close if the test failed
		}
	}))
	t.Cleanup(func() { close(release) }) // runs before the server's Close
	clock := newFakeClock()
	f := newTestFetcher(t, web, func(c *Config) {
		UseClock(c, clock)
		c.PolitenessConfig = backoffPoliteness
	})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-entered
		cancel()
	}()
	if _, err := f.Fetch(ctx, "http://a.test/hang"); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: err = %v, want context.Canceled", err)
	}
	past, cancelPast := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancelPast()
	if _, err := f.Fetch(past, "http://b.test/hang"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("past deadline: err = %v, want context.DeadlineExceeded", err)
	}
	now := clock.Now()
	for _, host := range []string{"a.test", "b.test"} {
		if n, ready := f.Politeness().Failures(host), f.Politeness().ReadyAt(host, now); n != 0 || ready.After(now) {
			t.Errorf("%s: %d failures, ready in %v; the caller's cancellation must not count", host, n, ready.Sub(now))
		}
	}

	g := newTestFetcher(t, web, func(c *Config) {
		UseClock(c, clock)
		c.PolitenessConfig = backoffPoliteness
		c.Timeout = 10 * time.Second
		c.MaxRetries = -1
	})
	useIOClock(g, io)
	timed.Store(g)
	if _, err := g.Fetch(context.Background(), "http://c.test/slow"); !errors.Is(err, ErrTimeout) || !errors.Is(err, errTotalTimeout) {
		t.Fatalf("own timeout: err = %v, want ErrTimeout", err)
	}
	if n := g.Politeness().Failures("c.test"); n != 1 {
		t.Errorf("own timeout: %d failures, want 1", n)
	}
}

// TestFetchCloseEndsInFlightFetches closes a Fetcher while one fetch waits
// for response headers, one waits for politeness and one waits to retry,
// all with context.Background(): each ends with ErrClosed instead of
// running on without its deadlines, and none counts against its host.
func TestFetchCloseEndsInFlightFetches(t *testing.T) {
	entered := make(chan struct{}, 1)
	release := make(chan struct{})
	web := newVirtualWeb(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Host == "retry.test" {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		select {
		case entered <- struct{}{}:
		default:
		}
		select {
		case <-r.Context().Done():
		case <-release: // lets the server close if the test failed
		}
	}))
	t.Cleanup(func() { close(release) }) // runs before the server's Close
	waitClosed := func(name string, f *Fetcher, started <-chan struct{}, host string) {
		t.Helper()
		done := make(chan error, 1)
		go func() {
			_, err := f.Fetch(context.Background(), "http://"+host+"/")
			done <- err
		}()
		<-started
		f.Close()
		select {
		case err := <-done:
			if !errors.Is(err, ErrClosed) {
				t.Errorf("%s: err = %v, want ErrClosed", name, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: fetch still running 10 s after Close", name)
		}
		if n := f.Politeness().Failures(host); n != 0 {
			t.Errorf("%s: %d failures of %s, want 0", name, n, host)
		}
		if _, err := f.Fetch(context.Background(), "http://"+host+"/"); !errors.Is(err, ErrClosed) {
			t.Errorf("%s: fetch after Close: %v, want ErrClosed", name, err)
		}
	}
	pol := backoffPoliteness

	f := newTestFetcher(t, web, func(c *Config) { c.PolitenessConfig = pol })
	waitClosed("awaiting headers", f, entered, "hang.test")

	// stuckClock's After never fires, so these wait until Close.
	clock := &stuckClock{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), waiting: make(chan time.Duration, 1)}
	started := make(chan struct{})
	go func() {
		<-clock.waiting
		close(started)
	}()
	g := newTestFetcher(t, web, func(c *Config) { UseClock(c, clock); c.PolitenessConfig = pol })
	g.Politeness().BlockUntil("blocked.test", clock.now.Add(30*time.Second))
	waitClosed("awaiting politeness", g, started, "blocked.test")

	clock = &stuckClock{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), waiting: make(chan time.Duration, 1)}
	started = make(chan struct{})
	go func() {
		<-clock.waiting
		close(started)
	}()
	h := newTestFetcher(t, web, func(c *Config) { UseClock(c, clock); c.PolitenessConfig = pol })
	waitClosed("awaiting a retry", h, started, "retry.test")
}

// TestFetchTimeoutCoversRedirectChain moves the Fetcher's I/O clock on
// inside the handlers: Timeout (10 s) bounds the requests of a redirect
// chain together, not each hop.
func TestFetchTimeoutCoversRedirectChain(t *testing.T) {
	io := newFakeClock()
	var fp atomic.Pointer[Fetcher]
	var mu sync.Mutex
	var paths []string
	web := newVirtualWeb(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		paths = append(paths, r.URL.Path)
		mu.Unlock()
		switch r.URL.Path {
		case "/a": // 6 s, then 6 s more on the next hop: over the 10 s
			io.Advance(6 * time.Second)
			http.Redirect(w, r, "/b", http.StatusFound)
		case "/b":
			io.Advance(6 * time.Second)
			checkDeadlines(fp.Load())
			select {
			case <-r.Context().Done():
			case <-time.After(10 * time.Second): // only if the deadline was not shared
				fmt.Fprint(w, "too late")
			}
		case "/c": // the whole budget in one hop: the redirect is not followed
			io.Advance(11 * time.Second)
			http.Redirect(w, r, "/d", http.StatusFound)
		case "/e": // 4 s + 4 s: within 10 s
			io.Advance(4 * time.Second)
			http.Redirect(w, r, "/f", http.StatusFound)
		default:
			io.Advance(4 * time.Second)
			fmt.Fprint(w, "in time")
		}
	}))
	f := newTestFetcher(t, web, func(c *Config) { c.Timeout = 10 * time.Second; c.MaxRetries = -1 })
	useIOClock(f, io)
	fp.Store(f)
	for _, start := range []string{"/a", "/c"} {
		if _, err := f.Fetch(context.Background(), "http://chain.test"+start); !errors.Is(err, ErrTimeout) || !errors.Is(err, errTotalTimeout) {
			t.Errorf("%s: err = %v; want ErrTimeout for the chain", start, err)
		}
	}
	if resp, err := f.Fetch(context.Background(), "http://chain.test/e"); err != nil || string(resp.Body) != "in time" {
		t.Errorf("/e: err = %v; want the chain within its timeout to succeed", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if got := strings.Join(paths, " "); got != "/a /b /c /e /f" {
		t.Errorf("server saw %s, want /a /b /c /e /f", got)
	}
}

// TestFetchGuardChecksTargetThroughProxy sends requests through an HTTP
// proxy (a loopback server, allowed by AllowCIDRs): targets with internal
// addresses, literal or resolved, are refused before the proxy sees them.
func TestFetchGuardChecksTargetThroughProxy(t *testing.T) {
	var mu sync.Mutex
	var proxied []string
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		proxied = append(proxied, r.Host)
		mu.Unlock()
		fmt.Fprint(w, "proxied "+r.Host) // answers itself; nothing beyond loopback is contacted
	}))
	defer proxy.Close()
	proxyURL, _ := url.Parse(proxy.URL)
	r := newFakeResolver(
		"public.test", "93.184.216.34",
		"internal.test", "10.0.0.5",
		"mixed.test", "93.184.216.34",
		"mixed.test", "169.254.169.254",
	)
	f := newTestFetcher(t, nil, func(c *Config) {
		c.Transport = &http.Transport{Proxy: http.ProxyURL(proxyURL)}
		c.AllowCIDRs = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")} // the proxy
		c.DNSConfig = DNSConfig{Resolver: r}
		c.MaxRetries = -1
	})
	for _, target := range []string{"10.0.0.5", "[::1]:8080", "internal.test", "mixed.test"} {
		if _, err := f.Fetch(context.Background(), "http://"+target+"/"); !errors.Is(err, ErrBlockedAddress) {
			t.Errorf("%s through the proxy: err = %v, want ErrBlockedAddress", target, err)
		}
	}
	if _, err := f.Fetch(context.Background(), "http://nowhere.test/"); err == nil {
		t.Error("unresolvable name through the proxy: no error")
	}
	resp, err := f.Fetch(context.Background(), "http://public.test/")
	if err != nil || string(resp.Body) != "proxied public.test" {
		t.Fatalf("public.test through the proxy: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(proxied) != 1 {
		t.Errorf("proxy received %v, want only public.test", proxied)
	}
}

// TestRetryDelayBounded checks the retry backoff stays within
// [RetryBackoff/2, MaxRetryBackoff) for every attempt: RetryBackoff << attempt
// overflowed time.Duration before reaching the cap (from attempt 28 with a
// 1 min base), giving a negative wait, i.e. an immediate retry.
func TestRetryDelayBounded(t *testing.T) {
	f := newTestFetcher(t, nil, func(c *Config) {
		c.RetryBackoff, c.MaxRetryBackoff = time.Minute, time.Hour
	})
	for attempt := range 64 {
		if d := f.retryDelay(attempt); d < 30*time.Second || d >= time.Hour {
			t.Errorf("retryDelay(%d) = %v, want within [30s, 1h)", attempt, d)
		}
	}
}
