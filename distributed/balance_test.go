package distributed_test

import (
	"math/rand/v2"
	"slices"
	"testing"

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
