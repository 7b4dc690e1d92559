package redis

import (
	"context"
	"sync"
	"testing"

	"github.com/crawlkit/crawlkit/bloom/bloomtest"
	"github.com/crawlkit/crawlkit/robots/robotstest"
	"github.com/crawlkit/crawlkit/simhash/simhashtest"
)

// dirOpener opens a DB on the crawl named after a kit's dir, and deletes
// the crawls it opened when t ends.
func dirOpener(t *testing.T) func(t *testing.T, dir string) *DB {
	requireServer(t)
	var mu sync.Mutex
	crawls := map[string]bool{}
	t.Cleanup(func() {
		for c := range crawls {
			dropCrawl(t, c)
		}
	})
	return func(t *testing.T, dir string) *DB {
		crawl := crawlFor(dir)
		mu.Lock()
		crawls[crawl] = true
		mu.Unlock()
		db, err := Open(context.Background(), Config{Addr: testAddr(), Crawl: crawl, PoolSize: 4})
		if err != nil {
			t.Fatal(err)
		}
		return db
	}
}

func TestSeenStoreKit(t *testing.T) {
	open := dirOpener(t)
	bloomtest.Run(t, func(t *testing.T, dir string) bloomtest.Store {
		db := open(t, dir)
		return bloomtest.Store{Keys: db.SeenStore(), Close: db.Close, ErrClosed: ErrClosed}
	})
}

func TestRobotsStoreKit(t *testing.T) {
	open := dirOpener(t)
	robotstest.Run(t, func(t *testing.T, dir string) robotstest.Store {
		db := open(t, dir)
		return robotstest.Store{Records: db.RobotsStore(), Close: db.Close, ErrClosed: ErrClosed}
	})
}

func TestFingerprintStoreKit(t *testing.T) {
	open := dirOpener(t)
	simhashtest.RunStore(t, func(t *testing.T, dir string) simhashtest.EntryStore {
		db := open(t, dir)
		return simhashtest.EntryStore{Entries: db.FingerprintStore(), Close: db.Close, ErrClosed: ErrClosed}
	})
}

func TestQueueAfterClose(t *testing.T) {
	db := openTestDB(t)
	db.Close()
	if _, err := db.Queue(QueueConfig{}); err != ErrClosed {
		t.Fatalf("Queue after Close: %v", err)
	}
}
