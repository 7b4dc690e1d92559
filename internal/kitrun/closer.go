package kitrun

import "testing"

// Closer closes a store a kit opened exactly once: when the kit closes it
// (to reopen its dir, or to check its behaviour once closed), or at the
// end of the test if the kit did not.
type Closer struct {
	close func() error
	done  bool
}

// NewCloser arranges for close (which may be nil: a store without Close)
// to run at the end of t unless Close ran it first.
func NewCloser(t *testing.T, close func() error) *Closer {
	c := &Closer{close: close}
	t.Cleanup(func() {
		if !c.done && c.close != nil {
			if err := c.close(); err != nil {
				t.Errorf("Close: %v", err)
			}
		}
	})
	return c
}

// Close runs close now, failing t on its error; later calls do nothing.
func (c *Closer) Close(t *testing.T) {
	t.Helper()
	if c.done {
		return
	}
	c.done = true
	if c.close != nil {
		if err := c.close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
	}
}
