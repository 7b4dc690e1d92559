package fetch

import "time"

// Clock is the Fetcher's and the DNS cache's source of time. Politeness
// itself never reads a clock: its methods take now explicitly. Tests inject
// a fake Clock to make waiting and expiry deterministic.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// After returns a channel that receives once d has elapsed.
	After(d time.Duration) <-chan time.Time
}

// SystemClock is the Clock backed by the time package.
type SystemClock struct{}

// Now returns time.Now().
func (SystemClock) Now() time.Time { return time.Now() }

// After returns time.After(d).
func (SystemClock) After(d time.Duration) <-chan time.Time { return time.After(d) }
