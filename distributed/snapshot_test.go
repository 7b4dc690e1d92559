package distributed

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/crawlkit/crawlkit/bloom"
	"github.com/crawlkit/crawlkit/distributed/internal/natsd"
	"github.com/crawlkit/crawlkit/frontier"
	"github.com/crawlkit/crawlkit/urlnorm"
)

func TestSeenSnapshotRoundTrip(t *testing.T) {
	s := &seenSnapshot{covers: 1234, keys: []uint64{1, 1 << 63, 42}, open: []uint64{1200, 1234}}
	b := s.encode()
	got, err := decodeSeenSnapshot(b)
	if err != nil {
		t.Fatal(err)
	}
	if got.covers != s.covers || !slices.Equal(got.keys, s.keys) || !slices.Equal(got.open, s.open) {
		t.Fatalf("decoded %+v, want %+v", got, s)
	}
	for i := range b {
		bad := slices.Clone(b)
		bad[i] ^= 0x10
		if _, err := decodeSeenSnapshot(bad); !errors.Is(err, errSnapshotCorrupt) {
			t.Fatalf("byte %d flipped: %v, want errSnapshotCorrupt", i, err)
		}
	}
	if _, err := decodeSeenSnapshot(b[:len(b)-5]); !errors.Is(err, errSnapshotCorrupt) {
		t.Fatalf("truncated: %v, want errSnapshotCorrupt", err)
	}
}

// snapshotQueue is a Queue of crawl crawlID with one partition on the
// server at url, its own connection, no politeness delay and the crawl's
// snapshot buckets (unless every is negative). AckWait is short: a message
// handed back by a release can reach the releasing node's last pull
// request, and then comes back only after AckWait.
func snapshotQueue(t testing.TB, url, crawlID string, every int) *Queue {
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
	cfg, err := Config{NATSURL: url, NodeID: "n", CrawlID: crawlID, Partitions: 1, MemberTTL: 2 * time.Second,
		AckWait: 5 * time.Second, HandoverHold: 100 * time.Millisecond, DuplicateWindow: 100 * time.Millisecond,
		SnapshotEvery: every, MaxHeldPerPartition: 1000, Logger: slog.New(slog.DiscardHandler)}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
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
	if every > 0 {
		if q.snaps, err = openSnapshots(ctx, js, q.names, 1); err != nil {
			t.Fatal(err)
		}
	}
	return q
}

func pageURL(i int) string { return fmt.Sprintf("http://h%02d.test/page-%d", i%50, i) }

func addPages(t *testing.T, q *Queue, from, to int) {
	t.Helper()
	var es []frontier.Entry
	for i := from; i < to; i++ {
		es = append(es, frontier.Entry{URL: pageURL(i)})
	}
	if err := q.Add(es...); err != nil {
		t.Fatal(err)
	}
}

// settle leases n URLs from q and settles each as fetched, returning their
// URLs.
func settle(t *testing.T, q *Queue, n int) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var urls []string
	for range n {
		l, err := q.Next(ctx)
		if err != nil {
			t.Fatalf("after %d of %d leases: %v", len(urls), n, err)
		}
		if _, err := q.Done(l, frontier.Success(0)); err != nil {
			t.Fatal(err)
		}
		urls = append(urls, l.URL)
	}
	return urls
}

// partitionMsgs returns the messages and bytes the stream holds.
func partitionMsgs(t testing.TB, q *Queue) (uint64, uint64) {
	t.Helper()
	info, err := q.stream.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return info.State.Msgs, info.State.Bytes
}

