package distributed_test

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
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
	web := failoverWeb(t, 12, clock.record)
	url := embeddedNATS(t)
	truthPages := len(web.TruthFor(testToken, 0).URLs())
	args := func(id string) []string {
		return withDefaultTimers(nodeArgs(t, web, url, "failover", id, 1))
	}
	var nodes []*child
	for i := range 3 {
		id := fmt.Sprintf("n%d", i+1)
		nodes = append(nodes, startChild(t, id, "node", args(id)...))
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
	for time.Since(killed) < 20*time.Second {
		if n, _, _ := clock.returned(killed, qs.Owned); n == len(qs.Owned) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("killed %s (%d partitions) at %d page fetches of ~%d; first fetch of its hosts %v later",
		victim.name, len(qs.Owned), killedAt, truthPages, failover.Round(10*time.Millisecond))

	joiner := startChild(t, "n4", "node", args("n4")...)
	joinFetch := firstFetch(t, joiner, time.Now())
	t.Logf("joined n4 at %d page fetches; its first fetch %v after its start", pageFetches(web), joinFetch.Round(10*time.Millisecond))

	for _, c := range []*child{nodes[0], nodes[2], joiner} {
		c.wait(t, finishTimeout)
	}
	logNodeStats(t, nodes[0], nodes[2], joiner)
	checkCrawl(t, web, 0.01)
	bound := failoverBound()
	if failover > bound {
		t.Errorf("the killed node's hosts were fetched again %v after the kill, want under %v", failover, bound)
	}
	// Every partition with work left must fetch again within the target
	// (MemberTTL + the held messages' AckWait + FenceTTL, plus the
	// replay: 6.6-7.5 s beside a busy loop on 2 cores). Under -race it is
	// logged only: the node processes run several times slower.
	n, slowest, slowestP := clock.returned(killed, qs.Owned)
	t.Logf("%d of the killed node's %d partitions had work after the kill; the last of them (partition %d) fetched again %v after it",
		n, len(qs.Owned), slowestP, slowest.Round(10*time.Millisecond))
	if !raceDetector && slowest > bound {
		t.Errorf("partition %d of the killed node fetched again %v after the kill, want under %v", slowestP, slowest, bound)
	}
	if joinFetch == 0 || joinFetch > bound {
		t.Errorf("the joining node's first fetch came %v after its start, want under %v", joinFetch, bound)
	}
}

// returned measures how soon the partitions of parts came back after a
// fault at since: how many had a request to one of their hosts after it
// (the ones with work left), and the latest of their first such requests.
func (c *hostClock) returned(since time.Time, parts []int) (n int, slowest time.Duration, slowestP int) {
	for _, p := range parts {
		if at, ok := c.firstAfter(since, func(h string) bool { return distributed.PartitionOf(h, 64) == p }); ok {
			n++
			if d := at.Sub(since); d > slowest {
				slowest, slowestP = d, p
			}
		}
	}
	return n, slowest, slowestP
}

// firstFetch polls a node's stats until it has fetched a page, and returns
// how long after started that was (zero if not within a minute).
func firstFetch(t *testing.T, c *child, started time.Time) time.Duration {
	for deadline := started.Add(time.Minute); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if _, ok := c.output("http "); !ok {
			continue
		}
		var st crawlkit.Stats
		if err := getJSON(t, c, "/stats", &st); err == nil && st.URLs.Fetched > 0 {
			return time.Since(started)
		}
	}
	return 0
}

// failoverWeb is the web of the failover and kill tests: 500 hosts,
// Crawl-delay on a sixth of them, spacing checked by the server;
// onRequest, if not nil, sees every request.
func failoverWeb(t testing.TB, seed int64, onRequest func(*http.Request)) *crawltest.Web {
	pages := 8
	if testing.Short() {
		pages = 4
	}
	return newWeb(t, crawltest.Config{Hosts: 500, PagesPerHost: pages, Seed: seed, Agent: testToken,
		MinGap: 50 * time.Millisecond, CrawlDelay: 300 * time.Millisecond, OnRequest: onRequest})
}

