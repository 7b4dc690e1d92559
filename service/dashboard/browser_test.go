package dashboard_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	_ "github.com/crawlkit/crawlkit/storage/datadir" // Config.DataDir on Pebble

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/crawlkit/crawlkit/crawltest"
	"github.com/crawlkit/crawlkit/extract"
	"github.com/crawlkit/crawlkit/robots"
	"github.com/crawlkit/crawlkit/service/dashboard"
	"github.com/crawlkit/crawlkit/service/frontierapi"
	"github.com/crawlkit/crawlkit/simhash"
	"github.com/crawlkit/crawlkit/trap"
	"github.com/crawlkit/crawlkit/urlnorm"
)

// chromium finds the browser, or skips the test (fails it under CI=true).
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("Chromium is required under CI=true (apt-get install chromium)")
	}
	t.Skip("no Chromium on this machine")
	return ""
}

// crawl runs a worker against the service until ctx is done: lease, fetch
// from the synthetic web, extract links, submit them, settle.
func crawl(ctx context.Context, c *frontierapi.Client, hc *http.Client, id string) {
	for ctx.Err() == nil {
		l, err := c.Next(ctx, id, 4, 200*time.Millisecond)
		if err != nil || len(l.URLs) == 0 {
			continue
		}
		var results []frontierapi.Result
		for _, u := range l.URLs {
			start := time.Now()
			res := frontierapi.Result{URL: u.URL, Status: frontierapi.ResultError, ErrorKind: frontierapi.KindNetwork}
			req, _ := http.NewRequestWithContext(ctx, "GET", u.URL, nil)
			req.Header.Set("User-Agent", "crawlkit/1.0")
			resp, err := hc.Do(req)
			if err != nil {
				res.Error = err.Error()
				results = append(results, res)
				continue
			}
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
			resp.Body.Close()
			res.HTTPStatus, res.DurationMS, res.Bytes = resp.StatusCode, time.Since(start).Milliseconds(), int64(len(body))
			if resp.StatusCode/100 != 2 {
				res.ErrorKind, res.Error = frontierapi.KindHTTP, resp.Status
				results = append(results, res)
				continue
			}
			res.Status, res.ErrorKind = frontierapi.ResultSuccess, ""
			sum := sha256.Sum256(body)
			res.ContentHash = "sha256:" + hex.EncodeToString(sum[:8])
			if doc, err := extract.ExtractBytes(body, u.URL, resp.Header); err == nil {
				res.SimHash = strconv.FormatUint(simhash.Fingerprint(doc.Text), 16)
				var links []frontierapi.SubmitURL
				for _, ln := range doc.Links {
					if h, err := urlnorm.HostOf(ln.URL); err == nil && ln.Kind == extract.KindA && ln.Follow && strings.HasSuffix(h, ".test") {
						links = append(links, frontierapi.SubmitURL{URL: ln.URL, SourceURL: u.URL, Depth: u.Depth + 1})
					}
				}
				res.LinksFound = len(links)
				if len(links) > 0 {
					_, _ = c.Submit(ctx, frontierapi.SubmitRequest{URLs: links})
				}
			}
			results = append(results, res)
		}
		_, _ = c.Results(ctx, frontierapi.ResultsRequest{LeaseID: l.LeaseID, WorkerID: id, Results: results})
	}
}

