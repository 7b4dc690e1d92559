package distributed

import (
	"context"
	"errors"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/crawlkit/crawlkit/frontier"
)

// Fencing: who may fetch a partition's hosts.
//
// The pinned priority group lets the server deliver a partition's messages to
// one client at a time, but a node keeps the URLs it was given in its local
// frontier, and membership views can disagree for a while (a node whose
// heartbeats are late is evicted by the others and keeps its own view). So a
// node must not fetch from its local frontier just because it believes it
// owns the partition. The rules, applied to every lease just before the URL
// is fetched (Queue.claim):
//
//   - A node fetches a partition's URLs only while its pin is confirmed: the
//     partition consumer's info, read from the consumer's leader by a
//     request sent less than FenceTTL ago, named this node's pin (the
//     Nats-Pin-Id of its newest delivery) as the pinned client. Pin ids are
//     never reused, so once the server has pinned anyone else (or reset the
//     pin, as a new consumer leader does) the old holder can no longer
//     confirm, and it stops within FenceTTL of the move. Its leases go back
//     to a per-partition list (staged) and return to the local frontier
//     when the pin is confirmed again. If the server has no pin at all
//     (twice in a row), the node hands one message back to the stream (Nak)
//     as a probe: the server pins a client only when it delivers, and all
//     pending messages may be held here.
//   - A node that starts holding a new pin starts with a hold: it fetches
//     nothing from the partition for FenceTTL after it first saw the pin, so
//     every earlier holder has stopped leasing, then blocks each host until
//     the next contact its earlier holder recorded (handover.go; without
//     host records, FenceTTL + HandoverHold). There is no hold for the consumer's very first delivery
//     (nobody fetched before), nor when the node's new pin follows its old
//     one with no delivery to anyone else in between (the consumer's
//     delivery sequence is contiguous) under the same consumer leader: the
//     server pinned no one else meanwhile.
//   - Leases handed out before a node's fence keep running; the hold covers
//     them if the fetch ends within HandoverHold - Crawl-delay (fetches here
//     take milliseconds; see README.md for the bound).
//
// An earlier version also stopped a node from handing out leases whenever
// its membership heartbeat had not been acknowledged for MemberTTL/2. The pin
// fence makes that redundant (a node cut off from NATS cannot confirm its
// pins), and under load it refused thousands of leases per node (heartbeats
// were merely slow) while the node still held the pins, so that nobody
// fetched the partitions meanwhile.

// pinHeader carries the pin id on every message a pinned consumer delivers.
const pinHeader = "Nats-Pin-Id"

// fenceTTL is how long a confirmation of a node's pin lets it fetch: half
// the member TTL, so that a new holder's wait (handover.go) is short. The guard renews a confirmation once it is a quarter of that
// old, which leaves three quarters for a slow answer before the node fences
// itself.
func (cfg Config) fenceTTL() time.Duration { return cfg.MemberTTL / 2 }

// wake makes the partition's guard look at it now.
func (p *partition) wake() {
	select {
	case p.kick <- struct{}{}:
	default:
	}
}

// openLocked reports whether partition p's URLs may be fetched now: owned,
// pin confirmed less than fenceTTL ago, hold over. It requires q.mu held.
func (q *Queue) openLocked(p *partition, now time.Time) bool {
	return p.owned && !p.confirmed.IsZero() && now.Before(p.confirmed.Add(q.fenceTTL)) &&
		!now.Before(p.fetchFrom) && !p.handingOver
}

// holdLocked starts a handover hold of p from its tenure: FenceTTL, after
// which the partition's host records are read and the partition opens
// with each host blocked until its recorded next contact (handover.go).
// Without a hosts bucket (tests of the fence alone) the hold is FenceTTL +
// HandoverHold, so that an earlier holder's last fetch of any host is
// HandoverHold behind. It requires q.mu held.
func (q *Queue) holdLocked(p *partition) {
	q.counters.holds.Add(1)
	if q.hosts == nil {
		if until := p.tenure.Add(q.fenceTTL + q.cfg.HandoverHold); until.After(p.fetchFrom) {
			p.fetchFrom = until
		}
		return
	}
	if until := p.tenure.Add(q.fenceTTL); until.After(p.fetchFrom) {
		p.fetchFrom = until
	}
	p.handover++
	p.handingOver = true
	go q.handOver(p, p.gen, p.handover, p.fetchFrom, p.tenure.Add(q.fenceTTL+q.cfg.HandoverHold))
}

