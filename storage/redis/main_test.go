package redis

import (
	"context"
	"flag"
	"fmt"
	"os"
	"testing"
	"time"
)

// TestMain leaves the runnable examples out when no server answers and
// CI=true is not set: the tests skip themselves with a message then, but an
// Example cannot, and would fail the package on a machine without Redis.
// Under CI=true everything runs, and fails without the server.
func TestMain(m *testing.M) {
	flag.Parse()
	if run := flag.Lookup("test.run"); os.Getenv("CI") != "true" && run != nil && run.Value.String() == "" {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		db, err := Open(ctx, Options{Addr: testAddr(), PoolSize: 1})
		cancel()
		if err != nil {
			fmt.Printf("Redis at %s unavailable (%v): skipping the runnable examples (set CRAWLKIT_REDIS_ADDR)\n", testAddr(), err)
			flag.Set("test.run", "^(Test|Fuzz)")
		} else {
			db.Close()
		}
	}
	os.Exit(m.Run())
}
