package live_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/crawltest"
	"github.com/crawlkit/crawlkit/service/dashboard/live"
)

// TestSnapshot crawls a small web and checks the dashboard's view of it
// against the Crawler's own numbers, and the dashboard's endpoint.
func TestSnapshot(t *testing.T) {
	web, err := crawltest.NewWeb(crawltest.Config{Hosts: 6, PagesPerHost: 6, Seed: 13, Agent: "crawlkit-test", NoTraps: true,
		CrawlDelay: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer web.Close()
	var pages atomic.Int64
	c, err := crawlkit.New(crawlkit.Config{
		UserAgent: "crawlkit-test/1.0", Seeds: web.Seeds(), Scope: crawlkit.ScopeAny, Workers: 32,
		Delay: 20 * time.Millisecond, DialContext: web.DialContext, RobotsRetries: -1,
		AllowPrivate: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
		Handler:      func(context.Context, *crawlkit.Page) error { pages.Add(1); return nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	snap := live.Snapshot(c)
	if snap.URLs.Fetched != pages.Load() {
		t.Errorf("snapshot fetched %d, handler saw %d", snap.URLs.Fetched, pages.Load())
	}
	var hostFetches int64
	for _, h := range snap.TopHosts {
		hostFetches += h.Fetched
	}
	if len(snap.TopHosts) == 0 || hostFetches != snap.URLs.Fetched {
		t.Errorf("top hosts account for %d of %d fetches: %+v", hostFetches, snap.URLs.Fetched, snap.TopHosts)
	}
	if snap.Errors.Client == 0 {
		t.Error("the web has broken links, but no 4xx was counted")
	}
	if snap.NotFetched["robots"] == 0 || len(snap.LinksRejected) == 0 {
		t.Errorf("snapshot reasons: not fetched %v, links rejected %v, waiting %v", snap.NotFetched, snap.LinksRejected, snap.Waiting)
	}
	if snap.Errors.Robots != snap.URLs.BlockedByRobots {
		t.Errorf("robots errors %d, stats %d", snap.Errors.Robots, snap.URLs.BlockedByRobots)
	}
	// crawltest deals out a robots.txt answering 503 to some hosts: they
	// are listed as blocked.
	if len(snap.BlockedHosts) == 0 || int64(len(snap.BlockedHosts)) != snap.Hosts.Blocked {
		t.Errorf("blocked hosts %v, stats say %d", snap.BlockedHosts, snap.Hosts.Blocked)
	}

	d, err := live.New(c)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	rec := httptest.NewRecorder()
	d.ServeHTTP(rec, httptest.NewRequest("GET", "/api/snapshot", nil))
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"fetched"`) {
		t.Errorf("dashboard snapshot endpoint: %d %s", rec.Code, rec.Body.String())
	}
}
