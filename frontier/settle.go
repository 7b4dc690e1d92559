package frontier

import (
	"fmt"
	"time"
)

// Settling leases: Done, the policy's decision applied to the queue.

// Done settles l with outcome o and reports what it did. With a Store the
// settlement is durable when Done returns a nil error. It reads the clock
// from Config.Now.
func (f *Frontier) Done(l *Lease, o Outcome) (Settlement, error) { return f.DoneAt(f.now(), l, o) }

// settlement is what a Done does to the queue; result is how DoneAt
// reports it.
type settlement struct {
	kind    OutcomeKind
	requeue bool
	next    item
	due     int64
	dropped bool
	result  Settlement
}

// DoneAt is Done at time now. It returns ErrLeaseExpired if the lease ran
// out before now (its URL is queued again), ErrLeaseSettled if it was
// settled already, and on a store error leaves the lease active so Done can
// be called again. The Settlement is set only with a nil error.
func (f *Frontier) DoneAt(now time.Time, l *Lease, o Outcome) (Settlement, error) {
	if o.Kind < OutcomeSuccess || o.Kind > OutcomeFailed {
		return Settlement{}, fmt.Errorf("%w: kind %d", ErrInvalidOutcome, o.Kind)
	}
	n := now.UnixNano()
	f.mu.Lock()
	if err := f.checkLease(l, n); err != nil {
		f.mu.Unlock()
		return Settlement{}, err
	}
	s := f.plan(l, o, now)
	if f.store == nil {
		if s.requeue {
			f.seq++
			s.next.seq = f.seq
		}
		f.settle(l, &s, n)
		f.mu.Unlock()
		return s.result, nil
	}
	if err := f.doneStored(l, s, n); err != nil {
		return Settlement{}, err
	}
	return s.result, nil
}

// doneStored settles l through a durable write. f.mu held on entry,
// released on return.
func (f *Frontier) doneStored(l *Lease, s settlement, n int64) error {
	l.state = leaseSettling
	f.leases.remove(l)
	f.mu.Unlock()

	h := l.h
	op := &pendingOp{
		write: func(seq uint64, m []Mutation) []Mutation {
			if l.it.ext != nil && l.it.ext.delayed {
				m = append(m, Mutation{Key: delayedKey(l.it.ext.due, l.it.seq), Delete: true})
			} else {
				m = append(m, Mutation{Key: queuedKey(h.name, l.it.band, l.it.seq), Delete: true})
			}
			if s.requeue {
				s.next.seq = seq
				r := s.next.record(h.name)
				m = append(m, Mutation{Key: delayedKey(s.due, seq), Value: appendRecord(nil, &r, true)})
			}
			return m
		},
		apply: func(uint64) { f.settle(l, &s, n) },
		fail: func() {
			l.state = leaseActive
			f.leases.push(l)
		},
	}
	if s.requeue {
		op.nseq = 1
	}
	return f.commit.submit(op)
}

// plan decides what settling l with o at now does, by f.policy, and
// translates the Decision into the change to the queue. The previous
// fingerprint and interval are read from the lease's item, not from the
// Lease's exported copies. f.mu held.
func (f *Frontier) plan(l *Lease, o Outcome, now time.Time) settlement {
	prev := l.it
	var fp uint64
	var interval int64
	if prev.ext != nil && prev.ext.recrawl {
		fp, interval = prev.ext.fp, prev.ext.interval
	}
	d := f.policy.plan(int(prev.attempts), fp, time.Duration(interval), o, now)
	s := settlement{kind: o.Kind, result: d.Settlement}
	switch d.Kind {
	case SettlementGivenUp:
		s.dropped = true
	case SettlementRetrying:
		s.requeue = true
		s.next = prev
		s.next.attempts = uint8(d.Attempt)
	case SettlementRecrawl:
		s.requeue = true
		s.next = prev
		s.next.attempts = 0
		s.next.ext = &itemExt{meta: prev.meta(), fp: d.Fingerprint, interval: int64(d.Interval), recrawl: true}
	}
	if s.requeue {
		// Times past 2262 saturate, as every time the frontier keeps.
		s.due = unixNano(d.At)
		s.result.At = time.Unix(0, s.due)
	}
	return s
}

// settle applies a settlement: the host's politeness clock restarts at now
// and the URL is queued again or finished. f.mu held.
func (f *Frontier) settle(l *Lease, s *settlement, now int64) {
	f.leases.remove(l)
	l.state = leaseSettled
	h := l.h
	h.outstanding--
	h.readyAt = max(h.readyAt, unixNano(f.polite.ReadyAt(h.name, time.Unix(0, now))))
	switch s.kind {
	case OutcomeSuccess:
		f.stats.Succeeded++
	case OutcomeNotModified:
		f.stats.NotModified++
	case OutcomeRetry:
		if s.dropped {
			f.stats.Failed++
			f.stats.Dropped++
		} else {
			f.stats.Retried++
		}
	case OutcomeFailed:
		f.stats.Failed++
	}
	if s.requeue {
		if s.kind != OutcomeRetry {
			f.stats.Recrawls++
		}
		s.next.band = min(s.next.band, uint8(f.bands-1))
		f.insertDelayed(delayedItem{it: s.next, host: h.name, due: s.due})
	}
	f.schedule(h, now)
	f.signal()
}
