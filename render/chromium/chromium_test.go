package chromium_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/crawltest"
	"github.com/crawlkit/crawlkit/fetch"
	"github.com/crawlkit/crawlkit/render"
	"github.com/crawlkit/crawlkit/render/chromium"
	"github.com/crawlkit/crawlkit/robots"
)

const agent = "crawlkit"

var loopback = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}

// needBrowser skips the test without Chromium, or fails it under CI=true.
func needBrowser(tb testing.TB) {
	tb.Helper()
	if chromium.FindBrowser() == "" {
		if os.Getenv("CI") == "true" {
			tb.Fatal("Chromium is required under CI=true (apt-get install chromium)")
		}
		tb.Skip("no Chromium on this machine")
	}
	if testing.Short() {
		tb.Skip("starts a browser")
	}
}

// jsWeb starts a crawltest web with its JavaScript site and a fetcher for
// it: address guard allowing loopback only, robots.txt check, politeness.
func jsWeb(tb testing.TB, pages int) (*crawltest.Web, *fetch.Fetcher) {
	tb.Helper()
	web, err := crawltest.NewWeb(crawltest.Config{Hosts: 1, PagesPerHost: 5, JSPages: pages, Seed: 7})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(web.Close)
	cache := robots.NewCache(robots.Config{Client: web.Client(), UserAgent: agent + "/1.0"})
	f, err := fetch.New(fetch.Config{
		UserAgent:        agent + "/1.0 (+https://example.com/bot)",
		DialContext:      web.DialContext,
		AllowCIDRs:       loopback,
		PolitenessConfig: fetch.PolitenessConfig{Delay: 5 * time.Millisecond},
		Check: func(ctx context.Context, u *url.URL) error {
			d, err := cache.Allowed(ctx, agent, u.String())
			if err != nil {
				return err
			}
			if !d.Allowed {
				return errors.New("disallowed by robots.txt")
			}
			return nil
		},
	})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { f.Close() })
	return web, f
}

func newChromium(tb testing.TB, cfg chromium.Config) *chromium.Browser {
	tb.Helper()
	c, err := chromium.New(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := c.Close(); err != nil {
			tb.Error(err)
		}
	})
	return c
}

