package frontierapi_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/frontier"
	"github.com/crawlkit/crawlkit/service/frontierapi"
)

// throttled is a 429 result for u asking to wait an hour.
func throttled(u string) frontierapi.Result {
	return frontierapi.Result{URL: u, Status: frontierapi.ResultError, HTTPStatus: http.StatusTooManyRequests, RetryAfter: 3600}
}

// wantUnknownLease fails unless err is a 404 unknown_lease.
func wantUnknownLease(t *testing.T, err error) {
	t.Helper()
	var apiErr *frontierapi.APIError
	if !errors.As(err, &apiErr) || apiErr.Code != frontierapi.CodeUnknownLease || apiErr.StatusCode != http.StatusNotFound {
		t.Fatalf("got %v, want 404 unknown_lease", err)
	}
}

// blocked returns the hosts the service reports as blocked.
func blocked(s *frontierapi.Server) map[string]time.Time {
	m := map[string]time.Time{}
	for _, b := range s.Stats().BlockedHosts {
		m[b.Host] = b.Until
	}
	return m
}

// A made-up lease ID blocks nothing, whatever its results say: the token
// alone must not let a caller keep any host from being crawled.
func TestMadeUpLeaseBlocksNothing(t *testing.T) {
	clk := newClock()
	s, c, _ := newService(t, frontierapi.Config{Now: clk.Now, Delay: -1})
	submit(t, c, "http://victim.test/1")
	ctx := context.Background()
	for _, id := range []string{"feed", "00000000000000000000000000000000"} {
		_, err := c.Results(ctx, frontierapi.ResultsRequest{LeaseID: id, Results: []frontierapi.Result{
			throttled("http://victim.test/1"),
			{URL: "http://victim.test/2", Status: frontierapi.ResultError, HTTPStatus: http.StatusServiceUnavailable, RetryAfter: 1e9},
		}})
		wantUnknownLease(t, err)
	}
	if b := blocked(s); len(b) != 0 {
		t.Fatalf("blocked by a made-up lease: %v", b)
	}
	if l, err := c.Next(ctx, "w1", 10, 0); err != nil || len(l.URLs) != 1 {
		t.Fatalf("Next after a made-up lease's 429: %v %+v", err, l)
	}
}

// A lease that expired (and was forgotten) a moment ago still carries its
// Retry-After, but only for the hosts of its own URLs.
func TestExpiredLeaseBlocksOnlyItsHosts(t *testing.T) {
	clk := newClock()
	s, c, _ := newService(t, frontierapi.Config{Now: clk.Now, Delay: -1, Frontier: frontier.Config{LeaseTTL: time.Minute}})
	submit(t, c, "http://a.test/1", "http://victim.test/1")
	ctx := context.Background()
	l, err := c.Next(ctx, "w1", 1, 0)
	if err != nil || len(l.URLs) != 1 {
		t.Fatalf("Next: %v %+v", err, l)
	}
	mine := l.URLs[0]
	other := "http://victim.test/1"
	if mine.URL == other {
		other = "http://a.test/1"
	}
	otherHost := "victim.test"
	if mine.Host == otherHost {
		otherHost = "a.test"
	}
	clk.Advance(61 * time.Second) // expired; the service forgets the batch
	s.Stats()
	_, err = c.Results(ctx, frontierapi.ResultsRequest{LeaseID: l.LeaseID, WorkerID: "w1", Results: []frontierapi.Result{
		throttled(other), throttled(mine.URL)}})
	wantUnknownLease(t, err)
	b := blocked(s)
	if _, ok := b[otherHost]; ok || len(b) != 1 || !b[mine.Host].Equal(clk.Now().Add(time.Hour)) {
		t.Fatalf("blocked hosts: %v, want only %s until %v", b, mine.Host, clk.Now().Add(time.Hour))
	}
	l2, err := c.Next(ctx, "w2", 10, 0)
	if err != nil || len(l2.URLs) != 1 || l2.URLs[0].URL != other {
		t.Fatalf("Next: %v %+v, want only %s", err, l2, other)
	}
}

