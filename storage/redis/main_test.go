package redis

import (
	"context"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/storage/internal/storetest"
)

func TestMain(m *testing.M) {
	storetest.RunWithServer(m, "Redis", testAddr(), "CRAWLKIT_REDIS_ADDR", func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		db, err := Open(ctx, Options{Addr: testAddr(), PoolSize: 1})
		if err == nil {
			db.Close()
		}
		return err
	})
}
