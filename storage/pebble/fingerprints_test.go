package pebble

import (
	"errors"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/crawlkit/crawlkit/simhash"
)

func TestFingerprintStoreReopen(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	db, err := Open(dir, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	ix, err := simhash.NewIndex(simhash.Options{Store: db.FingerprintStore()})
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	fps := make([]uint64, 1000)
	for i := range fps {
		fps[i] = r.Uint64()
		if err := ix.Add(fps[i], uint64(i)); err != nil {
			t.Fatal(err)
		}
	}
	batch := []simhash.Entry{{Fingerprint: fps[0] ^ 1, ID: 5000}, {Fingerprint: fps[1] ^ 6, ID: 5001}}
	if err := ix.AddBatch(batch); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	db, err = Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ix, err = simhash.NewIndex(simhash.Options{Store: db.FingerprintStore()})
	if err != nil {
		t.Fatal(err)
	}
	if ix.Len() != 1002 {
		t.Fatalf("reopened index holds %d entries, want 1002", ix.Len())
	}
	ids := map[uint64]int{}
	for _, m := range ix.Near(fps[0]) {
		ids[m.ID] = m.Distance
	}
	if d, ok := ids[0]; !ok || d != 0 {
		t.Fatalf("stored entry 0 not found exactly: %v", ids)
	}
	if d, ok := ids[5000]; !ok || d != 1 {
		t.Fatalf("batch entry not found at distance 1: %v", ids)
	}
}

func TestFingerprintStoreClosed(t *testing.T) {
	db, err := Open(filepath.Join(t.TempDir(), "db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := db.FingerprintStore()
	db.Close()
	if err := s.Put([]simhash.Entry{{Fingerprint: 1, ID: 1}}); !errors.Is(err, ErrClosed) {
		t.Fatalf("Put after Close: %v", err)
	}
	if err := s.ForEach(func(simhash.Entry) error { return nil }); !errors.Is(err, ErrClosed) {
		t.Fatalf("ForEach after Close: %v", err)
	}
}