// TestBrowser drives headless Chromium against the dashboard of a frontier
// service while two workers crawl the synthetic web through it: the numbers
// and the chart must update live, and the analysis forms must answer. It
// saves a screenshot (into testdata/dashboard.png when
// CRAWLKIT_UPDATE_SCREENSHOT=1, for the README).
func TestBrowser(t *testing.T) {
	exe := chromium(t)
	if testing.Short() {
		t.Skip("starts a browser")
	}
	update := os.Getenv("CRAWLKIT_UPDATE_SCREENSHOT") == "1"
	cfg := crawltest.Config{Hosts: 12, PagesPerHost: 40, LinksPerPage: 8, Seed: 5,
		CrawlDelay: 300 * time.Millisecond, Latency: 15 * time.Millisecond}
	if update {
		// A crawl that is still going when the screenshot is taken.
		cfg.Hosts, cfg.PagesPerHost = 24, 120
	}
	web, err := crawltest.NewWeb(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer web.Close()
	cache := robots.NewCache(robots.Config{Client: web.Client(), UserAgent: "crawlkit/1.0"})
	svc, err := frontierapi.New(frontierapi.Config{Token: "t", Robots: cache, Traps: trap.New(trap.Config{}), Delay: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	api := httptest.NewServer(svc)
	defer api.Close()
	dash, err := dashboard.New(dashboard.Config{Source: svc.Snapshot, Analyzer: svc, Interval: 250 * time.Millisecond, Title: "crawlkit · crawltest",
		AnalysisToken: "t"})
	if err != nil {
		t.Fatal(err)
	}
	defer dash.Close()
	page := httptest.NewServer(dash)
	defer page.Close()

	var seeds []frontierapi.SubmitURL
	for _, s := range web.Seeds() {
		seeds = append(seeds, frontierapi.SubmitURL{URL: s})
	}
	if _, err := svc.Submit(frontierapi.SubmitRequest{URLs: seeds}); err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	client := frontierapi.NewClient(api.URL, "t", nil)
	for _, id := range []string{"worker-a", "worker-b"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			crawl(ctx, client, web.Client(), id)
		}()
	}
	defer func() {
		stop()
		wg.Wait()
	}()

	bctx, stage, stopBrowser := startBrowser(t, exe, chromedp.Flag("disable-quic", true))
	defer stopBrowser()

	// quick is the context of a read that should answer at once.
	quick := func() context.Context {
		ctx, cancel := context.WithTimeout(bctx, 60*time.Second)
		t.Cleanup(cancel)
		return ctx
	}
	num := func(id string) int64 {
		t.Helper()
		s, err := chromedp.Run(quick(), chromedp.Text(chromedp.ID(id)))
		if err != nil {
			t.Fatal(err)
		}
		n, err := strconv.ParseInt(strings.ReplaceAll(strings.TrimSpace(s), ",", ""), 10, 64)
		if err != nil {
			t.Fatalf("#%s shows %q", id, s)
		}
		return n
	}
	points := func() int64 {
		t.Helper()
		n, err := chromedp.Run(quick(), chromedp.Evaluate[int64](`Number(document.getElementById("chart-info").dataset.points)`))
		if err != nil {
			t.Fatal(err)
		}
		return n
	}

	if err := stage("page alive", 90*time.Second,
		chromedp.Navigate(page.URL+"/"),
		chromedp.WaitVisible(chromedp.ID("chart")),
		chromedp.Poll[chromedp.Void](`document.getElementById("conn").textContent === "live"`),
		chromedp.Poll[chromedp.Void](`Number(document.getElementById("urls-fetched").textContent.replace(/,/g, "")) >= 5`),
	); err != nil {
		t.Fatalf("page did not come alive: %v", err)
	}
	f1, p1 := num("urls-fetched"), points()
	if server := svc.Stats().URLs.Fetched; f1 > server {
		t.Fatalf("page shows %d fetched, more than the service's %d", f1, server)
	}
	// Live updates: more pages and more chart samples arrive without a
	// reload.
	waitMore := `Number(document.getElementById("urls-fetched").textContent.replace(/,/g, "")) > ` + strconv.FormatInt(f1, 10) +
		` && Number(document.getElementById("chart-info").dataset.points) > ` + strconv.FormatInt(p1, 10)
	if err := stage("live update", 90*time.Second, chromedp.Poll[chromedp.Void](waitMore)); err != nil {
		t.Fatalf("numbers or chart did not update (fetched %d, points %d): %v", f1, p1, err)
	}
	if f2 := num("urls-fetched"); f2 <= f1 || f2 > svc.Stats().URLs.Fetched {
		t.Fatalf("fetched went from %d to %d (service: %d)", f1, f2, svc.Stats().URLs.Fetched)
	}
	if hosts := num("hosts-discovered"); hosts != int64(len(web.Seeds())) {
		t.Errorf("page shows %d hosts, the web has %d", hosts, len(web.Seeds()))
	}
	// The chart has drawn a line: some pixel has the line's colour.
	drawn, err := chromedp.Run(quick(), chromedp.Evaluate[bool](`(() => {
		const c = document.getElementById("chart"), g = c.getContext("2d");
		const d = g.getImageData(0, 0, c.width, c.height).data;
		for (let i = 0; i < d.length; i += 4) if (d[i] === 0x4f && d[i+1] === 0xb3 && d[i+2] === 0xff) return true;
		return false; })()`))
	if err != nil || !drawn {
		t.Fatalf("no throughput line on the chart (%v)", err)
	}

	// URL and host analysis. The forms are submitted with Enter, as a
	// keyboard user would: a mouse click lands on coordinates, which the
	// page's live updates may move between the lookup and the click.
	// Each answer is awaited as either its report or an error message.
	analyze := func(name, input, result, answer, value string) {
		t.Helper()
		if err := stage(name, 60*time.Second,
			chromedp.SendKeys(chromedp.ID(input), value+kb.Enter),
			chromedp.Poll[chromedp.Void](`document.getElementById("`+answer+`") || document.querySelector("#`+result+` .error")`),
		); err != nil {
			t.Fatalf("%s of %s: %v", name, value, err)
		}
		msg, err := chromedp.Run(quick(), chromedp.Evaluate[string](`(document.querySelector("#`+result+` .error") || {}).textContent || ""`))
		if err != nil || msg != "" {
			t.Fatalf("%s of %s failed: %q (%v)", name, value, msg, err)
		}
	}
	// Analysis needs the API token, which the page asks for.
	if err := stage("token", 60*time.Second,
		chromedp.WaitVisible(chromedp.ID("token-input")),
		chromedp.SendKeys(chromedp.ID("token-input"), "t"),
	); err != nil {
		t.Fatalf("token field: %v", err)
	}
	seed := web.Seeds()[0]
	host := crawltest.HostName(0)
	analyze("URL analysis", "url-input", "url-result", "url-state", seed)
	state, err := chromedp.Run(quick(), chromedp.Text(chromedp.ID("url-state")))
	if err != nil || state != "fetched" {
		t.Errorf("URL analysis of the seed says %q (%v)", state, err)
	}
	analyze("host analysis", "host-input", "host-result", "host-fetched", host)
	if n := num("host-fetched"); n < 1 {
		t.Errorf("host analysis of %s says %d fetched", host, n)
	}

	if update {
		// For the README: let the chart fill for twenty seconds first.
		if err := stage("chart fill", 90*time.Second, chromedp.Poll[chromedp.Void](`Number(document.getElementById("chart-info").dataset.points) >= 80`)); err != nil {
			t.Fatal(err)
		}
	}
	png, err := chromedp.Run(quick(), chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "dashboard.png")
	if update {
		out = filepath.Join("testdata", "dashboard.png")
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(out, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot %s (%d bytes); page showed %d then more fetched pages; chart had %d points", out, len(png), f1, points())
}

// TestBrowserPage drives headless Chromium, in the America/New_York time
// zone, against a dashboard sampled by hand: a chart of one sample shows it,
// times of another day carry their local date, and the page reconnects
// after its event stream was refused.
func TestBrowserPage(t *testing.T) {
	exe := chromium(t)
	if testing.Short() {
		t.Skip("starts a browser")
	}
	// 03:00 UTC on 2 January is 22:00 on 1 January in New York.
	seen := time.Date(2030, 1, 2, 3, 0, 0, 0, time.UTC)
	src := func() dashboard.Snapshot {
		return dashboard.Snapshot{
			URLs:       dashboard.URLCounts{Fetched: 3},
			Throughput: dashboard.Throughput{Current: 2},
			WorkerList: []dashboard.Worker{{ID: "w1", LastSeen: seen, Active: true}},
			NotFetched: map[string]int64{"robots": 4, "out_of_scope": 9},
			Waiting:    dashboard.Waiting{InFlight: 2, RetryAfterHosts: 1, RetryAfterUntil: seen.Add(time.Hour)},
		}
	}
	dash, err := dashboard.New(dashboard.Config{Source: src, Interval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer dash.Close()
	dash.SampleAt(seen)
	// refuse makes /api/events answer 503, as a proxy in front of a
	// restarting server would answer 502.
	var refuse atomic.Bool
	var refused atomic.Int64
	refuse.Store(true)
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/events" && refuse.Load() {
			refused.Add(1)
			http.Error(w, "restarting", http.StatusServiceUnavailable)
			return
		}
		dash.ServeHTTP(w, r)
	}))
	defer page.Close()

	// rebound.test resolves to the loopback address, as an attacker's
	// name does after DNS rebinding.
	bctx, stage, stopBrowser := startBrowser(t, exe, chromedp.Env("TZ=America/New_York"),
		chromedp.Flag("host-resolver-rules", "MAP rebound.test 127.0.0.1"))
	defer stopBrowser()
	eval := func(expr string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(bctx, 60*time.Second)
		defer cancel()
		s, err := chromedp.Run(ctx, chromedp.Evaluate[string](expr))
		if err != nil {
			t.Fatalf("%s: %v", expr, err)
		}
		return s
	}

	if err := stage("page loaded", 60*time.Second,
		chromedp.Navigate(page.URL+"/"),
		chromedp.Poll[chromedp.Void](`document.getElementById("chart-info").dataset.points === "1" && document.querySelector("#workers tbody td:nth-child(4)")`),
	); err != nil {
		t.Fatalf("page did not load: %v", err)
	}
	if tz := eval(`Intl.DateTimeFormat().resolvedOptions().timeZone`); tz != "America/New_York" {
		t.Skipf("Chromium ignores TZ (time zone %q)", tz)
	}
	// One sample: the chart shows it in the line's colour.
	drawn := eval(`(() => {
		const c = document.getElementById("chart"), g = c.getContext("2d");
		const d = g.getImageData(0, 0, c.width, c.height).data;
		for (let i = 0; i < d.length; i += 4) if (d[i] === 0x4f && d[i+1] === 0xb3 && d[i+2] === 0xff) return "yes";
		return "no"; })()`)
	if drawn != "yes" {
		t.Errorf("a chart of one sample shows nothing")
	}
	if got := eval(`document.querySelector("#workers tbody td:nth-child(4)").textContent`); got != "2030-01-01 22:00:00" {
		t.Errorf("worker last seen at %s shows as %q, want 2030-01-01 22:00:00", seen, got)
	}
	// Reasons, most frequent first, and what the crawl waits for.
	if got := eval(`[...document.querySelectorAll("#not-fetched tbody tr")].map((r) => r.cells[0].textContent + "=" + r.cells[1].textContent).join(" ")`); got != "out_of_scope=9 robots=4" {
		t.Errorf("not fetched shows %q", got)
	}
	if got := eval(`document.getElementById("waiting").textContent`); got != "2 fetches in flight · Retry-After of 1 host, until 2030-01-01 23:00:00" {
		t.Errorf("waiting shows %q", got)
	}
	if got := eval(`String(document.getElementById("token-row").hidden)`); got != "true" {
		t.Errorf("token field hidden = %s on a dashboard without a token", got)
	}

	// The stream was refused: the page says so, and once the server
	// answers again it goes live without a reload.
	if err := stage("refused", 30*time.Second,
		chromedp.Poll[chromedp.Void](`document.getElementById("conn").textContent === "reconnecting…"`),
	); err != nil || refused.Load() == 0 {
		t.Fatalf("refused stream not shown (%d refusals): %v", refused.Load(), err)
	}
	refuse.Store(false)
	if err := stage("reconnect", 30*time.Second,
		chromedp.Poll[chromedp.Void](`document.getElementById("conn").textContent === "live"`),
	); err != nil {
		t.Fatalf("page did not reconnect after %d refusals: %v", refused.Load(), err)
	}
	dash.SampleAt(seen.Add(time.Second))
	if err := stage("live sample", 30*time.Second,
		chromedp.Poll[chromedp.Void](`document.getElementById("chart-info").dataset.points === "2"`),
	); err != nil {
		t.Fatalf("sample after the reconnect not shown (%s points): %v", eval(`document.getElementById("chart-info").dataset.points`), err)
	}

	// DNS rebinding: the page of another name that now resolves to the
	// dashboard's address is refused, and so are its script's requests.
	_, port, _ := net.SplitHostPort(page.Listener.Addr().String())
	if err := stage("rebound page", 30*time.Second, chromedp.Navigate("http://rebound.test:"+port+"/")); err != nil {
		t.Fatal(err)
	}
	body := eval(`document.body.textContent`)
	if !strings.Contains(body, "is not an address of this server") || strings.Contains(body, "Throughput") {
		t.Errorf("the dashboard answered a rebound name: %q", body)
	}
	status := eval(`(() => { const x = new XMLHttpRequest(); x.open("GET", "/api/snapshot", false); x.send(); return String(x.status); })()`)
	if status != "403" {
		t.Errorf("the rebound page's script read /api/snapshot: %s", status)
	}
}

// startBrowser starts headless Chromium (exe) with the options the tests
// share and extra ones, and returns its context and a stage runner; the
// browser is stopped when the test ends. The browser lives as long as the
// context of the first call, so that call has no deadline; every stage has
// its own, and the log says how long each took, so a slow machine shows
// where the time went. The caller defers stop after the servers the page
// talks to are started, so that the browser, and its event stream, end
// before those servers close (httptest.Server.Close waits for it).
func startBrowser(t *testing.T, exe string, extra ...chromedp.ExecAllocatorOption) (bctx context.Context, stage func(name string, limit time.Duration, steps ...chromedp.Action[chromedp.Void]) error, stop func()) {
	t.Helper()
	opts := append([]chromedp.ExecAllocatorOption{
		chromedp.ExecPath(exe),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1360, 1100),
	}, extra...)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	bctx, cancelBrowser := chromedp.NewContext(actx)
	stop = func() {
		cancelBrowser()
		cancelAlloc()
	}
	began := time.Now()
	if err := chromedp.Do(bctx); err != nil {
		stop()
		t.Fatalf("starting Chromium: %v", err)
	}
	t.Logf("Chromium started in %v", time.Since(began).Round(time.Millisecond))
	stage = func(name string, limit time.Duration, steps ...chromedp.Action[chromedp.Void]) error {
		t.Helper()
		sctx, cancel := context.WithTimeout(bctx, limit)
		defer cancel()
		began := time.Now()
		err := chromedp.Do(sctx, steps...)
		t.Logf("%s: %v", name, time.Since(began).Round(time.Millisecond))
		return err
	}
	return bctx, stage, stop
}
