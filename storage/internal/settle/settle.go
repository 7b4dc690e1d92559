// Package settle decides what settling a lease does to its URL, for the
// shared queues of storage/postgres and storage/redis: the same retry,
// backoff and recrawl rules as frontier.Frontier applies to its own leases,
// in one place, so that a crawl behaves the same on every queue.
package settle

import (
	"fmt"
	"time"

	"github.com/crawlkit/crawlkit/frontier"
)

// State is where a settled URL goes.
type State uint8

const (
	// Queued: the URL is due again at Settlement.Next (a retry or a
	// recrawl).
	Queued State = iota
	// Done: fetched, nothing scheduled.
	Done
	// Failed: given up (a permanent failure or a retry past MaxAttempts).
	Failed
)

// Settlement is what settling a lease does to its URL.
type Settlement struct {
	State       State
	Next        time.Time // when a Queued URL is due
	Attempts    int
	Fingerprint uint64
	Interval    time.Duration
	Fetched     bool // the URL was fetched (success or not modified)
	Dropped     bool // a retry past MaxAttempts
	Recrawl     bool // a finished URL queued again
}

// Policy holds the knobs Plan needs, as frontier.Options names them.
type Policy struct {
	MaxAttempts         int
	RetryBase, RetryMax time.Duration
	Schedule            frontier.Schedule
}

// Plan decides the settlement of l with o at now:
//   - OutcomeRetry: the attempt count grows; at maxAttempts the URL is
//     dropped as failed, otherwise it is due after
//     max(RetryAfter, RetryBase*2^(attempts-1) capped at RetryMax);
//   - OutcomeSuccess and OutcomeNotModified: done, unless Outcome.RecrawlAt
//     or the Schedule asks for a recrawl, which queues it again with its
//     attempt count reset and the fingerprint and interval recorded;
//   - OutcomeFailed: failed for good.
func (p *Policy) Plan(l *frontier.Lease, o frontier.Outcome, now time.Time) (Settlement, error) {
	s := Settlement{Attempts: l.Attempt, Fingerprint: l.Fingerprint, Interval: l.Interval}
	switch o.Kind {
	case frontier.OutcomeFailed:
		s.State = Failed
	case frontier.OutcomeRetry:
		s.Attempts++
		if s.Attempts >= p.MaxAttempts {
			s.State, s.Dropped = Failed, true
			break
		}
		backoff := p.RetryBase << (s.Attempts - 1)
		if s.Attempts > 30 || backoff > p.RetryMax || backoff <= 0 {
			backoff = p.RetryMax
		}
		s.State, s.Next = Queued, now.Add(max(backoff, o.RetryAfter))
	case frontier.OutcomeSuccess, frontier.OutcomeNotModified:
		s.Fetched = true
		s.State = Done
		changed := true
		if o.Kind == frontier.OutcomeNotModified {
			changed = false
		} else if o.Fingerprint != 0 {
			changed = l.Fingerprint == 0 || l.Fingerprint != o.Fingerprint
			s.Fingerprint = o.Fingerprint
		}
		var due time.Time
		switch {
		case !o.RecrawlAt.IsZero():
			due = o.RecrawlAt
			s.Interval = max(due.Sub(now), 0)
		case p.Schedule != nil:
			s.Interval = p.Schedule.Next(l.Interval, changed)
			if s.Interval > 0 {
				due = now.Add(s.Interval)
			}
		}
		if !due.IsZero() {
			s.State, s.Next, s.Recrawl, s.Attempts = Queued, due, true, 0
		}
	default:
		return s, fmt.Errorf("%w: kind %d", frontier.ErrInvalidOutcome, o.Kind)
	}
	return s, nil
}

// Result is how the queues' Done reports s: the frontier.Settlement a
// frontier.Frontier would report for the same lease and outcome.
func (s *Settlement) Result() frontier.Settlement {
	r := frontier.Settlement{Attempt: s.Attempts}
	switch {
	case s.State == Queued && s.Recrawl:
		r.Kind, r.At = frontier.SettlementRecrawl, s.Next
	case s.State == Queued:
		r.Kind, r.At = frontier.SettlementRetrying, s.Next
	case s.State == Done:
		r.Kind = frontier.SettlementFinished
	case s.Dropped:
		r.Kind = frontier.SettlementGivenUp
	default:
		r.Kind = frontier.SettlementFailed
	}
	return r
}
