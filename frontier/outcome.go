package frontier

import (
	"errors"
	"fmt"
	"time"
)

// Entries, outcomes and settlements: the values that cross the frontier's API.

// Errors returned by the frontier. They are matchable with errors.Is.
var (
	// ErrClosed is returned by every method after Close.
	ErrClosed = errors.New("frontier: closed")
	// ErrLeaseExpired is returned by Done and Extend for a lease whose
	// time ran out; its URL went back to the queue.
	ErrLeaseExpired = errors.New("frontier: lease expired")
	// ErrLeaseSettled is returned by Done and Extend for a lease that was
	// already settled.
	ErrLeaseSettled = errors.New("frontier: lease already settled")
	// ErrForeignLease is returned for a nil lease or a lease from another
	// Frontier.
	ErrForeignLease = errors.New("frontier: lease does not belong to this frontier")
	// ErrInvalidEntry is returned by Add for an entry it cannot queue; the
	// error says which entry and why.
	ErrInvalidEntry = errors.New("frontier: invalid entry")
	// ErrInvalidOutcome is returned by Done for an outcome with an unknown
	// kind.
	ErrInvalidOutcome = errors.New("frontier: invalid outcome")
)

// Entry is a URL to queue.
type Entry struct {
	// URL is the normalized URL (urlnorm.Normalize). Required.
	URL string
	// Host is the URL's host as urlnorm.Host returns it; politeness is
	// kept per Host. When empty it is derived from URL (lower-cased host
	// and port).
	Host string
	// Priority is an importance score for the Prioritizer; OPIC keeps a
	// page's cash in it. It comes back in the Lease.
	Priority float64
	// Depth is the number of links from a seed (seeds are 0). Depths
	// above 65535 are stored as 65535.
	Depth int
	// NotBefore is the earliest time to fetch the URL; zero means now.
	NotBefore time.Time
	// Meta is opaque data kept with the URL and returned in its Lease
	// (at most 64 KiB).
	Meta []byte
}

// OutcomeKind says how a lease ended.
type OutcomeKind uint8

// Outcome kinds.
const (
	// OutcomeSuccess: the URL was fetched.
	OutcomeSuccess OutcomeKind = iota + 1
	// OutcomeNotModified: a conditional fetch answered 304.
	OutcomeNotModified
	// OutcomeRetry: a transient failure; try again later.
	OutcomeRetry
	// OutcomeFailed: a permanent failure; never try again.
	OutcomeFailed
)

// String returns the kind's name.
func (k OutcomeKind) String() string {
	switch k {
	case OutcomeSuccess:
		return "success"
	case OutcomeNotModified:
		return "not-modified"
	case OutcomeRetry:
		return "retry"
	case OutcomeFailed:
		return "failed"
	}
	return fmt.Sprintf("OutcomeKind(%d)", uint8(k))
}

// Outcome is the result of a lease, given to Done.
type Outcome struct {
	Kind OutcomeKind
	// Fingerprint identifies the content (for example a simhash
	// fingerprint) so the Schedule can tell whether it changed; zero
	// means unknown. OutcomeSuccess only.
	Fingerprint uint64
	// RecrawlAt, when set, queues the URL again at that time, overriding
	// the Schedule. OutcomeSuccess and OutcomeNotModified.
	RecrawlAt time.Time
	// RetryAfter is the least time to wait before retrying (for example
	// from a Retry-After header); the frontier waits at least its own
	// backoff. OutcomeRetry only.
	RetryAfter time.Duration
}

// SettlementKind says what settling a lease did to its URL.
type SettlementKind uint8

// Settlement kinds.
const (
	// SettlementFinished: fetched (OutcomeSuccess or OutcomeNotModified)
	// and not scheduled again.
	SettlementFinished SettlementKind = iota + 1
	// SettlementFailed: OutcomeFailed; never tried again.
	SettlementFailed
	// SettlementRetrying: OutcomeRetry, put back to be tried again at
	// Settlement.At.
	SettlementRetrying
	// SettlementGivenUp: OutcomeRetry on the last attempt MaxAttempts
	// allows; dropped as failed, never tried again.
	SettlementGivenUp
	// SettlementRecrawl: fetched, and due again at Settlement.At for a
	// recrawl (Outcome.RecrawlAt or the Schedule).
	SettlementRecrawl
)

// String returns the kind's name.
func (k SettlementKind) String() string {
	switch k {
	case SettlementFinished:
		return "finished"
	case SettlementFailed:
		return "failed"
	case SettlementRetrying:
		return "retrying"
	case SettlementGivenUp:
		return "given-up"
	case SettlementRecrawl:
		return "recrawl"
	}
	return fmt.Sprintf("SettlementKind(%d)", uint8(k))
}

// Settlement is what Done did with a lease's URL. Done reports it because
// the caller cannot tell from the Outcome alone: whether a retry is given up
// depends on the queue's MaxAttempts and the URL's attempts, and whether a
// success is recrawled on its Schedule, which with a shared queue live in
// another process.
type Settlement struct {
	Kind SettlementKind
	// At is when the URL is due again: set for SettlementRetrying and
	// SettlementRecrawl, zero otherwise.
	At time.Time
	// Attempt is the URL's count of attempts that ended in OutcomeRetry
	// after this settlement, this one included: the Lease.Attempt of its
	// next lease when Retrying, zero for a Recrawl (which starts afresh),
	// the count that reached MaxAttempts when GivenUp.
	Attempt int
}

// Success returns an OutcomeSuccess with the content's fingerprint (zero if
// unknown).
func Success(fingerprint uint64) Outcome {
	return Outcome{Kind: OutcomeSuccess, Fingerprint: fingerprint}
}

// NotModified returns an OutcomeNotModified.
func NotModified() Outcome { return Outcome{Kind: OutcomeNotModified} }

// Retry returns an OutcomeRetry that waits at least after.
func Retry(after time.Duration) Outcome { return Outcome{Kind: OutcomeRetry, RetryAfter: after} }

// Failed returns an OutcomeFailed.
func Failed() Outcome { return Outcome{Kind: OutcomeFailed} }
