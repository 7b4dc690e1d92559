package simhash

import (
	"errors"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
)

func linearNear(entries []Entry, q uint64, k int) []Match {
	var out []Match
	for _, e := range entries {
		if d := Distance(e.Fingerprint, q); d <= k {
			out = append(out, Match{Entry: e, Distance: d})
		}
	}
	return out
}

func sortMatches(ms []Match) []Match {
	slices.SortFunc(ms, func(a, b Match) int {
		if a.Fingerprint != b.Fingerprint {
			if a.Fingerprint < b.Fingerprint {
				return -1
			}
			return 1
		}
		if a.ID < b.ID {
			return -1
		} else if a.ID > b.ID {
			return 1
		}
		return 0
	})
	return ms
}

// flipBits returns fp with d distinct random bits flipped.
func flipBits(r *rand.Rand, fp uint64, d int) uint64 {
	for _, i := range r.Perm(64)[:d] {
		fp ^= 1 << i
	}
	return fp
}

// checkExact compares Near with a linear scan for queries near stored
// fingerprints (at every distance up to k+1) and random ones.
func checkExact(t *testing.T, ix *Index, entries []Entry, r *rand.Rand, queries int) {
	t.Helper()
	k := ix.K()
	for qi := 0; qi < queries; qi++ {
		var q uint64
		switch qi % 3 {
		case 0:
			q = r.Uint64()
		default:
			q = flipBits(r, entries[r.IntN(len(entries))].Fingerprint, r.IntN(k+2))
		}
		got := sortMatches(ix.Near(q))
		want := sortMatches(linearNear(entries, q, k))
		if !slices.Equal(got, want) {
			t.Fatalf("query %016x (k=%d, %d tables): Near returned %d matches, linear scan %d\n got %v\nwant %v",
				q, k, ix.Tables(), len(got), len(want), got, want)
		}
	}
}

// addClusters adds clusters of near-duplicates around random centres
// (exact duplicates with different ids among them) to ix, one at a time
// and in batches so that the buffer and several segments are exercised,
// checking ix against a linear scan as it grows. It returns what it added.
func addClusters(t *testing.T, ix *Index, r *rand.Rand, k, clusters int) []Entry {
	t.Helper()
	var entries []Entry
	for c := 0; c < clusters; c++ {
		centre := r.Uint64()
		var batch []Entry
		for j := 0; j < 1+r.IntN(8); j++ {
			fp := flipBits(r, centre, r.IntN(k+3))
			if j == 1 {
				fp = centre
			}
			batch = append(batch, Entry{fp, uint64(len(entries) + len(batch))})
		}
		if c%2 == 0 {
			for _, e := range batch {
				if err := ix.Add(e.Fingerprint, e.ID); err != nil {
					t.Fatal(err)
				}
			}
		} else if err := ix.AddBatch(batch); err != nil {
			t.Fatal(err)
		}
		entries = append(entries, batch...)
		if c%50 == 0 {
			checkExact(t, ix, entries, r, 30)
		}
	}
	return entries
}

func TestIndexMatchesLinearScan(t *testing.T) {
	for _, tc := range []struct{ k, blocks int }{
		{3, 0}, {3, 4}, {3, 5}, {3, 7}, {3, 8}, {2, 0}, {1, 0}, {4, 0}, {4, 5}, {4, 9},
	} {
		t.Run(fmt.Sprintf("k%d-b%d", tc.k, tc.blocks), func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(tc.k), uint64(tc.blocks)))
			ix, err := NewIndex(Options{K: tc.k, Blocks: tc.blocks})
			if err != nil {
				t.Fatal(err)
			}
			entries := addClusters(t, ix, r, tc.k, 300)
			checkExact(t, ix, entries, r, 1000)
			if ix.Len() != len(entries) {
				t.Fatalf("Len %d, want %d", ix.Len(), len(entries))
			}
		})
	}
}

