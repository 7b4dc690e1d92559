package distributed_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/distributed"
)

func memberNames(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("node-%02d", i)
	}
	return out
}

// TestOwnerMovesOnlyTheChangedMembersPartitions checks the rendezvous
// property of Owner, every partition's first choice: a join moves partitions only to the new member, a leave only
// from the leaving one, and the shares stay even.
func TestOwnerMovesOnlyTheChangedMembersPartitions(t *testing.T) {
	const partitions = 1024
	members := memberNames(10)
	owners := func(ms []string) []string {
		out := make([]string, partitions)
		for p := range out {
			out[p] = distributed.Owner(ms, p)
		}
		return out
	}
	before := owners(members)
	share := map[string]int{}
	for _, o := range before {
		share[o]++
	}
	for _, m := range members {
		// An even share is 102.4; a hash gives a few standard
		// deviations (about 10) around it.
		if share[m] < 60 || share[m] > 150 {
			t.Errorf("%s owns %d of %d partitions, far from an even share", m, share[m], partitions)
		}
	}

	joined := owners(append(members[:10:10], "node-new"))
	moved := 0
	for p := range partitions {
		if joined[p] != before[p] {
			moved++
			if joined[p] != "node-new" {
				t.Fatalf("partition %d moved from %s to %s on a join of node-new", p, before[p], joined[p])
			}
		}
	}
	if moved < partitions/22 || moved > 2*partitions/11 {
		t.Errorf("a join moved %d of %d partitions, want about %d", moved, partitions, partitions/11)
	}

	left := owners(append(members[:3:3], members[4:]...)) // node-03 leaves
	for p := range partitions {
		if left[p] != before[p] && before[p] != "node-03" {
			t.Fatalf("partition %d moved from %s to %s when node-03 left", p, before[p], left[p])
		}
		if left[p] == "node-03" {
			t.Fatalf("partition %d still owned by node-03", p)
		}
	}
	if got := distributed.Owner(nil, 1); got != "" {
		t.Errorf("Owner(nil) = %q", got)
	}
	balanced := distributed.Owners(members, partitions)
	n := 0
	for _, o := range balanced {
		if o == "node-03" {
			n++
		}
	}
	if got := len(distributed.Assignment(members, partitions, "node-03")); got != n {
		t.Errorf("Assignment gives node-03 %d partitions, Owners %d", got, n)
	}
}

func TestNewNodeRejectsBadConfig(t *testing.T) {
	ok := distributed.Config{NATSURL: "nats://127.0.0.1:4222", NodeID: "a", CrawlID: "c",
		Crawler: crawlkit.Config{UserAgent: testAgent, Seeds: []string{"http://h0000.test/"}}}
	if _, err := distributed.NewNode(ok); err != nil {
		t.Fatalf("valid config: %v", err)
	}
	// A Recrawl schedule is the Queue's (recrawl.go), not refused.
	withRecrawl := ok
	withRecrawl.Crawler.Recrawl = fixedRecrawl{}
	if _, err := distributed.NewNode(withRecrawl); err != nil {
		t.Fatalf("config with a Recrawl schedule: %v", err)
	}
	for name, mutate := range map[string]func(*distributed.Config){
		"no url":      func(c *distributed.Config) { c.NATSURL = "" },
		"node id":     func(c *distributed.Config) { c.NodeID = "a.b" },
		"crawl id":    func(c *distributed.Config) { c.CrawlID = "" },
		"partitions":  func(c *distributed.Config) { c.Partitions = -1 },
		"replicas":    func(c *distributed.Config) { c.Replicas = 7 },
		"member ttl":  func(c *distributed.Config) { c.MemberTTL = time.Millisecond },
		"ack wait":    func(c *distributed.Config) { c.AckWait = time.Millisecond },
		"dup window":  func(c *distributed.Config) { c.DuplicateWindow = time.Millisecond },
		"max held":    func(c *distributed.Config) { c.MaxHeldPerPartition = -1 },
		"pull expiry": func(c *distributed.Config) { c.PullExpiry = time.Millisecond },
	} {
		cfg := ok
		mutate(&cfg)
		if _, err := distributed.NewNode(cfg); !errors.Is(err, distributed.ErrConfig) {
			t.Errorf("%s: err = %v, want ErrConfig", name, err)
		}
	}
}

type fixedRecrawl struct{}

func (fixedRecrawl) Next(time.Duration, bool) time.Duration { return time.Hour }

func TestSumStats(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	a := crawlkit.Stats{Started: t0.Add(time.Second), Elapsed: 5 * time.Second, Bytes: 10}
	a.URLs.Fetched, a.URLs.Successful, a.Throughput.Current = 3, 2, 1.5
	b := crawlkit.Stats{Started: t0, Elapsed: 7 * time.Second, Bytes: 5}
	b.URLs.Fetched, b.URLs.Failed, b.Throughput.Current = 4, 1, 2
	s := distributed.SumStats(a, b)
	if s.URLs.Fetched != 7 || s.URLs.Successful != 2 || s.URLs.Failed != 1 || s.Bytes != 15 ||
		s.Throughput.Current != 3.5 || !s.Started.Equal(t0) || s.Elapsed != 7*time.Second {
		t.Errorf("SumStats = %+v", s)
	}
}

// TestNewNodeRejectsNegativeSettings checks that settings whose zero means
// "default" refuse a negative value instead of running with it: a negative
// HandoverHold would shorten the politeness hold after a handover below the
// fence TTL, a negative retry delay would redeliver at once, and a negative
// MaxAttempts would give up every URL at its first retry.
func TestNewNodeRejectsNegativeSettings(t *testing.T) {
	ok := distributed.Config{NATSURL: "nats://127.0.0.1:4222", NodeID: "a", CrawlID: "c",
		Crawler: crawlkit.Config{UserAgent: testAgent, Seeds: []string{"http://h0000.test/"}}}
	for name, mutate := range map[string]func(*distributed.Config){
		"handover hold": func(c *distributed.Config) { c.HandoverHold = -time.Second },
		"retry base":    func(c *distributed.Config) { c.RetryBase = -time.Second },
		"retry max":     func(c *distributed.Config) { c.RetryMax = -time.Second },
		"max attempts":  func(c *distributed.Config) { c.MaxAttempts = -1 },
	} {
		cfg := ok
		mutate(&cfg)
		if _, err := distributed.NewNode(cfg); !errors.Is(err, distributed.ErrConfig) {
			t.Errorf("%s: err = %v, want ErrConfig", name, err)
		}
	}
}

// TestSumStatsIgnoresUnstartedNodes checks that a node that has not started
// its crawl yet (zero Started, as its /stats serves before Run) does not
// hide the others' start time, whatever the order of the nodes.
func TestSumStatsIgnoresUnstartedNodes(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	idle := crawlkit.Stats{}
	a := crawlkit.Stats{Started: t0.Add(time.Second), Elapsed: 5 * time.Second}
	b := crawlkit.Stats{Started: t0, Elapsed: 6 * time.Second}
	for i, order := range [][]crawlkit.Stats{{idle, a, b}, {a, idle, b}, {a, b, idle}} {
		if s := distributed.SumStats(order...); !s.Started.Equal(t0) {
			t.Errorf("order %d: Started %v, want %v", i, s.Started, t0)
		}
	}
	if s := distributed.SumStats(idle, idle); !s.Started.IsZero() {
		t.Errorf("SumStats of unstarted nodes: Started %v, want zero", s.Started)
	}
}
