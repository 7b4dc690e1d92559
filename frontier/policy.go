package frontier

import (
	"fmt"
	"time"
)

// Defaults of Policy (and of the Config fields that fill it). Every queue
// in crawlkit (Frontier, storage/postgres, storage/redis,
// distributed) uses these, so that a crawl retries and gives up
// the same way whichever queue holds its URLs.
const (
	// DefaultMaxAttempts is how many fetches of a URL may end in
	// OutcomeRetry before it is given up.
	DefaultMaxAttempts = 5
	// DefaultRetryBase is the wait after a URL's first retry; each later
	// retry doubles it.
	DefaultRetryBase = 30 * time.Second
	// DefaultRetryMax caps the doubling: a transient failure is retried at
	// least hourly.
	DefaultRetryMax = time.Hour
)

// Policy is the retry and recrawl policy of a queue: what settling a lease
// with an outcome does to its URL. It is pure (no clock, no IO, no state),
// so that every queue implementation, in memory or shared through a
// database, applies the same rules by calling Plan; frontier.Frontier builds
// one from its Config.
//
//   - OutcomeRetry: the URL's attempt count grows; when it reaches
//     MaxAttempts the URL is given up (SettlementGivenUp), otherwise it is
//     due again after max(RetryAfter, RetryDelay(attempts)) — capped binary
//     exponential backoff, as TCP's retransmission timer (RFC 6298, 5.5)
//     and RFC 9110's Retry-After, whichever asks for the longer wait.
//   - OutcomeSuccess and OutcomeNotModified: finished, unless
//     Outcome.RecrawlAt or the Schedule asks for a recrawl, which makes the
//     URL due again with its attempt count reset.
//   - OutcomeFailed: failed for good.
//
// Non-positive fields mean their defaults (DefaultMaxAttempts,
// DefaultRetryBase, DefaultRetryMax); a nil Schedule means no recrawl
// unless an Outcome sets RecrawlAt. The zero Policy is Frontier's default.
type Policy struct {
	MaxAttempts         int
	RetryBase, RetryMax time.Duration
	Schedule            Schedule
}

// Decision is what Policy.Plan decides for a lease: the Settlement that
// Done reports, and the content fingerprint and recrawl interval to keep
// with the URL (the lease's own unless a fetch changed them), which a
// queue stores for the URL's next lease.
type Decision struct {
	Settlement
	Fingerprint uint64
	Interval    time.Duration
}

// Requeue reports whether the URL is due again at d.At (a retry or a
// recrawl).
func (d *Decision) Requeue() bool {
	return d.Kind == SettlementRetrying || d.Kind == SettlementRecrawl
}

// withDefaults returns p with its non-positive fields set to the defaults.
func (p Policy) withDefaults() Policy {
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = DefaultMaxAttempts
	}
	if p.RetryBase <= 0 {
		p.RetryBase = DefaultRetryBase
	}
	if p.RetryMax <= 0 {
		p.RetryMax = DefaultRetryMax
	}
	return p
}

// RetryDelay is the least wait after a URL's attempt-th retry:
// RetryBase*2^(attempt-1), at most RetryMax, at least after (a
// Retry-After). An attempt below 1 counts as the first.
//
// This is the only place a backoff is computed. The doubling is compared as
// RetryBase <= RetryMax>>(attempt-1) rather than computed and then capped:
// RetryBase<<(attempt-1) silently wraps in int64 (to a negative, zero or
// short positive wait, which would retry at once or hammer a host) for
// large attempts or bases, and the comparison cannot overflow whatever the
// attempt count, since a shift by 64 or more is 0 in Go.
func (p Policy) RetryDelay(attempt int, after time.Duration) time.Duration {
	p = p.withDefaults()
	return max(p.backoff(attempt), after)
}

// backoff is RetryDelay without a Retry-After, on a policy withDefaults
// filled.
func (p *Policy) backoff(attempt int) time.Duration {
	k := uint(max(attempt-1, 0))
	if p.RetryBase <= p.RetryMax>>k {
		return p.RetryBase << k
	}
	return p.RetryMax
}

// Plan decides the settlement of l with o at now (see Policy). It reads
// the lease's Attempt, Fingerprint and Interval. It returns an error
// matching ErrInvalidOutcome for an outcome of an unknown kind.
func (p Policy) Plan(l *Lease, o Outcome, now time.Time) (Decision, error) {
	if o.Kind < OutcomeSuccess || o.Kind > OutcomeFailed {
		return Decision{}, fmt.Errorf("%w: kind %d", ErrInvalidOutcome, o.Kind)
	}
	p = p.withDefaults()
	return p.plan(l.Attempt, l.Fingerprint, l.Interval, o, now), nil
}

// plan is Plan on a policy withDefaults filled, for a URL with attempts
// earlier retries and the fingerprint and interval of its previous fetch,
// and an outcome of a known kind.
func (p *Policy) plan(attempts int, fp uint64, interval time.Duration, o Outcome, now time.Time) Decision {
	d := Decision{Settlement: Settlement{Attempt: attempts}, Fingerprint: fp, Interval: interval}
	switch o.Kind {
	case OutcomeFailed:
		d.Kind = SettlementFailed
	case OutcomeRetry:
		d.Attempt++
		if d.Attempt >= p.MaxAttempts {
			d.Kind = SettlementGivenUp
			break
		}
		d.Kind = SettlementRetrying
		d.At = now.Add(max(p.backoff(d.Attempt), o.RetryAfter))
	case OutcomeSuccess, OutcomeNotModified:
		d.Kind = SettlementFinished
		changed := true
		if o.Kind == OutcomeNotModified {
			changed = false
		} else if o.Fingerprint != 0 {
			changed = fp == 0 || fp != o.Fingerprint
			d.Fingerprint = o.Fingerprint
		}
		switch {
		case !o.RecrawlAt.IsZero():
			d.At = o.RecrawlAt
			d.Interval = max(o.RecrawlAt.Sub(now), 0)
		case p.Schedule != nil:
			d.Interval = p.Schedule.Next(interval, changed)
			if d.Interval > 0 {
				d.At = now.Add(d.Interval)
			}
		}
		if !d.At.IsZero() {
			d.Kind, d.Attempt = SettlementRecrawl, 0
		}
	}
	return d
}
