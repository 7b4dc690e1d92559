package distributed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/fetch"
	"github.com/crawlkit/crawlkit/frontier"
)

// Node is one crawler process of a distributed crawl. Create it with
// NewNode, serve Handler if you like, and call Run once.
type Node struct {
	cfg     Config
	names   names
	pol     *fetch.Politeness
	crawler *crawlkit.Crawler
	lazy    *lazyQueue
	httpMu  sync.Mutex
	http    string
}

// NewNode checks cfg and returns a Node. It does no I/O: Run connects.
func NewNode(cfg Config) (*Node, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	cc := cfg.Crawler
	pol := cc.Politeness
	if pol == nil {
		pol = fetch.NewPoliteness(fetch.PolitenessConfig{
			Delay:         cc.Delay,
			MaxConcurrent: cc.MaxConnsPerHost,
			MaxCrawlDelay: cc.MaxCrawlDelay,
		})
	}
	lazy := &lazyQueue{}
	cc.Politeness = pol
	cc.Queue = lazy
	if cc.Recrawl != nil {
		return nil, fmt.Errorf("%w: Crawler.Recrawl is not supported by the distributed queue", ErrConfig)
	}
	crawler, err := crawlkit.New(cc)
	if err != nil {
		return nil, err
	}
	return &Node{cfg: cfg, names: namesFor(cfg.CrawlID), pol: pol, crawler: crawler, lazy: lazy}, nil
}

// SetHTTPAddr records the address the node's Handler is served on, so that
// it is published in the membership bucket for the stats aggregator. Call
// it before Run.
func (n *Node) SetHTTPAddr(addr string) {
	n.httpMu.Lock()
	n.http = addr
	n.httpMu.Unlock()
}

// Crawler returns the node's Crawler (for its Stats and handlers).
func (n *Node) Crawler() *crawlkit.Crawler { return n.crawler }

// Handler serves the node's statistics: /stats (the Crawler's Stats as
// JSON), /metrics (Prometheus) and /queue (QueueStats as JSON).
func (n *Node) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/stats", n.crawler.StatsHandler())
	mux.Handle("/metrics", n.crawler.MetricsHandler())
	mux.HandleFunc("/queue", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(n.QueueStats())
	})
	return mux
}

// QueueStats returns the node's queue counters (zero before Run).
func (n *Node) QueueStats() QueueStats {
	if q := n.lazy.get(); q != nil {
		return q.QueueStats()
	}
	return QueueStats{}
}

