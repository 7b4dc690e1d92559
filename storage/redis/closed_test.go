package redis

import (
	"context"
	"errors"
	"testing"

	"github.com/crawlkit/crawlkit/frontier"
)

// TestQueueClosedError checks that a closed Queue's error is both this
// package's ErrClosed, as DB.Close documents, and frontier.ErrClosed, as
// the Queue interface expects.
func TestQueueClosedError(t *testing.T) {
	db := openTestDB(t)
	q, err := db.Queue(QueueOptions{})
	if err != nil {
		t.Fatal(err)
	}
	q.Close()
	_, err = q.Next(context.Background())
	if !errors.Is(err, ErrClosed) || !errors.Is(err, frontier.ErrClosed) {
		t.Fatalf("Next after Close: %v; want ErrClosed matching frontier.ErrClosed", err)
	}
	if errors.Is(ErrUnavailable, ErrClosed) || errors.Is(frontier.ErrInvalidEntry, ErrClosed) {
		t.Fatal("ErrClosed matches unrelated errors")
	}
}
