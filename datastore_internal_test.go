package crawlkit

import (
	"errors"
	"testing"
)

// TestDataDirWithoutStore checks that a DataDir in a program that links no
// DataStore is refused by New with an error that says what to import,
// rather than crawling in memory and forgetting everything at exit.
func TestDataDirWithoutStore(t *testing.T) {
	saved := registeredDataDir()
	RegisterDataDir(nil)
	t.Cleanup(func() { RegisterDataDir(saved) })

	_, err := New(Config{UserAgent: "crawlkit-test", Seeds: []string{"http://a.test/"}, DataDir: t.TempDir()})
	if !errors.Is(err, ErrNoDataStore) || !errors.Is(err, ErrConfig) {
		t.Fatalf("New = %v, want ErrConfig and ErrNoDataStore", err)
	}
}
