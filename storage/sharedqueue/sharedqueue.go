// Package sharedqueue is the configuration of the crawl queues that several
// crawler processes share: storage/postgres and storage/redis. Both build
// their Queue on one core, so one Config, with one set of defaults, says what
// either does; each store's QueueConfig is this type.
package sharedqueue

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/crawlkit/crawlkit/frontier"
)

// Defaults of Config, filled in by WithDefaults. The retry policy's are the
// frontier's, so a crawl moved from one process to several retries alike.
const (
	DefaultLeaseTTL     = 5 * time.Minute
	DefaultMaxAttempts  = frontier.DefaultMaxAttempts
	DefaultRetryBase    = frontier.DefaultRetryBase
	DefaultRetryMax     = frontier.DefaultRetryMax
	DefaultBands        = 4
	DefaultPollInterval = 200 * time.Millisecond
	DefaultOpTimeout    = 30 * time.Second
)

// MaxBands bounds Config.Bands, as frontier.Config does.
const MaxBands = 16

// Config configures a shared Queue. The zero value is a polite queue with
// frontier.Frontier's defaults.
type Config struct {
	// Politeness says when a host may be contacted again after a lease on
	// it settles. Every process sharing the crawl should pass its own
	// *fetch.Politeness (the one given to crawlkit.Config.Politeness),
	// which knows the host's Crawl-delay, backoff and the duration of the
	// fetch just made. Nil means frontier.FixedDelay(frontier.DefaultDelay).
	Politeness frontier.Politeness
	// Prioritizer assigns the bands that order a host's URLs (lower band
	// first, then first in, first out). Nil means frontier.BFS.
	Prioritizer frontier.Prioritizer
	// Bands is the number of bands, 1 to MaxBands. Zero means DefaultBands.
	Bands int
	// LeaseTTL is how long a lease lasts before its URL is leased again.
	// It must be longer than the slowest fetch plus its handling.
	LeaseTTL time.Duration
	// MaxAttempts is how many fetches of a URL may end in OutcomeRetry
	// before it is dropped as failed.
	MaxAttempts int
	// RetryBase and RetryMax bound the retry backoff (frontier.Policy):
	// attempt n waits RetryBase*2^(n-1), at most RetryMax, and at least the
	// outcome's RetryAfter.
	RetryBase, RetryMax time.Duration
	// Schedule decides recrawls of successful URLs. Nil means no recrawl
	// unless an Outcome sets RecrawlAt.
	Schedule frontier.Schedule
	// PollInterval is the longest the Queue's waiting Next calls go
	// without asking the store again when nothing is ready: other
	// processes may settle leases at any time. One waiting call asks; the
	// others sleep until it finds work or URLs are added, by this Queue
	// or, heard through the listener (see NoListen), by another process.
	PollInterval time.Duration
	// NoListen turns the listener off. By default, from its first Next
	// on, a Queue keeps one connection of its own listening for the Adds
	// of every process (PostgreSQL LISTEN, a Redis subscription), so that
	// waiting Next calls ask at once instead of at their next poll.
	// Without it (behind a pooler that does not pass LISTEN through, for
	// example) they find other processes' URLs within PollInterval.
	NoListen bool
	// OpTimeout bounds each store operation of the methods that take no
	// context (Add, NextAt, Done, BlockHost, Stats).
	OpTimeout time.Duration
	// Now is the clock of the methods that take no time. Nil means
	// time.Now.
	Now func() time.Time
	// Logger receives the errors of BlockHost and Stats, which cannot
	// return them. Nil discards them.
	Logger *slog.Logger
}

// ErrConfig is wrapped by WithDefaults' error for a value out of range.
var ErrConfig = fmt.Errorf("sharedqueue: invalid config")

// WithDefaults returns c with every zero (or negative) duration and count
// replaced by its default, or an error wrapping ErrConfig naming a field
// out of range.
func (c Config) WithDefaults() (Config, error) {
	if c.Bands == 0 {
		c.Bands = DefaultBands
	}
	if c.Bands < 1 || c.Bands > MaxBands {
		return c, fmt.Errorf("%w: Bands %d outside 1..%d", ErrConfig, c.Bands, MaxBands)
	}
	if c.LeaseTTL <= 0 {
		c.LeaseTTL = DefaultLeaseTTL
	}
	if c.MaxAttempts <= 0 {
		c.MaxAttempts = DefaultMaxAttempts
	}
	if c.RetryBase <= 0 {
		c.RetryBase = DefaultRetryBase
	}
	if c.RetryMax <= 0 {
		c.RetryMax = DefaultRetryMax
	}
	if c.PollInterval <= 0 {
		c.PollInterval = DefaultPollInterval
	}
	if c.OpTimeout <= 0 {
		c.OpTimeout = DefaultOpTimeout
	}
	return c, nil
}

// Policy is the frontier retry and recrawl policy the Config describes;
// call it on a Config with its defaults filled in.
func (c Config) Policy() frontier.Policy {
	return frontier.Policy{MaxAttempts: c.MaxAttempts, RetryBase: c.RetryBase, RetryMax: c.RetryMax, Schedule: c.Schedule}
}

// Settlement is one lease and its outcome for a shared Queue's DoneBatchAt,
// which sets Err and Result: settling a batch in one round trip is what
// makes a shared queue keep up with many workers.
type Settlement struct {
	Lease   *frontier.Lease
	Outcome frontier.Outcome
	// Err is set by DoneBatchAt: nil when the lease was settled, or an
	// error as DoneAt returns it.
	Err error
	// Result is set by DoneBatchAt when Err is nil: what the settlement
	// did, as DoneAt reports it.
	Result frontier.Settlement
}
