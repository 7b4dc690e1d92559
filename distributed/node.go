package distributed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/fetch"
	"github.com/crawlkit/crawlkit/frontier"
	"github.com/crawlkit/crawlkit/metrics/prometheus"
)

// Node is one crawler process of a distributed crawl. Create it with
// NewNode, serve Handler if you like, and call Run once.
type Node struct {
	cfg     Config
	names   names
	pol     *fetch.Politeness
	crawler *crawlkit.Crawler
	lazy    *lazyQueue
	results *resultStash // nil unless Config.Results
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
	var results *resultStash
	if cfg.Results {
		results = newResultStash(cfg.NodeID, cc.Sink)
		cc.Sink = results
	}
	// The Queue applies the Recrawl schedule (recrawl.go); the Crawler
	// refuses one with a Queue.
	cc.Recrawl = nil
	crawler, err := crawlkit.New(cc)
	if err != nil {
		return nil, err
	}
	return &Node{cfg: cfg, names: namesFor(cfg.CrawlID), pol: pol, crawler: crawler, lazy: lazy, results: results}, nil
}

// SetHTTPAddr records the address the node's Handler is served on, so that
// it is published in the membership bucket for the stats aggregator. It
// must be one other machines can dial: not a listener's address on all
// interfaces (0.0.0.0 or ::), which the aggregator skips. Call it before
// Run.
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
	mux.Handle("/metrics", prometheus.Handler(n.crawler))
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
	nc, err := connectNATS(cfg.NATSURL, "crawlkit-node-"+cfg.NodeID, cfg.NATSOptions)
	if err != nil {
		return err
	}
	defer nc.Close()
	if err := checkServerVersion(nc.ConnectedServerVersion()); err != nil {
		return err
	}
	if cfg.Replicas == 0 {
		cfg.Replicas = DefaultReplicas(len(nc.Servers()))
		cfg.Logger.Info("replicas by the cluster's size", "servers", len(nc.Servers()), "replicas", cfg.Replicas)
	}
	js, err := newJetStream(nc)
	if err != nil {
		return err
	}
	// A cluster that is just starting has no JetStream meta leader yet,
	// and a loaded one answers slowly: every step of the setup is retried
	// on its own (so progress is kept) for up to SetupTimeout.
	sctx, cancel := context.WithTimeout(ctx, SetupTimeout)
	defer cancel()
	retrying := func(what string, err error) {
		cfg.Logger.Info("setting up the crawl; retrying", "step", what, "err", err)
	}
	setupStart := time.Now()
	stream, consumers, kv, err := setup(sctx, js, cfg, retrying)
	cfg.Logger.Debug("crawl set up", "took", time.Since(setupStart).Round(time.Millisecond), "err", err)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return err
	}
	q, err := newQueue(cfg, js, stream, n.pol)
	if err != nil {
		return err
	}
	defer q.close()
	q.results = n.results
	err = retry(sctx, "bucket "+n.names.hosts(), retrying, func(ctx context.Context) (err error) {
		cfg := hostsBucketConfig(n.names, cfg.Replicas)
		if q.hosts, err = js.KeyValue(ctx, cfg.Bucket); !errors.Is(err, jetstream.ErrBucketNotFound) {
			return err
		}
		q.hosts, err = js.CreateKeyValue(ctx, cfg)
		return err
	})
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return err
	}
	if cfg.SnapshotEvery > 0 {
		err = retry(sctx, "snapshot buckets", retrying, func(ctx context.Context) (err error) {
			q.snaps, err = openSnapshots(ctx, js, n.names, cfg.Replicas)
			return err
		})
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return err
		}
	}
	for p, part := range q.parts {
		part.consumer = consumers[p]
	}
	n.httpMu.Lock()
	info := MemberInfo{ID: cfg.NodeID, HTTP: n.http, Started: cfg.Now()}
	n.httpMu.Unlock()
	mem, err := newMembership(kv, info, cfg.MemberTTL, cfg.Now, cfg.Logger)
	if err != nil {
		return err
	}
	if err := retry(sctx, "joining", retrying, mem.heartbeat); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return err
	}
	cancel()
	n.lazy.set(q)
	// Once ctx ends, Add and Done give up retrying through an outage: the
	// Crawler's pages in flight get ShutdownGrace, not PublishTimeout.
	defer context.AfterFunc(ctx, q.stop)()

	// Background work, owned here: membership, compaction, rebalancing,
	// keep-alive.
	bg, stopBG := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	wg.Add(5)
	go func() { defer wg.Done(); mem.run(bg) }()
	go func() { defer wg.Done(); n.balance(bg, q, mem) }()
	go func() { defer wg.Done(); q.compactLoop(bg, max(cfg.MemberTTL, time.Second)) }()
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
	q.stop() // leaving: nothing may retry any more

	// Graceful leave: the Crawler has settled or abandoned its leases.
	// Hand every partition back, then leave the membership.
	cfg.Logger.Info("crawler stopped; leaving", "err", runErr)
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
// changes, and retries failed acquisitions, until ctx ends; it closes done
// when it has stopped.
func (n *Node) rebalance(ctx context.Context, q *Queue, mem *membership, done chan<- struct{}) {
	defer close(done)
	var acquiring sync.WaitGroup // acquisitions in flight, ended by ctx
	defer acquiring.Wait()
	var prev []string
	// Nodes started together should see each other before the first
	// assignment, or the first one takes every partition and hands most
	// of them back a moment later.
	// A node that joins a running crawl (its view holds a member started
	// more than that wait before it) has no such peers to wait for: the
	// running nodes release its partitions as soon as they see it, so
	// it takes them at once (TestLateNode).
	settle := time.NewTimer(n.cfg.MemberTTL / 2)
	look := time.NewTicker(max(n.cfg.MemberTTL/40, 20*time.Millisecond))
	for settled := false; !settled; {
		select {
		case <-ctx.Done():
			settle.Stop()
			look.Stop()
			return
		case <-settle.C:
			settled = true
		case <-look.C:
			settled = mem.joinedRunning(n.cfg.MemberTTL / 2)
		}
	}
	settle.Stop()
	look.Stop()
	// The ticker retries what failed (an acquisition during a leader
	// election) and looks again while this node is not in its own view.
	tick := time.NewTicker(max(n.cfg.MemberTTL/8, 100*time.Millisecond))
	defer tick.Stop()
	for first := true; ; first = false {
		if !first {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			case <-mem.changed:
				// Let a burst of changes (several nodes starting or
				// stopping) settle into one rebalance.
				select {
				case <-ctx.Done():
					return
				case <-time.After(200 * time.Millisecond):
				}
			}
		}
		live, ok := mem.members()
		if !ok {
			continue // not in the view yet: the first heartbeat is on its way
		}
		want := map[int]bool{}
		for p, o := range mem.owners(live, n.cfg.Partitions) {
			if o == n.cfg.NodeID {
				want[p] = true
			}
		}
		if !slices.Equal(live, prev) {
			prev = live
			n.cfg.Logger.Info("membership changed", "members", live, "partitions", len(want))
		}
		n.reconcile(ctx, q, want, &acquiring)
	}
}

