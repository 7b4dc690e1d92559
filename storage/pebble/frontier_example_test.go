package pebble_test

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/crawlkit/crawlkit/frontier"
	"github.com/crawlkit/crawlkit/storage/pebble"
)

// A durable frontier: what was added and not settled survives a restart.
func ExampleDB_Frontier() {
	dir, _ := os.MkdirTemp("", "crawl")
	defer os.RemoveAll(dir)
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

	db, _ := pebble.Open(filepath.Join(dir, "db"), pebble.Config{})
	f, _ := frontier.New(frontier.Config{Store: db.Frontier()})
	_ = f.AddAt(now, frontier.Entry{URL: "http://a.test/1"}, frontier.Entry{URL: "http://b.test/2"})
	l, _, _ := f.NextAt(now)
	_, _ = f.DoneAt(now, l, frontier.Success(0)) // durable when DoneAt returns
	f.Close()
	db.Close()

	db, _ = pebble.Open(filepath.Join(dir, "db"), pebble.Config{})
	defer db.Close()
	f, _ = frontier.New(frontier.Config{Store: db.Frontier()})
	defer f.Close()
	for {
		l, _, _ := f.NextAt(now)
		if l == nil {
			break
		}
		fmt.Println("still queued:", l.URL)
	}
	// Output:
	// still queued: http://b.test/2
}
