package bloomtest_test

import (
	"testing"

	"github.com/crawlkit/crawlkit/bloom/bloomtest"
)

func TestMemoryStore(t *testing.T) {
	bloomtest.Run(t, memoryOpener())
}
