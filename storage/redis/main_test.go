package redis

import (
	"testing"

	"github.com/crawlkit/crawlkit/storage/internal/backendtest"
)

func TestMain(m *testing.M) {
	backendtest.RunWithServer(m, "Redis", testAddr(), "CRAWLKIT_REDIS_ADDR", probeServer)
}
