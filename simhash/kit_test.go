package simhash_test

// The tests of this file compare an Index with a linear scan through the
// helpers of simhash/simhashtest, which imports simhash and so can only be
// used from this external test package. Tests that need simhash's
// internals stay in index_test.go and tables_test.go.

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/crawlkit/crawlkit/simhash"
	"github.com/crawlkit/crawlkit/simhash/simhashtest"
)

// TestMemoryTablesKit runs the TableStore conformance kit against
// MemoryTables. A MemoryTables lives as long as the value, so the opener
// returns the same one for the same dir: that is how the kit's reopen
// checks see the rows again.
func TestMemoryTablesKit(t *testing.T) {
	var mu sync.Mutex
	stores := map[string]*simhash.MemoryTables{}
	simhashtest.Run(t, func(t *testing.T, dir string) simhashtest.Store {
		mu.Lock()
		defer mu.Unlock()
		if stores[dir] == nil {
			stores[dir] = &simhash.MemoryTables{}
		}
		return simhashtest.Store{Tables: stores[dir]}
	})
}

// TestIndexConcurrentReadsAndAdds runs CheckConcurrent on an Index in
// memory (the table store's case is the kit's IndexConcurrent).
func TestIndexConcurrentReadsAndAdds(t *testing.T) {
	ix, err := simhash.NewIndex(simhash.Config{})
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(9, 9))
	fps := make([]uint64, 3000)
	for i := range fps {
		fps[i] = r.Uint64()
	}
	simhashtest.CheckConcurrent(t, ix, fps)
}

func TestIndexMatchesLinearScan(t *testing.T) {
	for _, tc := range []struct{ k, blocks int }{
		{3, 0}, {3, 4}, {3, 5}, {3, 7}, {3, 8}, {2, 0}, {1, 0}, {4, 0}, {4, 5}, {4, 9},
	} {
		t.Run(fmt.Sprintf("k%d-b%d", tc.k, tc.blocks), func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(tc.k), uint64(tc.blocks)))
			ix, err := simhash.NewIndex(simhash.Config{K: tc.k, Blocks: tc.blocks})
			if err != nil {
				t.Fatal(err)
			}
			entries := simhashtest.AddClusters(t, ix, r, 300)
			simhashtest.CheckExact(t, ix, entries, r, 1000)
			if ix.Len() != len(entries) {
				t.Fatalf("Len %d, want %d", ix.Len(), len(entries))
			}
		})
	}
}

// TestIndexAdversarial uses fingerprints that share long runs of bits, so
// that buckets are large and many candidates sit just outside distance k,
// and differences concentrated in one block or spread over block
// boundaries.
func TestIndexAdversarial(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	entries, qs := simhashtest.Adversarial()
	ix, err := simhash.NewIndex(simhash.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if err := ix.AddBatch(entries); err != nil {
		t.Fatal(err)
	}
	simhashtest.CheckQueries(t, ix, entries, qs)
	simhashtest.CheckExact(t, ix, entries, r, 300)
}

func TestIndexStoreReload(t *testing.T) {
	store := &simhash.MemoryStore{}
	ix, err := simhash.NewIndex(simhash.Config{Store: store})
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(5, 5))
	var entries []simhash.Entry
	for i := 0; i < 2000; i++ {
		e := simhash.Entry{Fingerprint: r.Uint64(), ID: uint64(i)}
		entries = append(entries, e)
		if err := ix.Add(e.Fingerprint, e.ID); err != nil {
			t.Fatal(err)
		}
	}
	ix2, err := simhash.NewIndex(simhash.Config{Store: store})
	if err != nil {
		t.Fatal(err)
	}
	if ix2.Len() != len(entries) || ix2.Stats().Segments != 1 {
		t.Fatalf("reloaded: %+v", ix2.Stats())
	}
	simhashtest.CheckExact(t, ix2, entries, r, 300)
}

// TestMemoryStoreKit runs the simhash.Store conformance kit against
// MemoryStore, the same value for the same dir.
func TestMemoryStoreKit(t *testing.T) {
	simhashtest.RunStore(t, memoryEntryOpener())
}

func memoryEntryOpener() simhashtest.EntryOpener {
	var mu sync.Mutex
	stores := map[string]*simhash.MemoryStore{}
	return func(t *testing.T, dir string) simhashtest.EntryStore {
		mu.Lock()
		defer mu.Unlock()
		if stores[dir] == nil {
			stores[dir] = &simhash.MemoryStore{}
		}
		return simhashtest.EntryStore{Entries: stores[dir]}
	}
}
