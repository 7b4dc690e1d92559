package distributed

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/crawlkit/crawlkit"
)

// Balancing: moving partitions from busy nodes to idle ones.
//
// Owners gives every node the same number of partitions, but not the same
// work: hosts fall into partitions by hash, so one node's partitions can
// hold a tenth more URLs than the mean and another's a seventh less, and
// the crawl ends when the busiest node ends. The live member with the
// smallest ID (every node finds the same one in the same view) reads each
// partition's backlog (undelivered plus unacknowledged messages) every
// BalanceEvery, plans moves of whole partitions from the most to the least
// loaded node (planBalance), and publishes them in its own heartbeat
// (MemberInfo.Moves). Every node applies the moves of that member on top of
// Owners while they were planned for the view it has (MemberInfo.MovesFor),
// so a change of membership drops them with their author's heartbeat or
// view. A move is a release and an acquisition like any other, fenced and
// handed over as in fence.go and handover.go; a node whose view disagrees
// for a moment costs a move, never a second fetcher.

// balanceGap is the least difference between the most and the least loaded
// node, over the mean, for which a move is planned: moves cost the moved
// partition a pause (its hold), so near-even loads are left as they are.
const balanceGap = 1.0 / 8

// balanceRest is how many rounds a moved partition stays where it went.
const balanceRest = 3

// A move is one partition's change of owner and its backlog then.
type move struct {
	P        int
	From, To string
	Backlog  int64
}

func (m move) String() string { return fmt.Sprintf("%d:%s->%s(%d)", m.P, m.From, m.To, m.Backlog) }

// planBalance returns owners with up to maxMoves partitions moved from the
// member with the largest backlog to the one with the smallest, and the
// moves. A move is planned while the difference of the two loads is at
// least minGap and more than balanceGap of the mean load, and takes the
// largest partition of the busier member whose backlog is at most half the
// difference, so that the two never swap roles and a later round has no
// reason to move it back. Partitions in frozen (moved recently) stay, as
// do owners that are not members; members with no partition count as load
// 0. It is a pure function of its arguments (ties go to the smaller name
// or partition).
func planBalance(owners, members []string, backlog []int64, frozen map[int]bool, minGap int64, maxMoves int) ([]string, []move) {
	out := slices.Clone(owners)
	if len(members) < 2 || len(backlog) != len(owners) {
		return out, nil
	}
	load := make(map[string]int64, len(members))
	for _, m := range members {
		load[m] = 0
	}
	var total int64
	for p, o := range out {
		if _, ok := load[o]; ok && backlog[p] > 0 {
			load[o] += backlog[p]
			total += backlog[p]
		}
	}
	mean := float64(total) / float64(len(members))
	names := slices.Sorted(maps.Keys(load))
	var moves []move
	for len(moves) < maxMoves {
		heavy, light := names[0], names[0]
		for _, m := range names[1:] {
			if load[m] > load[heavy] {
				heavy = m
			}
			if load[m] < load[light] {
				light = m
			}
		}
		gap := load[heavy] - load[light]
		if gap < minGap || float64(gap) <= balanceGap*mean {
			break
		}
		best := -1
		for p, o := range out {
			b := backlog[p]
			if o != heavy || b <= 0 || 2*b > gap || frozen[p] {
				continue
			}
			if best < 0 || b > backlog[best] {
				best = p
			}
		}
		if best < 0 {
			break
		}
		out[best] = light
		load[heavy] -= backlog[best]
		load[light] += backlog[best]
		moves = append(moves, move{P: best, From: heavy, To: light, Backlog: backlog[best]})
	}
	return out, moves
}

// withMoves returns Owners(members, partitions) with moves applied where
// their target is a member.
func withMoves(members []string, partitions int, moves map[int]string) []string {
	owners := Owners(members, partitions)
	for p, to := range moves {
		if p >= 0 && p < partitions && slices.Contains(members, to) {
			owners[p] = to
		}
	}
	return owners
}

// movesFrom returns the partitions whose owner in owners differs from
// Owners(members, len(owners)).
func movesFrom(members, owners []string) map[int]string {
	moves := map[int]string{}
	for p, o := range Owners(members, len(owners)) {
		if owners[p] != o {
			moves[p] = owners[p]
		}
	}
	return moves
}

