package postgres

import (
	"context"
	"testing"

	"github.com/crawlkit/crawlkit/storage/internal/backendtest"
)

// TestQueueClosedError checks that a closed Queue's error is both this
// package's ErrClosed and frontier.ErrClosed.
func TestQueueClosedError(t *testing.T) {
	db := openTestDB(t)
	q, err := db.Queue(QueueConfig{})
	if err != nil {
		t.Fatal(err)
	}
	q.Close()
	_, err = q.Next(context.Background())
	backendtest.ClosedError(t, err, ErrClosed, ErrUnavailable)
}
