package distributed

import (
	"context"
	"errors"
	"log/slog"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/crawltest"
	"github.com/crawlkit/crawlkit/frontier"
)

// stopBound is how soon Add and Done must return once the node is
// stopping: far below PublishTimeout (2 min) and AckWait/2 (30 s), the
// waits they had before, and a bound for a stuck test rather than a timing
// assertion.
const stopBound = 10 * time.Second

// countingHandler counts the log records whose message starts with prefix.
type countingHandler struct {
	prefix string
	n      atomic.Int64
}

func (h *countingHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *countingHandler) Handle(_ context.Context, r slog.Record) error {
	if strings.HasPrefix(r.Message, h.prefix) {
		h.n.Add(1)
	}
	return nil
}
func (h *countingHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *countingHandler) WithGroup(string) slog.Handler      { return h }

// outageQueue returns a Queue of crawl "outage" on an embedded server that
// has no stream for it: publishes fail with no responders at once (as
// while a stream has no leader) unless silent is set, in which case a
// subscriber that never answers takes them (a request lost with a leader
// that died), and their acks never come. It also returns the counter of
// "publish failed; retrying" log records and, for silent, the subscription.
func outageQueue(t *testing.T, silent bool, now func() time.Time) (*Queue, *countingHandler, *nats.Subscription) {
	t.Helper()
	url := embeddedServer(t, "outage")
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := newJetStream(nc)
	if err != nil {
		t.Fatal(err)
	}
	var sub *nats.Subscription
	if silent {
		if sub, err = nc.SubscribeSync("crawl.outage.p.>"); err != nil {
			t.Fatal(err)
		}
		if err := nc.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	retries := &countingHandler{prefix: "publish failed; retrying"}
	cfg, err := Config{NATSURL: url, NodeID: "n1", CrawlID: "outage", Partitions: 1,
		Logger: slog.New(retries), Now: now}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	q, err := newQueue(cfg, js, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.close() })
	return q, retries, sub
}

// addAsync runs q.Add of one URL in a goroutine; the channel gets its error.
func addAsync(q *Queue) <-chan error {
	done := make(chan error, 1)
	go func() { done <- q.Add(frontier.Entry{URL: "http://a.test/x", Host: "a.test"}) }()
	return done
}

// TestAddEndsWhenStopped checks that an Add retrying through a NATS outage
// gives up as soon as the node is stopping, with an error wrapping
// ErrStopping, instead of going on for PublishTimeout: both while it waits
// between attempts (publishes refused at once) and while it waits for the
// acks of an attempt (publishes nobody answers).
func TestAddEndsWhenStopped(t *testing.T) {
	t.Run("between attempts", func(t *testing.T) {
		q, retries, _ := outageQueue(t, false, nil)
		done := addAsync(q)
		waitFor(t, "Add to retry", func() bool { return retries.n.Load() >= 2 })
		q.stop()
		checkStopped(t, done)
	})
	t.Run("waiting for acks", func(t *testing.T) {
		q, _, sub := outageQueue(t, true, nil)
		done := addAsync(q)
		waitFor(t, "the publish to be sent", func() bool {
			n, _, _ := sub.Pending()
			return n >= 1
		})
		q.stop()
		checkStopped(t, done)
	})
	t.Run("already stopping", func(t *testing.T) {
		// An Add made while the node is stopping (a page finishing in
		// the Crawler's ShutdownGrace) still tries once.
		q, _, sub := outageQueue(t, true, nil)
		q.stop()
		done := addAsync(q)
		checkStopped(t, done)
		if n, _, _ := sub.Pending(); n != 1 {
			t.Errorf("%d publishes sent while stopping, want 1", n)
		}
	})
}

// checkStopped fails unless done reports an ErrStopping error within
// stopBound.
func checkStopped(t *testing.T, done <-chan error) {
	t.Helper()
	select {
	case err := <-done:
		if !errors.Is(err, ErrStopping) {
			t.Fatalf("Add after stop: %v; want an error wrapping ErrStopping", err)
		}
	case <-time.After(stopBound):
		t.Fatalf("Add did not return within %v of stop", stopBound)
	}
}

