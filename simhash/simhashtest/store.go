package simhashtest

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/crawlkit/crawlkit/internal/kitrun"

	"github.com/crawlkit/crawlkit/simhash"
)

// EntryStore is a simhash.Store (the fingerprint store an Index rebuilds
// its tables from, Options.Store) opened for RunStore.
type EntryStore struct {
	// Entries is the store under test.
	Entries simhash.Store
	// Close, if not nil, releases Entries so that its dir can be opened
	// again; the kit calls it once for every EntryStore an opener returned.
	Close func() error
	// ErrClosed, if not nil, is the error Put and ForEach return
	// (errors.Is) once Close has returned; the AfterClose scenario runs
	// only when Close and ErrClosed are both set.
	ErrClosed error
}

// EntryOpener opens the simhash.Store kept under dir, as Opener does for
// table stores.
type EntryOpener func(t *testing.T, dir string) EntryStore

// RunStore is Run for simhash.Store implementations (storage/pebble,
// storage/postgres and storage/redis offer one as FingerprintStore). It
// checks, as subtests:
//
//   - Entries: ForEach reports exactly the pairs Put stored (a pair put
//     twice may be reported once or twice), including ids and
//     fingerprints 0 and 2^64-1; Put of nothing succeeds; ForEach stops at
//     the first error fn returns and returns it; an Index built over the
//     store finds its fingerprints; stores under different dirs are
//     independent; entries survive Close and open.
//   - Concurrent: Puts from several goroutines all land.
//   - AfterClose, when Close and ErrClosed are set: Put and ForEach fail
//     with an error matching ErrClosed.
func RunStore(t *testing.T, open EntryOpener) {
	t.Helper()
	scenarios := []struct {
		name string
		fn   func(t *testing.T, open EntryOpener)
	}{
		{"Entries", testEntries},
		{"Concurrent", testEntriesConcurrent},
		{"AfterClose", testEntriesAfterClose},
	}
	for _, s := range scenarios {
		t.Run(s.name, func(t *testing.T) { s.fn(t, open) })
	}
}

type openedEntries struct {
	EntryStore
	closer *kitrun.Closer
}

func openEntries(t *testing.T, open EntryOpener, dir string) *openedEntries {
	t.Helper()
	s := &openedEntries{EntryStore: open(t, dir)}
	if s.Entries == nil {
		t.Fatal("EntryOpener returned an EntryStore with nil Entries")
	}
	s.closer = kitrun.NewCloser(t, s.Close)
	return s
}

func (s *openedEntries) close(t *testing.T) {
	t.Helper()
	s.closer.Close(t)
}

func putEntries(t *testing.T, s simhash.Store, es ...simhash.Entry) {
	t.Helper()
	if err := s.Put(es); err != nil {
		t.Fatalf("Put: %v", err)
	}
}

func compareEntries(a, b simhash.Entry) int {
	return cmp.Or(cmp.Compare(a.Fingerprint, b.Fingerprint), cmp.Compare(a.ID, b.ID))
}

// checkEntries fails t unless ForEach reports the pairs of want (sorted,
// distinct), each at least once, and no other.
func checkEntries(t *testing.T, s simhash.Store, want []simhash.Entry) {
	t.Helper()
	var got []simhash.Entry
	if err := s.ForEach(func(e simhash.Entry) error { got = append(got, e); return nil }); err != nil {
		t.Fatalf("ForEach: %v", err)
	}
	slices.SortFunc(got, compareEntries)
	if got = slices.Compact(got); !slices.Equal(got, want) {
		t.Fatalf("ForEach reported the pairs %v, want %v", got, want)
	}
}

func testEntries(t *testing.T, open EntryOpener) {
	dir := t.TempDir()
	s := openEntries(t, open, dir)
	checkEntries(t, s.Entries, nil)
	const max = 1<<64 - 1
	putEntries(t, s.Entries, simhash.Entry{Fingerprint: 1, ID: 10}, simhash.Entry{Fingerprint: 1 << 63, ID: max},
		simhash.Entry{Fingerprint: 1, ID: 10}, simhash.Entry{Fingerprint: 7, ID: 10})
	putEntries(t, s.Entries)
	putEntries(t, s.Entries, simhash.Entry{Fingerprint: 0, ID: 0}, simhash.Entry{Fingerprint: max, ID: 1}, simhash.Entry{Fingerprint: 7, ID: 10})
	want := []simhash.Entry{{Fingerprint: 0, ID: 0}, {Fingerprint: 1, ID: 10}, {Fingerprint: 7, ID: 10},
		{Fingerprint: 1 << 63, ID: max}, {Fingerprint: max, ID: 1}}
	checkEntries(t, s.Entries, want)

	stop := errors.New("stop")
	calls := 0
	if err := s.Entries.ForEach(func(simhash.Entry) error { calls++; return stop }); !errors.Is(err, stop) || calls != 1 {
		t.Fatalf("ForEach with fn failing at once: %d calls, error %v; want 1 call and fn's error", calls, err)
	}

	ix, err := simhash.NewIndex(simhash.Config{Store: s.Entries})
	if err != nil {
		t.Fatalf("NewIndex over the store: %v", err)
	}
	if !ix.Has(7) || !ix.Has(max) || ix.Has(0xff00ff00ff00ff00) {
		t.Fatal("an Index built over the store does not hold exactly its fingerprints")
	}

	other := openEntries(t, open, t.TempDir())
	checkEntries(t, other.Entries, nil)
	putEntries(t, other.Entries, simhash.Entry{Fingerprint: 99, ID: 99})
	checkEntries(t, s.Entries, want)

	s.close(t)
	s = openEntries(t, open, dir)
	checkEntries(t, s.Entries, want)
}

func testEntriesConcurrent(t *testing.T, open EntryOpener) {
	s := openEntries(t, open, t.TempDir())
	const workers, perWorker = 4, 50
	var wg sync.WaitGroup
	errc := make(chan error, workers)
	var want []simhash.Entry
	for w := range workers {
		for i := range perWorker {
			want = append(want, simhash.Entry{Fingerprint: uint64(w)<<32 | uint64(i), ID: uint64(i)})
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perWorker {
				e := simhash.Entry{Fingerprint: uint64(w)<<32 | uint64(i), ID: uint64(i)}
				if err := s.Entries.Put([]simhash.Entry{e}); err != nil {
					errc <- fmt.Errorf("Put: %v", err)
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
	slices.SortFunc(want, compareEntries)
	checkEntries(t, s.Entries, want)
}

func testEntriesAfterClose(t *testing.T, open EntryOpener) {
	s := openEntries(t, open, t.TempDir())
	if s.Close == nil || s.ErrClosed == nil {
		t.Skip("the EntryStore has no Close or no ErrClosed")
	}
	putEntries(t, s.Entries, simhash.Entry{Fingerprint: 1, ID: 1})
	s.close(t)
	if err := s.Entries.Put([]simhash.Entry{{Fingerprint: 2, ID: 2}}); !errors.Is(err, s.ErrClosed) {
		t.Errorf("Put after Close: %v, want an error matching %v", err, s.ErrClosed)
	}
	if err := s.Entries.ForEach(func(simhash.Entry) error { return nil }); !errors.Is(err, s.ErrClosed) {
		t.Errorf("ForEach after Close: %v, want an error matching %v", err, s.ErrClosed)
	}
}
