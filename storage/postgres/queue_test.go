package postgres

import (
	"testing"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/queuetest"
	"github.com/crawlkit/crawlkit/storage/internal/backendtest"
)

func TestQueueConformance(t *testing.T) {
	requireServer(t)
	openDB := dirOpener(t)
	queuetest.Run(t, func(t *testing.T, dir string, cfg queuetest.Config) crawlkit.Queue {
		// A handle stands for a process: it has a DB of its own on the crawl.
		db := openDB(t, dir)
		t.Cleanup(db.Close)
		q, err := db.Queue(backendtest.QueueConfig(cfg))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { q.Close() })
		return q
	})
}