// reconcile releases the owned partitions not in want, and waits for the
// releases; it starts acquiring those in want that are neither owned nor
// being acquired, and does not wait for those: an acquisition replays its
// partition, which can take a while (a large partition, a leader
// election), and meanwhile the other partitions must still move. A failed
// acquisition is retried on a later call, with a backoff from 250 ms
// doubling up to MemberTTL. An acquisition that ends after its partition
// stopped being wanted is released by the next call.
func (n *Node) reconcile(ctx context.Context, q *Queue, want map[int]bool, acquiring *sync.WaitGroup) {
	var wg sync.WaitGroup
	now := time.Now()
	for _, p := range q.parts {
		q.mu.Lock()
		owned, retryAt, busy := p.owned, p.retryAt, p.acquiring
		start := !owned && !busy && want[p.id] && !now.Before(retryAt)
		if start {
			p.acquiring = true
		}
		q.mu.Unlock()
		switch {
		case owned && !want[p.id]:
			wg.Add(1)
			go func() { defer wg.Done(); q.release(ctx, p) }()
		case start:
			acquiring.Add(1)
			go func() {
				defer acquiring.Done()
				err := q.acquire(ctx, p)
				q.mu.Lock()
				defer q.mu.Unlock()
				p.acquiring = false
				if err == nil || ctx.Err() != nil {
					p.retryAt, p.backoff = time.Time{}, 0
					return
				}
				p.backoff = min(max(2*p.backoff, 250*time.Millisecond), n.cfg.MemberTTL)
				p.retryAt = time.Now().Add(p.backoff)
				n.cfg.Logger.Warn("acquiring a partition failed; retrying", "partition", p.id, "in", p.backoff, "err", err)
			}()
		}
	}
	wg.Wait()
}

// setupParallel is how many partition consumers a node checks or creates
// at once when it starts.
const setupParallel = 8

// SetupTimeout bounds how long a node keeps trying to create or check the
// crawl's stream, consumers and membership bucket when it starts.
const SetupTimeout = 5 * time.Minute