// notePinLocked records the pin id and consumer sequence of a delivery of
// the current acquisition of p. It requires q.mu held.
func (q *Queue) notePinLocked(p *partition, pin string, dseq uint64) {
	if pin != "" && pin != p.pin {
		prev := p.pin
		p.pin, p.tenure, p.confirmed = pin, q.now(), time.Time{}
		switch {
		case prev == "" && dseq == 1:
			// The consumer's first delivery ever: nobody fetched
			// from this partition before.
		case prev != "" && dseq == p.lastDseq+1:
			// Nobody else was delivered anything since this node's
			// previous pin, unless a new consumer leader reused
			// sequences: the guard compares leaders.
			p.checkLeader = true
		default:
			p.checkLeader = false
			q.holdLocked(p)
		}
		q.log.Debug("new pin", "partition", p.id, "pin", pin, "dseq", dseq, "hold_until", p.fetchFrom)
		p.wake()
	}
	if dseq > p.lastDseq {
		p.lastDseq = dseq
	}
}

// pinnedClient returns the pinned client id of the consumer's priority
// group ("" if none).
func pinnedClient(ci *jetstream.ConsumerInfo) string {
	for _, g := range ci.PriorityGroups {
		if g.Group == priorityGroup {
			return g.PinnedClientID
		}
	}
	return ""
}

// consumerLeader returns the server leading the consumer ("" if unknown).
func consumerLeader(ci *jetstream.ConsumerInfo) string {
	if ci.Cluster != nil {
		return ci.Cluster.Leader
	}
	return ""
}

// guard runs while acquisition gen of p lasts: it keeps the pin
// confirmation fresh while the node holds messages of the partition, moves
// staged messages back to the local frontier when the partition is open,
// hands them back to the stream when the pin is lost, and restarts a
// consume that the client stopped.
func (q *Queue) guard(stop <-chan struct{}, p *partition, gen int) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	tick := time.NewTicker(max(q.fenceTTL/8, 10*time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-p.kick:
		}
		now := q.now()
		q.mu.Lock()
		if !p.owned || p.gen != gen {
			q.mu.Unlock()
			return
		}
		cc, pin, nheld := p.cc, p.pin, p.nheld
		fresh := !p.confirmed.IsZero() && now.Sub(p.confirmed) < q.fenceTTL/4
		q.mu.Unlock()

		stopped := cc != nil && isClosed(cc.Closed())
		if stopped {
			q.restartConsume(p, gen, "stopped by the client")
		}
		// One consumer info answers both questions: is the pin still
		// this node's (while it holds messages), and has the consume
		// stalled (when the partition has been quiet).
		watch := cc != nil && !stopped && q.stallCheckDue(p, now)
		confirm := nheld > 0 && !fresh
		if !watch && !confirm {
			q.unstage(p, gen)
			continue
		}
		sent := q.now()
		ictx, cancel := context.WithTimeout(ctx, q.fenceTTL)
		ci, err := p.consumer.Info(ictx)
		cancel()
		if err != nil {
			if !confirm {
				q.unstage(p, gen) // the stall check is asked again later
				continue
			}
			if ctx.Err() == nil {
				q.log.Debug("confirming the pin", "partition", p.id, "err", err)
			}
			continue // the confirmation ages out: fenced
		}
		if watch {
			q.noteStall(p, gen, now, ci)
		}
		if !confirm {
			q.unstage(p, gen)
			continue
		}
		pinned, leader := pinnedClient(ci), consumerLeader(ci)
		q.mu.Lock()
		if !p.owned || p.gen != gen {
			q.mu.Unlock()
			return
		}
		if p.pin != pin {
			// A new pin arrived while asking: ask again.
			q.mu.Unlock()
			p.wake()
			continue
		}
		back := q.confirmLocked(p, sent, pinned, leader)
		q.mu.Unlock()
		if len(back) > 0 {
			q.log.Info("partition fenced: no pin; handing a message back to get one", "partition", p.id, "mine", pin)
			for _, m := range back {
				_ = m.Nak()
			}
		}
		q.unstage(p, gen)
	}
}