// failoverBound is what the failover tests assert: the 10 s target, or
// twice that under -race, whose node processes run several times slower on
// a loaded machine.
func failoverBound() time.Duration {
	if raceDetector {
		return 20 * time.Second
	}
	return 10 * time.Second
}

// longestGap returns the longest time between two consecutive requests,
// both in [from, to], to hosts for which in is true, and when it began.
func (c *hostClock) longestGap(from, to time.Time, in func(host string) bool) (gap time.Duration, began time.Time) {
	c.mu.Lock()
	var ts []time.Time
	for h, hs := range c.times {
		if !in(h) {
			continue
		}
		for _, at := range hs {
			if !at.Before(from) && !at.After(to) {
				ts = append(ts, at)
			}
		}
	}
	c.mu.Unlock()
	slices.SortFunc(ts, func(a, b time.Time) int { return a.Compare(b) })
	for i := 1; i < len(ts); i++ {
		if d := ts[i].Sub(ts[i-1]); d > gap {
			gap, began = d, ts[i-1]
		}
	}
	return gap, began
}

// TestLateNode starts two nodes with the default timers and a third once
// the crawl is under way, as when one node's setup is slow. The late node
// must fetch within the failover bound of its start, and the crawl must
// pass the usual checks with results exactly once; and no partition it
// took may stall longer than the bound while it changes hands (the hold
// this replaced was FenceTTL + HandoverHold, up to 40 s).
func TestLateNode(t *testing.T) {
	if raceDetector {
		// Three -race node processes and the in-process server on two
		// loaded cores timed acks out and moved pins (README.md).
		t.Skip("a timing test: run it without -race")
	}
	clock := &hostClock{times: map[string][]time.Time{}}
	web := failoverWeb(t, 14, clock.record)
	url := embeddedNATS(t)
	truth := web.TruthFor(testToken, 0).URLs()
	truthPages := len(truth)
	seeds := seedAll(t, truth)
	out := t.TempDir()
	writer := startChild(t, "results", "results", "-nats", url, "-crawl", "late", "-out", out, "-until-done")
	args := func(id string) []string {
		a := append(withDefaultTimers(nodeArgs(t, web, url, "late", id, 1)), "-results")
		a[slices.Index(a, "-seeds-file")+1] = seeds
		return a
	}
	var nodes []*child
	for i := range 2 {
		id := fmt.Sprintf("n%d", i+1)
		nodes = append(nodes, startChild(t, id, "node", args(id)...))
	}
	waitFetches(t, web, truthPages/10, firstQuarterTimeout)

	late := startChild(t, "n3", "node", args("n3")...)
	started := time.Now()
	lateFetch := firstFetch(t, late, started)
	var qs distributed.QueueStats
	if err := getJSON(t, late, "/queue", &qs); err != nil {
		t.Fatalf("the late node's partitions: %v", err)
	}
	owned := qs.Owned
	atJoin := pageFetches(web)
	for _, c := range append(nodes, late) {
		c.wait(t, finishTimeout)
	}
	ended := time.Now()
	writer.wait(t, time.Minute)
	logNodeStats(t, nodes[0], nodes[1], late)
	checkCrawl(t, web, 0.01)
	checkResultsOnce(t, out, truth)

	bound := failoverBound()
	if lateFetch == 0 || lateFetch > bound {
		t.Fatalf("the late node's first fetch came %v after its start, want under %v", lateFetch, bound)
	}
	if len(owned) == 0 {
		t.Fatal("the late node owned no partition when it first fetched")
	}
	// The stall of each partition the late node took: the longest gap
	// between requests to its hosts from the late node's start to the
	// end, which must stay under the target (2.9-7.3 s beside a busy loop
	// on 2 cores).
	var worst time.Duration
	var worstAt time.Time
	worstP := -1
	for _, p := range owned {
		gap, began := clock.longestGap(started, ended, func(h string) bool { return distributed.PartitionOf(h, 64) == p })
		if gap > worst {
			worst, worstP, worstAt = gap, p, began
		}
	}
	t.Logf("late node started at %d page fetches of ~%d, fetched %v later, took %d partitions; "+
		"longest stall among them %v (partition %d, from %s); crawl ended %v after its start",
		atJoin, truthPages, lateFetch.Round(10*time.Millisecond), len(owned), worst.Round(10*time.Millisecond),
		worstP, worstAt.UTC().Format("15:04:05.000"), ended.Sub(started).Round(100*time.Millisecond))
	if worst > bound {
		t.Errorf("partition %d stalled %v while it changed hands, want under %v", worstP, worst, bound)
	}
}

