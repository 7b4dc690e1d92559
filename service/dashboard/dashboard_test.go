package dashboard_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/service/dashboard"
)

var t0 = time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)

// counterSource returns snapshots whose fetched count grows by one per call.
func counterSource() (dashboard.Source, *atomic.Int64) {
	var n atomic.Int64
	return func() dashboard.Snapshot {
		v := n.Add(1)
		return dashboard.Snapshot{
			URLs:        dashboard.URLCounts{Fetched: v, Queued: 100 - v},
			Throughput:  dashboard.Throughput{Current: float64(v) / 2, Average: 1, Peak: float64(v) / 2},
			QueueByBand: []int64{v, 2 * v},
		}
	}, &n
}

func TestNewRequiresSource(t *testing.T) {
	if _, err := dashboard.New(dashboard.Config{}); !errors.Is(err, dashboard.ErrNoSource) {
		t.Fatalf("got %v", err)
	}
}

func TestSnapshotAndHistoryWindow(t *testing.T) {
	src, _ := counterSource()
	d, err := dashboard.New(dashboard.Config{Source: src, Interval: -1, Window: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for i := range 8 {
		d.SampleAt(t0.Add(time.Duration(i) * time.Second))
	}
	snap, hist := d.Snapshot()
	if snap.URLs.Fetched != 8 || !snap.Time.Equal(t0.Add(7*time.Second)) {
		t.Fatalf("snapshot %+v", snap)
	}
	// A 5 s window at the default 1 s step keeps the last five points.
	if len(hist) != 5 || hist[0].Fetched != 4 || hist[4].Fetched != 8 || hist[4].Throughput != 4 || hist[4].Queued != 92 {
		t.Fatalf("history %+v", hist)
	}

	ts := httptest.NewServer(d)
	defer ts.Close()
	resp, err := http.Get(ts.URL + "/api/snapshot")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Snapshot dashboard.Snapshot `json:"snapshot"`
		History  []dashboard.Point  `json:"history"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	if body.Snapshot.URLs.Fetched != 8 || len(body.History) != 5 || body.Snapshot.QueueByBand[1] != 16 {
		t.Fatalf("api/snapshot: %+v", body)
	}
}

func TestPageIsSelfContained(t *testing.T) {
	src, _ := counterSource()
	d, _ := dashboard.New(dashboard.Config{Source: src, Interval: -1, Title: `<crawl & co>`})
	defer d.Close()
	ts := httptest.NewServer(d)
	defer ts.Close()
	get := func(path string) (string, http.Header) {
		resp, err := http.Get(ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d", path, resp.StatusCode)
		}
		return string(b), resp.Header
	}
	page, h := get("/")
	if !strings.Contains(page, "&lt;crawl &amp; co&gt;") || strings.Contains(page, "<crawl") {
		t.Errorf("title not escaped")
	}
	if !strings.Contains(h.Get("Content-Security-Policy"), "default-src 'self'") {
		t.Errorf("CSP %q", h.Get("Content-Security-Policy"))
	}
	js, _ := get("/app.js")
	css, _ := get("/app.css")
	// Offline: nothing is loaded from another origin.
	for name, text := range map[string]string{"index.html": page, "app.js": js, "app.css": css} {
		for _, bad := range []string{"http://", "https://", "//cdn", "@import"} {
			if strings.Contains(text, bad) {
				t.Errorf("%s refers to %q", name, bad)
			}
		}
	}
	for _, id := range []string{"tp-current", "urls-fetched", "chart", "bands", "errors", "top-hosts", "blocked-hosts", "workers", "url-form", "host-form",
		"not-fetched", "deferred", "links-rejected", "waiting", "token-row", "token-input"} {
		if !strings.Contains(page, `id="`+id+`"`) {
			t.Errorf("page lacks #%s", id)
		}
	}
}

func TestEvents(t *testing.T) {
	src, _ := counterSource()
	d, _ := dashboard.New(dashboard.Config{Source: src, Interval: -1})
	ts := httptest.NewServer(d)
	defer ts.Close()
	resp, err := http.Get(ts.URL + "/api/events")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	r := bufio.NewReader(resp.Body)
	// The stream opens with a retry hint and a comment; read up to them,
	// so the subscription is registered before the samples are taken.
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(line, ": open") {
			break
		}
	}
	d.SampleAt(t0)
	d.SampleAt(t0.Add(time.Second))
	var got []int64
	for len(got) < 2 {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		data, ok := strings.CutPrefix(strings.TrimSpace(line), "data: ")
		if !ok {
			continue
		}
		var ev struct {
			Snapshot dashboard.Snapshot `json:"snapshot"`
			Point    dashboard.Point    `json:"point"`
		}
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			t.Fatal(err)
		}
		got = append(got, ev.Snapshot.URLs.Fetched)
		if !ev.Point.Time.Equal(t0.Add(time.Duration(len(got)-1) * time.Second)) {
			t.Fatalf("point %+v", ev.Point)
		}
	}
	if got[0] != 1 || got[1] != 2 {
		t.Fatalf("events carried %v", got)
	}
	// Close ends the stream.
	d.Close()
	if _, err := io.Copy(io.Discard, r); err != nil {
		t.Fatalf("stream after Close: %v", err)
	}
}

func TestSamplerGoroutineStopsOnClose(t *testing.T) {
	count, n := counterSource()
	third := make(chan struct{})
	src := func() dashboard.Snapshot {
		s := count()
		if s.URLs.Fetched == 3 {
			close(third)
		}
		return s
	}
	d, _ := dashboard.New(dashboard.Config{Source: src, Interval: time.Millisecond})
	<-third // the sampler runs on its own
	d.Close()
	after := n.Load()
	d.SampleAt(t0) // after Close: ignored
	d.Close()      // idempotent
	if got := n.Load(); got != after {
		t.Fatalf("source called %d times after Close", got-after)
	}
}

type fakeAnalyzer struct{}

func (fakeAnalyzer) AnalyzeURL(_ context.Context, u string) (dashboard.URLReport, error) {
	if u == "bad" {
		return dashboard.URLReport{}, fmt.Errorf("%w: not a URL", dashboard.ErrBadRequest)
	}
	return dashboard.URLReport{URL: u, State: "fetched"}, nil
}

func (fakeAnalyzer) AnalyzeHost(_ context.Context, h string) (dashboard.HostReport, error) {
	if h == "gone.test" {
		return dashboard.HostReport{}, fmt.Errorf("%w: %s", dashboard.ErrNotFound, h)
	}
	return dashboard.HostReport{Host: h, Fetched: 3}, nil
}

func TestAnalysisEndpoints(t *testing.T) {
	src, _ := counterSource()
	with, _ := dashboard.New(dashboard.Config{Source: src, Interval: -1, Analyzer: fakeAnalyzer{}})
	defer with.Close()
	without, _ := dashboard.New(dashboard.Config{Source: src, Interval: -1})
	defer without.Close()
	for _, tc := range []struct {
		h      http.Handler
		path   string
		status int
		want   string
	}{
		{with, "/api/url?url=http%3A%2F%2Fa.test%2F", 200, `"state":"fetched"`},
		{with, "/api/url?url=bad", 400, "not a URL"},
		{with, "/api/url", 400, "missing url"},
		{with, "/api/host?host=a.test", 200, `"fetched":3`},
		{with, "/api/host?host=gone.test", 404, "gone.test"},
		{without, "/api/url?url=x", 404, "no URL analysis"},
		{without, "/api/host?host=x", 404, "no host analysis"},
		{with, "/nothing", 404, ""},
	} {
		rec := httptest.NewRecorder()
		tc.h.ServeHTTP(rec, httptest.NewRequest("GET", tc.path, nil))
		if rec.Code != tc.status || !strings.Contains(rec.Body.String(), tc.want) {
			t.Errorf("%s: %d %s, want %d with %q", tc.path, rec.Code, rec.Body, tc.status, tc.want)
		}
	}
}

func TestHistory(t *testing.T) {
	h := dashboard.NewHistory(dashboard.HistoryConfig{MaxURLs: 3, FetchesPerURL: 2, MaxHosts: 2})
	h.Accepted("http://a.test/1", "a.test")
	h.AddInLinks("http://a.test/1", "http://a.test/1")
	for i := range 3 {
		h.Fetched(dashboard.FetchRecord{URL: "http://a.test/1", Host: "a.test", Time: t0.Add(time.Duration(i) * time.Second),
			Status: 200 + i, DurationMS: 100, Outcome: "done"})
	}
	h.SetOutLinks("http://a.test/1", 9)
	rep, ok := h.URL("http://a.test/1")
	if !ok || rep.State != "fetched" || rep.InLinks != 2 || rep.OutLinks != 9 || len(rep.Fetches) != 2 ||
		rep.Fetches[0].Status != 201 || rep.Fetches[1].Status != 202 {
		t.Fatalf("URL report %+v", rep)
	}
	h.Fetched(dashboard.FetchRecord{URL: "http://a.test/2", Host: "a.test", Time: t0, Category: "http_5xx", Status: 503, Outcome: "retry"})
	hr, _ := h.Host("a.test")
	if hr.Discovered != 1 || hr.Fetched != 4 || hr.Errors != 1 || hr.AvgResponseMS != 100 || hr.ErrorRate != 0.25 {
		t.Fatalf("host report %+v", hr)
	}
	// Bounds: a fourth URL forgets the least recently touched one
	// (a.test/1 was touched before a.test/2, b, c).
	h.Blocked("http://b.test/x", "b.test")
	h.Rejected("http://c.test/loop", "repeated-path: …")
	h.Accepted("http://c.test/", "c.test")
	if _, ok := h.URL("http://a.test/1"); ok {
		t.Fatal("least recently used URL kept beyond MaxURLs")
	}
	if r, _ := h.URL("http://c.test/loop"); r.State != "rejected" || r.TrapReason == "" {
		t.Fatalf("rejected URL %+v", r)
	}
	if urls, hosts := h.Len(); urls != 3 || hosts != 2 {
		t.Fatalf("Len %d %d", urls, hosts)
	}
	// b.test and c.test are the two most recent hosts; a.test is gone.
	if _, ok := h.Host("a.test"); ok {
		t.Fatal("least recently used host kept beyond MaxHosts")
	}
}

func TestTopHosts(t *testing.T) {
	h := dashboard.NewHistory(dashboard.HistoryConfig{})
	rec := func(host string, at time.Time, n int) {
		for range n {
			h.Fetched(dashboard.FetchRecord{URL: "http://" + host + "/", Host: host, Time: at})
		}
	}
	rec("old.test", t0.Add(-10*time.Minute), 50) // busy long ago
	rec("a.test", t0, 3)
	rec("b.test", t0.Add(-time.Minute), 5) // previous minute
	rec("c.test", t0, 3)
	top := h.TopHosts(t0, 3)
	var names []string
	for _, x := range top {
		names = append(names, fmt.Sprintf("%s:%d/%d", x.Host, x.Recent, x.Fetched))
	}
	if got := strings.Join(names, " "); got != "b.test:5/5 a.test:3/3 c.test:3/3" {
		t.Fatalf("top hosts %s", got)
	}
}

func TestChartHistoryBounded(t *testing.T) {
	src, _ := counterSource()
	// A long window over a short step must not cost a point per step up
	// front: 1000 h at 1 s would be 3.6 million points.
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	big, err := dashboard.New(dashboard.Config{Source: src, Interval: -1, Window: 1000 * time.Hour})
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	big.Close()
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 16<<20 {
		t.Fatalf("New allocated %d MB for the chart", grew>>20)
	}

	// Ten hours at 1 s: the history stays bounded and still spans the
	// window.
	const window = 10 * time.Hour
	d, err := dashboard.New(dashboard.Config{Source: src, Interval: -1, Window: window})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for i := range 40000 {
		d.SampleAt(t0.Add(time.Duration(i) * time.Second))
	}
	_, hist := d.Snapshot()
	span := hist[len(hist)-1].Time.Sub(hist[0].Time)
	if len(hist) > 1<<14 || span > window || span < window-time.Minute {
		t.Fatalf("history of %d points spanning %v", len(hist), span)
	}
	if !hist[len(hist)-1].Time.After(t0.Add(39990 * time.Second)) {
		t.Fatalf("latest point at %v", hist[len(hist)-1].Time)
	}
}

func TestNonFiniteThroughput(t *testing.T) {
	src := func() dashboard.Snapshot {
		return dashboard.Snapshot{URLs: dashboard.URLCounts{Fetched: 7},
			Throughput: dashboard.Throughput{Current: math.NaN(), Average: math.Inf(1), Peak: math.Inf(-1)}}
	}
	d, _ := dashboard.New(dashboard.Config{Source: src, Interval: -1})
	defer d.Close()
	d.SampleAt(t0)
	rec := httptest.NewRecorder()
	d.ServeHTTP(rec, httptest.NewRequest("GET", "/api/snapshot", nil))
	var body struct {
		Snapshot dashboard.Snapshot `json:"snapshot"`
		History  []dashboard.Point  `json:"history"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatalf("api/snapshot: %d %q: %v", rec.Code, rec.Body, err)
	}
	if body.Snapshot.URLs.Fetched != 7 || body.Snapshot.Throughput != (dashboard.Throughput{}) || len(body.History) != 1 {
		t.Fatalf("api/snapshot: %+v", body)
	}
}

func TestNegativeWindow(t *testing.T) {
	src, _ := counterSource()
	d, err := dashboard.New(dashboard.Config{Source: src, Interval: -1, Window: -time.Minute})
	if err == nil {
		d.Close()
		t.Fatal("New accepted a negative Window")
	}
	if !strings.Contains(err.Error(), "Window") {
		t.Fatalf("error %q does not name the field", err)
	}
}

func TestTopHostsNonPositive(t *testing.T) {
	h := dashboard.NewHistory(dashboard.HistoryConfig{})
	h.Fetched(dashboard.FetchRecord{URL: "http://a.test/", Host: "a.test", Time: t0})
	for _, n := range []int{0, -1} {
		if top := h.TopHosts(t0, n); len(top) != 0 {
			t.Fatalf("TopHosts(%d) = %+v", n, top)
		}
	}
}

// nanAnalyzer answers reports that JSON cannot encode.
type nanAnalyzer struct{ fakeAnalyzer }

func (nanAnalyzer) AnalyzeHost(_ context.Context, h string) (dashboard.HostReport, error) {
	return dashboard.HostReport{Host: h, Fetched: 0, AvgResponseMS: math.NaN(), ErrorRate: math.NaN()}, nil
}

// TestUnencodableReport: a report JSON cannot carry answers an error, not
// a 200 with an empty body.
func TestUnencodableReport(t *testing.T) {
	src, _ := counterSource()
	d, _ := dashboard.New(dashboard.Config{Source: src, Interval: -1, Analyzer: nanAnalyzer{}})
	defer d.Close()
	rec := httptest.NewRecorder()
	d.ServeHTTP(rec, httptest.NewRequest("GET", "/api/host?host=a.test", nil))
	var body map[string]any
	if rec.Code != http.StatusInternalServerError || json.Unmarshal(rec.Body.Bytes(), &body) != nil || body["error"] == nil {
		t.Fatalf("got %d %q, want 500 with a JSON error", rec.Code, rec.Body)
	}
}

// TestSnapshotBeforeFirstSample: /api/snapshot carries an empty history,
// as documented, before the first sample, and the chart's window.
func TestSnapshotBeforeFirstSample(t *testing.T) {
	src, _ := counterSource()
	d, _ := dashboard.New(dashboard.Config{Source: src, Interval: -1})
	defer d.Close()
	rec := httptest.NewRecorder()
	d.ServeHTTP(rec, httptest.NewRequest("GET", "/api/snapshot", nil))
	var body map[string]json.RawMessage
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatal(err)
	}
	if rec.Code != 200 || string(body["history"]) != "[]" || body["snapshot"] == nil || string(body["window_ms"]) != "3600000" {
		t.Fatalf("api/snapshot: %d %s", rec.Code, rec.Body)
	}
}

