package simhash

// The checks that hold for every TableStore (against a linear scan, set
// semantics, reopening, concurrency) run against MemoryTables through the
// conformance kit, in kit_test.go (TestMemoryTablesKit). This file keeps
// the tests that need simhash's internals or only concern MemoryTables.

import (
	"errors"
	"math/rand/v2"
	"sync"
	"testing"
)

func TestTablesOptions(t *testing.T) {
	if _, err := NewIndex(Config{Store: &MemoryStore{}, Tables: &MemoryTables{}}); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("Store and Tables: err = %v", err)
	}
	store := &MemoryTables{}
	ix, err := NewIndex(Config{K: 3, Tables: store})
	if err != nil {
		t.Fatal(err)
	}
	// Reopening an empty store with other options is refused too: the
	// layout is recorded when the store is first opened.
	if _, err := NewIndex(Config{K: 2, Tables: store}); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("other K on an empty store: err = %v", err)
	}
	if err := ix.Add(1, 1); err != nil {
		t.Fatal(err)
	}
	for _, o := range []Config{{K: 4}, {K: 3, Blocks: 5}} {
		o.Tables = store
		if _, err := NewIndex(o); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("reopen with %+v: err = %v", o, err)
		}
	}
	if _, err := NewIndex(Config{K: 3, Blocks: 6, Tables: store}); err != nil {
		t.Fatalf("reopen with the defaults spelt out: %v", err)
	}
	// Entries without a layout record (not written by an Index).
	foreign := &MemoryTables{}
	foreign.PutRows([]Row{{Table: 0, Key: 1, Fingerprint: 1, ID: 1}})
	if _, err := NewIndex(Config{Tables: foreign}); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("store without layout: err = %v", err)
	}
	// A store written with fingerprints of another version: the layout
	// record of Version 1 had no version bits.
	old := &MemoryTables{}
	old.PutRows([]Row{{Table: layoutTable, Fingerprint: 3<<8 | 6, ID: layoutVersion}, {Table: 0, Key: 1, Fingerprint: 1, ID: 1}})
	var ve *VersionError
	if _, err := NewIndex(Config{Tables: old}); !errors.Is(err, ErrVersionMismatch) || !errors.As(err, &ve) || ve.Stored != 1 || ve.Current != Version {
		t.Fatalf("store of version 1: err = %v", err)
	}
	st := ix.Stats()
	if !st.External || st.Bytes != 0 || st.Len != 1 || st.Tables != 6 {
		t.Fatalf("Stats = %+v", st)
	}
	if _, err := store.PutRows([]Row{{Table: 256}}); err == nil {
		t.Fatal("MemoryTables accepted table 256")
	}
}

// failingTables fails the operations whose flag is set.
type failingTables struct {
	MemoryTables
	mu                    sync.Mutex
	failPut, failScan     bool
	failCount, failLayout bool
}

func (f *failingTables) PutRows(rows []Row) (int, error) {
	f.mu.Lock()
	fail := f.failPut || f.failLayout && rows[0].Table == layoutTable
	f.mu.Unlock()
	if fail {
		return 0, errBroken
	}
	return f.MemoryTables.PutRows(rows)
}

func (f *failingTables) ScanRows(probes []Probe, fn func(int, uint64, uint64) bool) error {
	f.mu.Lock()
	fail := f.failScan
	f.mu.Unlock()
	if fail {
		// Report what a store might have found before failing.
		if err := f.MemoryTables.ScanRows(probes[:1], fn); err != nil {
			return err
		}
		return errBroken
	}
	return f.MemoryTables.ScanRows(probes, fn)
}

func (f *failingTables) Count() (int, error) {
	if f.failCount {
		return 0, errBroken
	}
	return f.MemoryTables.Count()
}

func (f *failingTables) set(put, scan bool) {
	f.mu.Lock()
	f.failPut, f.failScan = put, scan
	f.mu.Unlock()
}

func TestTablesStoreErrors(t *testing.T) {
	for _, f := range []*failingTables{{failCount: true}, {failLayout: true}, {failScan: true}} {
		if _, err := NewIndex(Config{Tables: f}); !errors.Is(err, errBroken) {
			t.Errorf("NewIndex with %+v: err = %v", f, err)
		}
	}

	f := &failingTables{}
	ix, err := NewIndex(Config{Tables: f})
	if err != nil {
		t.Fatal(err)
	}
	if err := ix.Add(0xff, 1); err != nil {
		t.Fatal(err)
	}
	f.set(true, false)
	if err := ix.AddBatch([]Entry{{0xf0, 2}, {0xf1, 3}}); !errors.Is(err, errBroken) {
		t.Fatalf("AddBatch: err = %v", err)
	}
	if ix.Len() != 1 {
		t.Fatalf("Len %d after a failed AddBatch, want 1", ix.Len())
	}

	f.set(false, true)
	if ms, err := ix.AppendNearErr(nil, 0xff); !errors.Is(err, errBroken) || len(ms) != 1 {
		t.Fatalf("AppendNearErr = %v, %v; want the match found before the error and the error", ms, err)
	}
	if ms, err := ix.AppendNearErr(nil, 0xff<<40); !errors.Is(err, errBroken) || len(ms) != 0 {
		t.Fatalf("AppendNearErr = %v, %v", ms, err)
	}
	first := ix.Err()
	if !errors.Is(first, errBroken) {
		t.Fatalf("Err = %v", first)
	}
	if ix.Has(0xff << 40) {
		t.Fatal("Has reported a match that does not exist")
	}

	f.set(false, false)
	if ms, err := ix.AppendNearErr(nil, 0xff); err != nil || len(ms) != 1 {
		t.Fatalf("after recovery: %v, %v", ms, err)
	}
	if ix.Err() != first {
		t.Fatal("Err changed: it keeps the first error")
	}

	// Without a table store there is nothing to fail.
	mem, _ := NewIndex(Config{})
	if _, err := mem.AppendNearErr(nil, 1); err != nil || mem.Err() != nil {
		t.Fatalf("in memory: %v, %v", err, mem.Err())
	}
}

func BenchmarkTablesMemory(b *testing.B) {
	entries := randomEntries(100_000)
	ix, err := NewIndex(Config{Tables: &MemoryTables{}})
	if err != nil {
		b.Fatal(err)
	}
	if err := ix.AddBatch(entries); err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(7, 7))
	b.Run("near-miss", func(b *testing.B) {
		b.ReportAllocs()
		var dst []Match
		for b.Loop() {
			dst = ix.AppendNear(dst[:0], r.Uint64())
		}
	})
}
