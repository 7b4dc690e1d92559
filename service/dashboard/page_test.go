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

	"github.com/crawlkit/crawlkit/service/dashboard"
)

// pageInput is what testdata/harness.js feeds the page.
type pageInput struct {
	Responses map[string]any `json:"responses"`
	// Statuses are the HTTP statuses of responses other than 200.
	Statuses map[string]int `json:"statuses,omitempty"`
	Events   []any          `json:"events,omitempty"`
	URL      string         `json:"url,omitempty"`
	Host     string         `json:"host,omitempty"`
	// Token is typed into the API token field before the analyses.
	Token string `json:"token,omitempty"`
}

// pageElement is what the page put in one element.
type pageElement struct {
	Text string            `json:"text"`
	HTML string            `json:"html"`
	Data map[string]string `json:"data"`
	// Hidden is the element's hidden property (true unless the page
	// showed it).
	Hidden bool `json:"hidden"`
}

// pageRequest is one request of the page.
type pageRequest struct {
	Path    string            `json:"path"`
	Headers map[string]string `json:"headers"`
}

type pageResult struct {
	Errors   []string               `json:"errors"`
	Elements map[string]pageElement `json:"elements"`
	Points   int                    `json:"points"`
	Requests []pageRequest          `json:"requests"`
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
		Time:          t0,
		TopHosts:      []dashboard.HostActivity{{Host: hostile + "top", Fetched: 1}},
		BlockedHosts:  []dashboard.BlockedHost{{Host: hostile + "blocked", Reason: hostile + "reason", Until: t0}},
		WorkerList:    []dashboard.Worker{{ID: hostile + "worker"}},
		NotFetched:    map[string]int64{hostile + "notfetched": 1},
		Deferred:      map[string]int64{hostile + "deferred": 2},
		LinksRejected: map[string]int64{hostile + "rejectedlink": 3},
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
		"#top-hosts tbody":      "top",
		"#blocked-hosts tbody":  "reason",
		"#workers tbody":        "worker",
		"#not-fetched tbody":    "notfetched",
		"#deferred tbody":       "deferred",
		"#links-rejected tbody": "rejectedlink",
		"url-result":            "trap",
		"host-result":           "path",
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
			// Reasons and waiting of the wrong types.
			map[string]any{"snapshot": map[string]any{"not_fetched": []any{1}, "deferred": "x", "links_rejected": map[string]any{"a": "b", "c": nil},
				"waiting": map[string]any{"in_flight": "x", "next_robots_retry": 5, "robots_retry_hosts": 1, "retry_after_hosts": 2, "retry_after_until": nil}}},
			map[string]any{"snapshot": map[string]any{"waiting": "x"}},
		},
		URL:  "http://a.test/",
		Host: "a.test",
	})
	if len(res.Errors) > 0 {
		t.Fatalf("page errors: %v", res.Errors)
	}
	for id, want := range map[string]string{"tp-current": "–", "urls-fetched": "–", "workers-active": "–", "waiting": "–"} {
		if got := res.Elements[id].Text; got != want {
			t.Errorf("#%s shows %q, want %q", id, got, want)
		}
	}
	for _, id := range []string{"url-result", "host-result"} {
		if html := res.Elements[id].HTML; strings.Contains(html, `class="error"`) || !strings.Contains(html, "<dl>") {
			t.Errorf("#%s: %s", id, html)
		}
	}
	for _, id := range []string{"#not-fetched tbody", "#deferred tbody", "#links-rejected tbody"} {
		if html := res.Elements[id].HTML; !strings.Contains(html, "none reported") {
			t.Errorf("%q: %s", id, html)
		}
	}
}

// TestPageReasons: the reasons URLs were not fetched show most frequent
// first, without the zero counts, the worker counts show (parked pages
// too), and the waiting line says what the crawl waits for.
func TestPageReasons(t *testing.T) {
	snap := dashboard.Snapshot{
		Time:       t0,
		NotFetched: map[string]int64{"robots": 5, "out_of_scope": 12, "trap": 5, "none": 0},
		Deferred:   map[string]int64{"crawl_delay": 7},
		Workers:    dashboard.WorkerCounts{Active: 3, Idle: 1, Parked: 12},
		Waiting: dashboard.Waiting{InFlight: 3, CrawlDelayHosts: 2, LongestCrawlDelay: 10 * time.Second,
			RobotsRetryHosts: 1, NextRobotsRetry: t0.Add(time.Minute), RetryAfterHosts: 4, RetryAfterUntil: t0.Add(time.Hour)},
	}
	res := runPage(t, pageInput{Responses: map[string]any{"api/snapshot": map[string]any{"snapshot": snap}}})
	if len(res.Errors) > 0 {
		t.Fatalf("page errors: %v", res.Errors)
	}
	html := res.Elements["#not-fetched tbody"].HTML
	order := []int{strings.Index(html, ">out_of_scope<"), strings.Index(html, ">robots<"), strings.Index(html, ">trap<")}
	if order[0] < 0 || order[0] > order[1] || order[1] > order[2] || strings.Contains(html, ">none<") || !strings.Contains(html, ">12<") {
		t.Errorf("not fetched, want out_of_scope 12, robots 5, trap 5 and no zero count: %s", html)
	}
	if html := res.Elements["#deferred tbody"].HTML; !strings.Contains(html, ">crawl_delay<") || !strings.Contains(html, ">7<") {
		t.Errorf("deferred: %s", html)
	}
	if html := res.Elements["#links-rejected tbody"].HTML; !strings.Contains(html, "none reported") {
		t.Errorf("links rejected: %s", html)
	}
	for id, want := range map[string]string{"workers-active": "3", "workers-idle": "1", "workers-parked": "12"} {
		if got := res.Elements[id].Text; got != want {
			t.Errorf("#%s shows %q, want %q", id, got, want)
		}
	}
	w := res.Elements["waiting"].Text
	for _, want := range []string{"3 fetches in flight", "politeness delay of 2 hosts (longest 10 s)", "robots.txt of 1 host, next try ", "Retry-After of 4 hosts, until "} {
		if !strings.Contains(w, want) {
			t.Errorf("waiting line %q lacks %q", w, want)
		}
	}

	// A source that reports waiting for nothing says so.
	res = runPage(t, pageInput{Responses: map[string]any{"api/snapshot": map[string]any{"snapshot": map[string]any{"waiting": map[string]any{"in_flight": 0}}}}})
	if w := res.Elements["waiting"].Text; w != "nothing" || len(res.Errors) > 0 {
		t.Errorf("idle waiting line %q, errors %v", w, res.Errors)
	}
}