// Run connects to NATS, joins the crawl and crawls until the whole crawl is
// finished or ctx ends. Either way it leaves gracefully: it stops taking
// URLs, lets pages being fetched finish (Crawler.ShutdownGrace), hands its
// partitions back and deletes its membership key, so the others take over
// at once. It returns nil when the crawl finished.
func (n *Node) Run(ctx context.Context) error {
	cfg := n.cfg
	nc, err := nats.Connect(cfg.NATSURL,
		nats.Name("crawlkit-node-"+cfg.NodeID),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(250*time.Millisecond),
		nats.Timeout(5*time.Second))
	if err != nil {
		return fmt.Errorf("distributed: connecting to %s: %w", cfg.NATSURL, err)
	}
	defer nc.Close()
	if err := checkServerVersion(nc.ConnectedServerVersion()); err != nil {
		return err
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	// A cluster that is just starting has no JetStream meta leader yet:
	// its API requests time out. Retry for a minute.
	var (
		stream jetstream.Stream
		kv     jetstream.KeyValue
	)
	for deadline := time.Now().Add(time.Minute); ; {
		sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		stream, kv, err = setup(sctx, js, cfg)
		cancel()
		if err == nil {
			break
		}
		if ctx.Err() != nil || time.Now().After(deadline) {
			return err
		}
		cfg.Logger.Info("setting up the crawl's stream; retrying", "err", err)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
	q, err := newQueue(cfg, js, stream, n.pol)
	if err != nil {
		return err
	}
	defer q.close()
	for p, part := range q.parts {
		if part.consumer, err = stream.Consumer(ctx, n.names.consumer(p)); err != nil {
			return fmt.Errorf("distributed: partition %d: %w", p, err)
		}
	}
	n.httpMu.Lock()
	info := MemberInfo{ID: cfg.NodeID, HTTP: n.http, Started: cfg.Now()}
	n.httpMu.Unlock()
	mem, err := newMembership(kv, info, cfg.MemberTTL, cfg.Now)
	if err != nil {
		return err
	}
	if err := mem.heartbeat(ctx); err != nil {
		return fmt.Errorf("distributed: joining: %w", err)
	}
	q.healthy = mem.healthy
	n.lazy.set(q)

	// Background work, owned here: membership, rebalancing, keep-alive.
	bg, stopBG := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	wg.Add(3)
	go func() { defer wg.Done(); mem.run(bg) }()
	rebalanced := make(chan struct{})
	go func() { defer wg.Done(); n.rebalance(bg, q, mem, rebalanced) }()
	go func() {
		defer wg.Done()
		t := time.NewTicker(cfg.AckWait / 3)
		defer t.Stop()
		for {
			select {
			case <-bg.Done():
				return
			case <-t.C:
				q.keepAlive()
			}
		}
	}()

	runErr := n.crawler.Run(ctx)

	// Graceful leave: the Crawler has settled or abandoned its leases.
	// Hand every partition back, then leave the membership.
	stopBG()
	wg.Wait()
	<-rebalanced
	q.abandon()
	lctx, lcancel := context.WithTimeout(context.Background(), cfg.AckWait)
	defer lcancel()
	var rw sync.WaitGroup
	for _, p := range q.parts {
		rw.Add(1)
		go func() { defer rw.Done(); q.release(lctx, p) }()
	}
	rw.Wait()
	if err := mem.leave(lctx); err != nil {
		cfg.Logger.Warn("leaving the membership", "err", err)
	}
	_ = nc.Drain()
	return runErr
}

// rebalance acquires and releases partitions whenever the membership
// changes, until ctx ends; it closes done when it has stopped.
func (n *Node) rebalance(ctx context.Context, q *Queue, mem *membership, done chan<- struct{}) {
	defer close(done)
	var prev []string
	// Nodes started together should see each other before the first
	// assignment, or the first one takes every partition and hands most
	// of them back a moment later.
	settle := time.NewTimer(n.cfg.MemberTTL / 2)
	select {
	case <-ctx.Done():
		settle.Stop()
		return
	case <-settle.C:
	}
	for first := true; ; first = false {
		if !first {
			select {
			case <-ctx.Done():
				return
			case <-mem.changed:
			}
			// Let a burst of changes (several nodes starting or
			// stopping) settle into one rebalance.
			select {
			case <-ctx.Done():
				return
			case <-time.After(200 * time.Millisecond):
			}
		}
		live, ok := mem.members()
		if !ok {
			// Not in the view yet (the first heartbeat is on its way):
			// look again shortly.
			go func() {
				select {
				case <-ctx.Done():
				case <-time.After(100 * time.Millisecond):
					select {
					case mem.changed <- struct{}{}:
					default:
					}
				}
			}()
			continue
		}
		if slices.Equal(live, prev) {
			continue
		}
		prev = live
		want := map[int]bool{}
		for _, p := range Assignment(live, n.cfg.Partitions, n.cfg.NodeID) {
			want[p] = true
		}
		n.cfg.Logger.Info("membership changed", "members", live, "partitions", len(want))
		var wg sync.WaitGroup
		var failed atomic.Bool // some acquisition failed: try again on the next change
		for _, p := range q.parts {
			q.mu.Lock()
			owned := p.owned
			q.mu.Unlock()
			switch {
			case owned && !want[p.id]:
				wg.Add(1)
				go func() { defer wg.Done(); q.release(ctx, p) }()
			case !owned && want[p.id]:
				wg.Add(1)
				go func() {
					defer wg.Done()
					if err := q.acquire(ctx, p); err != nil && ctx.Err() == nil {
						n.cfg.Logger.Warn("acquiring a partition", "partition", p.id, "err", err)
						failed.Store(true)
						select {
						case mem.changed <- struct{}{}:
						default:
						}
					}
				}()
			}
		}
		wg.Wait()
		if failed.Load() {
			prev = nil
		}
	}
}

// setup creates (or checks) the crawl's stream, partition consumers and
// membership bucket. Every node runs it; the calls are idempotent.
func setup(ctx context.Context, js jetstream.JetStream, cfg Config) (jetstream.Stream, jetstream.KeyValue, error) {
	nm := namesFor(cfg.CrawlID)
	stream, err := js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name:        nm.stream,
		Description: "crawlkit URL log of crawl " + cfg.CrawlID,
		Subjects:    []string{nm.subjects()},
		Retention:   jetstream.LimitsPolicy,
		Storage:     jetstream.FileStorage,
		Replicas:    cfg.Replicas,
		Duplicates:  cfg.DuplicateWindow,
		AllowDirect: true,
	})
	if err != nil {
		return nil, nil, fmt.Errorf("distributed: stream %s: %w", nm.stream, err)
	}
	for p := range cfg.Partitions {
		_, err := stream.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{
			Durable:        nm.consumer(p),
			FilterSubject:  nm.subject(p),
			AckPolicy:      jetstream.AckExplicitPolicy,
			AckWait:        cfg.AckWait,
			MaxDeliver:     -1,
			MaxAckPending:  cfg.MaxHeldPerPartition,
			DeliverPolicy:  jetstream.DeliverAllPolicy,
			PriorityPolicy: jetstream.PriorityPolicyPinned,
			PriorityGroups: []string{priorityGroup},
			PinnedTTL:      3 * cfg.PullExpiry,
		})
		if err != nil {
			return nil, nil, fmt.Errorf("distributed: consumer of partition %d: %w", p, err)
		}
	}
	kv, err := js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket:   nm.members,
		TTL:      cfg.MemberTTL,
		History:  1,
		Storage:  jetstream.MemoryStorage,
		Replicas: cfg.Replicas,
	})
	if err != nil {
		return nil, nil, fmt.Errorf("distributed: bucket %s: %w", nm.members, err)
	}
	return stream, kv, nil
}