// adversarialData returns fingerprints that share long runs of bits (every
// fingerprint within 2 bits of one base, all of distance 4 and 5 in
// its top 16 bits), many identical fingerprints (one huge bucket in every
// table) and all-zero / all-one patterns, and queries that differ from them
// within one block or across block boundaries.
func adversarialData() (entries []Entry, queries []uint64) {
	const base = uint64(0xdeadbeefcafef00d)
	for i := 0; i < 64; i++ {
		for j := i; j < 64; j++ {
			entries = append(entries, Entry{base ^ 1<<i ^ 1<<j, uint64(len(entries))})
		}
	}
	for m := uint64(0); m < 1<<16; m++ {
		if c := bits.OnesCount64(m); c == 4 || c == 5 {
			entries = append(entries, Entry{base ^ m<<48, uint64(len(entries))})
		}
	}
	for i := 0; i < 3000; i++ {
		entries = append(entries, Entry{0, uint64(len(entries))})
	}
	entries = append(entries, Entry{^uint64(0), 1 << 40}, Entry{1, 1 << 41}, Entry{1 << 63, 1 << 42})
	queries = []uint64{base, 0, ^uint64(0), 1, 7, base ^ 0xf, base ^ 0xf<<30, base ^ 1<<63 ^ 1<<10 ^ 1<<40}
	for b := 0; b < 64; b += 5 {
		queries = append(queries, base^(0b111<<b), base^(0b1111<<b), 0b111<<b)
	}
	return entries, queries
}

// TestIndexAdversarial uses fingerprints that share long runs of bits, so
// that buckets are large and many candidates sit just outside distance k,
// and differences concentrated in one block or spread over block
// boundaries.
func TestIndexAdversarial(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	entries, qs := adversarialData()
	ix, err := NewIndex(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := ix.AddBatch(entries); err != nil {
		t.Fatal(err)
	}
	for _, q := range qs {
		got := sortMatches(ix.Near(q))
		want := sortMatches(linearNear(entries, q, 3))
		if !slices.Equal(got, want) {
			t.Fatalf("query %016x: Near %d matches, linear scan %d", q, len(got), len(want))
		}
	}
	checkExact(t, ix, entries, r, 300)
}

func TestIndexConcurrentReadsAndAdds(t *testing.T) {
	ix, err := NewIndex(Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(9, 9))
	fps := make([]uint64, 3000)
	for i := range fps {
		fps[i] = r.Uint64()
	}
	var wg sync.WaitGroup
	done := make(chan struct{})
	for g := 0; g < 3; g++ {
		wg.Add(1)
		r := rand.New(rand.NewPCG(uint64(g), 1)) // one source per reader
		go func() {
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				// Anything found must be a real match at its distance.
				for _, m := range ix.Near(fps[r.IntN(len(fps))]) {
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
	// Once Add has returned, the entry is visible.
	for i, fp := range fps {
		found := false
		for _, m := range ix.Near(fp) {
			if m.ID == uint64(i) && m.Distance == 0 {
				found = true
			}
		}
		if !found {
			t.Fatalf("entry %d not found after Add", i)
		}
	}
}

func TestIndexStoreReload(t *testing.T) {
	store := &MemoryStore{}
	ix, err := NewIndex(Options{Store: store})
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(5, 5))
	var entries []Entry
	for i := 0; i < 2000; i++ {
		e := Entry{r.Uint64(), uint64(i)}
		entries = append(entries, e)
		if err := ix.Add(e.Fingerprint, e.ID); err != nil {
			t.Fatal(err)
		}
	}
	ix2, err := NewIndex(Options{Store: store})
	if err != nil {
		t.Fatal(err)
	}
	if ix2.Len() != len(entries) || ix2.Stats().Segments != 1 {
		t.Fatalf("reloaded: %+v", ix2.Stats())
	}
	checkExact(t, ix2, entries, r, 300)
}

type brokenStore struct{ MemoryStore }

var errBroken = errors.New("broken")

func (b *brokenStore) Put([]Entry) error { return errBroken }

func TestIndexStoreError(t *testing.T) {
	ix, _ := NewIndex(Options{Store: &brokenStore{}})
	if err := ix.Add(1, 1); !errors.Is(err, errBroken) {
		t.Fatalf("err = %v", err)
	}
	if ix.Len() != 0 {
		t.Fatal("entry added although the store failed")
	}
}

func TestIndexOptions(t *testing.T) {
	for _, o := range []Options{{K: 5}, {K: -1}, {K: 3, Blocks: 3}, {Blocks: 13}} {
		if _, err := NewIndex(o); !errors.Is(err, ErrInvalidOptions) {
			t.Errorf("NewIndex(%+v): err = %v", o, err)
		}
	}
	ix, _ := NewIndex(Options{})
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
		ix, _ := NewIndex(Options{})
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
	ix, _ := NewIndex(Options{})
	ix.Add(0xff00ff00ff00ff00, 1)
	if !ix.Has(0xff00ff00ff00ff07) || ix.Has(0xff00ff00ff00ff0f) {
		t.Fatal("Has disagrees with distance 3 / 4")
	}
}
