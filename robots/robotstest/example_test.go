package robotstest_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/crawlkit/crawlkit/internal/kitrun"
	"github.com/crawlkit/crawlkit/robots"
	"github.com/crawlkit/crawlkit/robots/robotstest"
)

// memoryOpener is an Opener for robots.MemoryStore: the dir names the
// store, and opening it again returns the same one, so the kit's reopen
// checks find the records written before. A store on disk or on a server
// opens dir (or a table or key prefix named after it) instead, and sets
// Store.Close and Store.ErrClosed.
func memoryOpener() robotstest.Opener {
	var mu sync.Mutex
	stores := map[string]*robots.MemoryStore{}
	return func(t *testing.T, dir string) robotstest.Store {
		mu.Lock()
		defer mu.Unlock()
		if stores[dir] == nil {
			stores[dir] = robots.NewMemoryStore(0)
		}
		return robotstest.Store{Records: stores[dir]}
	}
}

// The kit run against robots.MemoryStore. In a store's own tests:
//
//	func TestRobotsStore(t *testing.T) { robotstest.Run(t, open) }
func ExampleRun() {
	passed := kitrun.Run("ExampleRun", func(t *testing.T) {
		robotstest.Run(t, memoryOpener())
	})
	fmt.Println("robots.MemoryStore passes:", passed)
	// Output:
	// robots.MemoryStore passes: true
}