// lazyQueue lets the Crawler be built before Run has connected: it forwards
// to the Queue that Run sets.
type lazyQueue struct {
	mu sync.Mutex
	q  *Queue
}

var errNotRunning = errors.New("distributed: node is not running")

func (l *lazyQueue) set(q *Queue) { l.mu.Lock(); l.q = q; l.mu.Unlock() }
func (l *lazyQueue) get() *Queue  { l.mu.Lock(); defer l.mu.Unlock(); return l.q }

func (l *lazyQueue) Add(entries ...frontier.Entry) error {
	if q := l.get(); q != nil {
		return q.Add(entries...)
	}
	return errNotRunning
}

func (l *lazyQueue) Next(ctx context.Context) (*frontier.Lease, error) {
	if q := l.get(); q != nil {
		return q.Next(ctx)
	}
	return nil, errNotRunning
}

func (l *lazyQueue) NextAt(now time.Time) (*frontier.Lease, time.Time, error) {
	if q := l.get(); q != nil {
		return q.NextAt(now)
	}
	return nil, time.Time{}, errNotRunning
}

func (l *lazyQueue) Done(le *frontier.Lease, o frontier.Outcome) error {
	if q := l.get(); q != nil {
		return q.Done(le, o)
	}
	return errNotRunning
}

func (l *lazyQueue) BlockHost(host string, until time.Time) {
	if q := l.get(); q != nil {
		q.BlockHost(host, until)
	}
}

func (l *lazyQueue) Stats() frontier.Stats {
	if q := l.get(); q != nil {
		return q.Stats()
	}
	return frontier.Stats{}
}
