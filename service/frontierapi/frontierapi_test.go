package frontierapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/crawltest"
	"github.com/crawlkit/crawlkit/frontier"
	"github.com/crawlkit/crawlkit/robots"
	"github.com/crawlkit/crawlkit/service/frontierapi"
	"github.com/crawlkit/crawlkit/trap"
)

const token = "test-token-0123456789"

// clock is a settable fake clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// newService starts a Server behind an httptest server.
func newService(t *testing.T, cfg frontierapi.Config) (*frontierapi.Server, *frontierapi.Client, string) {
	t.Helper()
	if cfg.Token == "" {
		cfg.Token = token
	}
	s, err := frontierapi.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	t.Cleanup(func() {
		ts.Close()
		s.Close()
	})
	return s, frontierapi.NewClient(ts.URL, cfg.Token, ts.Client()), ts.URL
}

func submit(t *testing.T, c *frontierapi.Client, urls ...string) frontierapi.SubmitResponse {
	t.Helper()
	req := frontierapi.SubmitRequest{}
	for _, u := range urls {
		req.URLs = append(req.URLs, frontierapi.SubmitURL{URL: u})
	}
	resp, err := c.Submit(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func TestNewRequiresToken(t *testing.T) {
	if _, err := frontierapi.New(frontierapi.Config{}); !errors.Is(err, frontierapi.ErrNoToken) {
		t.Fatalf("New without token: %v, want ErrNoToken", err)
	}
	if _, err := frontierapi.New(frontierapi.Config{Token: "x", Agent: "bad agent/1"}); !errors.Is(err, frontierapi.ErrConfig) {
		t.Fatalf("New with a bad agent: %v, want ErrConfig", err)
	}
	for _, bands := range []int{-1, 17} {
		if _, err := frontierapi.New(frontierapi.Config{Token: "x", Frontier: frontier.Config{Bands: bands}}); !errors.Is(err, frontierapi.ErrConfig) {
			t.Fatalf("New with %d bands: %v, want ErrConfig", bands, err)
		}
	}
}

func TestAuthentication(t *testing.T) {
	_, _, base := newService(t, frontierapi.Config{})
	endpoints := []struct{ method, path string }{
		{"POST", "/api/v1/frontier/urls"},
		{"GET", "/api/v1/frontier/next?worker_id=w"},
		{"POST", "/api/v1/frontier/results"},
		{"GET", "/api/v1/stats"},
		{"GET", "/nope"},
	}
	headers := map[string]string{
		"none":         "",
		"wrong token":  "Bearer wrong",
		"prefix":       "Bearer " + token[:5],
		"longer":       "Bearer " + token + "x",
		"basic scheme": "Basic " + token,
	}
	for _, ep := range endpoints {
		for name, h := range headers {
			req, _ := http.NewRequest(ep.method, base+ep.path, strings.NewReader("{}"))
			if h != "" {
				req.Header.Set("Authorization", h)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			var er frontierapi.ErrorResponse
			_ = json.NewDecoder(resp.Body).Decode(&er)
			resp.Body.Close()
			if resp.StatusCode != http.StatusUnauthorized || er.Error != frontierapi.CodeUnauthorized {
				t.Errorf("%s %s with %s: %d %q, want 401 unauthorized", ep.method, ep.path, name, resp.StatusCode, er.Error)
			}
			if resp.Header.Get("WWW-Authenticate") == "" {
				t.Errorf("%s %s with %s: no WWW-Authenticate header", ep.method, ep.path, name)
			}
		}
	}
	// The scheme name is case-insensitive (RFC 9110 §11.1).
	req, _ := http.NewRequest("GET", base+"/api/v1/stats", nil)
	req.Header.Set("Authorization", "bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("right token: %d", resp.StatusCode)
	}
}

func TestBadInput(t *testing.T) {
	_, c, base := newService(t, frontierapi.Config{MaxBodyBytes: 4096, MaxURLs: 3, MaxWait: 2 * time.Second})
	// A lease to settle against.
	submit(t, c, "http://a.test/1")
	lease, err := c.Next(context.Background(), "w1", 1, 0)
	if err != nil || len(lease.URLs) != 1 {
		t.Fatalf("Next: %v %+v", err, lease)
	}
	lid := lease.LeaseID
	big := `{"urls":[{"url":"http://a.test/` + strings.Repeat("x", 5000) + `"}]}`
	cases := []struct {
		name, method, path, body string
		status                   int
		code                     string
	}{
		{"unknown endpoint", "GET", "/api/v2/stats", "", 404, frontierapi.CodeNotFound},
		{"wrong method", "GET", "/api/v1/frontier/urls", "", 405, frontierapi.CodeMethodNotAllowed},
		{"wrong method next", "POST", "/api/v1/frontier/next?worker_id=w", "{}", 405, frontierapi.CodeMethodNotAllowed},
		{"empty body", "POST", "/api/v1/frontier/urls", "", 400, frontierapi.CodeInvalidJSON},
		{"not json", "POST", "/api/v1/frontier/urls", "urls=1", 400, frontierapi.CodeInvalidJSON},
		{"wrong type", "POST", "/api/v1/frontier/urls", `{"urls":"http://a.test/"}`, 400, frontierapi.CodeInvalidJSON},
		{"trailing data", "POST", "/api/v1/frontier/urls", `{"urls":[]} {}`, 400, frontierapi.CodeInvalidJSON},
		{"body too large", "POST", "/api/v1/frontier/urls", big, 413, frontierapi.CodeBodyTooLarge},
		{"too many urls", "POST", "/api/v1/frontier/urls", `{"urls":[{"url":"http://a.test/1"},{"url":"http://a.test/2"},{"url":"http://a.test/3"},{"url":"http://a.test/4"}]}`, 413, frontierapi.CodeTooManyURLs},
		{"long crawl id", "POST", "/api/v1/frontier/urls", `{"crawl_id":"` + strings.Repeat("c", 300) + `","urls":[]}`, 400, frontierapi.CodeInvalidParameter},
		{"no worker", "GET", "/api/v1/frontier/next", "", 400, frontierapi.CodeMissingParameter},
		{"batch 0", "GET", "/api/v1/frontier/next?worker_id=w&batch_size=0", "", 400, frontierapi.CodeInvalidParameter},
		{"batch 1001", "GET", "/api/v1/frontier/next?worker_id=w&batch_size=1001", "", 400, frontierapi.CodeInvalidParameter},
		{"batch text", "GET", "/api/v1/frontier/next?worker_id=w&batch_size=ten", "", 400, frontierapi.CodeInvalidParameter},
		{"timeout negative", "GET", "/api/v1/frontier/next?worker_id=w&timeout_ms=-1", "", 400, frontierapi.CodeInvalidParameter},
		{"timeout too long", "GET", "/api/v1/frontier/next?worker_id=w&timeout_ms=999999", "", 400, frontierapi.CodeInvalidParameter},
		{"worker control char", "GET", "/api/v1/frontier/next?worker_id=w%00", "", 400, frontierapi.CodeInvalidParameter},
		{"worker too long", "GET", "/api/v1/frontier/next?worker_id=" + strings.Repeat("w", 200), "", 400, frontierapi.CodeInvalidParameter},
		{"no lease id", "POST", "/api/v1/frontier/results", `{"results":[]}`, 400, frontierapi.CodeMissingParameter},
		{"unknown lease", "POST", "/api/v1/frontier/results", `{"lease_id":"feed","results":[{"url":"http://a.test/1","status":"success"}]}`, 404, frontierapi.CodeUnknownLease},
		{"bad status", "POST", "/api/v1/frontier/results", `{"lease_id":"` + lid + `","results":[{"url":"http://a.test/1","status":"ok"}]}`, 400, frontierapi.CodeInvalidParameter},
		{"no url", "POST", "/api/v1/frontier/results", `{"lease_id":"` + lid + `","results":[{"status":"success"}]}`, 400, frontierapi.CodeInvalidParameter},
		{"bad simhash", "POST", "/api/v1/frontier/results", `{"lease_id":"` + lid + `","results":[{"url":"http://a.test/1","status":"success","simhash":"xyz"}]}`, 400, frontierapi.CodeInvalidParameter},
		{"long simhash", "POST", "/api/v1/frontier/results", `{"lease_id":"` + lid + `","results":[{"url":"http://a.test/1","status":"success","simhash":"00000000000000001"}]}`, 400, frontierapi.CodeInvalidParameter},
		{"bad http status", "POST", "/api/v1/frontier/results", `{"lease_id":"` + lid + `","results":[{"url":"http://a.test/1","status":"error","http_status":999}]}`, 400, frontierapi.CodeInvalidParameter},
		{"negative retry", "POST", "/api/v1/frontier/results", `{"lease_id":"` + lid + `","results":[{"url":"http://a.test/1","status":"error","retry_after":-5}]}`, 400, frontierapi.CodeInvalidParameter},
		{"bad error kind", "POST", "/api/v1/frontier/results", `{"lease_id":"` + lid + `","results":[{"url":"http://a.test/1","status":"error","error_kind":"dns"}]}`, 400, frontierapi.CodeInvalidParameter},
		{"wrong worker", "POST", "/api/v1/frontier/results", `{"lease_id":"` + lid + `","worker_id":"w2","results":[{"url":"http://a.test/1","status":"success"}]}`, 409, frontierapi.CodeWrongWorker},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(tc.method, base+tc.path, strings.NewReader(tc.body))
			req.Header.Set("Authorization", "Bearer "+token)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			var er frontierapi.ErrorResponse
			if err := json.Unmarshal(body, &er); err != nil {
				t.Fatalf("body is not JSON: %q", body)
			}
			if resp.StatusCode != tc.status || er.Error != tc.code || er.Message == "" {
				t.Fatalf("got %d %s, want %d %q with a message", resp.StatusCode, body, tc.status, tc.code)
			}
		})
	}
	// None of the bad results touched the lease: it settles now.
	res, err := c.Results(context.Background(), frontierapi.ResultsRequest{LeaseID: lid, WorkerID: "w1",
		Results: []frontierapi.Result{{URL: "http://a.test/1", Status: frontierapi.ResultSuccess, HTTPStatus: 200}}})
	if err != nil || res.Processed != 1 {
		t.Fatalf("settle after bad attempts: %v %+v", err, res)
	}
	// The client reports errors as *APIError.
	_, err = c.Next(context.Background(), "w1", 5000, 0)
	var apiErr *frontierapi.APIError
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || apiErr.Code != frontierapi.CodeInvalidParameter {
		t.Fatalf("client error: %v", err)
	}
}

func TestSubmit(t *testing.T) {
	det := trap.New(trap.Config{})
	s, c, _ := newService(t, frontierapi.Config{Traps: det})
	resp, err := c.Submit(context.Background(), frontierapi.SubmitRequest{CrawlID: "c1", URLs: []frontierapi.SubmitURL{
		{URL: "http://A.test:80/x?utm_source=mail#top", Depth: 1, SourceURL: "http://a.test/"},
		{URL: "http://a.test/x"},
		{URL: "ftp://a.test/file"},
		{URL: "not a url"},
		{URL: "http://a.test/y", Depth: -1},
		{URL: "http://b.test/a/b/a/b/a/b/a/b/c"},
		{URL: "http://b.test/"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{frontierapi.StatusAccepted, frontierapi.StatusDuplicate, frontierapi.StatusRejected, frontierapi.StatusRejected,
		frontierapi.StatusRejected, frontierapi.StatusRejected, frontierapi.StatusAccepted}
	for i, r := range resp.Results {
		if r.Status != want[i] {
			t.Errorf("url %d: %+v, want %s", i, r, want[i])
		}
	}
	if resp.Results[0].Normalized != "http://a.test/x" {
		t.Errorf("normalized %q", resp.Results[0].Normalized)
	}
	if !strings.HasPrefix(resp.Results[2].Reason, "unsupported_scheme") || !strings.HasPrefix(resp.Results[4].Reason, "invalid_depth") {
		t.Errorf("reasons: %+v", resp.Results)
	}
	if r := resp.Results[5].Reason; r == "" || strings.HasPrefix(r, "invalid") {
		t.Errorf("trap reason %q", r)
	}
	if resp.Accepted != 2 || resp.Duplicates != 1 || resp.Rejected != 4 {
		t.Errorf("counts %+v", resp)
	}
	// Resubmission: duplicates.
	again := submit(t, c, "http://a.test/x", "http://b.test/", "http://c.test/")
	if again.Accepted != 1 || again.Duplicates != 2 {
		t.Errorf("resubmission %+v", again)
	}
	st := s.Stats()
	if st.URLs.Discovered != 3 || st.URLs.Queued != 3 || st.URLs.TrapRejected != 1 || st.Errors.Trap != 1 || st.Hosts.Discovered != 3 {
		t.Errorf("stats %+v", st.Snapshot)
	}
	if st.QueueByBand[0] != 2 || st.QueueByBand[1] != 1 {
		t.Errorf("bands %v", st.QueueByBand)
	}
	// The lease carries what was submitted.
	l, err := c.Next(context.Background(), "w", 10, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got *frontierapi.LeasedURL
	for i := range l.URLs {
		if l.URLs[i].URL == "http://a.test/x" {
			got = &l.URLs[i]
		}
	}
	if got == nil || got.Depth != 1 || got.SourceURL != "http://a.test/" || got.CrawlID != "c1" || got.Host != "a.test" {
		t.Fatalf("lease %+v", l)
	}
	rep, err := s.AnalyzeURL(context.Background(), "http://A.TEST/x")
	if err != nil || rep.State != "leased" || rep.InLinks != 1 {
		t.Fatalf("AnalyzeURL: %v %+v", err, rep)
	}
}

func TestLeaseSettleAndPoliteness(t *testing.T) {
	clk := newClock()
	s, c, _ := newService(t, frontierapi.Config{Now: clk.Now, Delay: 10 * time.Second,
		Frontier: frontier.Config{RetryBase: time.Minute, RetryMax: time.Hour}})
	ctx := context.Background()
	submit(t, c, "http://a.test/1", "http://a.test/2", "http://b.test/1")
	l, err := c.Next(ctx, "w1", 10, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.URLs) != 2 || l.LeaseID == "" || !l.LeaseExpiresAt.Equal(clk.Now().Add(5*time.Minute)) {
		t.Fatalf("first batch (one URL per host): %+v", l)
	}
	st := s.Stats()
	if st.Leased != 2 || st.Workers.Active != 1 || st.Hosts.Active != 2 || st.URLs.Queued != 1 {
		t.Fatalf("stats while leased: %+v", st)
	}
	hostB := "http://b.test/1"
	res, err := c.Results(ctx, frontierapi.ResultsRequest{LeaseID: l.LeaseID, WorkerID: "w1", Results: []frontierapi.Result{
		{URL: "http://a.test/1", Status: frontierapi.ResultSuccess, HTTPStatus: 200, ContentHash: "sha256:ab", SimHash: "00ff00ff00ff00ff", LinksFound: 7, DurationMS: 120, Bytes: 1000},
		{URL: hostB, Status: frontierapi.ResultError, HTTPStatus: 503, RetryAfter: 600, Error: "maintenance"},
		{URL: "http://c.test/", Status: frontierapi.ResultSuccess},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Processed != 2 || res.RetriesScheduled != 1 || res.Results[0].Outcome != "done" ||
		res.Results[1].Outcome != "retry" || res.Results[2].Error != "not_in_lease" {
		t.Fatalf("results: %+v", res)
	}
	// Retry-After beats the one-minute backoff; a plain success is not
	// queued again.
	if !res.Results[1].DueAt.Equal(clk.Now().Add(10*time.Minute)) || !res.Results[0].DueAt.IsZero() {
		t.Fatalf("due times: %+v", res.Results)
	}
	// Settling twice: the lease is gone.
	_, err = c.Results(ctx, frontierapi.ResultsRequest{LeaseID: l.LeaseID, Results: []frontierapi.Result{{URL: "http://a.test/1", Status: "success"}}})
	var apiErr *frontierapi.APIError
	if !errors.As(err, &apiErr) || apiErr.Code != frontierapi.CodeUnknownLease {
		t.Fatalf("second settle: %v", err)
	}
	st = s.Stats()
	if st.URLs.Fetched != 2 || st.URLs.Successful != 1 || st.URLs.Retried != 1 || st.Errors.Server != 1 ||
		st.Hosts.Blocked != 1 || st.BlockedHosts[0].Host != "b.test" || st.Bytes != 1000 || st.Leased != 0 {
		t.Fatalf("stats after settling: %+v", st)
	}
	// a.test waits for its 10 s delay; b.test for Retry-After.
	if l, _ := c.Next(ctx, "w1", 10, 0); len(l.URLs) != 0 {
		t.Fatalf("leased during the politeness delay: %+v", l)
	}
	clk.Advance(10 * time.Second)
	l, err = c.Next(ctx, "w1", 10, 0)
	if err != nil || len(l.URLs) != 1 || l.URLs[0].URL != "http://a.test/2" {
		t.Fatalf("after the delay: %v %+v", err, l)
	}
	clk.Advance(11 * time.Minute)
	// b.test's retry is due, and a.test/2, whose lease expired, is queued
	// again.
	l2, err := c.Next(ctx, "w2", 10, 0)
	if err != nil || len(l2.URLs) != 2 {
		t.Fatalf("after Retry-After and lease expiry: %v %+v", err, l2)
	}
	for _, u := range l2.URLs {
		if u.URL == hostB && u.Attempt != 1 || u.URL != hostB && u.URL != "http://a.test/2" {
			t.Fatalf("after Retry-After and lease expiry: %+v", l2)
		}
	}
	// The first lease of a.test/2 expired meanwhile (5 minutes).
	res, err = c.Results(ctx, frontierapi.ResultsRequest{LeaseID: l.LeaseID, Results: []frontierapi.Result{{URL: "http://a.test/2", Status: "success"}}})
	if err == nil {
		t.Fatalf("settled an expired lease: %+v", res)
	}
	hist, _ := s.AnalyzeURL(ctx, "http://a.test/1")
	if hist.State != "fetched" || len(hist.Fetches) != 1 || hist.Fetches[0].Status != 200 || hist.OutLinks != 7 {
		t.Fatalf("history of a.test/1: %+v", hist)
	}
	host, _ := s.AnalyzeHost(ctx, "b.test")
	if host.Fetched != 1 || host.Errors != 1 || host.ErrorRate != 1 || !host.BlockedUntil.IsZero() {
		t.Fatalf("host b.test: %+v", host)
	}
}

func TestLongPollWakesOnSubmit(t *testing.T) {
	s, c, _ := newService(t, frontierapi.Config{Delay: -1})
	// The poll asks for 50 s; the client gives up after 30 s, so a poll
	// that is not woken by the submission fails the test.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	got := make(chan frontierapi.NextResponse, 1)
	errc := make(chan error, 1)
	go func() {
		l, err := c.Next(ctx, "poller", 5, 50*time.Second)
		got <- l
		errc <- err
	}()
	// Wait until the poll is registered (the service has seen the
	// worker), then submit.
	for len(s.Stats().WorkerList) == 0 {
		runtime.Gosched()
	}
	submit(t, c, "http://a.test/")
	l := <-got
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if len(l.URLs) != 1 || l.URLs[0].URL != "http://a.test/" {
		t.Fatalf("long poll: %+v", l)
	}
}

func TestLongPollTimesOutEmpty(t *testing.T) {
	_, c, _ := newService(t, frontierapi.Config{})
	l, err := c.Next(context.Background(), "w", 5, 20*time.Millisecond)
	if err != nil || len(l.URLs) != 0 || l.LeaseID != "" || l.URLs == nil {
		t.Fatalf("empty poll: %v %+v", err, l)
	}
}

func TestCloseEndsLongPoll(t *testing.T) {
	s, c, _ := newService(t, frontierapi.Config{})
	errc := make(chan error, 1)
	go func() {
		_, err := c.Next(context.Background(), "w", 1, 50*time.Second)
		errc <- err
	}()
	// Close may come before the poll starts; both ways it ends with 503.
	s.Close()
	var apiErr *frontierapi.APIError
	if err := <-errc; !errors.As(err, &apiErr) || apiErr.Code != frontierapi.CodeUnavailable {
		t.Fatalf("poll after Close: %v", err)
	}
}

func TestRobots(t *testing.T) {
	web, err := crawltest.NewWeb(crawltest.Config{Hosts: 4, PagesPerHost: 5, CrawlDelay: 1500 * time.Millisecond,
		RobotsVariants: []crawltest.RobotsVariant{crawltest.RobotsDisallow, crawltest.RobotsUnavailable, crawltest.RobotsCrawlDelay, crawltest.RobotsMissing}})
	if err != nil {
		t.Fatal(err)
	}
	defer web.Close()
	clk := newClock()
	cache := robots.NewCache(robots.Config{Client: web.Client(), UserAgent: "crawlkit/1.0", Now: clk.Now})
	s, c, _ := newService(t, frontierapi.Config{Robots: cache, Now: clk.Now, Delay: -1})
	ctx := context.Background()
	h0, h1, h2 := crawltest.HostName(0), crawltest.HostName(1), crawltest.HostName(2)
	submit(t, c, "http://"+h0+"/private/x.html", "http://"+h0+"/", "http://"+h1+"/", "http://"+h2+"/")
	var got []frontierapi.LeasedURL
	for range 3 {
		l, err := c.Next(ctx, "w", 10, 0)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, l.URLs...)
		var rs []frontierapi.Result
		for _, u := range l.URLs {
			rs = append(rs, frontierapi.Result{URL: u.URL, Status: frontierapi.ResultSuccess, HTTPStatus: 200})
		}
		if len(rs) > 0 {
			if _, err := c.Results(ctx, frontierapi.ResultsRequest{LeaseID: l.LeaseID, Results: rs}); err != nil {
				t.Fatal(err)
			}
		}
		clk.Advance(2 * time.Second)
	}
	byURL := map[string]frontierapi.LeasedURL{}
	for _, u := range got {
		byURL[u.URL] = u
	}
	if len(byURL) != 2 {
		t.Fatalf("handed out %v, want h0/ and h2/ only", byURL)
	}
	root0, ok := byURL["http://"+h0+"/"]
	if !ok || root0.Robots == nil || !root0.Robots.Allowed {
		t.Fatalf("h0 root: %+v", root0)
	}
	root2 := byURL["http://"+h2+"/"]
	if root2.CrawlDelayMS != 1500 {
		t.Fatalf("crawl delay of %s: %+v", h2, root2)
	}
	st := s.Stats()
	if st.URLs.BlockedByRobots != 1 || st.Errors.Robots < 2 || st.Hosts.Blocked != 1 || st.BlockedHosts[0].Host != h1 {
		t.Fatalf("stats: %+v", st.Snapshot)
	}
	rep, err := s.AnalyzeURL(ctx, "http://"+h0+"/private/x.html")
	if err != nil || rep.State != "blocked" || rep.Robots == nil || rep.Robots.Allowed || !strings.Contains(rep.Robots.Rule, "/private/") {
		t.Fatalf("AnalyzeURL: %v %+v %+v", err, rep, rep.Robots)
	}
	hr, err := s.AnalyzeHost(ctx, h0)
	if err != nil || hr.Robots == nil || hr.Robots.Source != "file" || len(hr.Robots.BlockedPaths) != 2 || hr.Blocked != 1 {
		t.Fatalf("AnalyzeHost: %v %+v %+v", err, hr, hr.Robots)
	}
	if report := web.Report(); report.BeforeRobots != 0 {
		t.Fatalf("requests before robots.txt: %d", report.BeforeRobots)
	}
}

func TestThroughput(t *testing.T) {
	clk := newClock()
	s, c, _ := newService(t, frontierapi.Config{Now: clk.Now, Delay: -1})
	ctx := context.Background()
	var urls []string
	for i := range 10 {
		urls = append(urls, fmt.Sprintf("http://h%d.test/", i))
	}
	submit(t, c, urls...)
	clk.Advance(2 * time.Second)
	l, err := c.Next(ctx, "w", 10, 0)
	if err != nil || len(l.URLs) != 10 {
		t.Fatalf("Next: %v %d", err, len(l.URLs))
	}
	var rs []frontierapi.Result
	for _, u := range l.URLs {
		rs = append(rs, frontierapi.Result{URL: u.URL, Status: frontierapi.ResultSuccess, HTTPStatus: 200})
	}
	if _, err := c.Results(ctx, frontierapi.ResultsRequest{LeaseID: l.LeaseID, Results: rs}); err != nil {
		t.Fatal(err)
	}
	// Ten pages two seconds after the start.
	if tp := s.Stats().Throughput; tp.Current != 5 || tp.Average != 5 || tp.Peak != 5 {
		t.Fatalf("after 2 s: %+v", tp)
	}
	// Twenty seconds later the window is empty; the peak stays.
	clk.Advance(20 * time.Second)
	if tp := s.Stats().Throughput; tp.Current != 0 || tp.Average != 10.0/22 || tp.Peak != 5 {
		t.Fatalf("after 22 s: %+v", tp)
	}
}

// robotsSite is a loopback site whose robots.txt answers 503 while down is
// set and allows everything otherwise; fetches counts the robots.txt
// requests.
type robotsSite struct {
	*httptest.Server
	down    atomic.Bool
	fetches atomic.Int64
}

func newRobotsSite(t *testing.T) *robotsSite {
	site := &robotsSite{}
	site.down.Store(true)
	site.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/robots.txt" {
			http.NotFound(w, r) // the tests fetch no page
			return
		}
		site.fetches.Add(1)
		if site.down.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		io.WriteString(w, "User-agent: *\nAllow: /\n")
	}))
	t.Cleanup(site.Close)
	return site
}

// A robots.txt outage does not count as an attempt of the URLs it holds
// back: after more outages than MaxAttempts the URL is still queued, and it
// is handed out as a first attempt once the file can be fetched.
func TestRobotsOutageKeepsAttempts(t *testing.T) {
	site := newRobotsSite(t)
	down, robotsFetches := &site.down, &site.fetches
	clk := newClock()
	cache := robots.NewCache(robots.Config{Client: site.Client(), UserAgent: "crawlkit/1.0", Now: clk.Now,
		MinRetry: time.Minute, MaxRetry: time.Minute})
	s, c, _ := newService(t, frontierapi.Config{Robots: cache, Now: clk.Now, Delay: -1,
		Frontier: frontier.Config{MaxAttempts: 2}})
	ctx := context.Background()
	page := site.URL + "/page"
	if r := submit(t, c, page); r.Accepted != 1 || r.Results[0].Normalized != page {
		t.Fatalf("submit: %+v", r)
	}
	const outages = 4
	for i := range outages {
		l, err := c.Next(ctx, "w", 10, 0)
		if err != nil || len(l.URLs) != 0 {
			t.Fatalf("outage %d: %v %+v", i, err, l)
		}
		if n := robotsFetches.Load(); n != int64(i+1) {
			t.Fatalf("outage %d: %d robots.txt fetches, want %d", i, n, i+1)
		}
		st := s.Stats()
		if f := st.Frontier; f.Retried != 0 || f.Failed != 0 || f.Dropped != 0 || f.Released != uint64(i+1) {
			t.Fatalf("outage %d counted as an attempt, or not as a release: frontier %+v", i, f)
		}
		if st.URLs.Queued != 1 || st.URLs.Retried != 0 || st.URLs.Failed != 0 || st.Errors.Robots != int64(i+1) ||
			st.Hosts.Blocked != 1 || st.Leased != 0 {
			t.Fatalf("outage %d: stats %+v", i, st.Snapshot)
		}
		clk.Advance(time.Minute) // the cache's next fetch of robots.txt
	}
	down.Store(false)
	l, err := c.Next(ctx, "w", 10, 0)
	if err != nil || len(l.URLs) != 1 {
		t.Fatalf("after the outage: %v %+v", err, l)
	}
	if u := l.URLs[0]; u.URL != page || u.Attempt != 0 || u.Robots == nil || !u.Robots.Allowed {
		t.Fatalf("after the outage: %+v %+v", u, u.Robots)
	}
}

// Past the cache's UnreachableLimit its Fallback decides: a URL it
// disallows is settled as failed rather than waiting for robots.txt
// forever, and a URL it allows is handed out.
func TestRobotsOutagePastUnreachableLimit(t *testing.T) {
	for name, fb := range map[string]robots.Fallback{"disallow all": robots.FallbackDisallowAll, "allow all": robots.FallbackAllowAll} {
		t.Run(name, func(t *testing.T) {
			site := newRobotsSite(t)
			clk := newClock()
			cache := robots.NewCache(robots.Config{Client: site.Client(), UserAgent: "crawlkit/1.0", Now: clk.Now,
				MinRetry: time.Minute, MaxRetry: time.Minute, UnreachableLimit: 3 * time.Minute, Fallback: fb})
			s, c, _ := newService(t, frontierapi.Config{Robots: cache, Now: clk.Now, Delay: -1})
			ctx := context.Background()
			page := site.URL + "/page"
			submit(t, c, page)
			// Outages at 0, 1 and 2 minutes: deferred.
			for i := range 3 {
				if l, err := c.Next(ctx, "w", 10, 0); err != nil || len(l.URLs) != 0 {
					t.Fatalf("outage %d: %v %+v", i, err, l)
				}
				clk.Advance(time.Minute)
			}
			if st := s.Stats(); st.URLs.Queued != 1 || st.URLs.Failed != 0 || st.Frontier.Failed != 0 {
				t.Fatalf("within the limit: %+v", st.Snapshot)
			}
			// At 3 minutes the limit is reached.
			l, err := c.Next(ctx, "w", 10, 0)
			if err != nil {
				t.Fatal(err)
			}
			st := s.Stats()
			if fb == robots.FallbackAllowAll {
				if len(l.URLs) != 1 || l.URLs[0].URL != page || l.URLs[0].Attempt != 0 {
					t.Fatalf("allowed by the fallback: %+v", l)
				}
				return
			}
			if len(l.URLs) != 0 || st.URLs.Queued != 0 || st.URLs.Failed != 1 || st.URLs.BlockedByRobots != 1 ||
				st.Frontier.Failed != 1 || st.Frontier.Dropped != 0 || st.Frontier.InMemory != 0 {
				t.Fatalf("disallowed by the fallback: %+v %+v", l, st)
			}
			if rep, err := s.AnalyzeURL(ctx, page); err != nil || rep.State != "blocked" {
				t.Fatalf("AnalyzeURL: %v %+v", err, rep)
			}
		})
	}
}

// A 429 with Retry-After blocks the host even when the throttled fetch
// outlasted its lease and the result itself is not applied.
func TestRetryAfterOutlastingLease(t *testing.T) {
	const retryAfter = 3600
	cases := []struct {
		name string
		// late reports the 429 after the lease ran out and checks the
		// answer.
		late func(t *testing.T, s *frontierapi.Server, c *frontierapi.Client, clk *clock, l frontierapi.NextResponse)
	}{
		{"unknown lease", func(t *testing.T, s *frontierapi.Server, c *frontierapi.Client, clk *clock, l frontierapi.NextResponse) {
			clk.Advance(61 * time.Second) // the service forgets the batch
			_, err := c.Results(context.Background(), frontierapi.ResultsRequest{LeaseID: l.LeaseID, WorkerID: "w1", Results: []frontierapi.Result{
				{URL: l.URLs[0].URL, Status: frontierapi.ResultError, HTTPStatus: http.StatusTooManyRequests, RetryAfter: retryAfter}}})
			var apiErr *frontierapi.APIError
			if !errors.As(err, &apiErr) || apiErr.Code != frontierapi.CodeUnknownLease {
				t.Fatalf("late result: %v, want unknown_lease", err)
			}
		}},
		{"lease expired", func(t *testing.T, s *frontierapi.Server, c *frontierapi.Client, clk *clock, l frontierapi.NextResponse) {
			// Expired batches are forgotten at most once a second:
			// this one is still known when the result comes.
			clk.Advance(59500 * time.Millisecond)
			s.Stats()
			clk.Advance(700 * time.Millisecond)
			res, err := c.Results(context.Background(), frontierapi.ResultsRequest{LeaseID: l.LeaseID, WorkerID: "w1", Results: []frontierapi.Result{
				{URL: l.URLs[0].URL, Status: frontierapi.ResultError, HTTPStatus: http.StatusTooManyRequests, RetryAfter: retryAfter}}})
			if err != nil || res.Processed != 0 || res.Results[0].Error != "lease_expired" {
				t.Fatalf("late result: %v %+v, want lease_expired", err, res)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			clk := newClock()
			s, c, _ := newService(t, frontierapi.Config{Now: clk.Now, Frontier: frontier.Config{LeaseTTL: time.Minute}})
			submit(t, c, "http://a.test/1", "http://a.test/2")
			ctx := context.Background()
			l, err := c.Next(ctx, "w1", 1, 0)
			if err != nil || len(l.URLs) != 1 {
				t.Fatalf("Next: %v %+v", err, l)
			}
			tc.late(t, s, c, clk, l)
			until := clk.Now().Add(retryAfter * time.Second)
			st := s.Stats()
			if len(st.BlockedHosts) != 1 || st.BlockedHosts[0].Host != "a.test" || !st.BlockedHosts[0].Until.Equal(until) ||
				st.BlockedHosts[0].Reason != "HTTP 429 Retry-After" {
				t.Fatalf("blocked hosts: %+v", st.BlockedHosts)
			}
			// Past the politeness delay and the lease's expiry, but
			// within Retry-After.
			clk.Advance(2 * time.Second)
			if l, err := c.Next(ctx, "w2", 10, 0); err != nil || len(l.URLs) != 0 {
				t.Fatalf("leased within Retry-After: %v %+v", err, l)
			}
			clk.Advance(until.Sub(clk.Now()))
			if l, err := c.Next(ctx, "w2", 10, 0); err != nil || len(l.URLs) != 1 || l.URLs[0].URL != "http://a.test/1" {
				t.Fatalf("after Retry-After: %v %+v", err, l)
			}
		})
	}
}

// hookStore is a frontier.Store that calls a hook, once set, before every
// write.
type hookStore struct {
	*frontier.MemoryStore
	hook atomic.Pointer[func()]
}

func (s *hookStore) Write(ctx context.Context, muts []frontier.Mutation) error {
	if h := s.hook.Load(); h != nil {
		(*h)()
	}
	return s.MemoryStore.Write(ctx, muts)
}

// A host throttled by a 429 is blocked before its result is settled, so a
// Next running while the settlement is written does not lease the host.
func TestRetryAfterBlocksBeforeSettling(t *testing.T) {
	clk := newClock()
	store := &hookStore{MemoryStore: frontier.NewMemoryStore()}
	s, c, _ := newService(t, frontierapi.Config{Now: clk.Now, Delay: -1,
		Frontier: frontier.Config{Store: store, MaxLeasesPerHost: 2}})
	submit(t, c, "http://a.test/1", "http://a.test/2")
	ctx := context.Background()
	l, err := c.Next(ctx, "w1", 1, 0)
	if err != nil || len(l.URLs) != 1 || l.URLs[0].URL != "http://a.test/1" {
		t.Fatalf("Next: %v %+v", err, l)
	}
	var during []frontierapi.NextResponse
	hook := func() {
		r, err := s.Next(ctx, "w2", 10, 0)
		if err != nil {
			t.Errorf("Next while settling: %v", err)
		}
		during = append(during, r)
	}
	store.hook.Store(&hook)
	res, err := c.Results(ctx, frontierapi.ResultsRequest{LeaseID: l.LeaseID, WorkerID: "w1", Results: []frontierapi.Result{
		{URL: "http://a.test/1", Status: frontierapi.ResultError, HTTPStatus: http.StatusTooManyRequests, RetryAfter: 60}}})
	store.hook.Store(nil)
	if err != nil || res.Processed != 1 || res.RetriesScheduled != 1 {
		t.Fatalf("results: %v %+v", err, res)
	}
	if len(during) != 1 || len(during[0].URLs) != 0 {
		t.Fatalf("leased while the 429 was being settled: %+v", during)
	}
	clk.Advance(time.Minute)
	if l, err := c.Next(ctx, "w2", 10, 0); err != nil || len(l.URLs) == 0 {
		t.Fatalf("after Retry-After: %v %+v", err, l)
	}
}

// HEAD is refused where GET has side effects: a HEAD of /next would lease
// URLs and send none of them.
func TestHeadMethod(t *testing.T) {
	s, c, base := newService(t, frontierapi.Config{})
	submit(t, c, "http://a.test/")
	do := func(method, path string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(method, base+path, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	if resp := do(http.MethodHead, "/api/v1/frontier/next?worker_id=w"); resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "GET" {
		t.Fatalf("HEAD /next: %d, Allow %q", resp.StatusCode, resp.Header.Get("Allow"))
	}
	if n := s.Frontier().Stats().Leases; n != 0 {
		t.Fatalf("HEAD /next leased %d URLs", n)
	}
	if resp := do(http.MethodHead, "/api/v1/stats"); resp.StatusCode != http.StatusOK {
		t.Fatalf("HEAD /stats: %d", resp.StatusCode)
	}
	if resp := do(http.MethodPost, "/api/v1/stats"); resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "GET, HEAD" {
		t.Fatalf("POST /stats: %d, Allow %q", resp.StatusCode, resp.Header.Get("Allow"))
	}
	if l, err := c.Next(context.Background(), "w", 10, 0); err != nil || len(l.URLs) != 1 {
		t.Fatalf("GET /next after HEAD: %v %+v", err, l)
	}
}

// The results report the frontier's own decision: a retry is due after its
// backoff until MaxAttempts, whose last retry fails the URL, and a success
// is due again when the Schedule says.
func TestResultsReportSettlement(t *testing.T) {
	clk := newClock()
	s, c, _ := newService(t, frontierapi.Config{Now: clk.Now, Delay: -1,
		Frontier: frontier.Config{MaxAttempts: 2, RetryBase: time.Minute, Schedule: frontier.FixedInterval(time.Hour)}})
	ctx := context.Background()
	submit(t, c, "http://a.test/", "http://b.test/")
	settle := func(url string, r frontierapi.Result) frontierapi.ResultStatus {
		t.Helper()
		l, err := c.Next(ctx, "w1", 1, 0)
		if err != nil || len(l.URLs) != 1 || l.URLs[0].URL != url {
			t.Fatalf("Next = %v %+v, want a lease of %s", err, l, url)
		}
		r.URL = url
		res, err := c.Results(ctx, frontierapi.ResultsRequest{LeaseID: l.LeaseID, WorkerID: "w1", Results: []frontierapi.Result{r}})
		if err != nil || len(res.Results) != 1 {
			t.Fatalf("results: %v %+v", err, res)
		}
		return res.Results[0]
	}
	unavailable := frontierapi.Result{Status: frontierapi.ResultError, HTTPStatus: http.StatusServiceUnavailable}
	if r := settle("http://a.test/", unavailable); r.Outcome != frontierapi.OutcomeRetry || !r.DueAt.Equal(clk.Now().Add(time.Minute)) {
		t.Fatalf("first outage: %+v, want a retry in a minute", r)
	}
	if r := settle("http://b.test/", frontierapi.Result{Status: frontierapi.ResultSuccess, HTTPStatus: 200}); r.Outcome != frontierapi.OutcomeDone || !r.DueAt.Equal(clk.Now().Add(time.Hour)) {
		t.Fatalf("success: %+v, want a recrawl in an hour", r)
	}
	clk.Advance(time.Minute)
	if r := settle("http://a.test/", unavailable); r.Outcome != frontierapi.OutcomeFailed || !r.DueAt.IsZero() {
		t.Fatalf("second outage of two attempts: %+v, want failed", r)
	}
	if st := s.Stats(); st.URLs.Retried != 1 || st.URLs.Failed != 1 || st.Frontier.Dropped != 1 {
		t.Fatalf("stats: %+v", st)
	}
}
