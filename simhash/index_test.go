package simhash

// The tests that compare an Index with a linear scan are in kit_test.go,
// through simhash/simhashtest.

import (
	"errors"
	"math/rand/v2"
	"testing"
)

type brokenStore struct{ MemoryStore }

var errBroken = errors.New("broken")

func (b *brokenStore) Put([]Entry) error { return errBroken }

func TestIndexStoreError(t *testing.T) {
	ix, _ := NewIndex(Config{Store: &brokenStore{}})
	if err := ix.Add(1, 1); !errors.Is(err, errBroken) {
		t.Fatalf("err = %v", err)
	}
	if ix.Len() != 0 {
		t.Fatal("entry added although the store failed")
	}
}

func TestIndexOptions(t *testing.T) {
	for _, o := range []Config{{K: 5}, {K: -1}, {K: 3, Blocks: 3}, {Blocks: 13}} {
		if _, err := NewIndex(o); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("NewIndex(%+v): err = %v", o, err)
		}
	}
	ix, _ := NewIndex(Config{})
	if ix.Tables() != 6 || ix.K() != 3 {
		t.Fatalf("default: %d tables, k=%d", ix.Tables(), ix.K())
	}
}

func TestIndexMemoryPerEntry(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	for _, n := range []int{1 << 16, 100_000, 1 << 17} {
		es := make([]Entry, n)
		for i := range es {
			es[i] = Entry{r.Uint64(), uint64(i)}
		}
		ix, _ := NewIndex(Config{})
		ix.AddBatch(es)
		st := ix.Stats()
		t.Logf("n=%d: %.1f bytes per entry", n, st.BytesPerEntry)
		if st.BytesPerEntry > 64 {
			t.Errorf("n=%d: %.1f bytes per entry, want ≤ 64", n, st.BytesPerEntry)
		}
	}
}

func TestMaxTables(t *testing.T) {
	for k := 1; k <= MaxK; k++ {
		for b := k + 1; b <= maxBlocks; b++ {
			sc, err := newScheme(k, b)
			if err != nil {
				t.Fatalf("k=%d blocks=%d: %v", k, b, err)
			}
			if len(sc.tables) > maxTables {
				t.Fatalf("k=%d blocks=%d: %d tables > maxTables", k, b, len(sc.tables))
			}
		}
	}
}

func TestIndexHas(t *testing.T) {
	ix, _ := NewIndex(Config{})
	ix.Add(0xff00ff00ff00ff00, 1)
	if !ix.Has(0xff00ff00ff00ff07) || ix.Has(0xff00ff00ff00ff0f) {
		t.Fatal("Has disagrees with distance 3 / 4")
	}
}
