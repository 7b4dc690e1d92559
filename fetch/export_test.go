package fetch

import "time"

// testClock is a fake clock of the tests: Now, and an After that usually
// advances Now at once, so politeness and retry waits take no real time.
type testClock interface {
	Now() time.Time
	After(d time.Duration) <-chan time.Time
}

// UseClock makes a Fetcher made from c read clk's Now and wait on clk's
// After (Config.Now alone waits on real timers). Exported for the
// external tests; nil restores real time.
func UseClock(c *Config, clk testClock) {
	if clk == nil {
		c.Now, c.after = nil, nil
		return
	}
	c.Now, c.after = clk.Now, clk.After
}
