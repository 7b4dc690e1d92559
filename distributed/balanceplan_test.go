package distributed

import (
	"encoding/json"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// loadOf sums backlog by member (loads, keyed by name).
func loadOf(members, owners []string, backlog []int64) map[string]int64 {
	l := map[string]int64{}
	for i, v := range loads(members, owners, backlog) {
		l[members[i]] = v
	}
	return l
}

func TestPlanBalance(t *testing.T) {
	members := []string{"a", "b", "c"}
	for _, tc := range []struct {
		name     string
		owners   []string
		backlog  []int64
		frozen   map[int]bool
		minGap   int64
		maxMoves int
		want     []string // owners after
	}{
		{"even", []string{"a", "b", "c", "a", "b", "c"}, []int64{50, 50, 50, 50, 50, 50}, nil, 10, 3,
			[]string{"a", "b", "c", "a", "b", "c"}},
		{"within an eighth of the mean", []string{"a", "b", "c"}, []int64{105, 100, 95}, nil, 1, 3,
			[]string{"a", "b", "c"}},
		// a: 400, b: 200, c: 0. The first move gives c a's largest
		// partition of at most half the gap (the 200 one); then all
		// three hold 200.
		{"one busy node", []string{"a", "a", "a", "b", "b"}, []int64{100, 200, 100, 100, 100}, nil, 10, 3,
			[]string{"a", "c", "a", "b", "b"}},
		{"a frozen partition stays", []string{"a", "a", "a", "b", "b"}, []int64{100, 200, 100, 100, 100}, map[int]bool{1: true}, 10, 3,
			[]string{"c", "a", "c", "b", "b"}},
		{"gap under minGap", []string{"a", "a", "b"}, []int64{30, 30, 0}, nil, 100, 3,
			[]string{"a", "a", "b"}},
		// No partition of a is at most half the gap: moving would only
		// swap the roles.
		{"one huge partition", []string{"a", "b", "c"}, []int64{900, 0, 0}, nil, 10, 3,
			[]string{"a", "b", "c"}},
		{"at most maxMoves", []string{"a", "a", "a", "a", "a", "a"}, []int64{10, 10, 10, 10, 10, 10}, nil, 1, 1,
			[]string{"b", "a", "a", "a", "a", "a"}},
		{"an owner that is not a member stays", []string{"gone", "a", "a"}, []int64{1000, 100, 100}, nil, 10, 3,
			[]string{"gone", "b", "a"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := slices.Clone(tc.owners)
			got, moves := planBalance(tc.owners, members, tc.backlog, tc.frozen, tc.minGap, tc.maxMoves)
			if !slices.Equal(got, tc.want) {
				t.Errorf("owners %v, want %v (moves %v)", got, tc.want, moves)
			}
			if len(moves) > tc.maxMoves {
				t.Errorf("%d moves, at most %d allowed", len(moves), tc.maxMoves)
			}
			if !slices.Equal(tc.owners, before) {
				t.Error("planBalance changed its argument")
			}
		})
	}
}

// TestPlanBalanceProperties plans random loads: every move goes from the
// busiest to the least busy member, of a partition not frozen and at most
// half their difference (so the two do not swap roles), the plan stays
// within maxMoves, only moved partitions change owner, and when the plan
// stops short of maxMoves the loads are within the threshold or no
// partition can move.
func TestPlanBalanceProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(29, 28))
	for range 2000 {
		members := []string{"a", "b", "c", "d", "e"}[:2+r.IntN(4)]
		parts := 1 + r.IntN(40)
		owners := make([]string, parts)
		backlog := make([]int64, parts)
		frozen := map[int]bool{}
		for p := range owners {
			frozen[p] = r.IntN(8) == 0
			owners[p] = members[r.IntN(len(members))]
			if r.IntN(10) == 0 {
				owners[p] = "gone"
			}
			backlog[p] = int64(r.IntN(300))
		}
		minGap, maxMoves := int64(r.IntN(64)), 1+r.IntN(6)
		got, moves := planBalance(owners, members, backlog, frozen, minGap, maxMoves)
		if len(moves) > maxMoves {
			t.Fatalf("%d moves > %d", len(moves), maxMoves)
		}
		cur := slices.Clone(owners)
		for _, m := range moves {
			l := loadOf(members, cur, backlog)
			for _, x := range members {
				if l[x] > l[m.From] || l[x] < l[m.To] {
					t.Fatalf("move %v: %s has load %d, outside [%d, %d]", m, x, l[x], l[m.To], l[m.From])
				}
			}
			if cur[m.P] != m.From || m.Backlog != backlog[m.P] || m.Backlog <= 0 || 2*m.Backlog > l[m.From]-l[m.To] || frozen[m.P] {
				t.Fatalf("move %v of owners %v, loads %v", m, cur, l)
			}
			cur[m.P] = m.To
		}
		if !slices.Equal(cur, got) {
			t.Fatalf("owners %v, the moves give %v", got, cur)
		}
		if len(moves) < maxMoves {
			l := loadOf(members, got, backlog)
			var total, hi, lo int64
			lo = -1
			var heavy string
			for _, x := range members {
				total += l[x]
				if l[x] >= hi {
					hi, heavy = l[x], x
				}
				if lo < 0 || l[x] < lo {
					lo = l[x]
				}
			}
			gap := hi - lo
			if gap >= minGap && float64(gap) > balanceGap*float64(total)/float64(len(members)) {
				for p, o := range got {
					if o == heavy && backlog[p] > 0 && 2*backlog[p] <= gap && !frozen[p] {
						t.Fatalf("stopped at loads %v with partition %d (%d) movable", l, p, backlog[p])
					}
				}
			}
		}
	}
}