// TestNoSniff: no answer, page, JSON or error, may be sniffed into
// another type (the JSON echoes URLs and host names from the crawl).
func TestNoSniff(t *testing.T) {
	src, _ := counterSource()
	d, _ := dashboard.New(dashboard.Config{Source: src, Interval: -1})
	defer d.Close()
	for _, target := range []string{"/", "/api/snapshot", "/api/url?url=%3Cscript%3E", "/nowhere"} {
		rec := httptest.NewRecorder()
		d.ServeHTTP(rec, httptest.NewRequest("GET", target, nil))
		if got := rec.Header().Get("X-Content-Type-Options"); got != "nosniff" {
			t.Errorf("GET %s (%d): X-Content-Type-Options %q, want nosniff", target, rec.Code, got)
		}
	}
}

// TestTopHostsOldReport: a fetch reported long after it happened does not
// count as recent activity.
func TestTopHostsOldReport(t *testing.T) {
	h := dashboard.NewHistory(dashboard.HistoryConfig{})
	h.Fetched(dashboard.FetchRecord{URL: "http://a.test/1", Host: "a.test", Time: t0})
	h.Fetched(dashboard.FetchRecord{URL: "http://a.test/2", Host: "a.test", Time: t0.Add(-10 * time.Minute)})
	h.Fetched(dashboard.FetchRecord{URL: "http://a.test/3", Host: "a.test", Time: t0.Add(-time.Minute)})
	top := h.TopHosts(t0, 1)
	if len(top) != 1 || top[0].Recent != 2 || top[0].Fetched != 3 {
		t.Fatalf("top hosts %+v, want a.test with 2 recent of 3 fetched", top)
	}
}

