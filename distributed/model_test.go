package distributed_test

import (
	"fmt"
	"testing"

	"github.com/crawlkit/crawlkit/distributed"
)

// TestAssignmentModel computes, for clusters of 10, 100 and 1 000 nodes
// with 16 partitions per node, how evenly rendezvous hashing spreads the
// partitions and how many move when one node joins or dies: the figures of
// the README's scaling model. It checks that a move never touches a node
// other than the one that came or went, and that the largest share stays
// within twice the mean.
func TestAssignmentModel(t *testing.T) {
	for _, nodes := range []int{10, 100, 1000} {
		if testing.Short() && nodes > 100 {
			continue
		}
		partitions := 16 * nodes
		members := make([]string, nodes)
		for i := range members {
			members[i] = fmt.Sprintf("node-%04d", i)
		}
		owner := make([]string, partitions)
		share := map[string]int{}
		for p := range owner {
			owner[p] = distributed.Owner(members, p)
			share[owner[p]]++
		}
		lo, hi := partitions, 0
		for _, m := range members {
			lo, hi = min(lo, share[m]), max(hi, share[m])
		}
		// One node dies: only its partitions move.
		dead := members[nodes/2]
		rest := append(append([]string{}, members[:nodes/2]...), members[nodes/2+1:]...)
		movedLeave := 0
		for p := range owner {
			if o := distributed.Owner(rest, p); o != owner[p] {
				movedLeave++
				if owner[p] != dead {
					t.Fatalf("%d nodes: partition %d moved from live %s", nodes, p, owner[p])
				}
			}
		}
		// One node joins: only partitions it wins move, all to it.
		movedJoin := 0
		joined := append(append([]string{}, members...), "node-new")
		for p := range owner {
			if o := distributed.Owner(joined, p); o != owner[p] {
				movedJoin++
				if o != "node-new" {
					t.Fatalf("%d nodes: partition %d moved to %s on a join", nodes, p, o)
				}
			}
		}
		mean := partitions / nodes
		if hi > 2*mean {
			t.Errorf("%d nodes: largest share %d, over twice the mean %d", nodes, hi, mean)
		}
		t.Logf("nodes=%d partitions=%d share min/mean/max=%d/%d/%d moved on death=%d (%.2f%%) on join=%d (%.2f%%)",
			nodes, partitions, lo, mean, hi, movedLeave, 100*float64(movedLeave)/float64(partitions),
			movedJoin, 100*float64(movedJoin)/float64(partitions))
	}
}
