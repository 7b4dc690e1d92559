package pebble

import (
	"path/filepath"
	"testing"

	"github.com/crawlkit/crawlkit/storage/internal/storetest"
)

func TestStoresKit(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Backend {
		db, err := Open(filepath.Join(t.TempDir(), "db"), Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return storetest.Backend{Seen: db.SeenStore(), Fingerprints: db.FingerprintStore(), Robots: db.RobotsStore(),
			Close: db.Close, ErrClosed: ErrClosed}
	})
}
