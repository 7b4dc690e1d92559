package pebble

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/crawlkit/crawlkit/frontier"
	"github.com/crawlkit/crawlkit/robots"
	"github.com/crawlkit/crawlkit/simhash"
	"github.com/crawlkit/crawlkit/storage/internal/backendtest"
)

// seedForClose gives every store of db something to read, and the seen set
// and the fingerprint store more than two ForEach chunks.
func seedForClose(t *testing.T, db *DB) {
	t.Helper()
	ctx := context.Background()
	keys := make([]uint64, 5*forEachChunk/2)
	entries := make([]simhash.Entry, len(keys))
	for i := range keys {
		keys[i] = uint64(i)
		entries[i] = simhash.Entry{Fingerprint: uint64(i), ID: uint64(i)}
	}
	if err := db.SeenStore().AddBatch(keys); err != nil {
		t.Fatal(err)
	}
	if err := db.FingerprintStore().Put(entries); err != nil {
		t.Fatal(err)
	}
	if _, err := db.FingerprintTables().PutRows([]simhash.Row{{Table: 0, Key: 1, Fingerprint: 1, ID: 1}}); err != nil {
		t.Fatal(err)
	}
	if err := db.RobotsStore().Put(ctx, "https://a.test", robots.Record{Status: 200, Body: []byte("User-agent: *\n")}); err != nil {
		t.Fatal(err)
	}
	if err := db.NameStore().Put(1, "https://a.test/"); err != nil {
		t.Fatal(err)
	}
	if err := db.Frontier().Write(ctx, []frontier.Mutation{{Key: []byte("a"), Value: []byte("1")}}); err != nil {
		t.Fatal(err)
	}
}

