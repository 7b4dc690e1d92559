package postgres

import (
	"testing"

	"github.com/crawlkit/crawlkit/storage/internal/backendtest"
)

func TestMain(m *testing.M) {
	backendtest.RunWithServer(m, "PostgreSQL", testURL(), "CRAWLKIT_POSTGRES_URL", probeServer)
}
