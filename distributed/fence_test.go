package distributed

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/crawlkit/crawlkit/distributed/internal/natsd"
	"github.com/crawlkit/crawlkit/frontier"
)

// fakeClock is the nodes' clock in TestPinMoveFencesTheOldHolder: it moves
// only when the test says so.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// waitFor polls cond until it holds; it fails the test after a minute (a
// bound for a stuck test, not a timing assertion).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// embeddedServer starts a JetStream server in the test process, stopped
// when the test ends, and returns its client URL.
func embeddedServer(t *testing.T, name string) string {
	t.Helper()
	srv, err := natsd.Start(natsd.Config{Name: name, Port: -1, StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Shutdown(); srv.WaitForShutdown() })
	return srv.ClientURL()
}

// testNode is a Queue of its own NATS connection, as in one node process.
type testNode struct {
	q  *Queue
	p  *partition
	nc *nats.Conn
}

func newTestNode(t *testing.T, url string, cfg Config) *testNode {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	stream, consumers, _, err := setup(ctx, js, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	q, err := newQueue(cfg, js, stream, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.close() })
	q.parts[0].consumer = consumers[0]
	return &testNode{q: q, p: q.parts[0], nc: nc}
}

func (n *testNode) nheld() int {
	n.q.mu.Lock()
	defer n.q.mu.Unlock()
	return n.p.nheld
}

func (n *testNode) confirmed() bool {
	n.q.mu.Lock()
	defer n.q.mu.Unlock()
	return !n.p.confirmed.IsZero()
}

func (n *testNode) pin() string {
	n.q.mu.Lock()
	defer n.q.mu.Unlock()
	return n.p.pin
}

// TestPinMoveFencesTheOldHolder reproduces a membership flap on one
// partition: node A consumes it and holds its URLs in its local frontier,
// node B believes it owns the partition too and pulls, and the server moves
// the pin to B. A must stop handing out the URLs it holds as soon as it sees
// that the pin is not its own, and B must wait out the handover hold before
// its first lease.
func TestPinMoveFencesTheOldHolder(t *testing.T) {
	url := embeddedServer(t, "fence")
	clk := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	cfg, err := Config{NATSURL: url, NodeID: "a", CrawlID: "fence", Partitions: 1,
		MemberTTL: 2 * time.Second, AckWait: time.Minute, HandoverHold: 5 * time.Second, Now: clk.Now}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	a := newTestNode(t, url, cfg)
	b := newTestNode(t, url, cfg)
	ctx := context.Background()

	// A consumes the partition: a first delivery ever, so no hold; its
	// URLs are leased once its pin is confirmed.
	var urls []frontier.Entry
	for i := range 3 {
		urls = append(urls, frontier.Entry{URL: fmt.Sprintf("http://h%d.test/", i)})
	}
	if err := a.q.Add(urls...); err != nil {
		t.Fatal(err)
	}
	if err := a.q.acquire(ctx, a.p); err != nil {
		t.Fatal(err)
	}
	defer a.q.release(ctx, a.p)
	waitFor(t, "A to hold the partition's 3 URLs", func() bool { return a.nheld() == 3 })
	waitFor(t, "A's pin to be confirmed", a.confirmed)
	l, _, err := a.q.NextAt(clk.Now())
	if err != nil || l == nil {
		t.Fatalf("A, pin confirmed: lease %v, %v; want one", l, err)
	}
	if _, err := a.q.Done(l, frontier.Success(0)); err != nil {
		t.Fatal(err)
	}
	pinA := a.pin()

	// B acquires it too (a flap), and the pin moves to B: A's pulls are
	// late (its consume is stopped, and kept from being restarted), the
	// server unpins (as a pin timeout or a new consumer leader would), and
	// B's pull gets the next message.
	if err := b.q.acquire(ctx, b.p); err != nil {
		t.Fatal(err)
	}
	defer b.q.release(ctx, b.p)
	a.q.mu.Lock()
	cc := a.p.cc
	a.p.cc = nil
	a.q.mu.Unlock()
	cc.Stop()
	<-cc.Closed()
	if err := a.q.stream.UnpinConsumer(ctx, a.q.names.consumer(0), priorityGroup); err != nil {
		t.Fatal(err)
	}
	if err := a.q.Add(frontier.Entry{URL: "http://h9.test/"}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "B to be given the new URL", func() bool { return b.nheld() == 1 })
	if b.pin() == "" || b.pin() == pinA {
		t.Fatalf("B's pin %q, A's %q: want a new one", b.pin(), pinA)
	}

	// A's confirmation ages (a quarter of the fence TTL): its guard asks
	// again, sees B's pin, and fences A at once, with its 2 URLs held.
	clk.Add(cfg.fenceTTL() / 2)
	waitFor(t, "A to be fenced", func() bool { return !a.confirmed() })
	for range 2 {
		if l, _, err := a.q.NextAt(clk.Now()); err != nil || l != nil {
			t.Fatalf("A after the pin moved: lease %v, %v; want none", l, err)
		}
	}
	if a.nheld() != 2 || a.q.QueueStats().Fenced == 0 {
		t.Errorf("A holds %d URLs, fenced %d leases; want 2 held, some fenced", a.nheld(), a.q.QueueStats().Fenced)
	}

	// B holds the pin, confirmed, but waits FenceTTL + HandoverHold from
	// when it first saw it: A may have leased until its confirmation ran
	// out.
	waitFor(t, "B's pin to be confirmed", b.confirmed)
	b.q.mu.Lock()
	hold := b.p.fetchFrom.Sub(b.p.tenure)
	b.q.mu.Unlock()
	if want := cfg.fenceTTL() + cfg.HandoverHold; hold != want {
		t.Fatalf("B's hold %v, want %v", hold, want)
	}
	if l, _, err := b.q.NextAt(clk.Now()); err != nil || l != nil {
		t.Fatalf("B during its hold: lease %v, %v; want none", l, err)
	}
	clk.Add(hold)
	var lb *frontier.Lease
	waitFor(t, "B's first lease after the hold", func() bool {
		var err error
		// Time passes (staging the lease during the hold settled it
		// locally, so the local frontier waits its politeness delay).
		clk.Add(20 * time.Millisecond)
		if lb, _, err = b.q.NextAt(clk.Now()); err != nil {
			t.Fatal(err)
		}
		return lb != nil
	})
	if _, err := b.q.Done(lb, frontier.Success(0)); err != nil {
		t.Fatal(err)
	}
	// A, meanwhile, still may not lease (the pin is B's), and keeps its
	// messages until one of the two gives the partition up.
	if l, _, err := a.q.NextAt(clk.Now()); err != nil || l != nil || a.confirmed() || a.nheld() != 2 {
		t.Fatalf("A while B holds the pin: lease %v, %v, confirmed %v, %d held; want no lease, fenced, 2 held",
			l, err, a.confirmed(), a.nheld())
	}
}
