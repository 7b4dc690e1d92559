package frontiertest_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/crawlkit/crawlkit/frontier"
	"github.com/crawlkit/crawlkit/frontier/frontiertest"
	"github.com/crawlkit/crawlkit/internal/kitrun"
)

// An Opener for a store that does not live in a directory: the dir names
// the store, and opening it again returns its earlier contents. Pass it to
// frontiertest.Run in a test.
func ExampleOpener() {
	var mu sync.Mutex
	stores := map[string]*frontier.MemoryStore{}
	var open frontiertest.Opener = func(t *testing.T, dir string) frontier.Store {
		mu.Lock()
		defer mu.Unlock()
		if s, ok := stores[dir]; ok {
			return s.Reopen()
		}
		s := frontier.NewMemoryStore()
		stores[dir] = s
		return s
	}
	// In a test: frontiertest.Run(t, open). Here, the reopen contract by hand:
	ctx := context.Background()
	s := open(nil, "crawl-1")
	_ = s.Write(ctx, []frontier.Mutation{{Key: []byte("k"), Value: []byte("v")}})
	_ = s.Close()
	kvs, _ := open(nil, "crawl-1").Scan(ctx, nil, nil, 10)
	fmt.Printf("%s=%s\n", kvs[0].Key, kvs[0].Value)
	kvs, _ = open(nil, "crawl-2").Scan(ctx, nil, nil, 10)
	fmt.Println(len(kvs))
	// Output:
	// k=v
	// 0
}

// memoryOpener opens a frontier.MemoryStore per dir; opening a dir again
// reopens its store with the contents written before.
func memoryOpener() frontiertest.Opener {
	var mu sync.Mutex
	stores := map[string]*frontier.MemoryStore{}
	return func(t *testing.T, dir string) frontier.Store {
		mu.Lock()
		defer mu.Unlock()
		if s, ok := stores[dir]; ok {
			return s.Reopen()
		}
		s := frontier.NewMemoryStore()
		stores[dir] = s
		return s
	}
}

// The kit run against frontier.MemoryStore. In a store's own tests:
//
//	func TestFrontierStore(t *testing.T) { frontiertest.Run(t, open) }
func ExampleRun() {
	passed := kitrun.Run("ExampleRun", func(t *testing.T) { frontiertest.Run(t, memoryOpener()) })
	fmt.Println("frontier.MemoryStore passes:", passed)
	// Output:
	// frontier.MemoryStore passes: true
}
