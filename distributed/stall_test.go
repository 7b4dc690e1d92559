package distributed

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/crawlkit/crawlkit/frontier"
)

// silentConsume is a consume that looks alive and pulls nothing: what a
// client is left with when its pull request died with a server and it did
// not notice.
type silentConsume struct{ closed chan struct{} }

func (c silentConsume) Stop()                   {}
func (c silentConsume) Drain()                  {}
func (c silentConsume) Closed() <-chan struct{} { return c.closed }

func TestStalledConsumeRestarted(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for the stall watch (about 10 s)")
	}
	url := embeddedServer(t, "stall")
	cfg, err := Config{NATSURL: url, NodeID: "n1", CrawlID: "stall", Partitions: 1,
		MemberTTL: time.Second, AckWait: 30 * time.Second}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	n := newTestNode(t, url, cfg)
	q, p := n.q, n.p
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := q.acquire(ctx, p); err != nil {
		t.Fatal(err)
	}
	defer q.release(context.Background(), p)

	// The consume stops pulling and still looks alive.
	q.mu.Lock()
	live := p.cc
	p.cc = silentConsume{closed: make(chan struct{})}
	q.mu.Unlock()
	live.Stop()
	<-live.Closed()

	var entries []frontier.Entry
	for i := range 3 {
		entries = append(entries, frontier.Entry{URL: fmt.Sprintf("http://a.test/%d", i), Host: "a.test"})
	}
	if err := q.Add(entries...); err != nil {
		t.Fatal(err)
	}
	// The guard finds messages pending, no pull request waiting and no
	// delivery for stallAfter, twice, and consumes again; the messages
	// arrive.
	waitFor(t, "the messages, after a restart", func() bool {
		q.mu.Lock()
		defer q.mu.Unlock()
		return len(q.held) == len(entries)
	})
	if r := q.counters.restarts.Load(); r != 1 {
		t.Errorf("%d restarts, want 1", r)
	}
}

// TestStalled checks the stall rule on consumer infos.
func TestStalled(t *testing.T) {
	ci := func(pending uint64, waiting, ackPending, maxAckPending int) *jetstream.ConsumerInfo {
		return &jetstream.ConsumerInfo{NumPending: pending, NumWaiting: waiting, NumAckPending: ackPending,
			Config: jetstream.ConsumerConfig{MaxAckPending: maxAckPending}}
	}
	for _, c := range []struct {
		name string
		ci   *jetstream.ConsumerInfo
		want bool
	}{
		{"pending, nobody pulling", ci(5, 0, 0, 100), true},
		{"pending, a pull waiting", ci(5, 1, 0, 100), false},
		{"nothing pending", ci(0, 0, 3, 100), false},
		{"ack pending at its limit: the server holds back", ci(5, 0, 100, 100), false},
		{"no ack pending limit", ci(5, 0, 100, -1), true},
	} {
		if got := stalled(c.ci); got != c.want {
			t.Errorf("%s: stalled %v, want %v", c.name, got, c.want)
		}
	}
}

// TestStallWatchWaitsForDeliveries checks that a message being handled
// (a delivery catching up through a slow replay holds the consume's
// callback, and the client pulls no more meanwhile) is not taken for a
// stalled consume.
func TestStallWatchWaitsForDeliveries(t *testing.T) {
	start := time.Unix(1_700_000_000, 0)
	now := start
	q := &Queue{cfg: Config{PullExpiry: time.Second}, fenceTTL: time.Second, now: func() time.Time { return now }}
	p := &partition{owned: true, gen: 1, lastDelivery: start, delivering: 1}
	stuck := &jetstream.ConsumerInfo{NumPending: 5, Config: jetstream.ConsumerConfig{MaxAckPending: 100}}

	now = start.Add(10 * q.stallAfter())
	if q.stallCheckDue(p, now) {
		t.Error("stall check due while a delivery is being handled")
	}
	q.noteStall(p, 1, now, stuck) // an answer asked for before the delivery began
	q.noteStall(p, 1, now, stuck)
	if p.stalls != 0 {
		t.Errorf("%d stalled answers counted while a delivery is being handled, want 0", p.stalls)
	}

	p.delivering = 0
	if !q.stallCheckDue(p, now) {
		t.Fatal("stall check not due once the partition is quiet")
	}
	q.noteStall(p, 1, now, stuck)
	if p.stalls != 1 {
		t.Errorf("%d stalled answers counted, want 1", p.stalls)
	}
}
