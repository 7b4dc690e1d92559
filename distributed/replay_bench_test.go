package distributed

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/crawlkit/crawlkit/bloom"
	"github.com/crawlkit/crawlkit/distributed/internal/natsd"
	"github.com/crawlkit/crawlkit/frontier"
)

// BenchmarkSeenSetRebuild compares the two ways a new owner can rebuild a
// partition's seen set of 100 000 URLs: replaying the partition's message
// headers from the stream (what the Queue does), and loading a snapshot of
// the keys (the in-memory half of the snapshot alternative: inserting the
// keys into a fresh set; fetching 800 KB of keys from an object store
// comes on top). Reported per URL.
func BenchmarkSeenSetRebuild(b *testing.B) {
	const urls = 100_000
	srv, err := natsd.Start(natsd.Config{Name: "bench", Port: -1, StoreDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Shutdown()
	nc, err := nats.Connect(srv.ClientURL())
	if err != nil {
		b.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		b.Fatal(err)
	}
	cfg, err := Config{NATSURL: srv.ClientURL(), NodeID: "bench", CrawlID: "replay", Partitions: 1,
		Logger: slog.New(slog.DiscardHandler)}.withDefaults()
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	stream, _, _, err := setup(ctx, js, cfg, nil)
	if err != nil {
		b.Fatal(err)
	}
	keys := make([]uint64, urls)
	for i := range keys {
		u := fmt.Sprintf("http://h%04d.test/page-%d.html", i%500, i)
		keys[i] = bloom.Key(u)
		m := nats.NewMsg(namesFor("replay").subject(0))
		m.Header.Set(jetstream.MsgIDHeader, msgID(keys[i]))
		m.Data = []byte(`{"u":"` + u + `"}`)
		if _, err := js.PublishMsgAsync(m); err != nil {
			b.Fatal(err)
		}
	}
	select {
	case <-js.PublishAsyncComplete():
	case <-time.After(time.Minute):
		b.Fatal("publishing timed out")
	}
	q, err := newQueue(cfg, js, stream, frontier.FixedDelay(0))
	if err != nil {
		b.Fatal(err)
	}
	defer q.close()

	b.Run("replay", func(b *testing.B) {
		for range b.N {
			p := &partition{id: 0, subject: namesFor("replay").subject(0), open: map[uint64]struct{}{}, ackFloor: urls}
			p.seen, _ = bloom.New(bloom.Config{Expected: urls, Store: bloom.NewMemoryStore()})
			p.mu.Lock()
			if err := q.replay(ctx, p, 1, urls+1); err != nil {
				b.Fatal(err)
			}
			p.mu.Unlock()
			if p.seen.Len() != urls {
				b.Fatalf("replayed %d URLs, want %d", p.seen.Len(), urls)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*urls), "ns/url")
	})
	b.Run("snapshot-load", func(b *testing.B) {
		for range b.N {
			set, _ := bloom.New(bloom.Config{Expected: urls, Store: bloom.NewMemoryStore()})
			for _, k := range keys {
				if _, err := set.TestAndAddKey(k); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*urls), "ns/url")
	})
}