// A result for a URL that is not in a live lease blocks nothing; one for a
// URL of the lease that was already settled still blocks its host.
func TestKnownLeaseURLNotInLeaseBlocksNothing(t *testing.T) {
	clk := newClock()
	s, c, _ := newService(t, frontierapi.Config{Now: clk.Now, Delay: -1})
	submit(t, c, "http://a.test/1", "http://b.test/1")
	ctx := context.Background()
	l, err := c.Next(ctx, "w1", 10, 0)
	if err != nil || len(l.URLs) != 2 {
		t.Fatalf("Next: %v %+v", err, l)
	}
	res, err := c.Results(ctx, frontierapi.ResultsRequest{LeaseID: l.LeaseID, WorkerID: "w1", Results: []frontierapi.Result{
		{URL: "http://a.test/1", Status: frontierapi.ResultSuccess, HTTPStatus: 200},
		throttled("http://victim.test/1")}})
	if err != nil || res.Processed != 1 || res.Results[1].Error != "not_in_lease" {
		t.Fatalf("results: %v %+v", err, res)
	}
	if b := blocked(s); len(b) != 0 {
		t.Fatalf("blocked by a URL not in the lease: %v", b)
	}
	// a.test/1 was settled: a late 429 for it is skipped but blocks a.test.
	res, err = c.Results(ctx, frontierapi.ResultsRequest{LeaseID: l.LeaseID, WorkerID: "w1", Results: []frontierapi.Result{
		throttled("http://a.test/1")}})
	if err != nil || res.Processed != 0 || res.Results[0].Outcome != frontierapi.OutcomeSkipped {
		t.Fatalf("results: %v %+v", err, res)
	}
	if b := blocked(s); len(b) != 1 || b["a.test"].IsZero() {
		t.Fatalf("blocked hosts: %v, want a.test", b)
	}
}

// An ended lease's Retry-After counts for the lease duration after the
// lease expired, or after its last URL was settled, and not a moment
// longer; then the service holds nothing of it.
func TestRecentLeaseForgottenAfterWindow(t *testing.T) {
	const ttl = time.Minute
	t.Run("expired", func(t *testing.T) {
		clk := newClock()
		s, c, _ := newService(t, frontierapi.Config{Now: clk.Now, Delay: -1, Frontier: frontier.Config{LeaseTTL: ttl}})
		submit(t, c, "http://a.test/1", "http://b.test/1")
		ctx := context.Background()
		l, err := c.Next(ctx, "w1", 10, 0)
		if err != nil || len(l.URLs) != 2 {
			t.Fatalf("Next: %v %+v", err, l)
		}
		clk.Advance(ttl)
		s.Stats() // forgets the expired batch
		if ids, urls := frontierapi.RecentLeases(s); ids != 1 || urls != 2 {
			t.Fatalf("remembered %d leases, %d URLs; want 1, 2", ids, urls)
		}
		checkWindowEdge(t, clk, s, c, l.LeaseID, ttl)
	})
	t.Run("settled", func(t *testing.T) {
		clk := newClock()
		s, c, _ := newService(t, frontierapi.Config{Now: clk.Now, Delay: -1, Frontier: frontier.Config{LeaseTTL: ttl}})
		submit(t, c, "http://a.test/1", "http://b.test/1")
		ctx := context.Background()
		l, err := c.Next(ctx, "w1", 10, 0)
		if err != nil || len(l.URLs) != 2 {
			t.Fatalf("Next: %v %+v", err, l)
		}
		clk.Advance(10 * time.Second)
		res, err := c.Results(ctx, frontierapi.ResultsRequest{LeaseID: l.LeaseID, Results: []frontierapi.Result{
			{URL: "http://a.test/1", Status: frontierapi.ResultSuccess, HTTPStatus: 200},
			{URL: "http://b.test/1", Status: frontierapi.ResultSuccess, HTTPStatus: 200}}})
		if err != nil || res.Processed != 2 {
			t.Fatalf("results: %v %+v", err, res)
		}
		// A duplicate report of a throttled retry, from another worker
		// than the lease's: ignored.
		_, err = c.Results(ctx, frontierapi.ResultsRequest{LeaseID: l.LeaseID, WorkerID: "w2", Results: []frontierapi.Result{throttled("http://a.test/1")}})
		wantUnknownLease(t, err)
		if b := blocked(s); len(b) != 0 {
			t.Fatalf("blocked for another worker: %v", b)
		}
		checkWindowEdge(t, clk, s, c, l.LeaseID, ttl)
	})
}

