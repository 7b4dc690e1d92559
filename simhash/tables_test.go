package simhash

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
)

// TestTablesMatchLinearScan is TestIndexMatchesLinearScan with the tables
// in a TableStore: clusters of near-duplicates, exact duplicates with
// other ids and isolated fingerprints, added one at a time and in batches,
// for K=1..4 and several layouts.
func TestTablesMatchLinearScan(t *testing.T) {
	for _, tc := range []struct{ k, blocks int }{
		{1, 0}, {1, 2}, {1, 5}, {2, 0}, {2, 3}, {2, 8}, {3, 0}, {3, 4}, {3, 5}, {3, 7}, {3, 8},
		{4, 0}, {4, 5}, {4, 9}, {4, 12},
	} {
		t.Run(fmt.Sprintf("k%d-b%d", tc.k, tc.blocks), func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(tc.k), uint64(tc.blocks)+100))
			store := &MemoryTables{}
			ix, err := NewIndex(Options{K: tc.k, Blocks: tc.blocks, Tables: store})
			if err != nil {
				t.Fatal(err)
			}
			entries := addClusters(t, ix, r, tc.k, 200)
			checkExact(t, ix, entries, r, 1000)
			checkHas(t, ix, entries, r, 300)
			if ix.Len() != len(entries) {
				t.Fatalf("Len %d, want %d", ix.Len(), len(entries))
			}
			if err := ix.Err(); err != nil {
				t.Fatal(err)
			}

			// Reopened on the same store: same answers, same Len.
			ix2, err := NewIndex(Options{K: tc.k, Blocks: tc.blocks, Tables: store})
			if err != nil {
				t.Fatal(err)
			}
			if ix2.Len() != len(entries) {
				t.Fatalf("reopened: Len %d, want %d", ix2.Len(), len(entries))
			}
			checkExact(t, ix2, entries, r, 300)
		})
	}
}

// checkHas compares Has with a linear scan.
func checkHas(t *testing.T, ix *Index, entries []Entry, r *rand.Rand, queries int) {
	t.Helper()
	for qi := 0; qi < queries; qi++ {
		q := flipBits(r, entries[r.IntN(len(entries))].Fingerprint, r.IntN(ix.K()+2))
		if qi%2 == 0 {
			q = r.Uint64()
		}
		if got, want := ix.Has(q), len(linearNear(entries, q, ix.K())) > 0; got != want {
			t.Fatalf("Has(%016x) = %v, linear scan %v", q, got, want)
		}
	}
}

// TestTablesAdversarial is TestIndexAdversarial with a TableStore: long
// shared runs of bits, one huge bucket of identical fingerprints, and
// differences within one block or across block boundaries.
func TestTablesAdversarial(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	entries, qs := adversarialData()
	for _, k := range []int{3, 4} {
		ix, err := NewIndex(Options{K: k, Tables: &MemoryTables{}})
		if err != nil {
			t.Fatal(err)
		}
		if err := ix.AddBatch(entries); err != nil {
			t.Fatal(err)
		}
		for _, q := range qs {
			got := sortMatches(ix.Near(q))
			want := sortMatches(linearNear(entries, q, k))
			if !slices.Equal(got, want) {
				t.Fatalf("k=%d query %016x: Near %d matches, linear scan %d", k, q, len(got), len(want))
			}
		}
		checkExact(t, ix, entries, r, 300)
	}
}

// TestTablesSetSemantics: a pair stored twice is stored and reported once
// and counted once; the same fingerprint with another id is another entry.
func TestTablesSetSemantics(t *testing.T) {
	ix, err := NewIndex(Options{Tables: &MemoryTables{}})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		if err := ix.AddBatch([]Entry{{5, 1}, {5, 1}, {5, 2}}); err != nil {
			t.Fatal(err)
		}
	}
	if ix.Len() != 2 {
		t.Fatalf("Len %d, want 2", ix.Len())
	}
	got := sortMatches(ix.Near(4))
	want := []Match{{Entry{5, 1}, 1}, {Entry{5, 2}, 1}}
	if !slices.Equal(got, want) {
		t.Fatalf("Near = %v, want %v", got, want)
	}
}

