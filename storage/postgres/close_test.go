package postgres

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/simhash"
)

// deadlockGuard bounds a wait that only a deadlock makes long.
const deadlockGuard = 20 * time.Second

// foreachKeys is more than two ForEach chunks.
const foreachKeys = 5*forEachChunk/2 + 7

// TestForEachHoldsNoConnection walks the seen set and the fingerprints of a
// DB with a one-connection pool while fn uses the store: ForEach must not
// hold the pool's only connection while fn runs.
func TestForEachHoldsNoConnection(t *testing.T) {
	requireServer(t)
	db := openTestDB(t)
	one, err := Open(context.Background(), testURL(), Config{Schema: db.Schema(), MaxConns: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer one.Close()
	keys := make([]uint64, foreachKeys)
	entries := make([]simhash.Entry, foreachKeys)
	for i := range keys {
		keys[i] = uint64(i) * 0x9e3779b97f4a7c15 // both signs as bigint
		entries[i] = simhash.Entry{Fingerprint: keys[i], ID: uint64(i % 3)}
	}
	if err := one.SeenStore().AddBatch(keys); err != nil {
		t.Fatal(err)
	}
	if err := one.FingerprintStore().Put(entries); err != nil {
		t.Fatal(err)
	}

	seen := one.SeenStore()
	got := map[uint64]bool{}
	done := make(chan error, 1)
	go func() {
		done <- seen.ForEach(func(k uint64) error {
			if got[k] {
				t.Errorf("key %x visited twice", k)
			}
			got[k] = true
			if len(got)%forEachChunk == 1 {
				ok, err := seen.Contains(k)
				if err != nil || !ok {
					return errors.Join(errors.New("Contains in ForEach"), err)
				}
			}
			return nil
		})
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(deadlockGuard):
		t.Fatal("seen ForEach deadlocked with a store call in fn")
	}
	if len(got) != len(keys) {
		t.Fatalf("seen ForEach visited %d keys, want %d", len(got), len(keys))
	}

	fps := one.FingerprintStore()
	gotE := map[simhash.Entry]bool{}
	go func() {
		done <- fps.ForEach(func(e simhash.Entry) error {
			if gotE[e] {
				t.Errorf("entry %v visited twice", e)
			}
			gotE[e] = true
			if len(gotE)%forEachChunk == 1 {
				return fps.Put([]simhash.Entry{e})
			}
			return nil
		})
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(deadlockGuard):
		t.Fatal("fingerprint ForEach deadlocked with a store call in fn")
	}
	if len(gotE) != len(entries) {
		t.Fatalf("fingerprint ForEach visited %d entries, want %d", len(gotE), len(entries))
	}
}

// TestCloseInForEach closes the DB from within ForEach's fn: Close must not
// wait for the walk, and the walk must end with ErrClosed.
func TestCloseInForEach(t *testing.T) {
	requireServer(t)
	db := openTestDB(t)
	keys := make([]uint64, foreachKeys)
	entries := make([]simhash.Entry, foreachKeys)
	for i := range keys {
		keys[i] = uint64(i)
		entries[i] = simhash.Entry{Fingerprint: uint64(i), ID: 1}
	}
	if err := db.SeenStore().AddBatch(keys); err != nil {
		t.Fatal(err)
	}
	if err := db.FingerprintStore().Put(entries); err != nil {
		t.Fatal(err)
	}
	walks := map[string]func(*DB, func()) error{
		"seen": func(d *DB, fn func()) error {
			return d.SeenStore().ForEach(func(uint64) error { fn(); return nil })
		},
		"fingerprints": func(d *DB, fn func()) error {
			return d.FingerprintStore().ForEach(func(simhash.Entry) error { fn(); return nil })
		},
	}
	for name, walk := range walks {
		d, err := Open(context.Background(), testURL(), Config{Schema: db.Schema(), MaxConns: 2})
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- walk(d, d.Close) }()
		select {
		case err := <-done:
			if !errors.Is(err, ErrClosed) {
				t.Errorf("%s ForEach closed in fn: %v, want ErrClosed", name, err)
			}
		case <-time.After(deadlockGuard):
			t.Fatalf("%s: Close in ForEach's fn deadlocked", name)
		}
	}
}

func TestVersionAfterClose(t *testing.T) {
	db := openTestDB(t)
	db.Close()
	if _, err := db.Version(context.Background()); !errors.Is(err, ErrClosed) {
		t.Fatalf("Version after Close: %v, want ErrClosed", err)
	}
}
