package frontierapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/crawlkit/crawlkit/service/frontierapi"
)

// TestNegativePriorityRejectsOneEntry: a negative priority rejects its URL
// only, as a client mistake in that entry; the rest of the batch is queued.
func TestNegativePriorityRejectsOneEntry(t *testing.T) {
	s, c, _ := newService(t, frontierapi.Config{})
	resp, err := c.Submit(context.Background(), frontierapi.SubmitRequest{URLs: []frontierapi.SubmitURL{
		{URL: "http://a.test/1", Priority: 0.5},
		{URL: "http://a.test/2", Priority: -1},
		{URL: "http://b.test/", Priority: 2},
	}})
	if err != nil {
		t.Fatalf("submit: %v", err)
	}
	if resp.Accepted != 2 || resp.Rejected != 1 || resp.Results[0].Status != frontierapi.StatusAccepted ||
		resp.Results[1].Status != frontierapi.StatusRejected || !strings.HasPrefix(resp.Results[1].Reason, "invalid_priority") ||
		resp.Results[2].Status != frontierapi.StatusAccepted {
		t.Fatalf("submit: %+v", resp)
	}
	st := s.Stats()
	if st.URLs.Discovered != 2 || st.URLs.TrapRejected != 0 || st.Errors.Trap != 0 {
		t.Fatalf("stats after a bad priority: %+v", st.Snapshot)
	}
	// The rejected URL was not marked seen: with a valid priority it is
	// accepted.
	resp, err = c.Submit(context.Background(), frontierapi.SubmitRequest{URLs: []frontierapi.SubmitURL{{URL: "http://a.test/2", Priority: 1}}})
	if err != nil || resp.Accepted != 1 {
		t.Fatalf("resubmit: %v %+v", err, resp)
	}
}

// TestSecondResultAlreadySettled: a second result for a URL of a live
// lease, in a later request or in the same one, is skipped as
// already_settled, as the documentation says, not as not_in_lease; a URL
// the lease never had is not_in_lease.
func TestSecondResultAlreadySettled(t *testing.T) {
	clk := newClock()
	_, c, _ := newService(t, frontierapi.Config{Now: clk.Now, Delay: -1})
	ctx := context.Background()
	submit(t, c, "http://a.test/", "http://b.test/", "http://c.test/")
	l, err := c.Next(ctx, "w", 3, 0)
	if err != nil || len(l.URLs) != 3 {
		t.Fatalf("Next: %v %+v", err, l)
	}
	ok := func(u string) frontierapi.Result {
		return frontierapi.Result{URL: u, Status: frontierapi.ResultSuccess, HTTPStatus: 200}
	}
	u0, u1 := l.URLs[0].URL, l.URLs[1].URL
	resp, err := c.Results(ctx, frontierapi.ResultsRequest{LeaseID: l.LeaseID, WorkerID: "w", Results: []frontierapi.Result{ok(u0), ok(u0)}})
	if err != nil || resp.Processed != 1 || resp.Results[0].Outcome != frontierapi.OutcomeDone ||
		resp.Results[1].Outcome != frontierapi.OutcomeSkipped || resp.Results[1].Error != "already_settled" {
		t.Fatalf("one URL twice in one request: %v %+v", err, resp)
	}
	resp, err = c.Results(ctx, frontierapi.ResultsRequest{LeaseID: l.LeaseID, WorkerID: "w",
		Results: []frontierapi.Result{ok(u0), ok("http://elsewhere.test/"), ok(u1)}})
	if err != nil || resp.Processed != 1 ||
		resp.Results[0].Outcome != frontierapi.OutcomeSkipped || resp.Results[0].Error != "already_settled" ||
		resp.Results[1].Outcome != frontierapi.OutcomeSkipped || resp.Results[1].Error != "not_in_lease" ||
		resp.Results[2].Outcome != frontierapi.OutcomeDone {
		t.Fatalf("a settled URL again, a foreign one, a new one: %v %+v", err, resp)
	}
	// Once every URL is settled the lease_id is unknown, as documented.
	resp, err = c.Results(ctx, frontierapi.ResultsRequest{LeaseID: l.LeaseID, WorkerID: "w", Results: []frontierapi.Result{ok(l.URLs[2].URL)}})
	if err != nil || resp.Processed != 1 {
		t.Fatalf("last URL: %v %+v", err, resp)
	}
	_, err = c.Results(ctx, frontierapi.ResultsRequest{LeaseID: l.LeaseID, WorkerID: "w", Results: []frontierapi.Result{ok(u0)}})
	var apiErr *frontierapi.APIError
	if !errors.As(err, &apiErr) || apiErr.Code != frontierapi.CodeUnknownLease {
		t.Fatalf("result after the whole lease was settled: %v", err)
	}
}

// rawDo sends a request to the service with the given Host and Origin.
func rawDo(t *testing.T, base, method, path, host, origin, body string) (int, frontierapi.ErrorResponse) {
	t.Helper()
	req, err := http.NewRequest(method, base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if host != "" {
		req.Host = host
	}
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var e frontierapi.ErrorResponse
	_ = json.Unmarshal(b, &e)
	return resp.StatusCode, e
}

// TestHostCheck: a request whose Host or Origin names neither the
// service's address nor an allowed host is refused with 403, token or not,
// before it can lease, submit or read anything.
func TestHostCheck(t *testing.T) {
	s, _, base := newService(t, frontierapi.Config{AllowedHosts: []string{"frontier.internal"}})
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(base, "http://"))
	rebound := "rebound.example:" + port
	for _, tc := range []struct {
		method, path, host, origin, body string
		want                             int
	}{
		{"GET", "/api/v1/stats", "", "", "", 200},
		{"GET", "/api/v1/stats", "localhost:" + port, "", "", 200},
		{"GET", "/api/v1/stats", "frontier.internal:" + port, "http://frontier.internal:" + port, "", 200},
		{"GET", "/api/v1/stats", rebound, "", "", 403},
		{"GET", "/api/v1/frontier/next?worker_id=w", rebound, "", "", 403},
		{"POST", "/api/v1/frontier/urls", rebound, "", `{"urls":[{"url":"http://a.test/"}]}`, 403},
		{"POST", "/api/v1/frontier/urls", "", "http://evil.example", `{"urls":[{"url":"http://a.test/"}]}`, 403},
		{"GET", "/api/v1/stats", "localhost:" + fmt.Sprint(mustAtoi(t, port)+1), "", "", 403},
	} {
		code, e := rawDo(t, base, tc.method, tc.path, tc.host, tc.origin, tc.body)
		if code != tc.want || (code == 403 && e.Error != frontierapi.CodeForbiddenHost) {
			t.Errorf("%s %s Host %q Origin %q: %d %+v, want %d", tc.method, tc.path, tc.host, tc.origin, code, e, tc.want)
		}
	}
	if d := s.Stats().URLs.Discovered; d != 0 {
		t.Fatalf("a refused request queued %d URLs", d)
	}
	if _, err := frontierapi.New(frontierapi.Config{Token: token, AllowedHosts: []string{"http://x/"}}); !errors.Is(err, frontierapi.ErrConfig) {
		t.Fatalf("a URL in AllowedHosts: %v", err)
	}
}

func mustAtoi(t *testing.T, s string) int {
	t.Helper()
	var n int
	if _, err := fmt.Sscan(s, &n); err != nil {
		t.Fatal(err)
	}
	return n
}
