package redis

import (
	"testing"

	"github.com/crawlkit/crawlkit/storage/internal/storetest"
)

func TestMain(m *testing.M) {
	storetest.RunWithServer(m, "Redis", testAddr(), "CRAWLKIT_REDIS_ADDR", probeServer)
}