// canonicalLinks returns the canonical URLs of a result's links.
func canonicalLinks(tb testing.TB, res *render.Result) []string {
	tb.Helper()
	var out []string
	for _, l := range res.Document.Links {
		if c, err := crawltest.Canonical(l.URL); err == nil && !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out
}

// TestRenderJSSite renders a page of every kind of crawltest's JavaScript
// site and finds every link its ground truth lists, the ones only scripts
// create included.
func TestRenderJSSite(t *testing.T) {
	needBrowser(t)
	web, f := jsWeb(t, 20)
	c := newChromium(t, chromium.Config{Fetcher: f, AllowCIDRs: loopback, Timeout: 20 * time.Second})
	truth := web.JSTruth()
	kinds := map[string]bool{}
	for _, u := range slices.Sorted(func(yield func(string) bool) {
		for u := range truth.Pages {
			if !yield(u) {
				return
			}
		}
	}) {
		p := truth.Pages[u]
		if kinds[p.Kind] {
			continue
		}
		kinds[p.Kind] = true
		res, err := c.Render(context.Background(), &render.Request{URL: u})
		if err != nil {
			t.Fatalf("%s (%s): %v", u, p.Kind, err)
		}
		got := canonicalLinks(t, res)
		for _, want := range p.Links {
			if !slices.Contains(got, want) {
				t.Errorf("%s (%s): link %s not found after rendering (found %v)", u, p.Kind, want, got)
			}
		}
		if res.Truncated {
			t.Errorf("%s: truncated", u)
		}
	}
	if n, targets := c.Escaped(); n > 0 {
		for _, tg := range targets {
			if strings.Contains(tg, "test") || strings.HasPrefix(tg, "10.") || strings.HasPrefix(tg, "169.254") {
				t.Errorf("a page request escaped interception: %s", tg)
			}
		}
		t.Logf("browser's own connections refused by the sink: %d %v", n, targets)
	}
}

// TestRenderGuard renders the page whose script requests private and
// link-local addresses and a robots-disallowed URL: every one is refused
// before anything connects, reported, and the page sees them fail.
func TestRenderGuard(t *testing.T) {
	needBrowser(t)
	web, f := jsWeb(t, 5)
	c := newChromium(t, chromium.Config{Fetcher: f, AllowCIDRs: loopback})
	truth := web.JSTruth()
	res, err := c.Render(context.Background(), &render.Request{URL: "http://app.test" + crawltest.JSLeakPath})
	if err != nil {
		t.Fatal(err)
	}
	reasons := map[string]render.Reason{}
	for _, b := range res.Blocked {
		reasons[b.URL] = b.Reason
	}
	for _, u := range truth.PrivateTargets {
		if reasons[u] != render.ReasonAddress {
			t.Errorf("%s: blocked as %q, want %q (blocked: %+v)", u, reasons[u], render.ReasonAddress, res.Blocked)
		}
	}
	for _, b := range res.Blocked {
		if b.Reason == render.ReasonAddress && !errors.Is(b.Err, fetch.ErrBlockedAddress) {
			t.Errorf("%s: error %v does not match fetch.ErrBlockedAddress", b.URL, b.Err)
		}
	}
	for _, u := range truth.DisallowedTargets {
		if reasons[u] != render.ReasonDisallowed {
			t.Errorf("%s: blocked as %q, want %q", u, reasons[u], render.ReasonDisallowed)
		}
	}
	for _, l := range canonicalLinks(t, res) {
		if strings.Contains(l, "/leaked-") {
			t.Errorf("a refused request succeeded in the page: %s", l)
		}
	}
	if !slices.Contains(canonicalLinks(t, res), "http://app.test/p/2") {
		t.Errorf("the page's script did not finish: %s", res.HTML)
	}
	if rep := web.JSReport(); rep.RobotsViolations != 0 {
		t.Errorf("%d robots violations reached the server", rep.RobotsViolations)
	}
	if n, targets := c.Escaped(); n > 0 {
		for _, tg := range targets {
			for _, u := range truth.PrivateTargets {
				if pu, _ := url.Parse(u); strings.HasPrefix(tg, pu.Hostname()) || strings.HasPrefix(tg, "["+pu.Hostname()) {
					t.Errorf("%s escaped interception", tg)
				}
			}
		}
	}
}

// testServer serves pages for the limit tests on 127.0.0.1.
func testServer(t *testing.T) *httptest.Server {
	mux := http.NewServeMux()
	page := func(body string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = w.Write([]byte("<!DOCTYPE html><html><head><title>t</title></head><body>" + body + "</body></html>"))
		}
	}
	mux.HandleFunc("/many", page(`<div id="out"></div><script>
for (let i = 0; i < 5; i++) fetch("/data?i=" + i).then(r => r.text()).then(t => {
  const a = document.createElement("a"); a.href = "/got-" + i; document.getElementById("out").appendChild(a); });
</script>`))
	mux.HandleFunc("/data", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write([]byte(strings.Repeat("x", 4000)))
	})
	mux.HandleFunc("/post", page(`<div id="out"></div><script>
fetch("/data", {method: "POST", body: "a=1"}).then(() => {}, () => {
  const a = document.createElement("a"); a.href = "/post-refused"; document.getElementById("out").appendChild(a); });
</script>`))
	mux.HandleFunc("/redirect-away", page(`<a href="/static-link">s</a><script>setTimeout(() => { location.href = "/next-page"; }, 10);</script>`))
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(time.Minute):
		}
	})
	mux.HandleFunc("/stalls", page(`<a href="/before">b</a><script>fetch("/slow");</script>`))
	mux.HandleFunc("/late", page(`<div id="out"></div><script>setTimeout(() => {
  const a = document.createElement("a"); a.href = "/late-link"; document.getElementById("out").appendChild(a); }, 800);</script>`))
	mux.HandleFunc("/ticking", page(`<a href="/tick-0">0</a><script>let n = 0; (function tick() { document.title = "t" + (n++); setTimeout(tick, 20); })();</script>`))
	mux.HandleFunc("/images", page(`<img src="/a.png"><img src="/b.png"><a href="/x">x</a>`))
	mux.HandleFunc("/dialog", page(`<script>alert("hi"); document.write('<a href="/after-alert">a</a>');</script>`))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func localFetcher(t *testing.T) *fetch.Fetcher {
	f, err := fetch.New(fetch.Config{UserAgent: "testbot/1.0", AllowCIDRs: loopback,
		PolitenessConfig: fetch.PolitenessConfig{Delay: time.Millisecond, MaxConcurrent: 8}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func hasLink(res *render.Result, suffix string) bool {
	for _, l := range res.Document.Links {
		if strings.HasSuffix(l.URL, suffix) {
			return true
		}
	}
	return false
}

func countReason(res *render.Result, r render.Reason) int {
	n := 0
	for _, b := range res.Blocked {
		if b.Reason == r {
			n++
		}
	}
	return n
}

func TestRenderLimits(t *testing.T) {
	needBrowser(t)
	srv := testServer(t)
	f := localFetcher(t)
	ctx := context.Background()

	t.Run("request cap", func(t *testing.T) {
		c := newChromium(t, chromium.Config{Fetcher: f, AllowCIDRs: loopback, MaxRequests: 2})
		res, err := c.Render(ctx, &render.Request{URL: srv.URL + "/many"})
		if err != nil {
			t.Fatal(err)
		}
		if res.Requests != 2 || countReason(res, render.ReasonRequestCap) != 3 || !res.Truncated {
			t.Fatalf("requests %d, capped %d, truncated %v", res.Requests, countReason(res, render.ReasonRequestCap), res.Truncated)
		}
	})
	t.Run("weight cap", func(t *testing.T) {
		c := newChromium(t, chromium.Config{Fetcher: f, AllowCIDRs: loopback, MaxPageBytes: 10000})
		res, err := c.Render(ctx, &render.Request{URL: srv.URL + "/many"})
		if err != nil {
			t.Fatal(err)
		}
		if res.Bytes > 10000 || countReason(res, render.ReasonWeightCap) == 0 || !res.Truncated {
			t.Fatalf("bytes %d, over weight %d, truncated %v", res.Bytes, countReason(res, render.ReasonWeightCap), res.Truncated)
		}
		if n := countReason(res, render.ReasonWeightCap); res.Requests-n != 1 && res.Requests-n != 2 {
			t.Fatalf("%d requests, %d refused for weight", res.Requests, n)
		}
	})
	c := newChromium(t, chromium.Config{Fetcher: f, AllowCIDRs: loopback, Timeout: 3 * time.Second})
	t.Run("all fetched", func(t *testing.T) {
		res, err := c.Render(ctx, &render.Request{URL: srv.URL + "/many"})
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 5; i++ {
			if !hasLink(res, "/got-"+string(rune('0'+i))) {
				t.Errorf("link %d missing", i)
			}
		}
		if res.Requests != 5 || res.Bytes < 5*4000 || res.Truncated {
			t.Errorf("requests %d bytes %d truncated %v", res.Requests, res.Bytes, res.Truncated)
		}
	})
	t.Run("post refused", func(t *testing.T) {
		res, err := c.Render(ctx, &render.Request{URL: srv.URL + "/post"})
		if err != nil {
			t.Fatal(err)
		}
		if countReason(res, render.ReasonMethod) != 1 || !hasLink(res, "/post-refused") {
			t.Fatalf("blocked %+v", res.Blocked)
		}
	})
	t.Run("navigation", func(t *testing.T) {
		res, err := c.Render(ctx, &render.Request{URL: srv.URL + "/redirect-away"})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(res.Navigations, srv.URL+"/next-page") || !hasLink(res, "/static-link") {
			t.Fatalf("navigations %v, links %v", res.Navigations, res.Document.Links)
		}
	})
	t.Run("timeout keeps the DOM", func(t *testing.T) {
		// A fetcher of its own: the stalled request backs the host off.
		c := newChromium(t, chromium.Config{Fetcher: localFetcher(t), AllowCIDRs: loopback, Timeout: 3 * time.Second})
		res, err := c.Render(ctx, &render.Request{URL: srv.URL + "/stalls"})
		if err != nil {
			t.Fatal(err)
		}
		if !res.Truncated || !hasLink(res, "/before") {
			t.Fatalf("truncated %v, links %v", res.Truncated, res.Document.Links)
		}
	})
	t.Run("late timer", func(t *testing.T) {
		// The timer fires after the network has been idle for longer
		// than Settle: the render waits for pending short timers too.
		res, err := c.Render(ctx, &render.Request{URL: srv.URL + "/late"})
		if err != nil {
			t.Fatal(err)
		}
		if !hasLink(res, "/late-link") || res.Truncated {
			t.Fatalf("truncated %v, links %v", res.Truncated, res.Document.Links)
		}
	})
	t.Run("endless timers", func(t *testing.T) {
		res, err := c.Render(ctx, &render.Request{URL: srv.URL + "/ticking"})
		if err != nil {
			t.Fatal(err)
		}
		if !res.Truncated || !hasLink(res, "/tick-0") {
			t.Fatalf("truncated %v, links %v", res.Truncated, res.Document.Links)
		}
	})
	t.Run("skipped types", func(t *testing.T) {
		res, err := c.Render(ctx, &render.Request{URL: srv.URL + "/images"})
		if err != nil {
			t.Fatal(err)
		}
		if res.Requests != 0 || !hasLink(res, "/x") {
			t.Fatalf("requests %d skipped %d", res.Requests, res.Skipped)
		}
	})
	t.Run("dialog", func(t *testing.T) {
		res, err := c.Render(ctx, &render.Request{URL: srv.URL + "/dialog"})
		if err != nil {
			t.Fatal(err)
		}
		if !hasLink(res, "/after-alert") {
			t.Fatalf("links %v", res.Document.Links)
		}
	})
	t.Run("given body", func(t *testing.T) {
		body := []byte(`<html><body><div id="root"></div><script>document.getElementById("root").innerHTML = '<a href="/from-body">x</a>';</script></body></html>`)
		res, err := c.Render(ctx, &render.Request{URL: srv.URL + "/not-served", Body: body,
			Header: http.Header{"Content-Type": {"text/html"}, "X-Robots-Tag": {"nofollow"}}})
		if err != nil {
			t.Fatal(err)
		}
		if !hasLink(res, "/from-body") || !res.Document.Robots.Nofollow || res.URL != srv.URL+"/not-served" {
			t.Fatalf("url %s links %v robots %+v", res.URL, res.Document.Links, res.Document.Robots)
		}
	})
	t.Run("document errors", func(t *testing.T) {
		if _, err := c.Render(ctx, &render.Request{URL: "http://10.1.2.3/"}); !errors.Is(err, render.ErrDocument) || !errors.Is(err, fetch.ErrBlockedAddress) {
			t.Fatalf("private page: %v", err)
		}
		if _, err := c.Render(ctx, &render.Request{URL: "ftp://x/"}); !errors.Is(err, render.ErrBadRequest) {
			t.Fatalf("ftp: %v", err)
		}
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		if _, err := c.Render(cctx, &render.Request{URL: srv.URL + "/many"}); !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled: %v", err)
		}
	})
}

// TestRenderConcurrentAndClose renders from several goroutines through a
// pool of two tabs, then closes the renderer: the browser process is gone,
// its profile removed, and later renders fail with ErrClosed.
func TestRenderConcurrentAndClose(t *testing.T) {
	needBrowser(t)
	web, f := jsWeb(t, 12)
	c, err := chromium.New(chromium.Config{Fetcher: f, AllowCIDRs: loopback, Tabs: 2, MaxTabRenders: 3})
	if err != nil {
		t.Fatal(err)
	}
	pid := c.PID()
	if pid == 0 {
		t.Fatal("no browser pid")
	}
	truth := web.JSTruth()
	var wg sync.WaitGroup
	errs := make(chan error, len(truth.Pages))
	for u, p := range truth.Pages {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := c.Render(context.Background(), &render.Request{URL: u})
			if err != nil {
				errs <- err
				return
			}
			got := canonicalLinks(t, res)
			for _, want := range p.Links {
				if !slices.Contains(got, want) {
					errs <- errors.New(u + ": missing " + want)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal("second Close:", err)
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("browser process %d still there after Close: %v", pid, err)
	}
	if _, err := c.Render(context.Background(), &render.Request{URL: truth.Seed}); !errors.Is(err, render.ErrClosed) {
		t.Errorf("Render after Close: %v", err)
	}
}

func TestNewErrors(t *testing.T) {
	if _, err := chromium.New(chromium.Config{}); !errors.Is(err, render.ErrBadRequest) {
		t.Errorf("no fetcher or agent: %v", err)
	}
	if _, err := chromium.New(chromium.Config{UserAgent: "x/1", ExecPath: "/nonexistent/chromium"}); !errors.Is(err, render.ErrNoBrowser) {
		t.Errorf("missing executable: %v", err)
	}
}

// TestCloseStopsRenders closes the renderer while a render waits on a
// request that never answers: the render ends with ErrClosed at once
// instead of running to its timeout.
func TestCloseStopsRenders(t *testing.T) {
	needBrowser(t)
	srv, hit := stallingServer(t)
	c, err := chromium.New(chromium.Config{Fetcher: localFetcher(t), AllowCIDRs: loopback, Timeout: 10 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := c.Render(context.Background(), &render.Request{URL: srv.URL + "/"})
		done <- err
	}()
	<-hit
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !errors.Is(err, render.ErrClosed) {
		t.Fatalf("render during Close: %v, want ErrClosed", err)
	}
}

// TestBrowserExit kills the browser during a render and between renders:
// the render in progress fails with ErrBrowserExited (not ErrTimeout), and
// a later render starts a new browser and succeeds.
func TestBrowserExit(t *testing.T) {
	needBrowser(t)
	srv, hit := stallingServer(t)
	c := newChromium(t, chromium.Config{Fetcher: localFetcher(t), AllowCIDRs: loopback, Timeout: time.Minute})
	ctx := context.Background()
	if _, err := c.Render(ctx, &render.Request{URL: srv.URL + "/plain"}); err != nil {
		t.Fatal(err)
	}

	// During a render.
	pid := c.PID()
	done := make(chan error, 1)
	go func() {
		_, err := c.Render(ctx, &render.Request{URL: srv.URL + "/"})
		done <- err
	}()
	<-hit
	killBrowser(t, pid)
	if err := <-done; !errors.Is(err, render.ErrBrowserExited) || errors.Is(err, render.ErrTimeout) {
		t.Fatalf("render during the exit: %v, want ErrBrowserExited", err)
	}
	renderAfterExit(t, c, srv.URL+"/plain")
	if p := c.PID(); p == 0 || p == pid {
		t.Fatalf("PID %d after the restart, was %d", p, pid)
	}

	// Between renders.
	pid = c.PID()
	killBrowser(t, pid)
	renderAfterExit(t, c, srv.URL+"/plain")
	if p := c.PID(); p == 0 || p == pid {
		t.Fatalf("PID %d after the second restart, was %d", p, pid)
	}
}

// TestBrowserRestartBackoff makes the browser fail to start after it
// exited: renders fail with ErrBrowserExited, start attempts are spaced
// instead of made by every render, and the browser comes back once it can
// start.
func TestBrowserRestartBackoff(t *testing.T) {
	needBrowser(t)
	ok := t.TempDir() + "/ok"
	exe, countStarts := browserWrapper(t, "[ -f "+ok+" ] || exit 1")
	if err := os.WriteFile(ok, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	srv := testServer(t)
	c := newChromium(t, chromium.Config{Fetcher: localFetcher(t), AllowCIDRs: loopback, ExecPath: exe})
	ctx := context.Background()
	if _, err := c.Render(ctx, &render.Request{URL: srv.URL + "/images"}); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(ok); err != nil {
		t.Fatal(err)
	}
	killBrowser(t, c.PID())
	deadline := time.Now().Add(20 * time.Second)
	for countStarts() < 2 {
		if _, err := c.Render(ctx, &render.Request{URL: srv.URL + "/images"}); !errors.Is(err, render.ErrBrowserExited) {
			t.Fatalf("render while the browser cannot start: %v, want ErrBrowserExited", err)
		}
		if time.Now().After(deadline) {
			t.Fatal("no attempt to start the browser again")
		}
		time.Sleep(100 * time.Millisecond)
	}
	for range 5 {
		if _, err := c.Render(ctx, &render.Request{URL: srv.URL + "/images"}); !errors.Is(err, render.ErrBrowserExited) {
			t.Fatalf("render after a failed start: %v, want ErrBrowserExited", err)
		}
	}
	if n := countStarts(); n != 2 {
		t.Fatalf("%d start attempts right after a failed one, want none", n-2)
	}
	if err := os.WriteFile(ok, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	renderAfterExit(t, c, srv.URL+"/images")
	if n := countStarts(); n != 3 {
		t.Fatalf("%d starts, want 3", n)
	}
}

// TestBrowserRestartCutShortIsSpaced checks that a restart cut short by
// the render's deadline still spaces the next attempt: renders whose
// deadlines are shorter than the browser's start must not each start one.
func TestBrowserRestartCutShortIsSpaced(t *testing.T) {
	needBrowser(t)
	slow := t.TempDir() + "/slow"
	exe, countStarts := browserWrapper(t, "[ -f "+slow+" ] && exec sleep 30")
	srv := testServer(t)
	c := newChromium(t, chromium.Config{Fetcher: localFetcher(t), AllowCIDRs: loopback, ExecPath: exe})
	if _, err := c.Render(context.Background(), &render.Request{URL: srv.URL + "/images"}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(slow, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	killBrowser(t, c.PID())
	// Renders with a short deadline, until one has started the browser
	// again (and given up on it when its deadline passed).
	deadline := time.Now().Add(20 * time.Second)
	for countStarts() < 2 {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		_, err := c.Render(ctx, &render.Request{URL: srv.URL + "/images"})
		cancel()
		if err == nil {
			t.Fatal("render succeeded while the browser cannot start")
		}
		if time.Now().After(deadline) {
			t.Fatal("no attempt to start the browser again")
		}
	}
	for range 5 {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		_, err := c.Render(ctx, &render.Request{URL: srv.URL + "/images"})
		cancel()
		if !errors.Is(err, render.ErrBrowserExited) {
			t.Fatalf("render right after a start cut short: %v, want ErrBrowserExited", err)
		}
	}
	if n := countStarts(); n != 2 {
		t.Fatalf("%d start attempts right after one cut short, want none", n-2)
	}
	if err := os.Remove(slow); err != nil {
		t.Fatal(err)
	}
	renderAfterExit(t, c, srv.URL+"/images")
}

// stallingServer serves "/", a page that loads a script the server never
// sends: hit is closed when the browser asks for it, and the render then
// waits until it ends; "/plain" is a page without scripts.
func stallingServer(t *testing.T) (srv *httptest.Server, hit <-chan struct{}) {
	t.Helper()
	asked := make(chan struct{})
	var once sync.Once
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte(`<html><body><script src="/never.js"></script><a href="/x">x</a></body></html>`))
	})
	mux.HandleFunc("/plain", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte(`<html><body><a href="/x">x</a></body></html>`))
	})
	mux.HandleFunc("/never.js", func(w http.ResponseWriter, r *http.Request) {
		once.Do(func() { close(asked) })
		<-r.Context().Done()
	})
	srv = httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv, asked
}

// browserWrapper writes a shell script that records each start, runs
// first (a shell command that may exit or exec something else), then
// execs the real browser. It returns the script's path and a function
// counting the starts so far.
func browserWrapper(t *testing.T, first string) (exe string, starts func() int) {
	t.Helper()
	dir := t.TempDir()
	log := dir + "/starts"
	script := "#!/bin/sh\necho >>" + log + "\n" + first + "\nexec " + chromium.FindBrowser() + ` "$@"` + "\n"
	exe = dir + "/chromium"
	if err := os.WriteFile(exe, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return exe, func() int {
		b, _ := os.ReadFile(log)
		return strings.Count(string(b), "\n")
	}
}

// killBrowser kills the browser process and waits until it is gone.
func killBrowser(t *testing.T, pid int) {
	t.Helper()
	if pid == 0 {
		t.Fatal("no browser pid")
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
		if time.Now().After(deadline) {
			t.Fatalf("browser process %d still there after SIGKILL", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// renderAfterExit renders u until a render succeeds, after the browser
// exited: every render that fails must fail with ErrBrowserExited.
func renderAfterExit(t *testing.T, c *chromium.Browser, u string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		res, err := c.Render(context.Background(), &render.Request{URL: u})
		if err == nil {
			if len(res.Document.Links) == 0 {
				t.Fatalf("no links in %s after the restart: %s", u, res.HTML)
			}
			return
		}
		if !errors.Is(err, render.ErrBrowserExited) {
			t.Fatalf("render after the browser exited: %v, want ErrBrowserExited", err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("no render succeeded within 30 s of the exit: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
