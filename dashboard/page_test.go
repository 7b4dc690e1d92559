package dashboard_test

import (
	"encoding/json"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/dashboard"
)

// pageInput is what testdata/harness.js feeds the page.
type pageInput struct {
	Responses map[string]any `json:"responses"`
	Events    []any          `json:"events,omitempty"`
	URL       string         `json:"url,omitempty"`
	Host      string         `json:"host,omitempty"`
}

// pageElement is what the page put in one element.
type pageElement struct {
	Text string            `json:"text"`
	HTML string            `json:"html"`
	Data map[string]string `json:"data"`
}

type pageResult struct {
	Errors   []string               `json:"errors"`
	Elements map[string]pageElement `json:"elements"`
	Points   int                    `json:"points"`
}

// runPage runs the served app.js in Node under testdata/harness.js, a
// stand-in for the browser's DOM, so that the page's rendering is tested
// where no Chromium is installed. It skips the test without Node.
func runPage(t *testing.T, in pageInput) pageResult {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("no Node on this machine")
	}
	d, err := dashboard.New(dashboard.Config{Source: func() dashboard.Snapshot { return dashboard.Snapshot{} }, Interval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	rec := httptest.NewRecorder()
	d.ServeHTTP(rec, httptest.NewRequest("GET", "/app.js", nil))
	if rec.Code != 200 {
		t.Fatalf("app.js: %d", rec.Code)
	}
	dir := t.TempDir()
	app, input := filepath.Join(dir, "app.js"), filepath.Join(dir, "input.json")
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(app, rec.Body.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(input, b, 0o644); err != nil {
		t.Fatal(err)
	}
	harness, err := filepath.Abs(filepath.Join("testdata", "harness.js"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, harness, app, input)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	var res pageResult
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("harness output %q: %v", out, err)
	}
	return res
}

// hostile is crawl data that would run a script if the page put it into
// HTML unescaped.
const hostile = `"'><img src=x onerror=alert(1)>`

// TestPageEscapesCrawlData: host names, URLs, reasons, worker IDs, robots
// rules and errors from the crawl reach the page as text, never as markup.
func TestPageEscapesCrawlData(t *testing.T) {
	snap := dashboard.Snapshot{
		Time:         t0,
		TopHosts:     []dashboard.HostActivity{{Host: hostile + "top", Fetched: 1}},
		BlockedHosts: []dashboard.BlockedHost{{Host: hostile + "blocked", Reason: hostile + "reason", Until: t0}},
		WorkerList:   []dashboard.Worker{{ID: hostile + "worker"}},
	}
	ur := dashboard.URLReport{URL: hostile, Normalized: hostile + "norm", Host: hostile + "host", State: hostile + "state",
		Fetches:    []dashboard.FetchRecord{{URL: hostile, Host: hostile, Time: t0, Category: hostile + "cat", Error: hostile + "err", ContentHash: hostile + "hash"}},
		Robots:     &dashboard.RobotsDecision{Reason: hostile + "why", Rule: hostile + "rule"},
		TrapReason: hostile + "trap"}
	hr := dashboard.HostReport{Host: hostile + "h", Robots: &dashboard.RobotsState{Source: hostile + "src", Error: hostile + "rerr",
		BlockedPaths: []string{hostile + "path"}}}
	res := runPage(t, pageInput{
		Responses: map[string]any{
			"api/snapshot": map[string]any{"snapshot": snap, "history": []dashboard.Point{}},
			"api/url":      ur,
			"api/host":     hr,
		},
		Events: []any{map[string]any{"snapshot": snap}},
		URL:    hostile,
		Host:   hostile,
	})
	if len(res.Errors) > 0 {
		t.Fatalf("page errors: %v", res.Errors)
	}
	for id, el := range res.Elements {
		if strings.Contains(el.HTML, "<img") {
			t.Errorf("%q holds markup from the crawl: %s", id, el.HTML)
		}
	}
	for id, want := range map[string]string{
		"#top-hosts tbody":     "top",
		"#blocked-hosts tbody": "reason",
		"#workers tbody":       "worker",
		"url-result":           "trap",
		"host-result":          "path",
	} {
		if html := res.Elements[id].HTML; !strings.Contains(html, "&lt;img src=x onerror=alert(1)&gt;"+want) {
			t.Errorf("%q does not show the escaped %s: %s", id, want, html)
		}
	}
}

// TestPageMissingFields: answers that lack fields (a proxy's empty JSON,
// an older or other server) show as dashes, without script errors.
func TestPageMissingFields(t *testing.T) {
	res := runPage(t, pageInput{
		Responses: map[string]any{
			"api/snapshot": map[string]any{"snapshot": map[string]any{}},
			"api/url":      map[string]any{},
			"api/host":     map[string]any{},
		},
		Events: []any{
			map[string]any{"snapshot": map[string]any{}},
			map[string]any{"snapshot": map[string]any{"top_hosts": []any{map[string]any{}}, "worker_list": []any{map[string]any{}}}},
			map[string]any{},
		},
		URL:  "http://a.test/",
		Host: "a.test",
	})
	if len(res.Errors) > 0 {
		t.Fatalf("page errors: %v", res.Errors)
	}
	for id, want := range map[string]string{"tp-current": "–", "urls-fetched": "–", "workers-active": "–"} {
		if got := res.Elements[id].Text; got != want {
			t.Errorf("#%s shows %q, want %q", id, got, want)
		}
	}
	for _, id := range []string{"url-result", "host-result"} {
		if html := res.Elements[id].HTML; strings.Contains(html, `class="error"`) || !strings.Contains(html, "<dl>") {
			t.Errorf("#%s: %s", id, html)
		}
	}
}

// TestPageChartWindow: the page keeps the chart's history for the
// dashboard's Config.Window, not a fixed hour.
func TestPageChartWindow(t *testing.T) {
	for _, tc := range []struct {
		window time.Duration
		want   int
	}{
		{3 * time.Hour, 121},   // two hours of points at one a minute: all kept
		{10 * time.Minute, 11}, // only the last ten minutes
		{0, 61},                // a server that does not say: an hour
	} {
		var hist []dashboard.Point
		for i := range 121 {
			hist = append(hist, dashboard.Point{Time: t0.Add(time.Duration(i) * time.Minute), Throughput: 1})
		}
		body := map[string]any{"snapshot": dashboard.Snapshot{Time: t0}, "history": hist}
		if tc.window > 0 {
			body["window_ms"] = tc.window.Milliseconds()
		}
		res := runPage(t, pageInput{Responses: map[string]any{"api/snapshot": body}})
		if len(res.Errors) > 0 {
			t.Fatalf("page errors: %v", res.Errors)
		}
		if res.Points != tc.want {
			t.Errorf("window %v: the page keeps %d of 121 points, want %d", tc.window, res.Points, tc.want)
		}
	}
}

// TestPageShowsReasons: the page says why URLs were not fetched, by
// reason and largest first, and what the crawl waits for.
func TestPageShowsReasons(t *testing.T) {
	snap := dashboard.Snapshot{
		Time:          t0,
		NotFetched:    map[string]int64{"robots": 7, "guard": 2},
		Deferred:      map[string]int64{"http-error": 3},
		LinksRejected: map[string]int64{"scope": 40, hostile: 1},
		Waiting:       &dashboard.Waiting{InFlight: 2, CrawlDelayHosts: 3, RobotsRetryHosts: 1, NextRobotsRetry: t0},
	}
	res := runPage(t, pageInput{
		Responses: map[string]any{"api/snapshot": map[string]any{"snapshot": snap, "history": []dashboard.Point{}}},
		Events:    []any{map[string]any{"snapshot": snap}},
	})
	if len(res.Errors) > 0 {
		t.Fatalf("page errors: %v", res.Errors)
	}
	html := res.Elements["#reasons tbody"].HTML
	for _, want := range []string{"scope", "robots", "guard", "http-error", "(not fetched)", "(put back)", "(link not followed)"} {
		if !strings.Contains(html, want) {
			t.Errorf("reasons table lacks %q: %s", want, html)
		}
	}
	if strings.Contains(html, "<img") {
		t.Errorf("reasons table holds markup from the crawl: %s", html)
	}
	if i, j := strings.Index(html, "scope"), strings.Index(html, "robots"); i < 0 || j < 0 || i > j {
		t.Errorf("reasons not largest first: %s", html)
	}
	if w := res.Elements["waiting"].Text; !strings.Contains(w, "3 hosts on Crawl-delay") || !strings.Contains(w, "1 unreachable robots.txt") {
		t.Errorf("waiting line = %q", w)
	}
}
