// Package frontier decides what a crawler fetches next. It queues URLs by
// priority and host, hands them out as leases when their host's politeness
// clock allows, and settles every lease with an outcome: done, retry later,
// failed, or recrawl at a later time.
//
// # Design
//
// The frontier follows Mercator's two-tier design (Heydon and Najork,
// "Mercator: a scalable, extensible web crawler", WWW 1999; Najork and
// Heydon, "High-performance web crawling", 2001):
//
//   - Front queues are F priority bands (Config.Bands, default 4). A
//     Prioritizer puts every added URL into a band; BFS (by depth, the
//     default) and OPIC (online page importance) are built in.
//   - Back queues are per host: each host's URLs, ordered by band and then
//     first in, first out. A host holds at most MaxLeasesPerHost (default 1)
//     unsettled leases.
//   - A heap orders hosts by the time they may next be contacted: the end of
//     their last fetch plus the delay the Politeness model returns
//     (fetch.Politeness fits; the default is FixedDelay(DefaultDelay)), or a
//     BlockHost time.
//
// Band selection. Hosts whose time has come wait in one ready list per band
// (the band of their best URL). Next picks a band by smooth weighted round
// robin over the bands that have ready hosts: band b has weight
// 2^(F-1-b) by default (8, 4, 2, 1 for four bands; Config.BandWeights
// overrides), so when every band has ready hosts, band b receives
// weight(b)/sum(weights) of the leases, and the lowest band still gets one
// lease in fifteen: low bands slow down but are never starved. Within a band,
// hosts are served in the order they became ready; a waiting host that gets a
// better URL joins the better band's list. Within a host, the best
// band is always served first.
//
// A worker asks Next for a lease, fetches the URL and calls Done with the
// outcome. A lease that is not settled before it expires (Config.LeaseTTL,
// default 5 minutes; Extend prolongs it) goes back to its queue, and a late
// Done reports ErrLeaseExpired; a lease settles at most once, so a queued URL
// finishes once. Outcomes:
//
//   - OutcomeSuccess: done; queued again for a recrawl at Outcome.RecrawlAt
//     or when the Schedule (FixedInterval, Adaptive) says.
//   - OutcomeNotModified: a 304; like success with unchanged content.
//   - OutcomeRetry: queued again after max(RetryAfter, exponential backoff)
//     until MaxAttempts attempts were made, then dropped as failed.
//   - OutcomeFailed: done, permanently.
//
// Done reports which of these it applied as a Settlement (a retry given
// up, a recrawl and when it is due), so that a caller keeps its counts
// without knowing the queue's policy.
//
// The frontier does not deduplicate: put a seen set (package bloom) in front
// of Add, as Mercator puts its URL-seen test in front of the frontier.
//
// # Time
//
// Every scheduling decision is a pure function of the frontier's state and
// an explicit time: AddAt, NextAt, DoneAt, ExtendAt take now. Add, Next, Done
// and Extend are thin wrappers that read Config.Now (time.Now by default);
// Next blocks until a lease is available or its context is done.
//
// # Storage
//
// With Config.Store nil the frontier keeps every URL in memory, in compact
// per-host queues. With a Store (MemoryStore, storage/pebble, or a user's
// own, checked by frontiertest.Run) every Add and every settle is written
// before it returns, and concurrent calls share one write (group commit).
// Only a bounded window of each host's URLs (Config.Window per band, shrunk
// as hosts grow past Config.MaxInMemory/Window) and of the delayed URLs
// (Config.DelayedWindow) is held in memory; the rest is read
// through per-host cursors when the window drains. A recrawl or NotBefore URL
// that comes due goes to the head of its band, as without a Store, if the
// band's window has room; otherwise it is re-filed in the store as a queued
// URL at the band's tail (one write moves it from its delayed key to a queued
// key), so that a large cohort of due URLs (recrawls after downtime) is not
// loaded into memory at once. A retry goes to its band's tail, in memory or
// in the store, with or without a Store (see Config.RetryBase). Leases are not stored: on restart every URL that was
// leased but not settled is queued again.
//
// Scheduling never waits for the store: a window is read with the
// frontier's lock released, under Next's context (NextAt's is cancelled by
// Close), so a slow store (a network round trip to PostgreSQL) delays only
// the call that reads, never the Add, Done or Stats of other hosts, and a
// cancelled Next ends its read. Close cancels the reads in flight and waits
// for them, so the Store may be closed after it.
//
// Store key layout:
//
//	"mseq"                         highest sequence number used
//	"q" host 0x00 band(1) seq(8)   a queued URL; seq orders a band first in, first out
//	"d" due(8) seq(8)              a URL waiting for its due time
package frontier
