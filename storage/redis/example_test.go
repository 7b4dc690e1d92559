package redis_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/crawlkit/crawlkit/frontier"
	"github.com/crawlkit/crawlkit/storage/redis"
)

// Two workers (here two handles in one process; normally two processes)
// share one crawl: a URL added twice is queued once, and the second URL of
// a host waits for the host's politeness delay after the first settles.
func Example() {
	ctx := context.Background()
	db, err := redis.Open(ctx, redis.Config{Addr: os.Getenv("CRAWLKIT_REDIS_ADDR"), Crawl: "example"})
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	defer db.Drop(ctx)

	opts := redis.QueueConfig{Politeness: frontier.FixedDelay(time.Second)}
	w1, _ := db.Queue(opts)
	w2, _ := db.Queue(opts)
	defer w1.Close()
	defer w2.Close()

	now := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	a := frontier.Entry{URL: "http://example.test/a", Depth: 0}
	b := frontier.Entry{URL: "http://example.test/b", Depth: 1}
	n1, _ := w1.AddAt(ctx, now, a, b)
	n2, _ := w2.AddAt(ctx, now, a) // already queued by w1
	fmt.Println("added:", n1, n2)

	l, _, _ := w2.NextAt(now)
	fmt.Println("w2 leased:", l.URL)
	_, at, _ := w1.NextAt(now)
	fmt.Println("w1 waits until the lease settles or expires:", !at.IsZero())

	w2.DoneAt(ctx, now, l, frontier.Success(0))
	_, at, _ = w1.NextAt(now)
	fmt.Println("example.test ready again after:", at.Sub(now))
	l, _, _ = w1.NextAt(at)
	fmt.Println("w1 leased:", l.URL)
	// Output:
	// added: 2 0
	// w2 leased: http://example.test/a
	// w1 waits until the lease settles or expires: true
	// example.test ready again after: 1s
	// w1 leased: http://example.test/b
}