// get requests path from ts with the given Host and Origin ("" for the
// server's own address and none).
func getWith(t *testing.T, ts *httptest.Server, path, host, origin string) (int, string) {
	t.Helper()
	req, err := http.NewRequest("GET", ts.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if host != "" {
		req.Host = host
	}
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestHostCheck: a request that does not name the dashboard's own address
// (or localhost, on a loopback listener) or an allowed host in its Host and
// Origin headers is refused, as a page that rebinds its own name to
// 127.0.0.1 would send them.
func TestHostCheck(t *testing.T) {
	src, _ := counterSource()
	d, err := dashboard.New(dashboard.Config{Source: src, Interval: -1, Analyzer: fakeAnalyzer{}, AllowedHosts: []string{"dash.example"}})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	ts := httptest.NewServer(d)
	defer ts.Close()
	port := ts.Listener.Addr().(*net.TCPAddr).Port
	self := ts.Listener.Addr().String()
	for _, tc := range []struct {
		path, host, origin string
		want               int
	}{
		{"/api/snapshot", "", "", 200},
		{"/", fmt.Sprintf("localhost:%d", port), "", 200},
		{"/api/snapshot", fmt.Sprintf("[::1]:%d", port), "http://" + self, 200},
		{"/api/snapshot", "dash.example", "https://dash.example", 200},
		{"/", fmt.Sprintf("rebound.example:%d", port), "", 403},
		{"/api/snapshot", fmt.Sprintf("rebound.example:%d", port), "", 403},
		{"/api/events", fmt.Sprintf("rebound.example:%d", port), "", 403},
		{"/api/url?url=http%3A%2F%2Fa.test%2F", fmt.Sprintf("rebound.example:%d", port), "", 403},
		{"/api/snapshot", "", "http://evil.example", 403},
		{"/api/snapshot", fmt.Sprintf("localhost:%d", port+1), "", 403},
	} {
		code, body := getWith(t, ts, tc.path, tc.host, tc.origin)
		if code != tc.want {
			t.Errorf("%s Host %q Origin %q: %d %s, want %d", tc.path, tc.host, tc.origin, code, body, tc.want)
			continue
		}
		var e map[string]any
		if code == 403 && (json.Unmarshal([]byte(body), &e) != nil || e["error"] == nil) {
			t.Errorf("%s Host %q: 403 without a JSON error: %s", tc.path, tc.host, body)
		}
	}
	if _, err := dashboard.New(dashboard.Config{Source: src, Interval: -1, AllowedHosts: []string{"http://x/"}}); err == nil || !strings.Contains(err.Error(), "AllowedHosts") {
		t.Errorf("a URL in AllowedHosts: %v", err)
	}
}

// TestAnalysisToken: with AnalysisToken the analysis endpoints, which make
// the Analyzer work (fetch robots.txt), need the token; the numbers do not.
func TestAnalysisToken(t *testing.T) {
	src, _ := counterSource()
	d, _ := dashboard.New(dashboard.Config{Source: src, Interval: -1, Analyzer: fakeAnalyzer{}, AnalysisToken: "s3cret"})
	defer d.Close()
	for _, tc := range []struct {
		path, auth string
		want       int
	}{
		{"/api/url?url=http%3A%2F%2Fa.test%2F", "", 401},
		{"/api/url?url=http%3A%2F%2Fa.test%2F", "Bearer wrong", 401},
		{"/api/url?url=http%3A%2F%2Fa.test%2F", "Basic czNjcmV0", 401},
		{"/api/host?host=a.test", "", 401},
		{"/api/url?url=http%3A%2F%2Fa.test%2F", "Bearer s3cret", 200},
		{"/api/host?host=a.test", "bearer s3cret", 200},
		{"/api/snapshot", "", 200},
		{"/", "", 200},
	} {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest("GET", tc.path, nil)
		if tc.auth != "" {
			req.Header.Set("Authorization", tc.auth)
		}
		d.ServeHTTP(rec, req)
		if rec.Code != tc.want {
			t.Errorf("%s %q: %d %s, want %d", tc.path, tc.auth, rec.Code, rec.Body, tc.want)
		}
		if rec.Code == 401 && (rec.Header().Get("WWW-Authenticate") == "" || !strings.Contains(rec.Body.String(), `"error"`)) {
			t.Errorf("%s: 401 without WWW-Authenticate or a JSON error: %v %s", tc.path, rec.Header(), rec.Body)
		}
		if tc.path == "/api/snapshot" && !strings.Contains(rec.Body.String(), `"analysis_token":true`) {
			t.Errorf("api/snapshot does not tell the page that analysis needs a token: %s", rec.Body)
		}
	}
}

// TestReasonsAndWaitingJSON: the reason counts and the waiting state reach
// the page under their documented names, and are left out when unset.
func TestReasonsAndWaitingJSON(t *testing.T) {
	snap := dashboard.Snapshot{
		NotFetched:    map[string]int64{"robots": 2},
		Deferred:      map[string]int64{"crawl_delay": 3},
		LinksRejected: map[string]int64{"out_of_scope": 4},
		Waiting: dashboard.Waiting{InFlight: 1, CrawlDelayHosts: 2, LongestCrawlDelay: 1500 * time.Millisecond,
			RobotsRetryHosts: 3, NextRobotsRetry: t0, RetryAfterHosts: 4, RetryAfterUntil: t0.Add(time.Hour)},
	}
	b, err := json.Marshal(snap)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"not_fetched":{"robots":2}`, `"deferred":{"crawl_delay":3}`, `"links_rejected":{"out_of_scope":4}`,
		`"waiting":{"in_flight":1,"crawl_delay_hosts":2,"longest_crawl_delay_ns":1500000000,"robots_retry_hosts":3,"next_robots_retry":"2030-01-01T12:00:00Z","retry_after_hosts":4,"retry_after_until":"2030-01-01T13:00:00Z"}`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("%s lacks %s", b, want)
		}
	}
	b, _ = json.Marshal(dashboard.Snapshot{})
	for _, absent := range []string{"not_fetched", "deferred", "links_rejected", "waiting"} {
		if strings.Contains(string(b), absent) {
			t.Errorf("empty snapshot %s has %s", b, absent)
		}
	}
}