func TestWithMovesRoundTrip(t *testing.T) {
	members := []string{"n1", "n2", "n3"}
	owners := Owners(members, 16)
	owners[3], owners[7] = "n3", "n1"
	if got := withMoves(members, 16, movesFrom(members, owners)); !slices.Equal(got, owners) {
		t.Errorf("withMoves(movesFrom(owners)) = %v, want %v", got, owners)
	}
	// A move to a member that is not live is ignored.
	if got := withMoves(members, 16, map[int]string{0: "gone", 99: "n1"}); !slices.Equal(got, Owners(members, 16)) {
		t.Errorf("moves to non-members or partitions out of range changed owners: %v", got)
	}
}

// TestMembershipAppliesTheBalancersMoves checks which published moves a
// node follows: those of the smallest live member, planned for exactly the
// live members, until that member withdraws them or leaves.
func TestMembershipAppliesTheBalancersMoves(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	m, err := newMembership(nil, MemberInfo{ID: "n2"}, 4*time.Second, func() time.Time { return now }, nil)
	if err != nil {
		t.Fatal(err)
	}
	put := func(info MemberInfo) {
		b, _ := json.Marshal(info)
		m.apply(memberEntry{key: memberKey(info.ID), value: b, op: jetstream.KeyValuePut})
	}
	put(MemberInfo{ID: "n1"})
	put(MemberInfo{ID: "n2"})
	put(MemberInfo{ID: "n3"})
	m.apply(nil)
	live, ok := m.members()
	if !ok || !slices.Equal(live, []string{"n1", "n2", "n3"}) {
		t.Fatalf("members %v %v", live, ok)
	}
	base := Owners(live, 8)
	if got := m.owners(live, 8); !slices.Equal(got, base) {
		t.Fatalf("no moves published: owners %v, want Owners %v", got, base)
	}
	drain := func() bool {
		select {
		case <-m.changed:
			return true
		default:
			return false
		}
	}
	drain()
	to := "n1"
	if base[5] == "n1" {
		to = "n2"
	}
	put(MemberInfo{ID: "n1", Moves: map[int]string{5: to}, MovesFor: live})
	if !drain() {
		t.Error("new moves did not signal a rebalance")
	}
	if got := m.owners(live, 8); got[5] != to || !slices.Equal(got[:5], base[:5]) || !slices.Equal(got[6:], base[6:]) {
		t.Errorf("owners %v: want Owners %v with partition 5 on %s", got, base, to)
	}
	put(MemberInfo{ID: "n1", Moves: map[int]string{5: to}, MovesFor: live})
	if drain() {
		t.Error("the same heartbeat again signalled a rebalance")
	}
	// Moves by a member that is not the smallest are not followed.
	put(MemberInfo{ID: "n3", Moves: map[int]string{0: "n3", 1: "n3"}, MovesFor: live})
	if got := m.owners(live, 8); got[5] != to || (base[0] != "n3" && got[0] == "n3") {
		t.Errorf("owners %v follow n3's moves", got)
	}
	// Moves planned for another view are not followed.
	if got := m.owners([]string{"n1", "n2"}, 8); !slices.Equal(got, Owners([]string{"n1", "n2"}, 8)) {
		t.Errorf("owners for n1, n2 = %v: moves planned for three members applied to two", got)
	}
	// The balancer leaves: its moves go with it.
	m.apply(memberEntry{key: memberKey("n1"), op: jetstream.KeyValueDelete})
	if !drain() {
		t.Error("a departed balancer's moves did not signal a rebalance")
	}
	if got := m.owners(live, 8); !slices.Equal(got, base) {
		t.Errorf("after n1 left, owners for the old view %v, want Owners %v", got, base)
	}
}

// TestMembershipSurvivesAStalledWatch checks that a watch that stalls (the
// bucket's stream electing a leader after a server died) and then resumes
// one heartbeat at a time keeps every member live, and that a member that
// stays silent after the stall still expires ttl later.
func TestMembershipSurvivesAStalledWatch(t *testing.T) {
	const ttl = 4 * time.Second
	now := time.Unix(1_000_000, 0)
	m, err := newMembership(nil, MemberInfo{ID: "n1"}, ttl, func() time.Time { return now }, nil)
	if err != nil {
		t.Fatal(err)
	}
	beat := func(ids ...string) {
		for _, id := range ids {
			b, _ := json.Marshal(MemberInfo{ID: id})
			m.apply(memberEntry{key: memberKey(id), value: b, op: jetstream.KeyValuePut})
		}
	}
	want := func(when string, ids ...string) {
		t.Helper()
		m.recompute()
		if live, ok := m.members(); !ok || !slices.Equal(live, ids) {
			t.Errorf("%s: live %v (ready %v), want %v", when, live, ok, ids)
		}
	}
	beat("n1", "n2", "n3")
	m.apply(nil)
	for range 4 {
		now = now.Add(ttl / 4)
		beat("n1", "n2", "n3")
	}
	want("before the stall", "n1", "n2", "n3")
	now = now.Add(7 * time.Second) // nats-server's Raft election: 4-9 s
	beat("n2")
	want("at the first heartbeat after a 7 s stall", "n1", "n2", "n3")
	// n3 died during the stall: it expires ttl after the watch resumed,
	// not before.
	for range 3 {
		now = now.Add(ttl / 4)
		beat("n1", "n2")
	}
	want("3/4 ttl after the stall", "n1", "n2", "n3")
	for range 2 {
		now = now.Add(ttl / 4)
		beat("n1", "n2")
	}
	want("5/4 ttl after the stall", "n1", "n2")
}