// TestBoundedLog settles rounds of new URLs through one partition's owner,
// compacting after each round: the stream's size stays bounded while the
// settled URLs grow, a new owner replays only the messages after the
// snapshot, and a URL whose messages were purged is still known (its
// republication is dropped, not fetched again). The same rounds on a crawl
// without snapshots keep every message.
func TestBoundedLog(t *testing.T) {
	url := embeddedServer(t, "bounded")
	const every, round, rounds, pending, tail = 100, 60, 5, 50, 10
	a := snapshotQueue(t, url, "bounded", every)
	plain := snapshotQueue(t, url, "plain", -1)
	ctx := context.Background()
	for _, q := range []*Queue{a, plain} {
		if err := q.acquire(ctx, q.parts[0]); err != nil {
			t.Fatal(err)
		}
	}
	var bounded, unbounded []uint64
	for r := range rounds {
		for _, q := range []*Queue{a, plain} {
			addPages(t, q, r*round, (r+1)*round)
			settle(t, q, round)
			if err := q.compact(ctx, q.parts[0]); err != nil {
				t.Fatal(err)
			}
		}
		msgs, _ := partitionMsgs(t, a)
		plainMsgs, _ := partitionMsgs(t, plain)
		bounded, unbounded = append(bounded, msgs), append(unbounded, plainMsgs)
	}
	t.Logf("messages kept after each round of %d settled URLs: with snapshots %v, without %v", round, bounded, unbounded)
	for r, n := range bounded {
		// Everything settled is acknowledged: what is left is what
		// arrived since the last snapshot, fewer than every+round.
		if n >= every+round {
			t.Errorf("round %d: %d messages kept with snapshots every %d, want fewer than %d", r, n, every, every+round)
		}
		if unbounded[r] != uint64((r+1)*round) {
			t.Errorf("round %d: %d messages kept without snapshots, want all %d", r, unbounded[r], (r+1)*round)
		}
	}
	if st := a.QueueStats(); st.Snapshots == 0 || st.Purges == 0 {
		t.Fatalf("stats %+v: want snapshots and purges", st)
	}
	// URLs the owner holds unsettled when it goes: the snapshot covers
	// them as open primaries, and the stream keeps them.
	addPages(t, a, rounds*round, rounds*round+pending)
	deadline := time.Now().Add(30 * time.Second)
	for a.QueueStats().Held < pending {
		if time.Now().After(deadline) {
			t.Fatalf("the owner holds %d of %d new URLs", a.QueueStats().Held, pending)
		}
		time.Sleep(10 * time.Millisecond)
	}
	snaps := a.counters.snapshots.Load()
	if err := a.compact(ctx, a.parts[0]); err != nil {
		t.Fatal(err)
	}
	if a.counters.snapshots.Load() != snaps+1 {
		t.Fatal("no snapshot covering the unsettled URLs")
	}
	// And a tail that no snapshot covers. The owner holds it before it
	// goes, so that the release hands every message back (one still in
	// the client's buffer would come back only after AckWait).
	addPages(t, a, rounds*round+pending, rounds*round+pending+tail)
	for a.QueueStats().Held < pending+tail {
		if time.Now().After(deadline) {
			t.Fatalf("the owner holds %d of %d URLs", a.QueueStats().Held, pending+tail)
		}
		time.Sleep(10 * time.Millisecond)
	}
	a.release(ctx, a.parts[0])

	// A new owner: it loads the snapshot and replays only the tail.
	b := snapshotQueue(t, url, "bounded", every)
	if err := b.acquire(ctx, b.parts[0]); err != nil {
		t.Fatal(err)
	}
	defer b.release(ctx, b.parts[0])
	left, _ := partitionMsgs(t, b)
	st := b.QueueStats()
	t.Logf("takeover after %d settled URLs: snapshot loads %d, replayed %d messages (stream holds %d)",
		rounds*round, st.SnapshotLoads, st.Replayed, left)
	if st.SnapshotLoads != 1 || st.Replayed != tail || left != pending+tail {
		t.Errorf("takeover: %d snapshot loads, %d messages replayed, %d in the stream; want 1 load, the %d of the tail replayed, %d in the stream",
			st.SnapshotLoads, st.Replayed, left, tail, pending+tail)
	}
	p := b.parts[0]
	p.mu.Lock()
	known := p.seen.Len()
	p.mu.Unlock()
	if all := rounds*round + pending + tail; known != uint64(all) {
		t.Errorf("the new owner knows %d URLs, want all %d", known, all)
	}

	// URLs of the first round, long purged, come back (found again after
	// the duplicate window): dropped as repeats. The unsettled ones and a
	// new one are fetched.
	old := []string{pageURL(0), pageURL(1), pageURL(round - 1)}
	deadline = time.Now().Add(30 * time.Second)
	for _, u := range old {
		republish(t, b, u)
	}
	fresh := pageURL(rounds*round + pending + tail)
	if err := b.Add(frontier.Entry{URL: fresh}); err != nil {
		t.Fatal(err)
	}
	var want []string
	for i := rounds * round; i <= rounds*round+pending+tail; i++ {
		want = append(want, pageURL(i))
	}
	got := settle(t, b, pending+tail+1)
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("the new owner leased %v, want the unsettled URLs and the new one %v", got, want)
	}
	for b.counters.dropped.Load() < int64(len(old)) {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d republished old URLs dropped", b.counters.dropped.Load(), len(old))
		}
		time.Sleep(10 * time.Millisecond)
	}
	if h := b.QueueStats().Held; h != 0 {
		t.Errorf("the new owner holds %d URLs after dropping the old ones, want none", h)
	}
}

