package postgres

import (
	"context"
	"sync"
	"testing"

	"github.com/crawlkit/crawlkit/bloom/bloomtest"
	"github.com/crawlkit/crawlkit/robots/robotstest"
	"github.com/crawlkit/crawlkit/simhash/simhashtest"
)

// dirOpener opens a DB on the schema named after a kit's dir, and drops
// the schemas it opened when t ends.
func dirOpener(t *testing.T) func(t *testing.T, dir string) *DB {
	requireServer(t)
	var mu sync.Mutex
	schemas := map[string]bool{}
	t.Cleanup(func() {
		for s := range schemas {
			dropSchema(t, s)
		}
	})
	return func(t *testing.T, dir string) *DB {
		schema := schemaFor(dir)
		mu.Lock()
		schemas[schema] = true
		mu.Unlock()
		db, err := Open(context.Background(), testURL(), Config{Schema: schema, MaxConns: 4})
		if err != nil {
			t.Fatal(err)
		}
		return db
	}
}

func closeDB(db *DB) func() error { return func() error { db.Close(); return nil } }

func TestSeenStoreKit(t *testing.T) {
	open := dirOpener(t)
	bloomtest.Run(t, func(t *testing.T, dir string) bloomtest.Store {
		db := open(t, dir)
		return bloomtest.Store{Keys: db.SeenStore(), Close: closeDB(db), ErrClosed: ErrClosed}
	})
}

func TestRobotsStoreKit(t *testing.T) {
	open := dirOpener(t)
	robotstest.Run(t, func(t *testing.T, dir string) robotstest.Store {
		db := open(t, dir)
		return robotstest.Store{Records: db.RobotsStore(), Close: closeDB(db), ErrClosed: ErrClosed}
	})
}

func TestFingerprintStoreKit(t *testing.T) {
	open := dirOpener(t)
	simhashtest.RunStore(t, func(t *testing.T, dir string) simhashtest.EntryStore {
		db := open(t, dir)
		return simhashtest.EntryStore{Entries: db.FingerprintStore(), Close: closeDB(db), ErrClosed: ErrClosed}
	})
}

func TestQueueAfterClose(t *testing.T) {
	db := openTestDB(t)
	db.Close()
	if _, err := db.Queue(QueueConfig{}); err != ErrClosed {
		t.Fatalf("Queue after Close: %v", err)
	}
}
