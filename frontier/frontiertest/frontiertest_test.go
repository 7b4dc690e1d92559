package frontiertest_test

import (
	"sync"
	"testing"

	"github.com/crawlkit/crawlkit/frontier"
	"github.com/crawlkit/crawlkit/frontier/frontiertest"
)

func TestMemoryStore(t *testing.T) {
	var mu sync.Mutex
	stores := map[string]*frontier.MemoryStore{}
	frontiertest.Run(t, func(t *testing.T, dir string) frontier.Store {
		mu.Lock()
		defer mu.Unlock()
		if s, ok := stores[dir]; ok {
			return s.Reopen()
		}
		s := frontier.NewMemoryStore()
		stores[dir] = s
		return s
	})
}
