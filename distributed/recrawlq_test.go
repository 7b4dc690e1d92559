package distributed

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/crawlkit/crawlkit/frontier"
)

// recrawlQueue is a Queue of crawl "recrawl" with one partition, no
// politeness delay, the crawl's snapshot buckets and schedule.
func recrawlQueue(t *testing.T, url string, schedule frontier.Schedule, now func() time.Time) *Queue {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := newJetStream(nc)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := Config{NATSURL: url, NodeID: "n", CrawlID: "recrawl", Partitions: 1, MemberTTL: 2 * time.Second,
		AckWait: 5 * time.Second, HandoverHold: 100 * time.Millisecond, DuplicateWindow: 100 * time.Millisecond,
		Logger: slog.New(slog.DiscardHandler), Now: now}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	cfg.Crawler.Recrawl = schedule
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	stream, consumers, _, err := setup(ctx, js, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	q, err := newQueue(cfg, js, stream, frontier.FixedDelay(0))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.close() })
	q.parts[0].consumer = consumers[0]
	if q.snaps, err = openSnapshots(ctx, js, q.names, 1); err != nil {
		t.Fatal(err)
	}
	return q
}

// TestRecrawlGenerations settles a URL under a fixed 1 s recrawl: each
// settlement schedules the next generation in the stream, which comes back
// no sooner than its time, carries the adaptive schedule's inputs, and is
// fetched once, while the URL found again as a link is still dropped. A
// new owner of the partition, after the old one's snapshot and purge, gets
// the pending generation.
func TestRecrawlGenerations(t *testing.T) {
	url := embeddedServer(t, "recrawl")
	q := recrawlQueue(t, url, frontier.FixedInterval(time.Second), time.Now)
	ctx := context.Background()
	p := q.parts[0]
	if err := q.acquire(ctx, p); err != nil {
		t.Fatal(err)
	}
	const u = "http://a.test/x"
	if err := q.Add(frontier.Entry{URL: u}); err != nil {
		t.Fatal(err)
	}
	lctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	var due time.Time
	for gen := range 3 {
		l, err := q.Next(lctx)
		if err != nil {
			t.Fatalf("generation %d: %v", gen, err)
		}
		leased := time.Now()
		if gen > 0 && leased.Before(due) {
			t.Errorf("generation %d leased at %v, before its time %v", gen, leased, due)
		}
		if gen > 0 && (l.Interval != time.Second || l.Fingerprint != uint64(gen)) {
			t.Errorf("generation %d: lease interval %v, fingerprint %d; want the previous fetch's 1s, %d",
				gen, l.Interval, l.Fingerprint, gen)
		}
		s, err := q.Done(l, frontier.Success(uint64(gen+1)))
		if err != nil {
			t.Fatal(err)
		}
		if s.Kind != frontier.SettlementRecrawl || s.At.Sub(leased) < time.Second {
			t.Fatalf("generation %d settled %+v, want a recrawl a second later", gen, s)
		}
		due = s.At
		if gen == 0 {
			// The URL found again as a link (after the duplicate
			// window) is dropped; its recrawl is not.
			republish(t, q, u)
		}
	}
	if d := q.counters.dropped.Load(); d != 1 {
		t.Errorf("%d messages dropped as repeats, want the one link", d)
	}
	if err := q.compact(ctx, p); err != nil {
		t.Fatal(err)
	}
	q.release(ctx, p)

	// Generation 3 is due; a new owner fetches it, once.
	b := recrawlQueue(t, url, frontier.FixedInterval(time.Second), time.Now)
	if err := b.acquire(ctx, b.parts[0]); err != nil {
		t.Fatal(err)
	}
	defer b.release(ctx, b.parts[0])
	l, err := b.Next(lctx)
	if err != nil {
		t.Fatal(err)
	}
	if time.Now().Before(due) || l.URL != u || l.Fingerprint != 3 {
		t.Fatalf("the new owner leased %s (fingerprint %d) at %v, want %s, fingerprint 3, not before %v",
			l.URL, l.Fingerprint, time.Now(), u, due)
	}
	if st := q.QueueStats(); st.Recrawls != 3 {
		t.Errorf("the first owner scheduled %d recrawls, want 3", st.Recrawls)
	}
}
