package bloomtest_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/crawlkit/crawlkit/bloom"
	"github.com/crawlkit/crawlkit/bloom/bloomtest"
	"github.com/crawlkit/crawlkit/internal/kitrun"
)

// memoryOpener is an Opener for bloom.MemoryStore: the dir names the store,
// and opening it again returns the same one, so the kit's reopen checks
// find the keys added before. A store on disk or on a server opens dir (or
// a table or key prefix named after it) instead, and sets Store.Close and
// Store.ErrClosed.
func memoryOpener() bloomtest.Opener {
	var mu sync.Mutex
	stores := map[string]*bloom.MemoryStore{}
	return func(t *testing.T, dir string) bloomtest.Store {
		mu.Lock()
		defer mu.Unlock()
		if stores[dir] == nil {
			stores[dir] = bloom.NewMemoryStore()
		}
		return bloomtest.Store{Keys: stores[dir]}
	}
}

// The kit run against bloom.MemoryStore. In a store's own tests:
//
//	func TestSeenStore(t *testing.T) { bloomtest.Run(t, open) }
func ExampleRun() {
	passed := kitrun.Run("ExampleRun", func(t *testing.T) {
		bloomtest.Run(t, memoryOpener())
	})
	fmt.Println("bloom.MemoryStore passes:", passed)
	// Output:
	// bloom.MemoryStore passes: true
}
