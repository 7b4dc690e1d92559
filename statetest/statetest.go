// Package statetest is the conformance kit for crawlkit.StateStore
// implementations (storage/postgres, storage/redis, a user's own): the
// store the processes of a shared crawl keep their common crawl state in.
// An implementation proves itself by passing Run in its tests:
//
//	func TestStateStoreConformance(t *testing.T) {
//		statetest.Run(t, func(t *testing.T, dir string) crawlkit.StateStore {
//			return mystore.Open(t, dir) // the crawl state named by dir
//		})
//	}
//
// The opener returns a handle on the crawl state that dir names (a
// directory, a schema, a key prefix): the kit gives each check a new dir,
// and opens a second handle on one dir to check that two processes share
// the records, as the kits of the component stores do (bloomtest,
// robotstest). Concurrent updates come from goroutines and from both
// handles. What it checks:
//
//   - A record that does not exist reads as nil in update; what update
//     returns is what the next update reads; records are separate by name.
//   - An update that fails leaves the record as it was and its error comes
//     back from UpdateState, unwrapped or wrapped (errors.Is).
//   - Concurrent updates of one record lose none: 8 goroutines on two
//     handles, each appending 25 bytes, leave 200.
//   - What one handle wrote, another handle on the same dir reads.
//   - A cancelled context fails the update.
package statetest

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/crawlkit/crawlkit"
)

// Run checks the StateStore that newStore returns against the contract.
func Run(t *testing.T, open Opener) {
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			c.fn(t, func() crawlkit.StateStore { return open(t, dir) })
		})
	}
}

// Opener opens a handle on the crawl state dir names; handles on one dir
// share their records.
type Opener func(t *testing.T, dir string) crawlkit.StateStore

// checks are the kit's checks, in order.
var checks = []struct {
	name string
	fn   func(testing.TB, func() crawlkit.StateStore)
}{
	{"ReadWrite", readWrite},
	{"FailedUpdate", failedUpdate},
	{"Concurrent", concurrent},
	{"Cancelled", cancelled},
	{"Shared", shared},
}

func set(t testing.TB, s crawlkit.StateStore, name string, v []byte) (old []byte) {
	t.Helper()
	err := s.UpdateState(context.Background(), name, func(o []byte) ([]byte, error) {
		old = bytes.Clone(o)
		return v, nil
	})
	if err != nil {
		t.Fatalf("UpdateState(%q): %v", name, err)
	}
	return old
}

func readWrite(t testing.TB, open func() crawlkit.StateStore) {
	s := open()
	if old := set(t, s, "a", []byte("one")); old != nil {
		t.Errorf("a new record read as %q, want nil", old)
	}
	if old := set(t, s, "a", []byte("two")); string(old) != "one" {
		t.Errorf("read %q after writing \"one\"", old)
	}
	if old := set(t, s, "b", []byte("x")); old != nil {
		t.Errorf("record b read as %q: records are not separate", old)
	}
	big := bytes.Repeat([]byte{0, 1, 2, 0xff}, 1<<18) // 1 MiB, NUL bytes included
	set(t, s, "a", big)
	if old := set(t, s, "a", nil); !bytes.Equal(old, big) {
		t.Errorf("a 1 MiB binary record read back as %d bytes", len(old))
	}
}

func failedUpdate(t testing.TB, open func() crawlkit.StateStore) {
	s := open()
	set(t, s, "r", []byte("kept"))
	boom := errors.New("update failed")
	err := s.UpdateState(context.Background(), "r", func([]byte) ([]byte, error) { return []byte("lost"), boom })
	if !errors.Is(err, boom) {
		t.Errorf("UpdateState returned %v, want the update's error", err)
	}
	if old := set(t, s, "r", []byte("next")); string(old) != "kept" {
		t.Errorf("after a failed update the record is %q, want \"kept\"", old)
	}
}

func concurrent(t testing.TB, open func() crawlkit.StateStore) {
	const goroutines, each = 8, 25
	handles := []crawlkit.StateStore{open(), open()}
	s := handles[0]
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				err := handles[g%2].UpdateState(context.Background(), "c", func(old []byte) ([]byte, error) {
					return append(bytes.Clone(old), byte(g)), nil
				})
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("concurrent UpdateState: %v", err)
	}
	if old := set(t, s, "c", nil); len(old) != goroutines*each {
		t.Errorf("%d concurrent appends left %d bytes: updates were lost", goroutines*each, len(old))
	}
}

func cancelled(t testing.TB, open func() crawlkit.StateStore) {
	s := open()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	called := false
	err := s.UpdateState(ctx, "x", func([]byte) ([]byte, error) { called = true; return []byte("v"), nil })
	if err == nil {
		t.Errorf("UpdateState with a cancelled context succeeded (update called: %v)", called)
	}
}

func shared(t testing.TB, open func() crawlkit.StateStore) {
	a, b := open(), open()
	set(t, a, "s", []byte("from a"))
	if old := set(t, b, "s", []byte("from b")); string(old) != "from a" {
		t.Errorf("a second handle read %q, want what the first wrote", old)
	}
	if old := set(t, a, "s", nil); string(old) != "from b" {
		t.Errorf("the first handle read %q, want what the second wrote", old)
	}
}
