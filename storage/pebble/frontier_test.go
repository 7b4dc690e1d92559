package pebble

import (
	"path/filepath"
	"testing"

	"github.com/crawlkit/crawlkit/frontier"
	"github.com/crawlkit/crawlkit/frontier/frontiertest"
)

// ownedFrontierStore closes its DB with the store, so the conformance kit
// can close and reopen a directory.
type ownedFrontierStore struct {
	*FrontierStore
}

func (s ownedFrontierStore) Close() error { return s.db.Close() }

func openOwnedFrontier(t *testing.T, dir string) frontier.Store {
	t.Helper()
	db, err := Open(filepath.Join(dir, "db"), Config{})
	if err != nil {
		t.Fatal(err)
	}
	return ownedFrontierStore{db.Frontier()}
}

func TestFrontierStoreConformance(t *testing.T) {
	frontiertest.Run(t, openOwnedFrontier)
}
