package postgres

import (
	"context"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/storage/internal/storetest"
)

func TestMain(m *testing.M) {
	storetest.RunWithServer(m, "PostgreSQL", testURL(), "CRAWLKIT_POSTGRES_URL", func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		db, err := Open(ctx, testURL(), Options{Schema: "crawlkit_probe", MaxConns: 1})
		if err == nil {
			db.Close()
		}
		return err
	})
}