// TestAddRetriesForPublishTimeout checks that, with no stop, Add keeps
// retrying a failing publish until PublishTimeout has passed on its clock,
// and then fails with an error that is not ErrStopping.
func TestAddRetriesForPublishTimeout(t *testing.T) {
	clock := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	q, retries, _ := outageQueue(t, false, clock.Now)
	done := addAsync(q)
	notDone := func(when string) {
		t.Helper()
		select {
		case err := <-done:
			t.Fatalf("Add returned %s: %v", when, err)
		default:
		}
	}
	waitFor(t, "Add to retry", func() bool { return retries.n.Load() >= 2 })
	notDone("after its first retries")
	clock.Add(PublishTimeout - time.Second)
	n := retries.n.Load()
	waitFor(t, "Add to retry again", func() bool { return retries.n.Load() > n })
	notDone("before PublishTimeout")
	clock.Add(2 * time.Second)
	var err error
	waitFor(t, "Add to give up", func() bool {
		select {
		case err = <-done:
			return true
		default:
			return false
		}
	})
	if err == nil || errors.Is(err, ErrStopping) {
		t.Fatalf("Add after PublishTimeout: %v; want a publish error", err)
	}
}

// nackedMsg is a message whose acks fail (a consumer leader that does not
// answer); it counts acks and naks.
type nackedMsg struct {
	jetstream.Msg // nil: any other method panics
	acks, naks    atomic.Int64
	delayedNaks   atomic.Int64
}

func (m *nackedMsg) DoubleAck(context.Context) error {
	m.acks.Add(1)
	return nats.ErrTimeout
}
func (m *nackedMsg) Nak() error                       { m.naks.Add(1); return nil }
func (m *nackedMsg) NakWithDelay(time.Duration) error { m.delayedNaks.Add(1); return nil }

// stopQueue is a fenceQueue holding one leased message m of URL u.
func stopQueue(t *testing.T, m jetstream.Msg, u string) (*Queue, *frontier.Lease) {
	t.Helper()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	q, p := fenceQueue(&now)
	q.cfg.AckWait, q.cfg.MaxAttempts, q.cfg.RetryBase, q.cfg.RetryMax = time.Minute, 1, time.Minute, time.Hour
	front, err := frontier.New(frontier.Config{Now: q.now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { front.Close() })
	q.front = front
	q.settled = sync.NewCond(&q.mu)
	p.retries, p.open = map[uint64]int{}, map[uint64]struct{}{7: {}}
	p.pin, p.confirmed = "A", now
	e := frontier.Entry{URL: u, Host: "a.test"}
	q.held[u] = &heldMsg{msg: m, entry: e, part: p, gen: 1, seq: 7, tries: 1}
	p.nheld++
	if err := front.Add(e); err != nil {
		t.Fatal(err)
	}
	l, _, err := q.NextAt(now)
	if err != nil || l == nil {
		t.Fatalf("no lease (%v)", err)
	}
	return q, l
}

// TestDoneAckEndsWhenStopped checks that Done's retries of an ack nobody
// answers end as soon as the node is stopping, instead of going on for
// AckWait/2.
func TestDoneAckEndsWhenStopped(t *testing.T) {
	m := &nackedMsg{}
	q, l := stopQueue(t, m, "http://a.test/x")
	done := make(chan error, 1)
	go func() { _, err := q.Done(l, frontier.Success(0)); done <- err }()
	waitFor(t, "Done to retry the ack", func() bool { return m.acks.Load() >= 2 })
	q.stop()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(stopBound):
		t.Fatalf("Done did not return within %v of stop", stopBound)
	}
	if q.counters.acked.Load() != 0 {
		t.Error("a failed ack was counted")
	}
}

// TestRetryHandedBackWhenStopping checks what happens to the page whose Add
// gave up at shutdown: the Crawler settles it as a retry, and the Queue
// hands its message back at once (Nak, no delay), even on its last
// attempt, instead of giving the URL up (an ack, which would lose the page
// and the links it was publishing).
func TestRetryHandedBackWhenStopping(t *testing.T) {
	m := &nackedMsg{}
	q, l := stopQueue(t, m, "http://a.test/x") // MaxAttempts 1: this retry is the last
	q.stop()
	s, err := q.Done(l, frontier.Retry(0))
	if err != nil {
		t.Fatal(err)
	}
	if s.Kind != frontier.SettlementRetrying || s.Attempt != l.Attempt {
		t.Errorf("retry while stopping: Done reports %+v, want retrying with attempt %d", s, l.Attempt)
	}
	if m.naks.Load() != 1 || m.acks.Load() != 0 || m.delayedNaks.Load() != 0 {
		t.Errorf("retry while stopping: %d naks, %d delayed naks, %d acks; want 1, 0, 0",
			m.naks.Load(), m.delayedNaks.Load(), m.acks.Load())
	}
	if g := q.counters.given.Load(); g != 0 {
		t.Errorf("given up %d URLs while stopping, want 0", g)
	}
}