// backlogs reads every partition's undelivered and unacknowledged
// messages, and how many it has delivered so far, each from its consumer's
// leader.
func (q *Queue) backlogs(ctx context.Context) (backlog []int64, delivered uint64, err error) {
	backlog = make([]int64, len(q.parts))
	for i, p := range q.parts {
		ci, err := p.consumer.Info(ctx)
		if err != nil {
			return nil, 0, fmt.Errorf("partition %d: %w", i, err)
		}
		backlog[i] = int64(ci.NumPending) + int64(ci.NumAckPending)
		delivered += ci.Delivered.Consumer
	}
	return backlog, delivered, nil
}

// balance runs on every node: while this node is the live member with the
// smallest ID, it plans moves every cfg.BalanceEvery and publishes them
// with its heartbeat; otherwise it withdraws any it published.
func (n *Node) balance(ctx context.Context, q *Queue, mem *membership) {
	every := n.cfg.BalanceEvery
	if every < 0 {
		return
	}
	workers := n.cfg.Crawler.Workers
	if workers <= 0 {
		workers = crawlkit.DefaultWorkers
	}
	// A difference the nodes' workers clear in a few rounds of requests
	// is not worth a move's pause; nor is one a node clears in less than
	// half a balancing round at the rate the partitions were delivered
	// in the last round (a move pauses its partition for about that: the
	// pin's move and the hold), which keeps the end of a crawl, when the
	// backlogs are small, free of moves.
	floor := int64(4 * workers)
	var lastDelivered uint64
	var lastRead time.Time
	t := time.NewTicker(every)
	defer t.Stop()
	var mineFor []string
	var mine map[int]string
	// movedAt is the round in which each partition last moved: a
	// partition stays where it went for balanceRest rounds, so that
	// its hold is over and its backlog is measured on its new owner
	// before it can move again.
	movedAt := map[int]int{}
	for round := 1; ; round++ {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		live, ok := mem.members()
		if !ok || len(live) < 2 || live[0] != n.cfg.NodeID {
			if mine != nil {
				mineFor, mine = nil, nil
				mem.setMoves(nil, nil)
				_ = mem.heartbeat(ctx)
			}
			continue
		}
		if !slices.Equal(mineFor, live) {
			mineFor, mine = live, nil
		}
		rctx, cancel := context.WithTimeout(ctx, every)
		backlog, delivered, err := q.backlogs(rctx)
		cancel()
		if err != nil {
			n.cfg.Logger.Debug("balancing: reading the backlogs", "err", err)
			continue
		}
		read := time.Now()
		prevDelivered, prevRead := lastDelivered, lastRead
		lastDelivered, lastRead = delivered, read
		if prevRead.IsZero() || delivered < prevDelivered {
			continue // no rate yet (or consumers were reset)
		}
		perNode := float64(delivered-prevDelivered) / read.Sub(prevRead).Seconds() / float64(len(live))
		minGap := max(floor, int64(perNode*every.Seconds()/2))
		frozen := map[int]bool{}
		for p, r := range movedAt {
			if round-r <= balanceRest {
				frozen[p] = true
			}
		}
		owners, moves := planBalance(withMoves(live, n.cfg.Partitions, mine), live, backlog, frozen, minGap, len(live))
		if len(moves) == 0 {
			continue
		}
		for _, m := range moves {
			movedAt[m.P] = round
		}
		mine = movesFrom(live, owners)
		mem.setMoves(live, mine)
		q.counters.balanced.Add(int64(len(moves)))
		n.cfg.Logger.Info("moving partitions to even the nodes' backlogs", "moves", fmt.Sprint(moves),
			"loads", fmt.Sprint(loads(live, owners, backlog)))
		if err := mem.heartbeat(ctx); err != nil {
			n.cfg.Logger.Debug("balancing: publishing the moves", "err", err)
		}
	}
}

// loads sums backlog by owner, in members' order.
func loads(members, owners []string, backlog []int64) []int64 {
	out := make([]int64, len(members))
	for p, o := range owners {
		if i := slices.Index(members, o); i >= 0 {
			out[i] += backlog[p]
		}
	}
	return out
}
