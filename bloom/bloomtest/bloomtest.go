// Package bloomtest is the conformance kit for bloom.Store
// implementations: the exact key sets behind a bloom.Set (storage/pebble,
// storage/postgres and storage/redis offer one as SeenStore, or a user's
// own). A store proves itself by passing Run in its tests:
//
//	func TestSeenStore(t *testing.T) {
//		bloomtest.Run(t, func(t *testing.T, dir string) bloomtest.Store {
//			db, err := mydb.Open(dir) // or a table or key prefix derived from dir
//			if err != nil {
//				t.Fatal(err)
//			}
//			return bloomtest.Store{Keys: db.SeenStore(), Close: db.Close, ErrClosed: mydb.ErrClosed}
//		})
//	}
//
// Run calls the Opener with a fresh dir for every scenario. To check that
// keys outlive the value that wrote them, it calls Store.Close and then the
// Opener again with the same dir, and expects to find what was written. A
// store that does not live in a directory uses dir only as a name: stores
// opened under different dirs must be independent, and opening a dir again
// must see its earlier keys. A store that lives in process memory returns
// the same value for the same dir and leaves Close nil (see the example).
//
// What it checks (scenario names in parentheses):
//
//   - Keys: an empty store contains nothing; an added key is contained,
//     including 0 and 2^64-1; adding a key twice is harmless and ForEach
//     reports each key once; ForEach stops at the first error fn returns
//     and returns it; stores under different dirs are independent; keys
//     survive Close and open.
//   - Batch, on stores that also have AddBatch([]uint64) error (Batcher):
//     a batch with repeated keys, and an empty one, add exactly their keys.
//   - BehindSet: two goroutines calling TestAndAddKey on a bloom.Set over
//     the store see every key reported new exactly once, and a Set built
//     again over the store (a restart, or another process) counts them all.
//   - Concurrent: Contains of keys being added from other goroutines
//     answers without error, and every key is contained once its Add
//     returned.
//   - AfterClose, when Store.Close and Store.ErrClosed are set: every
//     method fails with an error matching ErrClosed.
package bloomtest

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/crawlkit/crawlkit/internal/kitrun"

	"github.com/crawlkit/crawlkit/bloom"
)

// Store is a key store opened for the kit.
type Store struct {
	// Keys is the store under test.
	Keys bloom.Store
	// Close, if not nil, releases Keys (and whatever it belongs to) so that
	// its dir can be opened again. The kit calls it once for every Store an
	// Opener returned: before opening the same dir again, or when the
	// scenario ends.
	Close func() error
	// ErrClosed, if not nil, is the error every method of Keys returns
	// (errors.Is) once Close has returned. The AfterClose scenario runs
	// only when Close and ErrClosed are both set.
	ErrClosed error
}

// Batcher is the optional batch write of a store; the backends' SeenStores
// have it, and the Crawler uses it for a page's links.
type Batcher interface {
	AddBatch(keys []uint64) error
}

// Opener opens the store kept under dir (see the package documentation).
// It reports failures through t.
type Opener func(t *testing.T, dir string) Store

// Run runs every conformance scenario against the stores open returns,
// each as a subtest.
func Run(t *testing.T, open Opener) {
	t.Helper()
	scenarios := []struct {
		name string
		fn   func(t *testing.T, open Opener)
	}{
		{"Keys", testKeys},
		{"Batch", testBatch},
		{"BehindSet", testBehindSet},
		{"Concurrent", testConcurrent},
		{"AfterClose", testAfterClose},
	}
	for _, s := range scenarios {
		t.Run(s.name, func(t *testing.T) { s.fn(t, open) })
	}
}

// opened is a Store the kit has not closed yet.
type opened struct {
	Store
	closer *kitrun.Closer
}

func openStore(t *testing.T, open Opener, dir string) *opened {
	t.Helper()
	s := &opened{Store: open(t, dir)}
	if s.Keys == nil {
		t.Fatal("Opener returned a Store with nil Keys")
	}
	s.closer = kitrun.NewCloser(t, s.Close)
	return s
}

func (s *opened) close(t *testing.T) {
	t.Helper()
	s.closer.Close(t)
}

// reopen closes s and opens its dir again.
func reopen(t *testing.T, open Opener, dir string, s *opened) *opened {
	t.Helper()
	s.close(t)
	return openStore(t, open, dir)
}

func add(t *testing.T, s bloom.Store, keys ...uint64) {
	t.Helper()
	for _, k := range keys {
		if err := s.Add(k); err != nil {
			t.Fatalf("Add(%#x): %v", k, err)
		}
	}
}

// keysOf returns the keys ForEach reports, sorted, failing on an error.
func keysOf(t *testing.T, s bloom.Store) []uint64 {
	t.Helper()
	var got []uint64
	if err := s.ForEach(func(k uint64) error { got = append(got, k); return nil }); err != nil {
		t.Fatalf("ForEach: %v", err)
	}
	slices.Sort(got)
	return got
}

// checkKeys checks that s holds exactly want (sorted, distinct), through
// ForEach and Contains, and does not contain absent.
func checkKeys(t *testing.T, s bloom.Store, want []uint64, absent ...uint64) {
	t.Helper()
	if got := keysOf(t, s); !slices.Equal(got, want) {
		t.Fatalf("ForEach reported %#x, want %#x (each key once)", got, want)
	}
	for _, k := range want {
		if ok, err := s.Contains(k); err != nil || !ok {
			t.Fatalf("Contains(%#x) = %v, %v; want true", k, ok, err)
		}
	}
	for _, k := range absent {
		if ok, err := s.Contains(k); err != nil || ok {
			t.Fatalf("Contains(%#x) = %v, %v; want false", k, ok, err)
		}
	}
}

