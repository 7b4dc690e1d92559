package redis

import (
	"testing"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/statetest"
)

func TestStateStoreConformance(t *testing.T) {
	open := dirOpener(t)
	statetest.Run(t, func(t *testing.T, dir string) crawlkit.StateStore {
		db := open(t, dir)
		t.Cleanup(func() { db.Close() })
		return db.StateStore()
	})
}