// confirmLocked applies an answer to a consumer info request sent at sent,
// while p.pin was what it is now: pinned is the pinned client it named,
// leader the consumer's leader. A confirmation of p.pin opens the partition
// for fenceTTL from sent (after a hold if the pin's arrival left a doubt
// that only the leader could settle). Any other answer fences it at once.
// The second answer in a row with no pin at all takes one unleased message
// of the partition out of held (at most once per fenceTTL): it is returned
// for the caller to hand back, so that the server pins a client again. It
// requires q.mu held.
func (q *Queue) confirmLocked(p *partition, sent time.Time, pinned, leader string) []jetstream.Msg {
	if p.pin != "" && pinned == p.pin {
		p.lost = 0
		if p.checkLeader {
			p.checkLeader = false
			if p.leader == "" || leader != p.leader {
				q.holdLocked(p)
			}
		}
		if sent.After(p.confirmed) {
			p.confirmed = sent
		}
		p.leader = leader
		return nil
	}
	// Not (or no longer) this node's pin: fenced at once.
	p.confirmed = time.Time{}
	if pinned != "" {
		// Someone else's (or this node's next one, still on its way):
		// wait. If the holder keeps it, one of the two nodes gives the
		// partition up when their views of the membership agree.
		p.lost = 0
		return nil
	}
	// No pin at all (it timed out, or a new consumer leader started
	// without one): the server pins a client only when it delivers a
	// message, and every pending message is held here. Twice in a row,
	// hand one back as a probe: this node's waiting pull (or the current
	// owner's) gets it and the pin.
	p.lost++
	now := q.now()
	if p.lost < 2 || now.Sub(p.probed) < q.fenceTTL {
		return nil
	}
	p.lost, p.probed = 0, now
	for _, h := range q.held {
		if h.part == p && !h.leased {
			q.unholdLocked(h)
			q.counters.probes.Add(1)
			return []jetstream.Msg{h.msg}
		}
	}
	return nil
}

// unstage puts the staged messages of p back into the local frontier if
// the partition is open.
func (q *Queue) unstage(p *partition, gen int) {
	q.mu.Lock()
	if len(p.staged) == 0 || p.gen != gen || !q.openLocked(p, q.now()) {
		q.mu.Unlock()
		return
	}
	entries := make([]frontier.Entry, 0, len(p.staged))
	for _, h := range p.staged {
		if q.held[h.entry.URL] == h && h.staged && !h.leased && h.gen == gen {
			h.staged = false
			entries = append(entries, h.entry)
		}
	}
	p.staged = nil
	q.mu.Unlock()
	if err := q.front.Add(entries...); err != nil && !errors.Is(err, frontier.ErrClosed) {
		q.log.Warn("requeueing locally", "partition", p.id, "urls", len(entries), "err", err)
	}
}

// restartConsume consumes p again, after the client stopped consuming by
// itself (a terminal pull error) or the consume stalled, and stops the
// consume it replaces.
func (q *Queue) restartConsume(p *partition, gen int, why string) {
	cc, err := q.consume(p, gen)
	if err != nil {
		q.log.Warn("restarting the partition's consumer", "partition", p.id, "why", why, "err", err)
		return
	}
	var old jetstream.ConsumeContext
	q.mu.Lock()
	if p.owned && p.gen == gen {
		old, p.cc, cc = p.cc, cc, nil
		p.lastDelivery, p.stalls = q.now(), 0
	}
	q.mu.Unlock()
	if cc != nil { // released meanwhile
		cc.Stop()
		return
	}
	if old != nil {
		old.Stop()
	}
	q.counters.restarts.Add(1)
	q.log.Info("partition consumer restarted", "partition", p.id, "why", why)
}