const maxKey = 1<<64 - 1

func testKeys(t *testing.T, open Opener) {
	dir := t.TempDir()
	s := openStore(t, open, dir)
	checkKeys(t, s.Keys, nil, 0, 1, maxKey)
	add(t, s.Keys, 0, 1<<63, maxKey, 42, 42)
	add(t, s.Keys, 1<<63)
	want := []uint64{0, 42, 1 << 63, maxKey}
	checkKeys(t, s.Keys, want, 1, 41, 43, 1<<63-1, maxKey-1)

	stop := errors.New("stop")
	calls := 0
	err := s.Keys.ForEach(func(uint64) error { calls++; return stop })
	if !errors.Is(err, stop) || calls != 1 {
		t.Fatalf("ForEach with fn failing at once: %d calls, error %v; want 1 call and fn's error", calls, err)
	}

	other := openStore(t, open, t.TempDir())
	checkKeys(t, other.Keys, nil, 0, 42)
	add(t, other.Keys, 7)
	checkKeys(t, s.Keys, want, 7)

	s = reopen(t, open, dir, s)
	checkKeys(t, s.Keys, want, 1, 7)
}

func testBatch(t *testing.T, open Opener) {
	s := openStore(t, open, t.TempDir())
	b, ok := s.Keys.(Batcher)
	if !ok {
		t.Skip("the store has no AddBatch")
	}
	if err := b.AddBatch(nil); err != nil {
		t.Fatalf("AddBatch(nil): %v", err)
	}
	checkKeys(t, s.Keys, nil, 0)
	if err := b.AddBatch([]uint64{1 << 63, 3, 1 << 63, 0}); err != nil {
		t.Fatalf("AddBatch: %v", err)
	}
	add(t, s.Keys, 3)
	if err := b.AddBatch([]uint64{maxKey}); err != nil {
		t.Fatalf("AddBatch: %v", err)
	}
	checkKeys(t, s.Keys, []uint64{0, 3, 1 << 63, maxKey}, 1, 2)
}

func testBehindSet(t *testing.T, open Opener) {
	dir := t.TempDir()
	s := openStore(t, open, dir)
	// A loose filter, so that many answers go to the store.
	opts := bloom.Config{Expected: 200, FalsePositiveRate: 0.3, Store: s.Keys}
	set, err := bloom.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	const n = 600
	mult := uint64(0x9e3779b97f4a7c15)
	var wg sync.WaitGroup
	fresh := make([]int, 2)
	errs := make([]error, 2)
	for g := range fresh {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range n {
				seen, err := set.TestAndAddKey(uint64(i) * mult)
				if err != nil {
					errs[g] = err
					return
				}
				if !seen {
					fresh[g]++
				}
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("TestAndAddKey: %v", err)
	}
	if fresh[0]+fresh[1] != n {
		t.Fatalf("%d + %d keys reported new, want exactly %d", fresh[0], fresh[1], n)
	}
	s = reopen(t, open, dir, s)
	opts.Store = s.Keys
	set, err = bloom.New(opts)
	if err != nil {
		t.Fatalf("New over the reopened store: %v", err)
	}
	if set.Len() != n {
		t.Fatalf("a Set rebuilt from the store counts %d keys, want %d", set.Len(), n)
	}
	for _, k := range []uint64{0, uint64(n-1) * mult} {
		if seen, err := set.ContainsKey(k); err != nil || !seen {
			t.Fatalf("rebuilt Set: ContainsKey(%#x) = %v, %v; want true", k, seen, err)
		}
	}
	if seen, err := set.ContainsKey(uint64(n) * mult); err != nil || seen {
		t.Fatalf("rebuilt Set: ContainsKey of a key never added = %v, %v", seen, err)
	}
}

func testConcurrent(t *testing.T, open Opener) {
	s := openStore(t, open, t.TempDir())
	const writers, perWriter = 2, 200
	var wg sync.WaitGroup
	errc := make(chan error, writers*2)
	for w := range writers {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for i := range perWriter {
				k := uint64(w*perWriter + i)
				if err := s.Keys.Add(k); err != nil {
					errc <- fmt.Errorf("Add(%d): %v", k, err)
					return
				}
				if ok, err := s.Keys.Contains(k); err != nil || !ok {
					errc <- fmt.Errorf("Contains(%d) after its Add returned = %v, %v", k, ok, err)
					return
				}
			}
		}()
		go func() { // reads keys the other writer is adding
			defer wg.Done()
			for i := range perWriter {
				if _, err := s.Keys.Contains(uint64((1-w)*perWriter + i)); err != nil {
					errc <- fmt.Errorf("Contains during Adds: %v", err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
	want := make([]uint64, writers*perWriter)
	for i := range want {
		want[i] = uint64(i)
	}
	checkKeys(t, s.Keys, want)
}

func testAfterClose(t *testing.T, open Opener) {
	s := openStore(t, open, t.TempDir())
	if s.Close == nil || s.ErrClosed == nil {
		t.Skip("the Store has no Close or no ErrClosed")
	}
	add(t, s.Keys, 1)
	s.close(t)
	check := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, s.ErrClosed) {
			t.Errorf("%s after Close: %v, want an error matching %v", what, err, s.ErrClosed)
		}
	}
	check("Add", s.Keys.Add(2))
	_, err := s.Keys.Contains(1)
	check("Contains", err)
	check("ForEach", s.Keys.ForEach(func(uint64) error { return nil }))
	if b, ok := s.Keys.(Batcher); ok {
		check("AddBatch", b.AddBatch([]uint64{3}))
	}
}
