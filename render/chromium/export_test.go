package chromium

// Escaped exposes escapedConns to the external tests: the connections that
// escaped request interception.
func (c *Browser) Escaped() (n int64, targets []string) { return c.escapedConns() }

// PID exposes browserPID to the external tests and benchmarks, which kill
// the browser and measure its memory.
func (c *Browser) PID() int { return c.browserPID() }
