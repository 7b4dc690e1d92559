package sharedqueue

import (
	"context"
	"time"

	"github.com/crawlkit/crawlkit/frontier"
)

// Queue is the contract of every shared crawl queue (storage/postgres,
// storage/redis): one set of guarantees, written once, so that code written
// against it runs on either store and a crawl moves between them unchanged.
// Each store's Queue documents only what its native statements add.
//
// Across processes: Add queues a URL at most once over the life of the
// store; a host holds at most one unexpired lease and is leased no earlier
// than its previous settle's politeness time (or a BlockHost time); every
// lease settles at most once, and a lease whose time ran out is leased
// again, its late settle failing with frontier.ErrLeaseExpired. Ready hosts
// are served in the order they became ready; within a host, lower bands
// first, and first in, first out within a band. Methods are safe for
// concurrent use.
type Queue interface {
	// Add is AddAt with the Config's clock and OpTimeout.
	Add(entries ...frontier.Entry) error
	// AddAt queues the entries at now and reports how many were new to
	// the crawl: an entry whose URL (by urlnorm.Key) was queued before,
	// by any process, is dropped. Entries whose NotBefore is after now
	// wait for it. An invalid entry fails the whole call before anything
	// is written (frontier.ErrInvalidEntry); a failed call may be
	// repeated.
	AddAt(ctx context.Context, now time.Time, entries ...frontier.Entry) (int, error)
	// NextAt leases the best due URL of a host that may be contacted at
	// now, if any. Otherwise it returns a nil lease and the earliest time
	// a host may become ready (the end of a politeness delay, a block, a
	// due time, or an unsettled lease), or the zero time when no URL of
	// the crawl is queued or leased. It never blocks on other workers.
	NextAt(now time.Time) (*frontier.Lease, time.Time, error)
	// LeaseAt leases up to n URLs at now, each of a different ready host,
	// in one round trip; when it leases none it also returns when to ask
	// again, as NextAt does.
	LeaseAt(ctx context.Context, now time.Time, n int) ([]*frontier.Lease, time.Time, error)
	// Next returns a lease, waiting until one is available or ctx is
	// done. While nothing is ready, one waiting call asks the store again
	// when the earliest host becomes ready and at least every
	// Config.PollInterval; the others sleep until it finds work, it stops
	// waiting, or URLs are added (by this handle, or by another process
	// through the listener: see Config.NoListen). Lost connections are
	// waited out; other errors are returned.
	Next(ctx context.Context) (*frontier.Lease, error)
	// Done is DoneAt with the Config's clock and OpTimeout.
	Done(l *frontier.Lease, o frontier.Outcome) (frontier.Settlement, error)
	// DoneAt settles l with o at now: the URL is finished, or queued again
	// for a retry or a recrawl (frontier.Policy decides), and the host's
	// next contact becomes the Politeness model's ReadyAt(host, now). It
	// returns frontier.ErrLeaseExpired if the lease ran out before now and
	// frontier.ErrLeaseSettled if it was settled already. A settle cut by
	// a lost connection is retried, and the retry recognizes a settle that
	// did commit.
	DoneAt(ctx context.Context, now time.Time, l *frontier.Lease, o frontier.Outcome) (frontier.Settlement, error)
	// DoneBatchAt settles several leases at now in one round trip, setting
	// each Settlement's Err and Result. It returns an error only when the
	// batch as a whole failed.
	DoneBatchAt(ctx context.Context, now time.Time, batch []Settlement) error
	// Extend is ExtendAt with the Config's clock and OpTimeout.
	Extend(l *frontier.Lease, ttl time.Duration) error
	// ExtendAt prolongs l to expire at now+ttl and updates l.Expires. It
	// returns frontier.ErrLeaseExpired if the lease ran out before now and
	// frontier.ErrLeaseSettled if it was settled.
	ExtendAt(ctx context.Context, now time.Time, l *frontier.Lease, ttl time.Duration) error
	// BlockHost keeps host from being leased before until, for every
	// process. Blocks only extend, and are stored. Errors are logged to
	// Config.Logger.
	BlockHost(host string, until time.Time)
	// BlockHostAt is BlockHost with a context and an error.
	BlockHostAt(ctx context.Context, host string, until time.Time) error
	// Stats returns this handle's counters (Added, Leases, Succeeded, …,
	// Leased: its own unsettled, unexpired leases) and the crawl's shared
	// counts (Hosts, InMemory, Delayed), refreshed at most once a second.
	Stats() frontier.Stats
	// Deduplicates reports true: Add drops URLs the queue holds or has
	// finished, as crawlkit.Queue requires.
	Deduplicates() bool
	// Close ends the handle: a blocked Next returns and later calls fail
	// with an error matching frontier.ErrClosed. Leases it did not settle
	// expire as a crashed worker's would. The store stays open. Close is
	// idempotent.
	Close() error
}
