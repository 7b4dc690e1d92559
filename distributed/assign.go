package distributed

import (
	"cmp"
	"slices"
	"strconv"

	"github.com/crawlkit/crawlkit/bloom"
)

// Owner returns the member that ranks partition p highest by rendezvous
// (highest random weight) hashing: the member whose XXH64 of "member/p" is
// largest, ties broken by the smaller name (Thaler and Ravishankar, "Using
// name-based mappings to increase hit rates", IEEE/ACM ToN 1998). When a
// member joins or leaves, only the partitions it wins or held change
// their Owner. It returns "" for no members. Owners bounds the loads on
// top of it; Owner is every partition's first choice.
func Owner(members []string, p int) string {
	var best string
	var bestScore uint64
	for _, m := range members {
		s := score(m, p)
		if best == "" || s > bestScore || (s == bestScore && m < best) {
			best, bestScore = m, s
		}
	}
	return best
}

// score is member m's rendezvous weight for partition p.
func score(m string, p int) uint64 { return bloom.Key(m + "/" + strconv.Itoa(p)) }

// Owners assigns partitions [0, partitions) to members by rendezvous
// hashing with bounded loads (Mirrokni, Thorup and Zadimoghaddam,
// "Consistent Hashing with Bounded Loads", SODA 2018, with the tightest
// bound): every member gets partitions/len(members) partitions, rounded
// down or up, so per-node load stays even with few nodes, where plain
// rendezvous hashing gives one node half as many again as another. The
// (partition, member) pairs are taken in decreasing rendezvous weight, and
// a pair is kept when its partition is still free and its member has room:
// a partition goes to its Owner unless that member is full, so a join or a
// leave moves few partitions beyond the ones that must move. The result is
// the same whatever the order of members; owners[p] is "" for no members.
func Owners(members []string, partitions int) []string {
	owners := make([]string, partitions)
	n := len(members)
	if n == 0 || partitions <= 0 {
		return owners
	}
	type pair struct {
		score uint64
		p     int
		m     string
	}
	pairs := make([]pair, 0, partitions*n)
	for p := range partitions {
		for _, m := range members {
			pairs = append(pairs, pair{score(m, p), p, m})
		}
	}
	slices.SortFunc(pairs, func(a, b pair) int {
		return cmp.Or(cmp.Compare(b.score, a.score), cmp.Compare(a.m, b.m), cmp.Compare(a.p, b.p))
	})
	base, extra := partitions/n, partitions%n // extra members get base+1
	load := map[string]int{}
	left := partitions
	for _, pr := range pairs {
		if left == 0 {
			break
		}
		if owners[pr.p] != "" {
			continue
		}
		l := load[pr.m]
		switch {
		case l < base:
		case l == base && extra > 0:
			extra--
		default:
			continue // full
		}
		owners[pr.p] = pr.m
		load[pr.m] = l + 1
		left--
	}
	return owners
}

// Assignment returns the partitions of [0, partitions) that member owns
// among members (see Owners).
func Assignment(members []string, partitions int, member string) []int {
	var out []int
	for p, o := range Owners(members, partitions) {
		if o == member {
			out = append(out, p)
		}
	}
	return out
}