func TestTablesOptions(t *testing.T) {
	if _, err := NewIndex(Options{Store: &MemoryStore{}, Tables: &MemoryTables{}}); !errors.Is(err, ErrInvalidOptions) {
		t.Fatalf("Store and Tables: err = %v", err)
	}
	store := &MemoryTables{}
	ix, err := NewIndex(Options{K: 3, Tables: store})
	if err != nil {
		t.Fatal(err)
	}
	// Reopening an empty store with other options is refused too: the
	// layout is recorded when the store is first opened.
	if _, err := NewIndex(Options{K: 2, Tables: store}); !errors.Is(err, ErrInvalidOptions) {
		t.Fatalf("other K on an empty store: err = %v", err)
	}
	if err := ix.Add(1, 1); err != nil {
		t.Fatal(err)
	}
	for _, o := range []Options{{K: 4}, {K: 3, Blocks: 5}} {
		o.Tables = store
		if _, err := NewIndex(o); !errors.Is(err, ErrInvalidOptions) {
			t.Errorf("reopen with %+v: err = %v", o, err)
		}
	}
	if _, err := NewIndex(Options{K: 3, Blocks: 6, Tables: store}); err != nil {
		t.Fatalf("reopen with the defaults spelt out: %v", err)
	}
	// Entries without a layout record (not written by an Index).
	foreign := &MemoryTables{}
	foreign.PutRows([]Row{{Table: 0, Key: 1, Fingerprint: 1, ID: 1}})
	if _, err := NewIndex(Options{Tables: foreign}); !errors.Is(err, ErrInvalidOptions) {
		t.Fatalf("store without layout: err = %v", err)
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
		if _, err := NewIndex(Options{Tables: f}); !errors.Is(err, errBroken) {
			t.Errorf("NewIndex with %+v: err = %v", f, err)
		}
	}

	f := &failingTables{}
	ix, err := NewIndex(Options{Tables: f})
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
	mem, _ := NewIndex(Options{})
	if _, err := mem.AppendNearErr(nil, 1); err != nil || mem.Err() != nil {
		t.Fatalf("in memory: %v, %v", err, mem.Err())
	}
}

func TestTablesConcurrentReadsAndAdds(t *testing.T) {
	ix, err := NewIndex(Options{Tables: &MemoryTables{}})
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(9, 10))
	fps := make([]uint64, 2000)
	for i := range fps {
		fps[i] = r.Uint64()
	}
	var wg sync.WaitGroup
	done := make(chan struct{})
	for g := 0; g < 3; g++ {
		wg.Add(1)
		r := rand.New(rand.NewPCG(uint64(g), 2))
		go func() {
			defer wg.Done()
			var dst []Match
			for {
				select {
				case <-done:
					return
				default:
				}
				var err error
				dst, err = ix.AppendNearErr(dst[:0], fps[r.IntN(len(fps))])
				if err != nil {
					t.Error(err)
					return
				}
				for _, m := range dst {
					if m.Distance > 3 || fps[m.ID] != m.Fingerprint {
						t.Errorf("bad match %+v", m)
						return
					}
				}
			}
		}()
	}
	for i, fp := range fps {
		if err := ix.Add(fp, uint64(i)); err != nil {
			t.Fatal(err)
		}
	}
	close(done)
	wg.Wait()
	for i, fp := range fps {
		if !slices.ContainsFunc(ix.Near(fp), func(m Match) bool { return m.ID == uint64(i) && m.Distance == 0 }) {
			t.Fatalf("entry %d not found after Add", i)
		}
	}
}

func BenchmarkTablesMemory(b *testing.B) {
	entries := randomEntries(100_000)
	ix, err := NewIndex(Options{Tables: &MemoryTables{}})
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
