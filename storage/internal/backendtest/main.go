// Package backendtest holds the test plumbing the storage backends share
// beyond the public conformance kits (bloom/bloomtest, robots/robotstest,
// simhash/simhashtest, frontier/frontiertest, queuetest): running without
// a server, closed-error checks, closing during use, and listener wake-ups.
package backendtest

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"testing"

	"github.com/crawlkit/crawlkit/frontier"
)

// RunWithServer is a backend's TestMain: it runs m, leaving the runnable
// examples out when CI=true is not set and probe (a connection to the
// backend's server, at addr, overridable through the environment variable
// env) fails. The tests skip themselves with a message then, but an Example
// cannot, and would fail the package on a machine without the server.
// Under CI=true everything runs, and fails without the server. An explicit
// -run is left as it is.
func RunWithServer(m *testing.M, server, addr, env string, probe func() error) {
	flag.Parse()
	if run := flag.Lookup("test.run"); os.Getenv("CI") != "true" && run != nil && run.Value.String() == "" {
		if err := probe(); err != nil {
			fmt.Printf("%s at %s unavailable (%v): skipping the runnable examples (set %s)\n", server, addr, err, env)
			flag.Set("test.run", "^(Test|Fuzz)")
		}
	}
	os.Exit(m.Run())
}

// ClosedError checks the error of a call made on a closed queue (err):
// it must match both the backend's own closed error (errClosed), as its
// DB.Close documents, and frontier.ErrClosed, as the Queue interface
// expects, and errClosed must match no unrelated error.
func ClosedError(t testing.TB, err, errClosed error, unrelated ...error) {
	t.Helper()
	if !errors.Is(err, errClosed) || !errors.Is(err, frontier.ErrClosed) {
		t.Fatalf("call after Close: %v; want %v matching frontier.ErrClosed", err, errClosed)
	}
	for _, u := range append(unrelated, frontier.ErrInvalidEntry) {
		if errors.Is(u, errClosed) {
			t.Fatalf("%v matches the closed error", u)
		}
	}
}
