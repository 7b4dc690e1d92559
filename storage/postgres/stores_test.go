package postgres

import (
	"testing"

	"github.com/crawlkit/crawlkit/storage/internal/storetest"
)

func TestStores(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Backend {
		db := openTestDB(t)
		return storetest.Backend{Seen: db.SeenStore(), Fingerprints: db.FingerprintStore(), Robots: db.RobotsStore(),
			Close: func() error { db.Close(); return nil }, ErrClosed: ErrClosed}
	})
}

func TestQueueAfterClose(t *testing.T) {
	db := openTestDB(t)
	db.Close()
	if _, err := db.Queue(QueueOptions{}); err != ErrClosed {
		t.Fatalf("Queue after Close: %v", err)
	}
}
