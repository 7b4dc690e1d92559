package postgres

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/frontier"
)

// TestSettleRetryAfterRollback settles a lease a second time while another
// transaction holds the lease's host row, on connections at REPEATABLE
// READ: the first attempt of the settle fails with a serialization failure,
// which rolled it back, and the retry finds the lease settled by the first
// Done. That is the caller's double settle, not the retry's own success:
// it must fail with ErrLeaseSettled and not count a second success.
func TestSettleRetryAfterRollback(t *testing.T) {
	db := openTestDB(t)
	ctx := context.Background()
	rr, err := Open(ctx, testURL()+"&default_transaction_isolation=repeatable%20read",
		Config{Schema: db.Schema(), MaxConns: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer rr.Close()
	q, err := rr.Queue(QueueConfig{NoListen: true, Politeness: frontier.FixedDelay(0)})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	if _, err := q.AddAt(ctx, now, frontier.Entry{URL: "https://settle.test/a"}); err != nil {
		t.Fatal(err)
	}
	ls, _, err := q.LeaseAt(ctx, now, 1)
	if err != nil || len(ls) != 1 {
		t.Fatalf("LeaseAt: %v, %v", ls, err)
	}
	l := ls[0]
	success := frontier.Outcome{Kind: frontier.OutcomeSuccess}
	if _, err := q.DoneAt(ctx, now, l, success); err != nil {
		t.Fatal(err)
	}

	// Hold the host row, updated, so that the second settle waits for it
	// and then fails to serialize.
	tx, err := db.Pool().Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, "UPDATE hosts SET expiry_delay = expiry_delay WHERE host = $1", l.Host); err != nil {
		t.Fatal(err)
	}
	var holder int32
	if err := tx.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&holder); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := q.DoneAt(ctx, now, l, success); done <- err }()
	// Wait (polling, no timing assumption) until the settle waits for the
	// row lock.
	for deadline := time.Now().Add(20 * time.Second); ; {
		var waiting bool
		if err := db.Pool().QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE $1 = ANY (pg_blocking_pids(pid)))",
			holder).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if waiting {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("second settle returned before waiting for the host row: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("the second settle never waited for the host row")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !errors.Is(err, frontier.ErrLeaseSettled) {
		t.Fatalf("second settle of one lease: %v, want ErrLeaseSettled", err)
	}
	if s := q.Stats(); s.Succeeded != 1 {
		t.Fatalf("Succeeded = %d after one successful settle, want 1", s.Succeeded)
	}
}
