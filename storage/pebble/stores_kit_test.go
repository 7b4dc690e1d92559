package pebble

import (
	"path/filepath"
	"testing"

	"github.com/crawlkit/crawlkit/bloom/bloomtest"
	"github.com/crawlkit/crawlkit/robots/robotstest"
	"github.com/crawlkit/crawlkit/simhash/simhashtest"
)

func openDir(t *testing.T, dir string) *DB {
	t.Helper()
	db, err := Open(filepath.Join(dir, "db"), Config{})
	if err != nil {
		t.Fatal(err)
	}
	return db
}

func TestSeenStoreKit(t *testing.T) {
	bloomtest.Run(t, func(t *testing.T, dir string) bloomtest.Store {
		db := openDir(t, dir)
		return bloomtest.Store{Keys: db.SeenStore(), Close: db.Close, ErrClosed: ErrClosed}
	})
}

func TestRobotsStoreKit(t *testing.T) {
	robotstest.Run(t, func(t *testing.T, dir string) robotstest.Store {
		db := openDir(t, dir)
		return robotstest.Store{Records: db.RobotsStore(), Close: db.Close, ErrClosed: ErrClosed}
	})
}

func TestFingerprintStoreKit(t *testing.T) {
	simhashtest.RunStore(t, func(t *testing.T, dir string) simhashtest.EntryStore {
		db := openDir(t, dir)
		return simhashtest.EntryStore{Entries: db.FingerprintStore(), Close: db.Close, ErrClosed: ErrClosed}
	})
}
