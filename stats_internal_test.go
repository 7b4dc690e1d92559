package crawlkit

import (
	"fmt"
	"log/slog"
	"testing"
	"time"
)

// TestHostAccountingIsBounded checks that the per-host accounting behind
// Stats and the dashboard does not grow with the number of hosts a crawl
// meets: distinct hosts are counted without keeping their names, busy hosts
// are forgotten when their fetches end, the activity table keeps the hosts
// fetched last, and blocked hosts are counted past the names kept.
func TestHostAccountingIsBounded(t *testing.T) {
	c := newCounters()
	const hosts = 50_000
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range hosts {
		h := fmt.Sprintf("h%d.test", i)
		c.hostSeen(h)
		c.hostSeen(h) // once only
		c.hostBusy(h, 1)
		c.hostBusy(h, -1)
		c.hostFetched(h, false, t0.Add(time.Duration(i)*time.Millisecond))
	}
	// The Bloom filter may take a new host for a known one (rate 1e-5).
	if got := c.discoveredHosts.Load(); got > hosts || got < hosts-5 {
		t.Errorf("discovered hosts %d, want %d", got, hosts)
	}
	if len(c.busy) != 0 {
		t.Errorf("%d idle hosts still tracked as busy", len(c.busy))
	}
	if n := len(c.activity); n < maxActivity || n > 2*maxActivity {
		t.Errorf("activity table holds %d hosts, want %d to %d", n, maxActivity, 2*maxActivity)
	}
	for i := hosts - maxActivity; i < hosts; i++ {
		if c.activity[fmt.Sprintf("h%d.test", i)] == nil {
			t.Fatalf("h%d.test, among the %d fetched last, was dropped from the activity table", i, maxActivity)
		}
	}
	s := c.snapshot(t0, t0.Add(time.Minute), 0, 1)
	if s.Hosts.Discovered != c.discoveredHosts.Load() || s.Hosts.Active != 0 {
		t.Errorf("snapshot hosts %+v", s.Hosts)
	}

	cr := &Crawler{stats: newCounters(), blockedHosts: map[string]bool{}, blockedSeen: newHostSet(), cfg: Config{Logger: slog.New(slog.DiscardHandler)}}
	for i := range 3 * maxActivity {
		h := fmt.Sprintf("b%d.test", i)
		cr.hostStopped(h, ReasonRobots, "test")
		cr.hostStopped(h, ReasonRobots, "test")
	}
	if got := cr.stats.hostsBlocked.Load(); got > 3*maxActivity || got < 3*maxActivity-1 {
		t.Errorf("blocked hosts counted %d, want %d", got, 3*maxActivity)
	}
	if len(cr.blockedHosts) != maxActivity {
		t.Errorf("%d blocked host names kept, want %d", len(cr.blockedHosts), maxActivity)
	}
}
