package postgres

import (
	"context"
	"testing"

	"github.com/crawlkit/crawlkit/storage/internal/storetest"
)

// TestQueueClosedError checks that a closed Queue's error is both this
// package's ErrClosed and frontier.ErrClosed.
func TestQueueClosedError(t *testing.T) {
	db := openTestDB(t)
	q, err := db.Queue(QueueOptions{})
	if err != nil {
		t.Fatal(err)
	}
	q.Close()
	_, err = q.Next(context.Background())
	storetest.ClosedError(t, err, ErrClosed, ErrUnavailable)
}