// TestPageAnalysisToken: a dashboard whose analysis needs the API token
// shows the token field, sends the token with the analysis requests only,
// and says so when it is missing.
func TestPageAnalysisToken(t *testing.T) {
	in := pageInput{
		Responses: map[string]any{"api/snapshot": map[string]any{"snapshot": map[string]any{}, "analysis_token": true},
			"api/url": map[string]any{"error": "analysis needs the API token"}, "api/host": map[string]any{}},
		Statuses: map[string]int{"api/url": 401},
		URL:      "http://a.test/",
		Host:     "a.test",
	}
	res := runPage(t, in)
	if len(res.Errors) > 0 {
		t.Fatalf("page errors: %v", res.Errors)
	}
	if res.Elements["token-row"].Hidden {
		t.Error("the token field is hidden")
	}
	if html := res.Elements["url-result"].HTML; !strings.Contains(html, "enter the API token") {
		t.Errorf("url-result without a token: %s", html)
	}
	in.Token = " s3cret "
	res = runPage(t, in)
	if html := res.Elements["url-result"].HTML; !strings.Contains(html, "the API token was refused") {
		t.Errorf("url-result with a refused token: %s", html)
	}
	for _, r := range res.Requests {
		auth := r.Headers["Authorization"]
		analysis := strings.HasPrefix(r.Path, "api/url") || strings.HasPrefix(r.Path, "api/host")
		if analysis && auth != "Bearer s3cret" || !analysis && auth != "" {
			t.Errorf("%s sent Authorization %q", r.Path, auth)
		}
	}
	if len(res.Requests) < 3 {
		t.Errorf("requests %+v", res.Requests)
	}

	// Without the flag the field stays hidden.
	res = runPage(t, pageInput{Responses: map[string]any{"api/snapshot": map[string]any{"snapshot": map[string]any{}}}})
	if el, ok := res.Elements["token-row"]; ok && !el.Hidden {
		t.Error("the token field shows on a dashboard that needs no token")
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

// TestPageCluster: a snapshot with a Cluster shows its panel, the nodes
// (a silent one with its error) and the partitions (a moving one without
// an owner), escaped; a snapshot without one keeps the panel hidden.
func TestPageCluster(t *testing.T) {
	snap := dashboard.Snapshot{Time: t0, Cluster: &dashboard.Cluster{
		Lag: 7,
		Nodes: []dashboard.ClusterNode{
			{ID: "node-a", Address: "10.0.0.1:9090", Partitions: 3, Held: 5, Fetched: 1234, Rate: 12.5, Average: 9.25},
			{ID: hostile + "b", Error: hostile + "refused"},
		},
		Partitions: []dashboard.ClusterPartition{
			{ID: 0, Owner: "node-a", Pending: 2, AckPending: 5, Lag: 7, AckFloor: 40, LastSeq: 52},
			{ID: 1},
		},
	}}
	res := runPage(t, pageInput{Responses: map[string]any{"api/snapshot": map[string]any{"snapshot": snap}}})
	if len(res.Errors) > 0 {
		t.Fatalf("page errors: %v", res.Errors)
	}
	if res.Elements["cluster"].Hidden {
		t.Error("the cluster panel is hidden")
	}
	if got, want := res.Elements["cluster-summary"].Text, "2 nodes, 1 of 2 partitions owned, lag 7"; got != want {
		t.Errorf("summary %q, want %q", got, want)
	}
	nodes, parts := res.Elements["#cluster-nodes tbody"].HTML, res.Elements["#cluster-partitions tbody"].HTML
	for _, want := range []string{"node-a", "1,234", "12.5", "9.3", "&lt;img src=x onerror=alert(1)&gt;refused"} {
		if !strings.Contains(nodes, want) {
			t.Errorf("nodes table lacks %q: %s", want, nodes)
		}
	}
	for _, want := range []string{"40 / 52", "moving"} {
		if !strings.Contains(parts, want) {
			t.Errorf("partitions table lacks %q: %s", want, parts)
		}
	}
	if strings.Contains(nodes, "<img") {
		t.Errorf("nodes table holds markup from the crawl: %s", nodes)
	}

	res = runPage(t, pageInput{Responses: map[string]any{"api/snapshot": map[string]any{"snapshot": dashboard.Snapshot{Time: t0}}}})
	if !res.Elements["cluster"].Hidden {
		t.Error("the cluster panel shows for a crawl on one machine")
	}
}
