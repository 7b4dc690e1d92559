package distributed_test

import (
	"context"
	"math/rand/v2"
	neturl "net/url"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/crawltest"
	"github.com/crawlkit/crawlkit/distributed"
)

// TestOwnersBoundedLoad checks the bounded-load assignment at 2 to 8
// nodes on the default 64 partitions: every partition has one owner among
// the members, every member's share is within 15 % of the mean, the result
// does not depend on the members' order, and a join or a leave moves few
// partitions beyond those that must move (to the newcomer, from the
// leaver).
func TestOwnersBoundedLoad(t *testing.T) {
	const partitions = distributed.DefaultPartitions
	shares := func(owners []string) map[string]int {
		s := map[string]int{}
		for _, o := range owners {
			s[o]++
		}
		return s
	}
	moved := func(a, b []string) int {
		n := 0
		for p := range a {
			if a[p] != b[p] {
				n++
			}
		}
		return n
	}
	r := rand.New(rand.NewPCG(1, 2))
	for n := 2; n <= 8; n++ {
		members := memberNames(n)
		owners := distributed.Owners(members, partitions)
		share := shares(owners)
		mean := float64(partitions) / float64(n)
		for _, m := range members {
			if d := float64(share[m]) - mean; d > 0.15*mean || d < -0.15*mean {
				t.Errorf("%d nodes: %s owns %d partitions, mean %.1f", n, m, share[m], mean)
			}
		}
		for p, o := range owners {
			if !slices.Contains(members, o) {
				t.Fatalf("%d nodes: partition %d owned by %q", n, p, o)
			}
		}
		shuffled := slices.Clone(members)
		r.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		if !slices.Equal(distributed.Owners(shuffled, partitions), owners) {
			t.Errorf("%d nodes: the assignment depends on the members' order", n)
		}

		// A join: the newcomer must get its share; little else moves.
		joined := distributed.Owners(append(slices.Clone(members), "node-new"), partitions)
		newShare := shares(joined)["node-new"]
		mJoin := moved(owners, joined)
		// A leave of node-00: its partitions must move; little else.
		left := distributed.Owners(members[1:], partitions)
		mLeave := moved(owners, left)
		t.Logf("%d nodes: shares %v; a join moves %d (newcomer's share %d), a leave %d (leaver's share %d)",
			n, shareList(members, share), mJoin, newShare, mLeave, share[members[0]])
		if mJoin > 2*newShare {
			t.Errorf("%d nodes: a join moved %d partitions for a newcomer's share of %d", n, mJoin, newShare)
		}
		if n > 2 && mLeave > 2*share[members[0]] {
			t.Errorf("%d nodes: a leave moved %d partitions for a leaver's share of %d", n, mLeave, share[members[0]])
		}
	}
	if o := distributed.Owners(nil, 4); len(o) != 4 || o[0] != "" {
		t.Errorf("Owners(nil) = %q", o)
	}
}

// TestDefaultReplicas checks the replication factor chosen by cluster size.
func TestDefaultReplicas(t *testing.T) {
	for servers, want := range map[int]int{0: 1, 1: 1, 2: 1, 3: 3, 5: 3} {
		if got := distributed.DefaultReplicas(servers); got != want {
			t.Errorf("DefaultReplicas(%d) = %d, want %d", servers, got, want)
		}
	}
}

func shareList(members []string, share map[string]int) []int {
	out := make([]int, len(members))
	for i, m := range members {
		out[i] = share[m]
	}
	return out
}

// TestBalanceMovesWorkToAnIdleNode crawls with two in-process nodes
// whose seeds all lie in the first node's partitions (the crawl stays on
// its seeds' hosts), so that the second node owns partitions with nothing
// in them. The balancing member must move some of the busy partitions to
// the idle node, which then fetches, and the crawl stays complete and
// polite: every page of the seeded hosts fetched, no robots or
// politeness violation, under 1 % duplicates.
func TestBalanceMovesWorkToAnIdleNode(t *testing.T) {
	web := newWeb(t, crawltest.Config{Hosts: 24, PagesPerHost: 40, Seed: 29, Agent: testToken,
		MinGap: 100 * time.Millisecond})
	url := embeddedNATS(t)
	const crawlID, partitions = "balance", 8
	ids := []string{"node-a", "node-b"}
	owners := distributed.Owners(ids, partitions)
	var seeds []string
	seeded := map[string]bool{}
	for _, s := range web.Seeds() {
		u, err := neturl.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		if owners[distributed.PartitionOf(u.Hostname(), partitions)] == "node-a" {
			seeds = append(seeds, s)
			seeded[u.Hostname()] = true
		}
	}
	if len(seeds) < 4 {
		t.Fatalf("only %d of the web's hosts fall in node-a's partitions", len(seeds))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	nodes := make([]*distributed.Node, len(ids))
	errs := make([]error, len(ids))
	var wg sync.WaitGroup
	for i, id := range ids {
		node, err := distributed.NewNode(distributed.Config{
			NATSURL: url, NodeID: id, CrawlID: crawlID, Partitions: partitions,
			MemberTTL: 2 * time.Second, AckWait: 4 * time.Second, RetryBase: 200 * time.Millisecond, HandoverHold: time.Second,
			Crawler: crawlkit.Config{
				UserAgent: testAgent, Seeds: seeds, Workers: 4, Delay: 250 * time.Millisecond, MaxCrawlDelay: time.Second,
				DialContext: web.DialContext, AllowPrivate: loopback, RobotsRetries: -1,
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		nodes[i] = node
		wg.Go(func() { errs[i] = node.Run(ctx) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("%s: %v", ids[i], err)
		}
	}
	a, b := nodes[0].QueueStats(), nodes[1].QueueStats()
	fetchedB := nodes[1].Crawler().Stats().URLs.Fetched
	t.Logf("node-a planned %d moves, released %d partitions; node-b acquired %d and fetched %d pages of %d hosts",
		a.Balanced, a.Released, b.Acquired, fetchedB, len(seeds))
	if a.Balanced == 0 || a.Released == 0 {
		t.Errorf("node-a, the balancing member, planned %d moves and released %d partitions: want some", a.Balanced, a.Released)
	}
	if b.Balanced != 0 {
		t.Errorf("node-b planned %d moves: only the smallest live member balances", b.Balanced)
	}
	if fetchedB == 0 {
		t.Error("node-b fetched nothing: no work moved to the idle node")
	}

	truth := web.TruthFor(testToken, 0)
	rep := web.Report()
	var want, missing []string
	for _, u := range truth.URLs() {
		if pu, err := neturl.Parse(u); err == nil && seeded[pu.Hostname()] {
			want = append(want, u)
			if rep.PerPage[u] == 0 {
				missing = append(missing, u)
			}
		}
	}
	if len(missing) > 0 {
		t.Errorf("%d of the %d pages of the seeded hosts never fetched, e.g. %v", len(missing), len(want), missing[:min(5, len(missing))])
	}
	total := 0
	for _, n := range rep.PerPage {
		total += n
	}
	if dups := rep.DuplicateFetches(); float64(dups) > 0.01*float64(total) {
		t.Errorf("%d duplicate fetches of %d, over 1%%", dups, total)
	}
	if rep.RobotsViolations != 0 || rep.BeforeRobots != 0 {
		t.Errorf("%d robots violations, %d requests before robots.txt", rep.RobotsViolations, rep.BeforeRobots)
	}
	if v := rep.PolitenessViolations(); v != 0 {
		t.Errorf("%d politeness violations (spacing %d, concurrency %d)", v, rep.SpacingViolations, rep.ConcurrencyViolations)
	}
}
