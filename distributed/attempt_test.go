package distributed

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/crawlkit/crawlkit/frontier"
)

// TestLeaseAttemptCountsRetries checks that a URL redelivered after a retry
// comes back in a lease whose Attempt counts the retries (the Crawler
// compares it with RobotsRetries and hands it to handlers as Page.Attempt),
// although the local frontier sees every delivery as a new entry.
func TestLeaseAttemptCountsRetries(t *testing.T) {
	cfg := Config{CrawlID: "attempt", AckWait: 30 * time.Second, RetryBase: 10 * time.Millisecond,
		RetryMax: 50 * time.Millisecond, MaxAttempts: 5}
	q, _ := oneURLNode(t, cfg)
	next := func() *frontier.Lease { return nextLease(t, q) }
	for want := range 3 {
		l := next()
		if l.Attempt != want {
			t.Fatalf("lease after %d retries: Attempt %d", want, l.Attempt)
		}
		before := time.Now()
		s, err := q.Done(l, frontier.Retry(0))
		if err != nil {
			t.Fatal(err)
		}
		if s.Kind != frontier.SettlementRetrying || s.Attempt != want+1 || s.At.Before(before.Add(cfg.RetryBase)) || s.At.After(time.Now().Add(cfg.RetryMax)) {
			t.Fatalf("retry %d: Done reports %+v, want retrying within RetryBase..RetryMax with attempt %d", want, s, want+1)
		}
	}
	l := next()
	if l.Attempt != 3 {
		t.Fatalf("lease after 3 retries: Attempt %d", l.Attempt)
	}
	s, err := q.Done(l, frontier.Success(0))
	if err != nil {
		t.Fatal(err)
	}
	if s != (frontier.Settlement{Kind: frontier.SettlementFinished, Attempt: 3}) {
		t.Errorf("success: Done reports %+v, want finished after 3 attempts", s)
	}
	if s := q.QueueStats(); s.Naked != 3 || s.Acked != 1 {
		t.Errorf("naked %d, acked %d; want 3, 1", s.Naked, s.Acked)
	}
}

// unansweredAck is a delivery whose acks get no answer, as during a
// consumer leader election.
type unansweredAck struct{ jetstream.Msg }

func (unansweredAck) DoubleAck(context.Context) error { return nats.ErrTimeout }

// TestAckFailedIsAckedAtRedelivery checks that a page whose ack got no
// answer is not fetched again when the server redelivers its message to
// the same acquisition: the redelivery is acknowledged (AckedLate) and no
// lease is handed out for it.
func TestAckFailedIsAckedAtRedelivery(t *testing.T) {
	q, p := oneURLNode(t, Config{CrawlID: "ackedlate", AckWait: time.Second})
	l := nextLease(t, q)
	q.mu.Lock()
	h := q.held[l.URL]
	h.msg = unansweredAck{h.msg}
	q.mu.Unlock()
	if _, err := q.Done(l, frontier.Success(0)); err != nil {
		t.Fatal(err)
	}
	if s := q.QueueStats(); s.Acked != 0 {
		t.Fatalf("acked %d after an unanswered ack, want 0", s.Acked)
	}
	waitFor(t, "the redelivery acknowledged", func() bool { return q.QueueStats().AckedLate == 1 })
	if s := q.QueueStats(); s.Acked != 1 {
		t.Errorf("acked %d, want 1 (the late ack)", s.Acked)
	}
	if l, _, err := q.NextAt(time.Now()); err != nil || l != nil {
		t.Errorf("after the late ack NextAt gave %v, %v; want no lease", l, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ci, err := p.consumer.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if ci.NumAckPending != 0 || ci.NumPending != 0 {
		t.Errorf("consumer: %d ack pending, %d pending; want 0, 0", ci.NumAckPending, ci.NumPending)
	}
}

// oneURLNode starts an embedded server and a one-partition node on it
// (cfg with NATSURL, NodeID, Partitions and a 1 s MemberTTL set here),
// queues http://a.test/x and acquires the partition until the test ends.
func oneURLNode(t *testing.T, cfg Config) (*Queue, *partition) {
	t.Helper()
	url := embeddedServer(t, cfg.CrawlID)
	cfg.NATSURL, cfg.NodeID, cfg.Partitions, cfg.MemberTTL = url, "n1", 1, time.Second
	cfg, err := cfg.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	n := newTestNode(t, url, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := n.q.Add(frontier.Entry{URL: "http://a.test/x", Host: "a.test"}); err != nil {
		t.Fatal(err)
	}
	if err := n.q.acquire(ctx, n.p); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.q.release(context.Background(), n.p) })
	return n.q, n.p
}

// nextLease waits for q to hand out a lease.
func nextLease(t *testing.T, q *Queue) *frontier.Lease {
	t.Helper()
	var l *frontier.Lease
	waitFor(t, "a lease", func() bool {
		var err error
		if l, _, err = q.NextAt(time.Now()); err != nil {
			t.Fatal(err)
		}
		return l != nil
	})
	return l
}
