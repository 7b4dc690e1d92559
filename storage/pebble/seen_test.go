package pebble

import (
	"errors"
	"path/filepath"
	"sync"
	"testing"

	"github.com/crawlkit/crawlkit/bloom"
)

func TestSeenStoreBehindBloom(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	db, err := Open(dir, Config{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	// A deliberately loose filter, so that many answers go to the store.
	opts := bloom.Config{Expected: 500, FalsePositiveRate: 0.3, Store: db.SeenStore()}
	set, err := bloom.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	const n = 3000
	var wg sync.WaitGroup
	fresh := make([]int, 2)
	for g := 0; g < 2; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			// Both goroutines add every key; exactly one must win each.
			for i := 0; i < n; i++ {
				seen, err := set.TestAndAddKey(uint64(i))
				if err != nil {
					t.Error(err)
					return
				}
				if !seen {
					fresh[g]++
				}
			}
		}(g)
	}
	wg.Wait()
	if fresh[0]+fresh[1] != n {
		t.Fatalf("%d + %d keys reported new, want exactly %d (no false positives, no double wins)", fresh[0], fresh[1], n)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	// Reopen: New rebuilds the filter from the store.
	db, err = Open(dir, Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	opts.Store = db.SeenStore()
	set, err = bloom.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	if set.Len() != n {
		t.Fatalf("rebuilt set counts %d keys, want %d", set.Len(), n)
	}
	for i := 0; i < n; i++ {
		if seen, err := set.TestAndAddKey(uint64(i)); err != nil || !seen {
			t.Fatalf("key %d after reopen: seen=%v err=%v", i, seen, err)
		}
	}
	for i := n; i < 2*n; i++ {
		if ok, err := set.ContainsKey(uint64(i)); err != nil || ok {
			t.Fatalf("key %d never added: contained=%v err=%v", i, ok, err)
		}
	}
}

func TestSeenStoreClosed(t *testing.T) {
	db, err := Open(filepath.Join(t.TempDir(), "db"), Config{})
	if err != nil {
		t.Fatal(err)
	}
	s := db.SeenStore()
	db.Close()
	if err := s.Add(1); !errors.Is(err, ErrClosed) {
		t.Fatalf("Add after Close: %v, want ErrClosed", err)
	}
	if _, err := s.Contains(1); !errors.Is(err, ErrClosed) {
		t.Fatalf("Contains after Close: %v, want ErrClosed", err)
	}
}

func TestSeenStoreBatchesSurviveReopen(t *testing.T) {
	dir := t.TempDir()
	db, err := Open(dir, Config{})
	if err != nil {
		t.Fatal(err)
	}
	keys := []uint64{1, 42, 1 << 63, 7}
	if err := db.SeenStore().AddBatch(keys[:2]); err != nil {
		t.Fatal(err)
	}
	// Lazy keys reach the disk with the next synced write, or at Close.
	if err := db.SeenStore().AddLazy(keys[2:]); err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if ok, err := db.SeenStore().Contains(k); err != nil || !ok {
			t.Errorf("key %d before Close: %v, %v", k, ok, err)
		}
	}
	if err := db.SeenStore().AddBatch(nil); err != nil {
		t.Fatalf("empty batch: %v", err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := db.SeenStore().AddBatch(keys); !errors.Is(err, ErrClosed) {
		t.Fatalf("AddBatch on a closed DB: %v, want ErrClosed", err)
	}
	if err := db.SeenStore().AddLazy(keys); !errors.Is(err, ErrClosed) {
		t.Fatalf("AddLazy on a closed DB: %v, want ErrClosed", err)
	}
	db, err = Open(dir, Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, k := range keys {
		if ok, err := db.SeenStore().Contains(k); err != nil || !ok {
			t.Errorf("key %d after reopen: %v, %v", k, ok, err)
		}
	}
	if ok, _ := db.SeenStore().Contains(8); ok {
		t.Error("key 8 was never added but is reported")
	}
}
