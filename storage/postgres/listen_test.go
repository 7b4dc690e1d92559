package postgres

import (
	"context"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/frontier"
)

// waitUntil polls cond until it holds, failing the test after a minute.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// twoProcesses opens a second DB (its own pool, as another process would)
// on db's schema.
func twoProcesses(t *testing.T, db *DB) *DB {
	t.Helper()
	other, err := Open(context.Background(), testURL(), Options{Schema: db.Schema(), MaxConns: 2})
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

// nextAfterOtherAdd starts waiter.Next, waits until it sleeps with its
// listener listening (listens LISTENs made so far), adds a URL through
// adder and returns what Next returned. Waiter's PollInterval is an hour,
// so only a notification can end the wait before the test's deadline.
func nextAfterOtherAdd(t *testing.T, waiter, adder *Queue, listens int64, url string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	type result struct {
		l   *frontier.Lease
		err error
	}
	got := make(chan result, 1)
	go func() {
		l, err := waiter.Next(ctx)
		got <- result{l, err}
	}()
	waitUntil(t, "the waiting Next sleeps and the listener listens", func() bool {
		return waiter.listens.Load() >= listens && waiter.idle.Sleeping() == 1
	})
	if err := adder.Add(frontier.Entry{URL: url}); err != nil {
		t.Fatal(err)
	}
	r := <-got
	if r.err != nil {
		t.Fatalf("Next after another process's Add: %v (the notification did not wake it)", r.err)
	}
	if r.l.URL != url {
		t.Fatalf("Next leased %s, want %s", r.l.URL, url)
	}
	if err := waiter.Done(r.l, frontier.Outcome{Kind: frontier.OutcomeSuccess}); err != nil {
		t.Fatal(err)
	}
}

func TestListenerWakesForOtherProcessAdds(t *testing.T) {
	db := openTestDB(t)
	other := twoProcesses(t, db)
	waiter, err := db.Queue(QueueOptions{PollInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	adder, err := other.Queue(QueueOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer adder.Close()
	nextAfterOtherAdd(t, waiter, adder, 1, "https://a.example/1")

	// The listener reconnects after losing its connection.
	if _, err := other.Pool().Exec(context.Background(),
		`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1`,
		listenApplication(db.Schema())); err != nil {
		t.Fatal(err)
	}
	nextAfterOtherAdd(t, waiter, adder, 2, "https://b.example/1")

	// Close ends the listener and its session.
	if err := waiter.Close(); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the listener's session ends", func() bool { return listenerBackends(t, other) == 0 })
}

func TestNoListen(t *testing.T) {
	db := openTestDB(t)
	q, err := db.Queue(QueueOptions{NoListen: true, PollInterval: time.Millisecond})
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
	if q.listenDone != nil || listenerBackends(t, db) != 0 {
		t.Fatal("a listener runs with NoListen set")
	}
}

func TestCloseDBEndsListener(t *testing.T) {
	db := openTestDB(t)
	other := twoProcesses(t, db)
	q, err := db.Queue(QueueOptions{PollInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := q.Next(context.Background())
		done <- err
	}()
	waitUntil(t, "the listener listens", func() bool { return q.listens.Load() == 1 && q.idle.Sleeping() == 1 })
	db.Close()
	if err := <-done; err != frontier.ErrClosed {
		t.Fatalf("Next after DB.Close: %v, want frontier.ErrClosed", err)
	}
	q.Close() // returns once the listener has
	waitUntil(t, "the listener's session ends", func() bool { return listenerBackends(t, other) == 0 })
}
