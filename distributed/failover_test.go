package distributed_test

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/crawltest"
	"github.com/crawlkit/crawlkit/distributed"
)

// hostClock records when each host of a web was requested.
type hostClock struct {
	mu    sync.Mutex
	times map[string][]time.Time
}

func (c *hostClock) record(r *http.Request) {
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	c.mu.Lock()
	c.times[host] = append(c.times[host], time.Now())
	c.mu.Unlock()
}

// firstAfter returns the first request after t to any host for which in
// is true, and whether there was one.
func (c *hostClock) firstAfter(t time.Time, in func(host string) bool) (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var first time.Time
	for h, ts := range c.times {
		if !in(h) {
			continue
		}
		for _, at := range ts {
			if at.After(t) && (first.IsZero() || at.Before(first)) {
				first = at
			}
		}
	}
	return first, !first.IsZero()
}

// withDefaultTimers drops the kill tests' short timers from node args, so
// that the nodes run with the package's defaults.
func withDefaultTimers(args []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		switch args[i] {
		case "-member-ttl", "-ack-wait", "-handover-hold":
			i++
			continue
		}
		out = append(out, args[i])
	}
	return out
}

// getJSON decodes the JSON a node serves at path.
func getJSON(t *testing.T, c *child, path string, v any) error {
	addr, ok := c.output("http ")
	if !ok {
		return fmt.Errorf("%s printed no http address", c.name)
	}
	resp, err := http.Get("http://" + addr + path)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	return json.NewDecoder(resp.Body).Decode(v)
}

// TestFailoverSeconds runs three nodes with the default timers, kills one
// with SIGKILL after a quarter of the pages and measures how soon the hosts
// of its partitions are fetched again; then starts a fourth node and
// measures how soon it fetches. The crawl must lose nothing, break no
// politeness rule and fetch under 1 % of its pages twice.
func TestFailoverSeconds(t *testing.T) {
	clock := &hostClock{times: map[string][]time.Time{}}
	pages := 8
	if testing.Short() {
		pages = 4
	}
	web := newWeb(t, crawltest.Config{Hosts: 500, PagesPerHost: pages, Seed: 12, Agent: testToken,
		MinGap: 50 * time.Millisecond, CrawlDelay: 300 * time.Millisecond, OnRequest: clock.record})
	url := embeddedNATS(t)
	truthPages := len(web.TruthFor(testToken, 0).URLs())
	var nodes []*child
	for i := range 3 {
		id := fmt.Sprintf("n%d", i+1)
		nodes = append(nodes, startChild(t, id, "node", withDefaultTimers(nodeArgs(t, web, url, "failover", id, 1))...))
	}
	waitFetches(t, web, truthPages/4, firstQuarterTimeout)

	victim := nodes[1]
	var qs distributed.QueueStats
	if err := getJSON(t, victim, "/queue", &qs); err != nil || len(qs.Owned) == 0 {
		t.Fatalf("victim's partitions: %v %v", qs.Owned, err)
	}
	owned := func(host string) bool { return slices.Contains(qs.Owned, distributed.PartitionOf(host, 64)) }
	if err := victim.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-victim.exited
	killed, killedAt := time.Now(), pageFetches(web)
	var first time.Time
	for deadline := killed.Add(time.Minute); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		var ok bool
		if first, ok = clock.firstAfter(killed, owned); ok {
			break
		}
	}
	if first.IsZero() {
		t.Fatalf("no host of the killed node's %d partitions fetched within a minute", len(qs.Owned))
	}
	failover := first.Sub(killed)
	// Every partition of the killed node that has work left, before a
	// join moves partitions again: wait until each was fetched, or 20 s.
	again := func() (n int, slowest time.Duration, slowestP int) {
		for _, p := range qs.Owned {
			if at, ok := clock.firstAfter(killed, func(h string) bool { return distributed.PartitionOf(h, 64) == p }); ok {
				n++
				if d := at.Sub(killed); d > slowest {
					slowest, slowestP = d, p
				}
			}
		}
		return n, slowest, slowestP
	}
	for time.Since(killed) < 20*time.Second {
		if n, _, _ := again(); n == len(qs.Owned) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	nAgain, slowest, slowestP := again()
	t.Logf("killed %s (%d partitions) at %d page fetches of ~%d; first fetch of its hosts %v later; "+
		"%d of its partitions fetched again within 20 s, the last (partition %d) %v after the kill",
		victim.name, len(qs.Owned), killedAt, truthPages, failover.Round(10*time.Millisecond),
		nAgain, slowestP, slowest.Round(10*time.Millisecond))

	joinArgs := withDefaultTimers(nodeArgs(t, web, url, "failover", "n4", 1))
	joined := time.Now()
	joiner := startChild(t, "n4", "node", joinArgs...)
	var joinFetch time.Duration
	for deadline := joined.Add(time.Minute); time.Now().Before(deadline) && joinFetch == 0; time.Sleep(50 * time.Millisecond) {
		var st crawlkit.Stats
		if _, ok := joiner.output("http "); !ok {
			continue
		}
		if err := getJSON(t, joiner, "/stats", &st); err == nil && st.URLs.Fetched > 0 {
			joinFetch = time.Since(joined)
		}
	}
	t.Logf("joined n4 at %d page fetches; its first fetch %v after its start", pageFetches(web), joinFetch.Round(10*time.Millisecond))

	for _, c := range []*child{nodes[0], nodes[2], joiner} {
		c.wait(t, finishTimeout)
	}
	logNodeStats(t, nodes[0], nodes[2], joiner)
	checkCrawl(t, web, 0.01)
	// The target is 10 s (met without -race on this machine, see
	// README.md); the bound asserted is twice that, so that a loaded
	// machine running the nodes under -race does not fail the test. The
	// hold this replaced was FenceTTL + HandoverHold after an AckWait of a
	// minute.
	if failover > failoverBound {
		t.Errorf("the killed node's hosts were fetched again %v after the kill, want under %v", failover, failoverBound)
	}
	if joinFetch == 0 || joinFetch > failoverBound {
		t.Errorf("the joining node's first fetch came %v after its start, want under %v", joinFetch, failoverBound)
	}
}

// failoverBound is what TestFailoverSeconds asserts (see there).
const failoverBound = 20 * time.Second
