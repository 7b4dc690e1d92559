package frontier

import "time"

// Politeness is the frontier's view of a per-host politeness model: when may
// a host be contacted again. The frontier asks it whenever a lease on the
// host is settled or expires, and leases nothing from the host before the
// returned time. Host strings are urlnorm.Host values ("example.com",
// "example.com:8080").
//
// fetch.Politeness satisfies this interface (its ReadyAt folds in the default
// delay, Crawl-delay, adaptive delay, backoff, Retry-After and explicit
// blocks), so one politeness model serves the fetcher and the frontier.
// Implementations must be safe for concurrent use.
type Politeness interface {
	// ReadyAt reports the earliest time host may be contacted again, given
	// that the latest fetch from it (or settlement of a lease on it)
	// finished at finished.
	ReadyAt(host string, finished time.Time) time.Time
}

// DefaultDelay is the delay of the default Politeness: one request per
// second per host.
const DefaultDelay = time.Second

// FixedDelay is a Politeness that waits the same delay after every fetch from
// every host. FixedDelay(0) allows back-to-back fetches (for tests and
// synthetic webs).
type FixedDelay time.Duration

// ReadyAt returns finished plus the delay.
func (d FixedDelay) ReadyAt(_ string, finished time.Time) time.Time {
	return finished.Add(time.Duration(d))
}
