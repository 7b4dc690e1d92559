package redis

import (
	"fmt"
	"time"

	"github.com/crawlkit/crawlkit/frontier"
)

// URL states, as the scripts spell them.
const (
	stateQueued = "q"
	stateDone   = "d"
	stateFailed = "f"
)

// settlement is what settling a lease does to its URL; plan computes it the
// way frontier.Frontier settles its own leases, so that a crawl behaves the
// same on either.
type settlement struct {
	state    string    // stateQueued, stateDone or stateFailed
	next     time.Time // when a requeued URL is due
	attempts int
	fp       uint64
	interval time.Duration
	fetched  bool // the URL was fetched (success or not modified)
	dropped  bool // a retry past MaxAttempts
	recrawl  bool // a finished URL queued again
}

// retryPolicy holds the knobs plan needs.
type retryPolicy struct {
	maxAttempts         int
	retryBase, retryMax time.Duration
	schedule            frontier.Schedule
}

// plan decides the settlement of l with o at now:
//   - OutcomeRetry: the attempt count grows; at maxAttempts the URL is
//     dropped as failed, otherwise it is due after
//     max(RetryAfter, retryBase*2^(attempts-1) capped at retryMax);
//   - OutcomeSuccess and OutcomeNotModified: done, unless Outcome.RecrawlAt
//     or the Schedule asks for a recrawl, which queues it again with its
//     attempt count reset and the fingerprint and interval recorded;
//   - OutcomeFailed: failed for good.
func (p *retryPolicy) plan(l *frontier.Lease, o frontier.Outcome, now time.Time) (settlement, error) {
	s := settlement{attempts: l.Attempt, fp: l.Fingerprint, interval: l.Interval}
	switch o.Kind {
	case frontier.OutcomeFailed:
		s.state = stateFailed
	case frontier.OutcomeRetry:
		s.attempts++
		if s.attempts >= p.maxAttempts {
			s.state, s.dropped = stateFailed, true
			break
		}
		backoff := p.retryBase << (s.attempts - 1)
		if s.attempts > 30 || backoff > p.retryMax || backoff <= 0 {
			backoff = p.retryMax
		}
		s.state, s.next = stateQueued, now.Add(max(backoff, o.RetryAfter))
	case frontier.OutcomeSuccess, frontier.OutcomeNotModified:
		s.fetched = true
		s.state = stateDone
		changed := true
		if o.Kind == frontier.OutcomeNotModified {
			changed = false
		} else if o.Fingerprint != 0 {
			changed = l.Fingerprint == 0 || l.Fingerprint != o.Fingerprint
			s.fp = o.Fingerprint
		}
		var due time.Time
		switch {
		case !o.RecrawlAt.IsZero():
			due = o.RecrawlAt
			s.interval = max(due.Sub(now), 0)
		case p.schedule != nil:
			s.interval = p.schedule.Next(l.Interval, changed)
			if s.interval > 0 {
				due = now.Add(s.interval)
			}
		}
		if !due.IsZero() {
			s.state, s.next, s.recrawl, s.attempts = stateQueued, due, true, 0
		}
	default:
		return s, fmt.Errorf("%w: kind %d", frontier.ErrInvalidOutcome, o.Kind)
	}
	return s, nil
}
