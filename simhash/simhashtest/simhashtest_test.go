package simhashtest_test

import (
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/crawlkit/crawlkit/simhash"
	"github.com/crawlkit/crawlkit/simhash/simhashtest"
)

// The kit runs against simhash.MemoryTables in simhash's own tests
// (simhash/kit_test.go) and against storage/pebble's FingerprintTables in
// that package's. These tests check the helpers.

func TestFlipBits(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	for d := 0; d <= 64; d++ {
		fp := r.Uint64()
		if got := bits.OnesCount64(simhashtest.FlipBits(r, fp, d) ^ fp); got != d {
			t.Fatalf("FlipBits(%d) flipped %d bits", d, got)
		}
	}
}

func TestLinearNear(t *testing.T) {
	entries := []simhash.Entry{{Fingerprint: 7, ID: 2}, {Fingerprint: 0, ID: 9}, {Fingerprint: 7, ID: 1}, {Fingerprint: 1 << 63, ID: 3}}
	got := simhashtest.LinearNear(entries, 3, 2)
	want := []simhash.Match{
		{Entry: simhash.Entry{Fingerprint: 0, ID: 9}, Distance: 2},
		{Entry: simhash.Entry{Fingerprint: 7, ID: 1}, Distance: 1},
		{Entry: simhash.Entry{Fingerprint: 7, ID: 2}, Distance: 1},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("LinearNear = %v, want %v", got, want)
	}
}

// distinctIDs fails if two entries share an id: CheckExact against an
// Index with a table store needs each pair once.
func distinctIDs(t *testing.T, name string, entries []simhash.Entry) {
	t.Helper()
	seen := map[uint64]bool{}
	for _, e := range entries {
		if seen[e.ID] {
			t.Fatalf("%s: id %d used twice", name, e.ID)
		}
		seen[e.ID] = true
	}
}

func TestClusters(t *testing.T) {
	const k = 3
	entries := simhashtest.Clusters(rand.New(rand.NewPCG(2, 2)), 200, k)
	distinctIDs(t, "Clusters", entries)
	for i, e := range entries {
		if e.ID != uint64(i) {
			t.Fatalf("entry %d has id %d", i, e.ID)
		}
	}
	// Exact duplicates with other ids, matches and near misses all occur.
	var dup, near, miss bool
	for i := 1; i < len(entries); i++ {
		switch d := bits.OnesCount64(entries[i].Fingerprint ^ entries[i-1].Fingerprint); {
		case d == 0:
			dup = true
		case d <= k:
			near = true
		case d <= 2*(k+2):
			miss = true
		}
	}
	if !dup || !near || !miss {
		t.Fatalf("duplicates %v, matches %v, near misses %v: want all", dup, near, miss)
	}
}

func TestAdversarial(t *testing.T) {
	entries, queries := simhashtest.Adversarial()
	distinctIDs(t, "Adversarial", entries)
	if len(entries) < 10_000 || len(queries) == 0 {
		t.Fatalf("%d entries, %d queries", len(entries), len(queries))
	}
}

func TestAddClusters(t *testing.T) {
	ix, err := simhash.NewIndex(simhash.Config{K: 2, Tables: &simhash.MemoryTables{}})
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(3, 3))
	entries := simhashtest.AddClusters(t, ix, r, 120)
	distinctIDs(t, "AddClusters", entries)
	if ix.Len() != len(entries) {
		t.Fatalf("Len %d, want %d", ix.Len(), len(entries))
	}
	simhashtest.CheckExact(t, ix, entries, r, 200)
}
