package postgres

import (
	"testing"

	"github.com/crawlkit/crawlkit/storage/internal/storetest"
)

func TestMain(m *testing.M) {
	storetest.RunWithServer(m, "PostgreSQL", testURL(), "CRAWLKIT_POSTGRES_URL", probeServer)
}
