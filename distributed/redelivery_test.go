package distributed

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/crawlkit/crawlkit/bloom"
	"github.com/crawlkit/crawlkit/frontier"
)

// slowAckMsg is a delivered message whose DoubleAck waits until release
// is closed (a consumer leader election), then succeeds.
type slowAckMsg struct {
	jetstream.Msg // nil: any other method panics
	release       chan struct{}
	acks          atomic.Int64
}

func (m *slowAckMsg) DoubleAck(ctx context.Context) error {
	m.acks.Add(1)
	select {
	case <-m.release:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// redeliveredMsg is a redelivery of stream sequence seq: what deliver
// reads of a message, and the acks and naks it gets.
type redeliveredMsg struct {
	jetstream.Msg
	seq        uint64
	body       []byte
	acks, naks atomic.Int64
}

func (m *redeliveredMsg) Metadata() (*jetstream.MsgMetadata, error) {
	return &jetstream.MsgMetadata{Sequence: jetstream.SequencePair{Stream: m.seq, Consumer: 9}, NumDelivered: 2}, nil
}
func (m *redeliveredMsg) Data() []byte                     { return m.body }
func (m *redeliveredMsg) Headers() nats.Header             { return nats.Header{pinHeader: {"A"}} }
func (m *redeliveredMsg) Ack() error                       { m.acks.Add(1); return nil }
func (m *redeliveredMsg) Nak() error                       { m.naks.Add(1); return nil }
func (m *redeliveredMsg) NakWithDelay(time.Duration) error { m.naks.Add(1); return nil }

// TestRedeliveryWhileSettlingIsNotFetchedAgain: a page is fetched and its
// ack waits (an election); meanwhile the server redelivers the message to
// the same node. The redelivery must not be queued as a URL to fetch: once
// the ack succeeds, it is acknowledged with it. (Server-kill runs fetched
// such pages twice: the held message was gone while Done acked it.)
func TestRedeliveryWhileSettlingIsNotFetchedAgain(t *testing.T) {
	const u = "http://a.test/x"
	first := &slowAckMsg{release: make(chan struct{})}
	q, l := stopQueue(t, first, u)
	p := q.parts[0]
	seen, err := bloom.New(bloom.Config{Expected: 4096, Store: bloom.NewMemoryStore()})
	if err != nil {
		t.Fatal(err)
	}
	p.seen, p.hw = seen, 7 // message 7 judged already: a redelivery of it is judged by p.open

	done := make(chan frontier.Settlement, 1)
	go func() {
		s, err := q.Done(l, frontier.Success(0))
		if err != nil {
			t.Error(err)
		}
		done <- s
	}()
	waitFor(t, "Done to send the ack", func() bool { return first.acks.Load() >= 1 })

	body, _ := json.Marshal(wireEntry{URL: u, Host: "a.test"})
	again := &redeliveredMsg{seq: 7, body: body}
	q.deliver(p, p.gen, again)
	q.mu.Lock()
	_, held := q.held[u]
	q.mu.Unlock()
	if held {
		t.Fatal("the redelivery of a message being settled was held again, to be fetched a second time")
	}
	if l2, _, _ := q.NextAt(q.now()); l2 != nil {
		t.Fatalf("the redelivery was queued again: lease of %s", l2.URL)
	}

	close(first.release)
	if s := <-done; s.Kind != frontier.SettlementFinished {
		t.Fatalf("Done reports %v, want finished", s.Kind)
	}
	if again.acks.Load() != 1 || again.naks.Load() != 0 {
		t.Errorf("the redelivered handle got %d acks and %d naks, want 1 ack", again.acks.Load(), again.naks.Load())
	}
	if n := q.QueueStats().RedeliveredWhileSettling; n != 1 {
		t.Errorf("RedeliveredWhileSettling = %d, want 1", n)
	}
	if len(q.settling) != 0 {
		t.Errorf("%d URLs still settling after Done", len(q.settling))
	}
}