// TestServerKillSeconds runs three node processes with the default timers
// and results on a three-server cluster, kills the server leading the URL
// stream with SIGKILL after a quarter of the pages, and measures how soon
// every partition with work left fetches again (every page is a seed) and
// the crawl's longest pause. The crawl must lose nothing, break no
// politeness rule, fetch under 1 % of its pages twice and write every
// result exactly once.
func TestServerKillSeconds(t *testing.T) {
	if raceDetector {
		t.Skip("a timing test: run it without -race")
	}
	clock := &hostClock{times: map[string][]time.Time{}}
	web := failoverWeb(t, 16, clock.record)
	truth := web.TruthFor(testToken, 0).URLs()
	seeds := seedAll(t, truth)
	natsURL, servers := natsCluster(t)
	out := t.TempDir()
	writer := startChild(t, "results", "results", "-nats", natsURL, "-crawl", "server", "-out", out, "-until-done")
	var nodes []*child
	for i := range 3 {
		id := fmt.Sprintf("n%d", i+1)
		args := append(withDefaultTimers(nodeArgs(t, web, natsURL, "server", id, 0)), "-results")
		args[slices.Index(args, "-seeds-file")+1] = seeds
		nodes = append(nodes, startChild(t, id, "node", args...))
	}
	waitFetches(t, web, len(truth)/4, firstQuarterTimeout)
	leader := killStreamLeader(t, natsURL, "CRAWL_server", servers)
	killed, killedAt := time.Now(), pageFetches(web)
	for _, c := range nodes {
		c.wait(t, finishTimeout)
	}
	ended := time.Now()
	writer.wait(t, time.Minute)
	logNodeStats(t, nodes...)
	// Duplicates: 0-2 of ~4 650 fetches in 23 runs under load since a
	// redelivery during an ack waits for it (0-42 before).
	checkCrawl(t, web, 0.01)
	checkResultsOnce(t, out, truth)

	all := make([]int, 64)
	for i := range all {
		all[i] = i
	}
	n, slowest, slowestP := clock.returned(killed, all)
	pause, began := clock.longestGap(killed, ended, func(string) bool { return true })
	t.Logf("killed stream leader %s at %d page fetches of ~%d; %d partitions had work after it, the last (partition %d) fetched again %v after it; "+
		"the crawl's longest pause %v (from %s); it ended %v after the kill",
		leader, killedAt, len(truth), n, slowestP, slowest.Round(10*time.Millisecond), pause.Round(10*time.Millisecond),
		began.UTC().Format("15:04:05.000"), ended.Sub(killed).Round(100*time.Millisecond))
	// Measured, not asserted: a partition whose consumer leader died waits
	// for the servers to elect a new one (nats-server's Raft election
	// timeout is 4-9 s), then FenceTTL, so the last partitions come back
	// after 10-18 s on this 2-core machine (README.md, "Failover in
	// seconds"), while the crawl as a whole pauses a few seconds at most.
}

// seedAll writes every page of truth to a seeds file and returns its path:
// with every page a seed, each partition has work queued from the start,
// so that a gap in its requests is a stall, not a partition waiting for
// its next URL to be found.
func seedAll(t *testing.T, truth []string) string {
	seeds := filepath.Join(t.TempDir(), "all.txt")
	if err := os.WriteFile(seeds, []byte(strings.Join(truth, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	return seeds
}
