package bloom_test

import (
	"testing"

	"github.com/crawlkit/crawlkit/bloom"
)

// batchStore counts the writes it receives.
type batchStore struct {
	*bloom.MemoryStore
	adds, batches int
}

func (b *batchStore) Add(k uint64) error { b.adds++; return b.MemoryStore.Add(k) }

func (b *batchStore) AddBatch(keys []uint64) error {
	b.batches++
	for _, k := range keys {
		if err := b.MemoryStore.Add(k); err != nil {
			return err
		}
	}
	return nil
}

// TestAddKeys checks that AddKeys records every key in the store and the
// filter, with one store write for a BatchStore.
func TestAddKeys(t *testing.T) {
	st := &batchStore{MemoryStore: bloom.NewMemoryStore()}
	set, err := bloom.New(bloom.Config{Expected: 1000, Store: st})
	if err != nil {
		t.Fatal(err)
	}
	keys := []uint64{11, 22, 33, 44, 55}
	if err := set.AddKeys(keys); err != nil {
		t.Fatal(err)
	}
	if st.batches != 1 || st.adds != 0 {
		t.Errorf("store got %d batches and %d single adds, want one batch", st.batches, st.adds)
	}
	for _, k := range keys {
		if ok, _ := st.Contains(k); !ok {
			t.Errorf("key %d not in the store", k)
		}
		if seen, err := set.TestAndAddKey(k); err != nil || !seen {
			t.Errorf("key %d not seen after AddKeys (%v)", k, err)
		}
	}
	if set.Len() != uint64(len(keys)) {
		t.Errorf("Len = %d, want %d", set.Len(), len(keys))
	}
	// Without a store the filter alone records them.
	plain, _ := bloom.New(bloom.Config{Expected: 1000})
	if err := plain.AddKeys(keys); err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if seen, _ := plain.ContainsKey(k); !seen {
			t.Errorf("key %d not in the filter", k)
		}
	}
}
