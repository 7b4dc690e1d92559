package robotstest_test

import (
	"testing"

	"github.com/crawlkit/crawlkit/robots/robotstest"
)

func TestMemoryStore(t *testing.T) {
	robotstest.Run(t, memoryOpener())
}