// TestRunStopsTheQueueWhenCancelled checks that a node tells its Queue it
// is stopping as soon as Run's context ends, while the Crawler's pages are
// still finishing (its Adds are made then), not only once the Crawler has
// returned.
func TestRunStopsTheQueueWhenCancelled(t *testing.T) {
	web, err := crawltest.NewWeb(crawltest.Config{Hosts: 2, PagesPerHost: 3, Agent: "crawlkit-dist"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(web.Close)
	url := embeddedServer(t, "stop")
	var node *Node
	started := make(chan struct{})
	var once sync.Once
	var sawStop atomic.Bool
	node, err = NewNode(Config{
		NATSURL: url, NodeID: "solo", CrawlID: "stop", Partitions: 2,
		MemberTTL: 2 * time.Second, AckWait: 5 * time.Second,
		Crawler: crawlkit.Config{
			UserAgent: "crawlkit-dist/1.0 (+http://example.test/bot)", Seeds: web.Seeds(),
			DialContext: web.DialContext, AllowPrivate: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}, RobotsRetries: -1,
			ShutdownGrace: 20 * time.Second,
			Handler: func(ctx context.Context, _ *crawlkit.Page) error {
				first := false
				once.Do(func() { first = true })
				if !first {
					return nil
				}
				close(started)
				// A page in flight when the node is told to stop.
				select {
				case <-node.lazy.get().stopping():
					sawStop.Store(true)
				case <-ctx.Done(): // ShutdownGrace is over
				}
				return nil
			},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ran := make(chan error, 1)
	go func() { ran <- node.Run(ctx) }()
	select {
	case <-started:
	case err := <-ran:
		t.Fatalf("Run ended before the first page: %v", err)
	case <-time.After(time.Minute):
		t.Fatal("no page fetched within a minute")
	}
	cancel()
	if err := <-ran; !errors.Is(err, context.Canceled) {
		t.Errorf("Run: %v, want context.Canceled", err)
	}
	if !sawStop.Load() {
		t.Error("the Queue was not told the node is stopping while a page was in flight")
	}
}

// listerKV is a membership bucket whose key lister behaves as nats.go's:
// it sends the keys it has read and closes its channel, with no error, when
// its context ends. Here the context ends (cancel) while the first member
// is read, before the lister has the second key.
type listerKV struct {
	jetstream.KeyValue // nil: any other method panics
	cancel             context.CancelFunc
}

type keyLister struct{ keys chan string }

func (l keyLister) Keys() <-chan string { return l.keys }
func (l keyLister) Stop() error         { return nil }

func (kv listerKV) ListKeys(ctx context.Context, _ ...jetstream.WatchOpt) (jetstream.KeyLister, error) {
	l := keyLister{keys: make(chan string, 1)}
	l.keys <- "node.a"
	go func() {
		<-ctx.Done() // the second key never came in time
		close(l.keys)
	}()
	return l, nil
}

func (kv listerKV) Get(_ context.Context, key string) (jetstream.KeyValueEntry, error) {
	kv.cancel() // the deadline passes while the keys are listed
	return memberEntry{key: key, value: []byte(`{"id":"a"}`)}, nil
}

// memberEntry is a membership bucket entry.
type memberEntry struct {
	jetstream.KeyValueEntry
	key   string
	value []byte
	op    jetstream.KeyValueOp
}

func (e memberEntry) Key() string                     { return e.key }
func (e memberEntry) Value() []byte                   { return e.value }
func (e memberEntry) Operation() jetstream.KeyValueOp { return e.op }
func (e memberEntry) Created() time.Time              { return time.Time{} }

// TestMembersReportsAnEndedContext checks that a listing cut short by its
// context is an error, not a shorter list of members.
func TestMembersReportsAnEndedContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	members, err := listMembers(ctx, listerKV{cancel: cancel})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("listing cut short: %d members, err %v; want context.Canceled", len(members), err)
	}
}

// TestMembersListsTheBucket checks Members against a real bucket.
func TestMembersListsTheBucket(t *testing.T) {
	url := embeddedServer(t, "members")
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
	kv, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: namesFor("m").members, Storage: jetstream.MemoryStorage})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"a", "b", "c"} {
		if _, err := kv.Put(ctx, memberKey(id), []byte(`{"id":"`+id+`"}`)); err != nil {
			t.Fatal(err)
		}
	}
	members, err := Members(ctx, url, "m")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, m := range members {
		ids = append(ids, m.ID)
	}
	if strings.Join(ids, ",") != "a,b,c" {
		t.Errorf("members %v, want a, b, c", ids)
	}
}