// The table of ended leases is bounded in IDs and in URLs; the oldest
// leases are forgotten first and then block nothing.
func TestRecentLeasesBounded(t *testing.T) {
	clk := newClock()
	s, c, _ := newService(t, frontierapi.Config{Now: clk.Now, Delay: -1})
	frontierapi.SetRecentLimits(s, 3, 5)
	ctx := context.Background()
	var urls []string
	for i := range 15 {
		urls = append(urls, fmt.Sprintf("http://h%d.test/", i))
	}
	submit(t, c, urls...)
	// settleBatch leases n URLs, settles them all and returns the lease.
	settleBatch := func(n int) frontierapi.NextResponse {
		t.Helper()
		l, err := c.Next(ctx, "w1", n, 0)
		if err != nil || len(l.URLs) != n {
			t.Fatalf("Next: %v %+v", err, l)
		}
		req := frontierapi.ResultsRequest{LeaseID: l.LeaseID}
		for _, u := range l.URLs {
			req.Results = append(req.Results, frontierapi.Result{URL: u.URL, Status: frontierapi.ResultSuccess, HTTPStatus: 200})
		}
		if res, err := c.Results(ctx, req); err != nil || res.Processed != n {
			t.Fatalf("results: %v %+v", err, res)
		}
		return l
	}
	var ls []frontierapi.NextResponse
	for range 5 {
		ls = append(ls, settleBatch(1))
	}
	if ids, n := frontierapi.RecentLeases(s); ids != 3 || n != 3 {
		t.Fatalf("remembered %d leases, %d URLs; want 3, 3", ids, n)
	}
	late := func(l frontierapi.NextResponse) {
		t.Helper()
		_, err := c.Results(ctx, frontierapi.ResultsRequest{LeaseID: l.LeaseID, Results: []frontierapi.Result{throttled(l.URLs[0].URL)}})
		wantUnknownLease(t, err)
	}
	late(ls[1]) // forgotten
	late(ls[2]) // remembered
	if b := blocked(s); len(b) != 1 || b[ls[2].URLs[0].Host].IsZero() {
		t.Fatalf("blocked hosts: %v, want only %s", b, ls[2].URLs[0].Host)
	}
	// 4 more URLs: the two oldest leases go to keep 5 URLs.
	ls = append(ls, settleBatch(4))
	if ids, n := frontierapi.RecentLeases(s); ids != 2 || n != 5 {
		t.Fatalf("remembered %d leases, %d URLs; want 2, 5", ids, n)
	}
	// A lease of more URLs than the table holds is not remembered.
	settleBatch(6)
	if ids, n := frontierapi.RecentLeases(s); ids != 2 || n != 5 {
		t.Fatalf("remembered %d leases, %d URLs; want 2, 5", ids, n)
	}
}

// checkWindowEdge checks the end of an ended lease's window, which began
// at the clock's time: a 429 with Retry-After for its a.test URL one
// nanosecond before the end blocks a.test, and one for its b.test URL at
// the end blocks nothing, the service then holding nothing of the lease.
func checkWindowEdge(t *testing.T, clk *clock, s *frontierapi.Server, c *frontierapi.Client, leaseID string, window time.Duration) {
	t.Helper()
	ctx := context.Background()
	clk.Advance(window - time.Nanosecond)
	_, err := c.Results(ctx, frontierapi.ResultsRequest{LeaseID: leaseID, WorkerID: "w1", Results: []frontierapi.Result{throttled("http://a.test/1")}})
	wantUnknownLease(t, err)
	if b := blocked(s); len(b) != 1 || b["a.test"].IsZero() {
		t.Fatalf("blocked hosts within the window: %v, want a.test", b)
	}
	clk.Advance(time.Nanosecond)
	_, err = c.Results(ctx, frontierapi.ResultsRequest{LeaseID: leaseID, Results: []frontierapi.Result{throttled("http://b.test/1")}})
	wantUnknownLease(t, err)
	if b := blocked(s); len(b) != 1 || !b["b.test"].IsZero() {
		t.Fatalf("blocked hosts after the window: %v, want a.test only", b)
	}
	if ids, urls := frontierapi.RecentLeases(s); ids != 0 || urls != 0 {
		t.Fatalf("after the window: remembered %d leases, %d URLs", ids, urls)
	}
}
