package pebble

import (
	"bytes"
	"errors"
	"log/slog"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	cpebble "github.com/cockroachdb/pebble"

	"github.com/crawlkit/crawlkit/simhash"
)

func TestFingerprintStoreReopen(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	db, err := Open(dir, Config{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	ix, err := simhash.NewIndex(simhash.Config{Store: db.FingerprintStore()})
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

	db, err = Open(dir, Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ix, err = simhash.NewIndex(simhash.Config{Store: db.FingerprintStore()})
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
	db, err := Open(filepath.Join(t.TempDir(), "db"), Config{})
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

// TestFingerprintVersionMismatch: a DB whose fingerprints were written
// with another simhash.Version (here a DB written before versions were
// recorded, which holds version 1) loses them at Open, store and tables
// alike, and says so; fingerprints of the current version survive a
// reopen.
func TestFingerprintVersionMismatch(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	fill := func() {
		db := openTemp(t, dir)
		if err := db.FingerprintStore().Put([]simhash.Entry{{Fingerprint: 7, ID: 1}}); err != nil {
			t.Fatal(err)
		}
		ix, err := simhash.NewIndex(simhash.Config{Tables: db.FingerprintTables()})
		if err != nil {
			t.Fatal(err)
		}
		if err := ix.Add(7, 1); err != nil {
			t.Fatal(err)
		}
		if err := db.NameStore().Put(1, "http://a.test/"); err != nil {
			t.Fatal(err)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}
	count := func(db *DB) (entries, rows int) {
		t.Helper()
		if err := db.FingerprintStore().ForEach(func(simhash.Entry) error { entries++; return nil }); err != nil {
			t.Fatal(err)
		}
		rows, err := db.FingerprintTables().Count()
		if err != nil {
			t.Fatal(err)
		}
		return entries, rows
	}

	fill()
	db := openTemp(t, dir)
	if v := db.DiscardedFingerprints(); v != 0 {
		t.Fatalf("a DB of this version: DiscardedFingerprints = %d", v)
	}
	if e, r := count(db); e != 1 || r != 1 {
		t.Fatalf("a DB of this version kept %d entries, %d table entries; want 1, 1", e, r)
	}
	// Make it a DB of version 1: no version record.
	if err := db.pdb.Delete(fingerprintVersionKey, cpebble.Sync); err != nil {
		t.Fatal(err)
	}
	db.Close()

	var logged bytes.Buffer
	db, err := Open(dir, Config{NoSync: true, Logger: slog.New(slog.NewTextHandler(&logged, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if v := db.DiscardedFingerprints(); v != 1 {
		t.Fatalf("DiscardedFingerprints = %d, want 1", v)
	}
	if !strings.Contains(logged.String(), "level=WARN") || !strings.Contains(logged.String(), "stored_version=1") {
		t.Fatalf("log: %q", logged.String())
	}
	if e, r := count(db); e != 0 || r != 0 {
		t.Fatalf("after discarding: %d entries, %d table entries", e, r)
	}
	// The index starts afresh on the emptied tables, with this version's
	// layout record, and the names (not fingerprints) stay.
	ix, err := simhash.NewIndex(simhash.Config{Tables: db.FingerprintTables()})
	if err != nil {
		t.Fatal(err)
	}
	if ix.Len() != 0 || ix.Has(7) {
		t.Fatal("an old fingerprint survived")
	}
	if name, ok, err := db.NameStore().Get(1); err != nil || !ok || name != "http://a.test/" {
		t.Fatalf("name store: %q %v %v", name, ok, err)
	}
	db.Close()

	// A version this build does not know (a newer one): discarded too.
	db = openTemp(t, dir)
	if err := db.pdb.Set(fingerprintVersionKey, []byte{0, 0, 0, 0, 0, 0, 0, 99}, cpebble.Sync); err != nil {
		t.Fatal(err)
	}
	db.Close()
	db = openTemp(t, dir)
	defer db.Close()
	if v := db.DiscardedFingerprints(); v != 99 {
		t.Fatalf("DiscardedFingerprints = %d, want 99", v)
	}
}