// TestCloseDuringUse closes DBs while goroutines call every operation of
// every store: each call must succeed or return ErrClosed, and every
// acknowledged Add must be in the DB when it is opened again.
func TestCloseDuringUse(t *testing.T) {
	ctx := context.Background()
	for round := range 5 {
		dir := filepath.Join(t.TempDir(), "db")
		db, err := Open(dir, Config{NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		seedForClose(t, db)
		seen, fps, tables := db.SeenStore(), db.FingerprintStore(), db.FingerprintTables()
		rs, names, fr := db.RobotsStore(), db.NameStore(), db.Frontier()
		var (
			mu    sync.Mutex
			next  uint64   = 1 << 32 // above the seeded keys
			added []uint64           // acknowledged Adds, under mu
		)
		ops := map[string]func(i int) error{
			"SeenStore.Contains": func(i int) error { _, err := seen.Contains(uint64(i)); return err },
			"SeenStore.Add": func(int) error {
				mu.Lock()
				k := next
				next++
				mu.Unlock()
				if err := seen.Add(k); err != nil {
					return err
				}
				mu.Lock()
				added = append(added, k)
				mu.Unlock()
				return nil
			},
			"SeenStore.AddBatch": func(i int) error { return seen.AddBatch([]uint64{uint64(i), uint64(i) + 1}) },
			"SeenStore.ForEach":  func(int) error { return seen.ForEach(func(uint64) error { return nil }) },
			"FingerprintStore.Put": func(i int) error {
				return fps.Put([]simhash.Entry{{Fingerprint: uint64(i), ID: uint64(i)}})
			},
			"FingerprintStore.ForEach": func(int) error { return fps.ForEach(func(simhash.Entry) error { return nil }) },
			"FingerprintTables.PutRows": func(i int) error {
				_, err := tables.PutRows([]simhash.Row{{Table: 0, Key: 1, Fingerprint: uint64(i), ID: uint64(i)}})
				return err
			},
			"FingerprintTables.ScanRows": func(int) error {
				return tables.ScanRows([]simhash.Probe{{Table: 0, Key: 1}}, func(int, uint64, uint64) bool { return true })
			},
			"FingerprintTables.Count": func(int) error { _, err := tables.Count(); return err },
			"RobotsStore.Get":         func(int) error { _, _, err := rs.Get(ctx, "https://a.test"); return err },
			"RobotsStore.Put": func(i int) error {
				return rs.Put(ctx, fmt.Sprintf("https://%d.test", i), robots.Record{Status: 404})
			},
			"NameStore.Put": func(i int) error { return names.Put(uint64(i), "https://a.test/") },
			"NameStore.Get": func(i int) error { _, _, err := names.Get(uint64(i)); return err },
			"FrontierStore.Write": func(i int) error {
				return fr.Write(ctx, []frontier.Mutation{{Key: fmt.Appendf(nil, "k%d", i), Value: []byte("v")}})
			},
			"FrontierStore.Scan": func(int) error { _, err := fr.Scan(ctx, nil, nil, 100); return err },
		}
		backendtest.CloseDuringUse(t, db.Close, ErrClosed, ops)
		if t.Failed() {
			t.Fatalf("round %d failed", round)
		}

		db, err = Open(dir, Config{})
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range added {
			if ok, err := db.SeenStore().Contains(k); err != nil || !ok {
				t.Fatalf("round %d: key %x, whose Add succeeded before Close, after reopening: %v, %v", round, k, ok, err)
			}
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestCloseInForEach closes the DB from within ForEach callbacks, which
// may also use the store: Close returns, the callbacks' later calls fail
// with ErrClosed, and the walk stops with ErrClosed.
func TestCloseInForEach(t *testing.T) {
	for _, c := range []struct {
		name string
		// walk walks the store with ForEach, calling for every key visit
		// and then another of the store's methods, which must succeed
		// while the DB is open (as visit reports) and fail with ErrClosed
		// after.
		walk func(db *DB, visit func() (open bool, err error)) error
	}{
		{"SeenStore", func(db *DB, visit func() (bool, error)) error {
			s := db.SeenStore()
			return s.ForEach(func(k uint64) error {
				open, err := visit()
				if err != nil {
					return err
				}
				ok, err := s.Contains(k)
				if open && (err != nil || !ok) || !open && !errors.Is(err, ErrClosed) {
					return fmt.Errorf("Contains(%d) inside ForEach, DB open %v: %v, %v", k, open, ok, err)
				}
				return nil
			})
		}},
		{"FingerprintStore", func(db *DB, visit func() (bool, error)) error {
			s := db.FingerprintStore()
			return s.ForEach(func(e simhash.Entry) error {
				open, err := visit()
				if err != nil {
					return err
				}
				err = s.Put([]simhash.Entry{e})
				if open && err != nil || !open && !errors.Is(err, ErrClosed) {
					return fmt.Errorf("Put(%v) inside ForEach, DB open %v: %v", e, open, err)
				}
				return nil
			})
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			db, err := Open(filepath.Join(t.TempDir(), "db"), Config{NoSync: true})
			if err != nil {
				t.Fatal(err)
			}
			seedForClose(t, db)
			calls := 0
			// The first key is visited with the DB open; Close is called
			// at the second.
			err = c.walk(db, func() (bool, error) {
				calls++
				if calls == 2 {
					if err := db.Close(); err != nil {
						return false, fmt.Errorf("Close inside ForEach: %w", err)
					}
				}
				return calls < 2, nil
			})
			if !errors.Is(err, ErrClosed) {
				t.Fatalf("ForEach closing the DB returned %v, want ErrClosed", err)
			}
			if calls < 2 || calls > forEachChunk {
				t.Fatalf("ForEach made %d calls, closing the DB at the second; want at most the %d keys it had read", calls, forEachChunk)
			}
		})
	}
}

// TestCloseWaitsForScanRows begins Close from within a ScanRows callback,
// which holds the DB: operations the callback makes then fail with
// ErrClosed instead of waiting for Close (which would deadlock), and Close
// ends only after the scan.
func TestCloseWaitsForScanRows(t *testing.T) {
	db, err := Open(filepath.Join(t.TempDir(), "db"), Config{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	seedForClose(t, db)
	tables := db.FingerprintTables()
	closed := make(chan error, 1)
	rows := 0
	err = tables.ScanRows([]simhash.Probe{{Table: 0, Key: 1}}, func(int, uint64, uint64) bool {
		rows++
		go func() { closed <- db.Close() }()
		// Count succeeds until Close has begun.
		for {
			_, err := tables.Count()
			if errors.Is(err, ErrClosed) {
				break
			}
			if err != nil {
				t.Errorf("Count inside ScanRows: %v", err)
				break
			}
			runtime.Gosched()
		}
		select {
		case err := <-closed:
			t.Errorf("Close returned (%v) while ScanRows' callback was running", err)
		default:
		}
		return false
	})
	if err != nil || rows != 1 {
		t.Fatalf("ScanRows: %d rows, %v; want 1 row and no error", rows, err)
	}
	if err := <-closed; err != nil {
		t.Fatalf("Close: %v", err)
	}
	if _, err := tables.Count(); !errors.Is(err, ErrClosed) {
		t.Fatalf("Count after Close: %v, want ErrClosed", err)
	}
}
