package simhashtest_test

import (
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/crawlkit/crawlkit/internal/kitrun"
	"github.com/crawlkit/crawlkit/simhash"
	"github.com/crawlkit/crawlkit/simhash/simhashtest"
)

// An Opener for a store that lives in process memory: the dir names the
// store, and opening it again returns the same one, so the kit's reopen
// checks find the rows written before. A store kept on disk or on a server
// opens dir (or a table or key prefix named after it) instead, and sets
// Store.Close, and Store.ErrClosed if its methods fail with a known error
// once closed. In a test, pass the Opener to simhashtest.Run:
//
//	func TestMyTables(t *testing.T) { simhashtest.Run(t, open) }
//
// Here the reopen contract is shown by hand, with an Index on the store.
func ExampleOpener() {
	var mu sync.Mutex
	stores := map[string]*simhash.MemoryTables{}
	var open simhashtest.Opener = func(t *testing.T, dir string) simhashtest.Store {
		mu.Lock()
		defer mu.Unlock()
		if stores[dir] == nil {
			stores[dir] = &simhash.MemoryTables{}
		}
		return simhashtest.Store{Tables: stores[dir]}
	}

	ix, _ := simhash.NewIndex(simhash.Config{Tables: open(nil, "crawl-1").Tables})
	_ = ix.AddBatch([]simhash.Entry{{Fingerprint: 0xf0f0, ID: 1}, {Fingerprint: 0xf0f0, ID: 1}})

	again, _ := simhash.NewIndex(simhash.Config{Tables: open(nil, "crawl-1").Tables})
	other, _ := simhash.NewIndex(simhash.Config{Tables: open(nil, "crawl-2").Tables})
	fmt.Println("crawl-1 reopened:", again.Len(), "entry")
	fmt.Println("crawl-2:", other.Len(), "entries")
	// Output:
	// crawl-1 reopened: 1 entry
	// crawl-2: 0 entries
}

// LinearNear is the answer an Index must give: here the stored entries
// within 2 bits of a query, compared with an Index's, in the same order
// after SortMatches. CheckExact and CheckQueries make this comparison in a
// test.
func ExampleLinearNear() {
	entries := []simhash.Entry{
		{Fingerprint: 0b1111_0000, ID: 1},
		{Fingerprint: 0b1111_0001, ID: 2},
		{Fingerprint: 0b1111_0111, ID: 3},
		{Fingerprint: 0b0000_1111, ID: 4},
	}
	const q = 0b1111_0000
	for _, m := range simhashtest.LinearNear(entries, q, 2) {
		fmt.Printf("id %d at distance %d\n", m.ID, m.Distance)
	}

	ix, _ := simhash.NewIndex(simhash.Config{K: 2, Tables: &simhash.MemoryTables{}})
	_ = ix.AddBatch(entries)
	got := simhashtest.SortMatches(ix.Near(q))
	fmt.Println("index agrees:", slices.Equal(got, simhashtest.LinearNear(entries, q, 2)))
	// Output:
	// id 1 at distance 0
	// id 2 at distance 1
	// index agrees: true
}

// The kits run against the stores in process memory: Run against
// simhash.MemoryTables, RunStore against simhash.MemoryStore, each opened
// as the same value for the same dir. In a store's own tests:
//
//	func TestTables(t *testing.T) { simhashtest.Run(t, open) }
func ExampleRun() {
	tables := kitrun.Run("ExampleRun", func(t *testing.T) {
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
	})
	entries := kitrun.Run("ExampleRun", func(t *testing.T) {
		var mu sync.Mutex
		stores := map[string]*simhash.MemoryStore{}
		simhashtest.RunStore(t, func(t *testing.T, dir string) simhashtest.EntryStore {
			mu.Lock()
			defer mu.Unlock()
			if stores[dir] == nil {
				stores[dir] = &simhash.MemoryStore{}
			}
			return simhashtest.EntryStore{Entries: stores[dir]}
		})
	})
	fmt.Println("simhash.MemoryTables passes Run:", tables)
	fmt.Println("simhash.MemoryStore passes RunStore:", entries)
	// Output:
	// simhash.MemoryTables passes Run: true
	// simhash.MemoryStore passes RunStore: true
}
