package postgres

import (
	"context"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/frontier"
	"github.com/crawlkit/crawlkit/storage/internal/backendtest"
)

// twoProcesses opens a second DB (its own pool, as another process would)
// on db's schema.
func twoProcesses(t *testing.T, db *DB) *DB {
	t.Helper()
	other, err := Open(context.Background(), testURL(), Config{Schema: db.Schema(), MaxConns: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(other.Close)
	return other
}

// listenerBackends counts the server sessions of listeners on db's schema.
func listenerBackends(t *testing.T, db *DB) int {
	t.Helper()
	var n int
	err := db.Pool().QueryRow(context.Background(),
		`SELECT count(*) FROM pg_stat_activity WHERE application_name = $1`, listenApplication(db.Schema())).Scan(&n)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestListenerWakesForOtherProcessAdds(t *testing.T) {
	db := openTestDB(t)
	other := twoProcesses(t, db)
	waiter, err := db.Queue(QueueConfig{PollInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	adder, err := other.Queue(QueueConfig{})
	if err != nil {
		t.Fatal(err)
	}
	defer adder.Close()
	backendtest.WakesOnOtherAdd(t, waiter, adder, waiter.core.Gate(), 1, "https://a.example/1")

	// The listener reconnects after losing its connection.
	if _, err := other.Pool().Exec(context.Background(),
		`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1`,
		listenApplication(db.Schema())); err != nil {
		t.Fatal(err)
	}
	backendtest.WakesOnOtherAdd(t, waiter, adder, waiter.core.Gate(), 2, "https://b.example/1")

	// Close ends the listener and its session.
	if err := waiter.Close(); err != nil {
		t.Fatal(err)
	}
	backendtest.WaitUntil(t, "the listener's session ends", func() bool { return listenerBackends(t, other) == 0 })
}

func TestNoListen(t *testing.T) {
	db := openTestDB(t)
	q, err := db.Queue(QueueConfig{NoListen: true, PollInterval: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	if err := q.Add(frontier.Entry{URL: "https://a.example/"}); err != nil {
		t.Fatal(err)
	}
	if _, err := q.Next(context.Background()); err != nil {
		t.Fatal(err)
	}
	if q.core.ListenerStarted() || listenerBackends(t, db) != 0 {
		t.Fatal("a listener runs with NoListen set")
	}
}

func TestCloseDBEndsListener(t *testing.T) {
	db := openTestDB(t)
	other := twoProcesses(t, db)
	q, err := db.Queue(QueueConfig{PollInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	backendtest.ClosingEndsWait(t, q, q.core.Gate(), db.Close, func() bool { return listenerBackends(t, other) == 0 })
}
