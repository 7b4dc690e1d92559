package postgres

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/frontier"
)

// TestAddRejectsUnstorableText adds, after more than a statement's worth of
// good entries, one whose URL or host PostgreSQL's text type cannot hold (a
// NUL byte, invalid UTF-8). The call must fail as a whole with
// ErrInvalidEntry before writing anything, as for any invalid entry, rather
// than commit the first statements and then fail with a server error that
// repeating the call cannot cure.
func TestAddRejectsUnstorableText(t *testing.T) {
	db := openTestDB(t)
	q, err := db.Queue(QueueConfig{NoListen: true})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	ctx := context.Background()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	good := make([]frontier.Entry, addChunk+1)
	for i := range good {
		good[i] = frontier.Entry{URL: fmt.Sprintf("https://good.test/%d", i)}
	}
	for _, bad := range []frontier.Entry{
		{URL: "https://bad.test/nul\x00"},
		{URL: "https://bad.test/\xff\xfe"},
		{URL: "https://bad.test/host", Host: "bad\x00.test"},
		{URL: "https://bad.test/host", Host: "bad\xff.test"},
	} {
		n, err := q.AddAt(ctx, now, append(good[:len(good):len(good)], bad)...)
		if !errors.Is(err, frontier.ErrInvalidEntry) || n != 0 {
			t.Errorf("AddAt with %q (host %q): %d added, %v; want 0 and ErrInvalidEntry", bad.URL, bad.Host, n, err)
		}
	}
	var rows int
	if err := db.Pool().QueryRow(ctx, "SELECT count(*) FROM urls").Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if rows != 0 {
		t.Fatalf("%d URLs written by calls that failed on an invalid entry", rows)
	}
}