// republish publishes u again until the server stores it: past its
// duplicate window, as a link found again later.
func republish(t *testing.T, q *Queue, u string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		dups := q.counters.publishDuplicates.Load()
		if err := q.Add(frontier.Entry{URL: u}); err != nil {
			t.Fatal(err)
		}
		if q.counters.publishDuplicates.Load() == dups {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server kept dropping %s as a duplicate", u)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestSnapshotPointerNeverRegresses checks that a stale writer (an owner
// that missed a newer snapshot) cannot replace the partition's pointer with
// one that covers less.
func TestSnapshotPointerNeverRegresses(t *testing.T) {
	url := embeddedServer(t, "regress")
	q := snapshotQueue(t, url, "regress", 10)
	ctx := context.Background()
	s := q.snaps
	r1, err := s.store(ctx, 0, &seenSnapshot{covers: 100, keys: []uint64{1}}, snapshotRef{})
	if err != nil {
		t.Fatal(err)
	}
	r2, err := s.store(ctx, 0, &seenSnapshot{covers: 200, keys: []uint64{1, 2}}, r1)
	if err != nil {
		t.Fatal(err)
	}
	cur, err := s.store(ctx, 0, &seenSnapshot{covers: 150, keys: []uint64{1}}, r1)
	if !errors.Is(err, errSnapshotStale) || cur != r2 {
		t.Fatalf("stale write: %v, ref %+v; want errSnapshotStale and %+v", err, cur, r2)
	}
	snap, ref, err := s.load(ctx, 0)
	if err != nil || ref != r2 || snap.covers != 200 || len(snap.keys) != 2 {
		t.Fatalf("load: %+v %+v %v; want covers 200", snap, ref, err)
	}
	// The bodies of the replaced and of the refused snapshot are gone.
	objs, err := s.obs.List(ctx)
	if err != nil || len(objs) != 1 || objs[0].Name != r2.object {
		t.Errorf("objects left: %v (%v); want only %s", objs, err, r2.object)
	}
	// A writer that knows the newest ref moves it on.
	if r3, err := s.store(ctx, 0, &seenSnapshot{covers: 300}, cur); err != nil || r3.covers != 300 {
		t.Fatalf("next write: %+v, %v", r3, err)
	}
}

// BenchmarkTakeover measures a new owner's seen-set rebuild of a partition
// holding n settled URLs plus a tail of unsettled ones, against the number
// of URLs: "replay" reads every message (no snapshots: the stream keeps all
// of them), "snapshot" loads the partition's snapshot and replays the tail
// (the settled messages were purged). Reported per takeover, with the
// messages replayed and the stream's bytes.
func BenchmarkTakeover(b *testing.B) {
	const tail = 1000
	for _, n := range []int{10_000, 40_000, 160_000} {
		for _, mode := range []string{"replay", "snapshot"} {
			b.Run(fmt.Sprintf("urls=%d/%s", n, mode), func(b *testing.B) {
				url := benchServer(b)
				every := -1
				if mode == "snapshot" {
					every = n
				}
				q := snapshotQueue(b, url, "takeover", every)
				publishSettled(b, q, n)
				ctx := context.Background()
				if mode == "snapshot" {
					// The owner that settled them snapshots and
					// purges.
					p := q.parts[0]
					freshSeen(b, p, n)
					rebuild(b, q, p)
					q.mu.Lock()
					p.owned = true
					q.mu.Unlock()
					if err := q.compact(ctx, p); err != nil {
						b.Fatal(err)
					}
				}
				publishN(b, q, n, n+tail)
				_, bytes := partitionMsgs(b, q)
				b.ResetTimer()
				var replayed int64
				for range b.N {
					before := q.counters.replayed.Load()
					p := &partition{id: 0, subject: q.names.subject(0), consumer: q.parts[0].consumer}
					freshSeen(b, p, n+tail)
					rebuild(b, q, p)
					if got := p.seen.Len(); got != uint64(n+tail) {
						b.Fatalf("rebuilt %d URLs, want %d", got, n+tail)
					}
					replayed += q.counters.replayed.Load() - before
				}
				b.ReportMetric(float64(replayed)/float64(b.N), "replayed/op")
				b.ReportMetric(float64(bytes), "stream-bytes")
			})
		}
	}
}

// freshSeen gives p an empty seen set for n URLs, as acquire does.
func freshSeen(b *testing.B, p *partition, n int) {
	b.Helper()
	p.store = bloom.NewMemoryStore()
	seen, err := bloom.New(bloom.Config{Expected: uint64(n), Store: p.store})
	if err != nil {
		b.Fatal(err)
	}
	p.seen, p.hw, p.open = seen, 0, map[uint64]struct{}{}
}

func rebuild(b *testing.B, q *Queue, p *partition) {
	b.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, err := q.rebuild(context.Background(), p); err != nil {
		b.Fatal(err)
	}
}

func benchServer(b *testing.B) string {
	b.Helper()
	srv, err := natsd.Start(natsd.Config{Name: "bench", Port: -1, StoreDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { srv.Shutdown(); srv.WaitForShutdown() })
	return srv.ClientURL()
}

// publishN publishes the URLs pageURL(from..to-1) to q's partition.
func publishN(b *testing.B, q *Queue, from, to int) {
	b.Helper()
	for i := from; i < to; i++ {
		m := nats.NewMsg(q.names.subject(0))
		u := pageURL(i)
		m.Header.Set(jetstream.MsgIDHeader, msgID(urlnorm.Key(u)))
		m.Data = []byte(`{"u":"` + u + `"}`)
		if _, err := q.js.PublishMsgAsync(m); err != nil {
			b.Fatal(err)
		}
		if (i-from)%1000 == 999 || i == to-1 {
			select {
			case <-q.js.PublishAsyncComplete():
			case <-time.After(2 * time.Minute):
				b.Fatal("publishing timed out")
			}
		}
	}
}

// publishSettled publishes n URLs and acknowledges them through the
// partition's consumer, as owners that fetched them would have.
func publishSettled(b *testing.B, q *Queue, n int) {
	b.Helper()
	publishN(b, q, 0, n)
	ctx := context.Background()
	c := q.parts[0].consumer
	for acked := 0; acked < n; {
		batch, err := c.Fetch(min(n-acked, 1000), jetstream.FetchMaxWait(10*time.Second),
			jetstream.FetchPriorityGroup(priorityGroup))
		if err != nil {
			b.Fatal(err)
		}
		var last jetstream.Msg
		for m := range batch.Messages() {
			if err := m.Ack(); err != nil {
				b.Fatal(err)
			}
			last = m
			acked++
		}
		if last == nil {
			b.Fatalf("fetched nothing after %d acks (%v)", acked, batch.Error())
		}
		if err := last.DoubleAck(ctx); err != nil && !errors.Is(err, jetstream.ErrMsgAlreadyAckd) {
			b.Fatal(err)
		}
	}
}

// TestPointerReadFromTheLeader checks the snapshot pointer's read, which
// goes to the bucket stream's leader (the API's message get) rather than
// KeyValue.Get's direct get, which a follower may answer: the requests a
// read makes are watched on their subjects. It also checks no pointer, a
// pointer with the revision the bucket gives it, and a deleted pointer
// read as none.
func TestPointerReadFromTheLeader(t *testing.T) {
	url := embeddedServer(t, "leaderget")
	q := snapshotQueue(t, url, "leaderget", 10)
	ctx := context.Background()
	s := q.snaps
	var leader, direct atomic.Int64
	for subj, n := range map[string]*atomic.Int64{
		"$JS.API.STREAM.MSG.GET.KV_" + s.bucket:    &leader,
		"$JS.API.DIRECT.GET.KV_" + s.bucket:        &direct,
		"$JS.API.DIRECT.GET.KV_" + s.bucket + ".>": &direct,
	} {
		sub, err := s.nc.Subscribe(subj, func(*nats.Msg) { n.Add(1) })
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = sub.Unsubscribe() })
	}
	if err := s.nc.Flush(); err != nil {
		t.Fatal(err)
	}
	if ref, err := s.pointer(ctx, 3); err != nil || ref.rev != 0 {
		t.Fatalf("no pointer yet: %+v, %v", ref, err)
	}
	r, err := s.store(ctx, 3, &seenSnapshot{covers: 42, keys: []uint64{7}}, snapshotRef{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.pointer(ctx, 3)
	if err != nil || got != r {
		t.Fatalf("pointer: %+v, %v; want %+v", got, err, r)
	}
	e, err := s.kv.Get(ctx, pointerKey(3))
	if err != nil || e.Revision() != got.rev {
		t.Fatalf("the bucket's own read: %v, %v; want revision %d", e, err, got.rev)
	}
	if err := s.kv.Delete(ctx, pointerKey(3)); err != nil {
		t.Fatal(err)
	}
	if ref, err := s.pointer(ctx, 3); err != nil || ref.rev != 0 {
		t.Fatalf("deleted pointer: %+v, %v; want none", ref, err)
	}
	if _, err := leaderGet(ctx, s.nc, "KV_nosuchbucket", "$KV.nosuchbucket.p0"); err == nil {
		t.Error("a get from a stream that does not exist succeeded")
	}
	// The three pointer reads asked the leader; only the test's own
	// s.kv.Get was a direct get.
	if err := s.nc.Flush(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the watched requests", func() bool { return leader.Load()+direct.Load() >= 4 })
	if leader.Load() != 3 || direct.Load() != 1 {
		t.Errorf("%d message gets and %d direct gets on the pointer bucket, want 3 and 1 (the test's own KeyValue.Get): "+
			"a pointer read went to any replica", leader.Load(), direct.Load())
	}
}