// stallAfter is how long an owned partition may go without a delivery
// before its guard asks the server whether messages wait for it.
func (q *Queue) stallAfter() time.Duration { return max(4*q.cfg.PullExpiry, q.fenceTTL) }

// stalled reports whether a consumer's info shows messages that the
// server could deliver now and no pull request to deliver them to.
func stalled(ci *jetstream.ConsumerInfo) bool {
	return ci.NumPending > 0 && ci.NumWaiting == 0 &&
		(ci.Config.MaxAckPending <= 0 || ci.NumAckPending < ci.Config.MaxAckPending)
}

// stallCheckDue reports whether the guard should ask the server whether
// partition p's consume has stalled, while it looks alive (a pull request
// lost with a server that died, which the client does not always notice):
// when p has had no delivery for stallAfter, and none is being handled,
// every stallAfter/2. (While the consume's callback handles a message, the
// client pulls no more, and the server shows what the stall rule looks
// for: a delivery catching up through a slow replay during an election
// was taken for a stall, and its consume restarted, with a new pin.)
func (q *Queue) stallCheckDue(p *partition, now time.Time) bool {
	after := q.stallAfter()
	q.mu.Lock()
	defer q.mu.Unlock()
	due := p.delivering == 0 && now.Sub(p.lastDelivery) >= after && now.Sub(p.stallAsked) >= after/2
	if due {
		p.stallAsked = now
	}
	return due
}

// noteStall applies a consumer info asked for by a stall check started at
// now: two answers in a row with messages pending and no pull request
// waiting (stalled), and still no delivery, restart the consume. A consume
// that merely waits between two pull requests shows a waiting request
// again at the next answer.
func (q *Queue) noteStall(p *partition, gen int, now time.Time, ci *jetstream.ConsumerInfo) {
	q.mu.Lock()
	restart := false
	if p.owned && p.gen == gen {
		if stalled(ci) && !p.lastDelivery.After(now) && p.delivering == 0 {
			p.stalls++
		} else {
			p.stalls = 0
		}
		restart = p.stalls >= 2
	}
	q.mu.Unlock()
	if restart {
		q.log.Info("partition consume stalled", "partition", p.id, "pending", ci.NumPending,
			"ack_pending", ci.NumAckPending, "waiting", ci.NumWaiting)
		q.restartConsume(p, gen, "stalled")
	}
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// unpin releases p's pin after this node stopped consuming it, if the pin
// is still mine. A failed attempt (a leader election) is retried until it
// succeeds, the pin is someone else's, or the pin has timed out by itself
// (PinnedTTL after stopped), or ctx ends.
func (q *Queue) unpin(ctx context.Context, p *partition, mine string, stopped time.Time) {
	if mine == "" {
		return // never delivered to: never pinned (or only for messages it handed back)
	}
	pinnedTTL := 3 * q.cfg.PullExpiry
	wait := 100 * time.Millisecond
	for try := 1; ; try++ {
		uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		ci, err := p.consumer.Info(uctx)
		if err == nil {
			if pinnedClient(ci) != mine {
				cancel()
				return
			}
			err = q.stream.UnpinConsumer(uctx, q.names.consumer(p.id), priorityGroup)
		}
		cancel()
		if err == nil {
			return
		}
		if ctx.Err() != nil || q.now().Sub(stopped) > pinnedTTL {
			q.log.Info("unpinning failed; the pin times out by itself", "partition", p.id, "err", err)
			return
		}
		q.log.Debug("unpinning; retrying", "partition", p.id, "try", try, "err", err)
		select {
		case <-ctx.Done():
		case <-time.After(wait):
		}
		wait = min(2*wait, time.Second)
	}
}