// setup creates (or checks) the crawl's stream, partition consumers and
// membership bucket, and returns them. Every node runs it; the calls are
// idempotent. Each call is retried until it succeeds or ctx ends (see
// retry).
func setup(ctx context.Context, js jetstream.JetStream, cfg Config, retrying func(what string, err error)) (jetstream.Stream, []jetstream.Consumer, jetstream.KeyValue, error) {
	nm := namesFor(cfg.CrawlID)
	try := func(what string, f func(ctx context.Context) error) error { return retry(ctx, what, retrying, f) }
	// An existing stream and bucket are used as they are: updating them
	// (every node would, at start) races in nats-server 2.15.2 with the
	// consumers another node creates meanwhile (fileStore.UpdateConfig
	// writes the config that ConsumerStore reads unlocked; seen by -race
	// in TestKillNode, whose server is in the test process).
	var stream jetstream.Stream
	err := try("stream "+nm.stream, func(ctx context.Context) (err error) {
		if stream, err = js.Stream(ctx, nm.stream); !errors.Is(err, jetstream.ErrStreamNotFound) {
			return err
		}
		stream, err = js.CreateStream(ctx, jetstream.StreamConfig{
			Name:        nm.stream,
			Description: "crawlkit URL log of crawl " + cfg.CrawlID,
			// The partitions, and the recrawls scheduled for them
			// (recrawl.go).
			Subjects:          []string{nm.subjects(), nm.scheduleSubjects()},
			Retention:         jetstream.LimitsPolicy,
			Storage:           jetstream.FileStorage,
			Replicas:          cfg.Replicas,
			Duplicates:        cfg.DuplicateWindow,
			AllowDirect:       true,
			AllowMsgSchedules: true,
			AllowRollup:       true, // schedules need it
		})
		return err
	})
	if err != nil {
		return nil, nil, nil, err
	}
	if cfg.Crawler.Recrawl != nil {
		if err := checkRecrawlStream(&stream.CachedInfo().Config, nm); err != nil {
			return nil, nil, nil, err
		}
	}
	// The partitions' consumers are checked or created a few at a time:
	// one after another, the 64 round trips were most of a joining
	// node's setup on a loaded server.
	consumers := make([]jetstream.Consumer, cfg.Partitions)
	errs := make([]error, cfg.Partitions)
	sem := make(chan struct{}, setupParallel)
	var wg sync.WaitGroup
	for p := range cfg.Partitions {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			errs[p] = try(fmt.Sprintf("consumer of partition %d", p), func(ctx context.Context) (err error) {
				consumers[p], err = stream.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{
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
				return err
			})
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, nil, nil, err
		}
	}
	if cfg.Results {
		err := try("stream "+nm.resultsStream(), func(ctx context.Context) error {
			_, err := ensureResultsStream(ctx, js, nm, cfg.Replicas, cfg.DuplicateWindow)
			return err
		})
		if err != nil {
			return nil, nil, nil, err
		}
	}
	var kv jetstream.KeyValue
	err = try("bucket "+nm.members, func(ctx context.Context) (err error) {
		if kv, err = js.KeyValue(ctx, nm.members); !errors.Is(err, jetstream.ErrBucketNotFound) {
			return err
		}
		kv, err = js.CreateKeyValue(ctx, jetstream.KeyValueConfig{
			Bucket:   nm.members,
			TTL:      cfg.MemberTTL,
			History:  1,
			Storage:  jetstream.MemoryStorage,
			Replicas: cfg.Replicas,
		})
		return err
	})
	if err != nil {
		return nil, nil, nil, err
	}
	return stream, consumers, kv, nil
}

// retry calls f with a 10 s timeout until it succeeds or ctx ends, waiting
// 250 ms to 2 s between attempts; failed attempts are reported to
// retrying, if not nil.
func retry(ctx context.Context, what string, retrying func(what string, err error), f func(ctx context.Context) error) error {
	wait := 250 * time.Millisecond
	for {
		actx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err := f(actx)
		cancel()
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("distributed: %s: %w", what, err)
		}
		if retrying != nil {
			retrying(what, err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("distributed: %s: %w", what, err)
		case <-time.After(wait):
		}
		wait = min(2*wait, 2*time.Second)
	}
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

func (l *lazyQueue) Done(le *frontier.Lease, o frontier.Outcome) (frontier.Settlement, error) {
	if q := l.get(); q != nil {
		return q.Done(le, o)
	}
	return frontier.Settlement{}, errNotRunning
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

// Deduplicates reports that the Queue it stands for drops known URLs.
func (l *lazyQueue) Deduplicates() bool { return true }
