package distributed

import (
	"log/slog"
	"testing"

	"github.com/nats-io/nats.go"
)

// TestUnansweredPublishIsForgotten checks that a publish whose ack never
// comes (its request lost with a stream leader that died while the node
// stayed connected to another server) is dropped by the node's JetStream
// context once Add's own wait has given it up. Otherwise the client keeps
// every unanswered publish for ever, and once PublishAsyncMaxPending (4 000)
// of them have piled up, every later publish stalls and fails: the node can
// add no link any more.
func TestUnansweredPublishIsForgotten(t *testing.T) {
	url := embeddedServer(t, "publish")
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := newJetStream(nc)
	if err != nil {
		t.Fatal(err)
	}
	// A subscriber that never answers stands for the dead leader: the
	// request reaches someone (so no "no responders" error comes back),
	// and no ack ever does.
	if _, err := nc.SubscribeSync("crawl.silent.p.>"); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	q := &Queue{js: js, log: slog.New(slog.DiscardHandler)}
	failed, err := q.publish([]*nats.Msg{nats.NewMsg("crawl.silent.p.0")})
	if len(failed) != 1 || err == nil {
		t.Fatalf("publish with no ack: %d failed, err %v; want 1 and an error", len(failed), err)
	}
	waitFor(t, "the unanswered publish to be dropped", func() bool { return js.PublishAsyncPending() == 0 })
}
