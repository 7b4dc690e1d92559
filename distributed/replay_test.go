package distributed

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/bloom"
	"github.com/crawlkit/crawlkit/frontier"
)

// replayQueue returns a Queue on a fresh embedded server with one
// partition holding n URLs.
func replayQueue(t *testing.T, n int) (*Queue, *partition) {
	t.Helper()
	url := embeddedServer(t, "replay")
	cfg, err := Config{NATSURL: url, NodeID: "n1", CrawlID: "replay", Partitions: 1}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	q := newTestNode(t, url, cfg).q
	for i := range n {
		if err := q.Add(frontier.Entry{URL: fmt.Sprintf("http://a.test/%d", i), Host: "a.test"}); err != nil {
			t.Fatal(err)
		}
	}
	p := q.parts[0]
	seen, err := bloom.New(bloom.Config{Expected: 4096, Store: bloom.NewMemoryStore()})
	if err != nil {
		t.Fatal(err)
	}
	p.seen, p.open = seen, map[uint64]struct{}{}
	return q, p
}

// TestReplayReadsThePartition checks a replay of the whole partition.
func TestReplayReadsThePartition(t *testing.T) {
	q, p := replayQueue(t, 5)
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := q.replay(context.Background(), p, 1, 6); err != nil {
		t.Fatal(err)
	}
	if p.hw != 5 || len(p.open) != 5 || p.seen.Len() != 5 {
		t.Fatalf("after the replay: hw %d, %d open, %d seen; want 5, 5, 5", p.hw, len(p.open), p.seen.Len())
	}
}

// TestReplayEndsWithItsContext checks that a replay waiting for a message
// returns when its context ends, not after the iterator's own wait.
func TestReplayEndsWithItsContext(t *testing.T) {
	q, p := replayQueue(t, 2)
	read2 := make(chan struct{})
	q.replayed = func(seq uint64) {
		if seq == 2 {
			close(read2)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		done <- q.replay(ctx, p, 1, 100) // waits for messages 3..99, which never come
	}()
	<-read2 // the replay now waits for message 3
	cancel()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("a cancelled replay reported success")
		}
	case <-time.After(5 * time.Second): // the iterator's own wait is 10 s
		t.Fatal("the replay did not end with its context")
	}
}
