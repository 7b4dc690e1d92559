package frontiertest_test

import (
	"testing"

	"github.com/crawlkit/crawlkit/frontier/frontiertest"
)

func TestMemoryStore(t *testing.T) {
	frontiertest.Run(t, memoryOpener())
}
