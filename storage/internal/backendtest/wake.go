package backendtest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/frontier"
	"github.com/crawlkit/crawlkit/storage/internal/idle"
)

// Queue is what the wake check needs of a shared queue handle.
type Queue interface {
	Add(entries ...frontier.Entry) error
	Next(ctx context.Context) (*frontier.Lease, error)
	Done(l *frontier.Lease, o frontier.Outcome) (frontier.Settlement, error)
}

// WaitUntil polls cond until it holds, failing the test after a minute.
func WaitUntil(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// listeningAndWaiting reports whether the Next started on gate sleeps there
// and gate's listener has (re)started listening at least listens times.
func listeningAndWaiting(gate *idle.Gate, listens int) func() bool {
	return func() bool { return gate.Listens() >= listens && gate.Sleeping() == 1 }
}

// WakesOnOtherAdd checks that a Next waiting in one process is woken by an
// Add in another: it starts waiter.Next, waits until the call sleeps at
// gate (waiter's) and waiter's listener has started listening listens times,
// adds url through adder and checks that Next leases it, then settles the
// lease. The waiter's poll interval should be far longer than the 30 s the
// check allows, so that only the listener can wake it in time.
func WakesOnOtherAdd(t testing.TB, waiter, adder Queue, gate *idle.Gate, listens int, url string) {
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
	WaitUntil(t, "the waiting Next sleeps and the listener listens", listeningAndWaiting(gate, listens))
	if err := adder.Add(frontier.Entry{URL: url}); err != nil {
		t.Fatal(err)
	}
	r := <-got
	if r.err != nil {
		t.Fatalf("Next after another process's Add: %v (the listener did not wake it)", r.err)
	}
	if r.l.URL != url {
		t.Fatalf("Next leased %s, want %s", r.l.URL, url)
	}
	if _, err := waiter.Done(r.l, frontier.Outcome{Kind: frontier.OutcomeSuccess}); err != nil {
		t.Fatal(err)
	}
}

// ClosingEndsWait checks that closing a queue's backend ends a Next waiting
// on q (at gate, q's) with frontier.ErrClosed, and that closing q then ends
// its listener: closeBackend closes the DB q came from, and gone reports
// that the listener's session has left the server.
func ClosingEndsWait(t testing.TB, q interface {
	Next(ctx context.Context) (*frontier.Lease, error)
	Close() error
}, gate *idle.Gate, closeBackend func(), gone func() bool) {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		_, err := q.Next(context.Background())
		done <- err
	}()
	WaitUntil(t, "the waiting Next sleeps and the listener listens", listeningAndWaiting(gate, 1))
	closeBackend()
	if err := <-done; !errors.Is(err, frontier.ErrClosed) {
		t.Fatalf("Next after the backend's Close: %v, want an error matching frontier.ErrClosed", err)
	}
	if err := q.Close(); err != nil { // returns once the listener has
		t.Fatal(err)
	}
	WaitUntil(t, "the listener's session ends", gone)
}
