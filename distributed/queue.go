package distributed

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/bloom"
	"github.com/crawlkit/crawlkit/frontier"
	"github.com/crawlkit/crawlkit/urlnorm"
)

// Queue is a crawlkit.Queue over the partitioned URL stream: Add publishes,
// and Next, NextAt and Done serve the URLs of the partitions this node owns
// from a local frontier. Create one with a Node.
type Queue struct {
	cfg    Config
	names  names
	js     jetstream.JetStream
	stream jetstream.Stream
	front  *frontier.Frontier
	log    *slog.Logger
	now    func() time.Time
	// snaps, if set, holds the crawl's seen-set snapshots (snapshot.go).
	snaps *snapshots
	// hosts, if set, is the crawl's hosts bucket (handover.go); pol is
	// the node's politeness, whose next contact times go there.
	hosts jetstream.KeyValue
	pol   frontier.Politeness
	// writer names this process (this Queue) in its host records: random,
	// so that a node restarted under the same NodeID, whose Politeness
	// starts empty, does not take its predecessor's records for its own.
	writer string
	// results, if set, holds the Results of handled pages until Done
	// publishes them (Config.Results).
	results *resultStash
	// fenceTTL is how long a confirmation of this node's pin lets it
	// hand out leases of the partition (see fence.go).
	fenceTTL time.Duration

	parts []*partition

	mu   sync.Mutex
	held map[string]*heldMsg // by URL: the messages this node holds
	// settling holds, by URL, the messages Done has taken out of held and
	// not yet acknowledged or handed back: an ack can take seconds (a
	// consumer leader election), and a redelivery meanwhile is the same
	// message, not a URL to fetch again.
	settling map[string]*heldMsg
	// settled is signalled when a lease of a released partition settles.
	settled *sync.Cond

	finMu      sync.Mutex
	finChecked time.Time
	finResult  bool
	// lastBusyLog rate-limits the log line saying why the crawl is not
	// finished.
	lastBusyLog time.Time
	busyHint    int // the partition found busy last

	// stopMu guards stopC, closed by stop when the node is stopping.
	stopMu   sync.Mutex
	stopC    chan struct{}
	stopOnce sync.Once

	counters queueCounters
	// replayed, if set (by tests), is called for every message a replay
	// reads.
	replayed func(seq uint64)
}

// queueCounters are the Queue's own statistics.
type queueCounters struct {
	published, publishDuplicates atomic.Int64
	delivered, dropped           atomic.Int64
	acked, naked, given, reacked atomic.Int64
	settleRedelivered            atomic.Int64
	replayed                     atomic.Int64
	replayNanos                  atomic.Int64
	acquired, released           atomic.Int64
	fenced, holds, probes        atomic.Int64
	restarts, recrawls           atomic.Int64
	results, resultDuplicates    atomic.Int64
	snapshots, snapshotLoads     atomic.Int64
	snapshotKeys, purges         atomic.Int64
	balanced                     atomic.Int64
}

// QueueStats are a Queue's counters, served by the node at /queue.
type QueueStats struct {
	// Owned lists the partitions this node consumes now.
	Owned []int `json:"owned"`
	// Held is the number of messages held unacknowledged.
	Held int `json:"held"`
	// Published counts URLs published; PublishDuplicates those the
	// server dropped as repeats of a recent Nats-Msg-Id.
	Published         int64 `json:"published"`
	PublishDuplicates int64 `json:"publish_duplicates"`
	// Delivered counts messages received; Dropped those that were not the
	// first of their URL in the partition (acknowledged unfetched).
	Delivered int64 `json:"delivered"`
	Dropped   int64 `json:"dropped_duplicates"`
	// Acked counts URLs finished; Naked retries sent back with a delay;
	// GivenUp messages dropped after too many deliveries.
	Acked   int64 `json:"acked"`
	Naked   int64 `json:"naked"`
	GivenUp int64 `json:"given_up"`
	// AckedLate counts redeliveries of URLs this node had handled but
	// whose ack had got no answer, acknowledged without a second fetch
	// (part of Acked).
	AckedLate int64 `json:"acked_late"`
	// RedeliveredWhileSettling counts redeliveries of a message that came
	// while this node's ack of it was under way, acknowledged with it
	// instead of fetched again (not part of Acked).
	RedeliveredWhileSettling int64 `json:"redelivered_while_settling"`
	// Replayed counts messages read to rebuild seen sets, in
	// ReplaySeconds.
	Replayed      int64   `json:"replayed"`
	ReplaySeconds float64 `json:"replay_seconds"`
	// Acquired and Released count partition moves to and from this node.
	Acquired int64 `json:"acquired"`
	Released int64 `json:"released"`
	// Fenced counts leases put back because their partition was fenced
	// (pin not confirmed, or in its handover hold).
	Fenced int64 `json:"fenced"`
	// Holds counts handover holds started; Probes messages handed back
	// to make the server pin a client again (see README.md, "Fencing").
	Holds  int64 `json:"holds"`
	Probes int64 `json:"probes"`
	// Restarts counts partition consumes started again: stopped by the
	// client after a terminal pull error, or stalled (messages pending,
	// no pull request waiting, nothing delivered; see README.md).
	Restarts int64 `json:"restarts"`
	// Recrawls counts next generations scheduled (recrawl.go).
	Recrawls int64 `json:"recrawls"`
	// Results counts page Results published (Config.Results);
	// ResultDuplicates those the server dropped as repeats.
	Results          int64 `json:"results"`
	ResultDuplicates int64 `json:"result_duplicates"`
	// Snapshots counts seen-set snapshots written, SnapshotLoads those
	// read (on takeover, or before a catch-up); SnapshotKeys is the size
	// of the last one written; Purges counts purges of a partition's
	// settled messages (README.md, "Bounded log").
	Snapshots     int64 `json:"snapshots"`
	SnapshotLoads int64 `json:"snapshot_loads"`
	SnapshotKeys  int64 `json:"snapshot_keys"`
	Purges        int64 `json:"purges"`
	// Balanced counts partition moves this node planned to even the
	// nodes' backlogs, as the member that balances (balance.go).
	Balanced int64 `json:"balanced"`
}

// partition is one partition's state on this node.
type partition struct {
	id       int
	subject  string
	consumer jetstream.Consumer

	// Guarded by Queue.mu.
	owned  bool
	gen    int // bumped on every acquire and release; stale callbacks compare it
	cc     jetstream.ConsumeContext
	stop   chan struct{} // closed to end the acquisition's guard
	leased int           // leases handed out and not settled
	nheld  int           // messages of the partition in Queue.held
	// retryAt and backoff pace failed acquisitions (rebalance);
	// acquiring is set while an acquisition runs.
	retryAt   time.Time
	backoff   time.Duration
	acquiring bool

	// Fencing state of the current acquisition, guarded by Queue.mu
	// (see fence.go).
	pin         string    // pin id of this node's newest delivery ("" before the first)
	lastDseq    uint64    // consumer sequence of that delivery
	confirmed   time.Time // send time of the newest consumer info that showed pin pinned; zero: fenced
	leader      string    // the consumer's leader according to that info
	checkLeader bool      // pin changed with contiguous deliveries: hold unless the leader is the same
	lost        int       // consecutive pin checks that found no pin
	probed      time.Time // when a message was last handed back to get a pin
	tenure      time.Time // when this node first saw pin
	fetchFrom   time.Time // no lease before this (handover politeness)
	handover    int       // bumped by every hold (handover.go)
	handingOver bool      // the hold's host records are being read
	staged      []*heldMsg
	kick        chan struct{} // wakes the guard

	// Stall watch of the current acquisition, guarded by Queue.mu (see
	// Queue.stallCheckDue): when the last message arrived or its handling
	// ended, how many are being handled (a delivery can take seconds, when
	// it catches up by a replay, and the client pulls no more meanwhile),
	// when the guard last asked the server about a quiet partition, and
	// how many answers in a row showed a stalled consume.
	lastDelivery time.Time
	delivering   int
	stallAsked   time.Time
	stalls       int

	// Guarded by mu: the seen set, used by the consume callback (one at a
	// time) and by Done. A delivery holds mu while it catches up by a
	// replay, which can wait seconds for the server (replayStall), so the
	// workers' Done never waits for mu: what it records is under book, and
	// the one entry of open it removes is removed later if mu is busy.
	mu       sync.Mutex
	seen     *bloom.Set
	store    *bloom.MemoryStore  // seen's exact keys, which snapshots copy
	hw       uint64              // highest stream sequence whose URL is in seen
	ackFloor uint64              // the consumer's ack floor when acquired
	open     map[uint64]struct{} // primary messages above ackFloor not known to be acked

	// Guarded by book (taken after mu where both are held): Done's
	// records of this acquisition's messages.
	book    sync.Mutex
	retries map[uint64]int // retries of a message sent back by this acquisition
	// handled holds the messages this acquisition settled for good whose
	// ack got no answer (a consumer leader election outlasts the ack's
	// retries): their redelivery here is acknowledged, not fetched again.
	handled map[uint64]struct{}
	// judgedPin and judgedDseq are the pin and consumer sequence of the
	// newest delivery judged here, if that delivery was the first of its
	// message (see judge); judgedPin is "" otherwise.
	judgedPin  string
	judgedDseq uint64
	// Snapshots (snapshot.go): acq is bumped by every acquisition; fresh
	// counts the messages judged or replayed since the newest snapshot
	// this node knows of, snap; purgedTo is where this acquisition has
	// purged the partition's subject up to.
	acq      int
	fresh    int
	snap     snapshotRef
	purgedTo uint64
}

// heldMsg is a message this node holds: queued in the local frontier,
// staged (taken out of the local frontier while its partition is fenced) or
// leased to a worker.
type heldMsg struct {
	msg    jetstream.Msg
	entry  frontier.Entry
	part   *partition
	gen    int
	seq    uint64
	tries  uint64 // deliveries so far
	leased bool
	staged bool
	// generation is the URL's recrawl generation (0: its first fetch);
	// fp and interval are the content fingerprint and recrawl interval
	// of its previous fetch, which an adaptive Schedule needs (recrawl.go).
	generation uint32
	fp         uint64
	interval   time.Duration
	// attempt is the number of fetches of the message by this
	// acquisition that had ended in a retry when it was delivered; claim
	// puts it in the lease (Lease.Attempt, which the Crawler compares
	// with RobotsRetries and passes to handlers as Page.Attempt).
	attempt int
	// redelivered are the handles of its redeliveries that came while
	// Done settled it (Queue.settling); they are acknowledged with it.
	redelivered []jetstream.Msg
}

// wireEntry is a published URL.
type wireEntry struct {
	URL      string  `json:"u"`
	Host     string  `json:"h,omitempty"`
	Depth    int     `json:"d,omitempty"`
	Priority float64 `json:"p,omitempty"`
	Meta     []byte  `json:"m,omitempty"`
	// A recrawl (recrawl.go): its generation, not-before time (Unix ms),
	// and the fingerprint and interval (ns) of the previous fetch.
	Gen         uint32 `json:"g,omitempty"`
	NotBefore   int64  `json:"nb,omitempty"`
	Fingerprint uint64 `json:"fp,omitempty"`
	Interval    int64  `json:"iv,omitempty"`
}

// msgID is a URL's Nats-Msg-Id: its urlnorm.Key in hex. Replay reads the
// key back from it, so it never has to decode a message body.
func msgID(key uint64) string {
	var b [8]byte
	for i := range 8 {
		b[i] = byte(key >> (56 - 8*i))
	}
	return hex.EncodeToString(b[:])
}

func keyOfMsgID(id string) (uint64, bool) {
	if len(id) != 16 {
		return 0, false
	}
	k, err := strconv.ParseUint(id, 16, 64)
	return k, err == nil
}

var _ crawlkit.Queue = (*Queue)(nil)

func newQueue(cfg Config, js jetstream.JetStream, stream jetstream.Stream, pol frontier.Politeness) (*Queue, error) {
	front, err := frontier.New(frontier.Config{
		Politeness:       pol,
		Prioritizer:      cfg.Crawler.Prioritizer,
		MaxLeasesPerHost: max(cfg.Crawler.MaxConnsPerHost, 1),
		Now:              cfg.Now,
	})
	if err != nil {
		return nil, err
	}
	q := &Queue{
		cfg: cfg, names: namesFor(cfg.CrawlID), js: js, stream: stream, front: front,
		log: cfg.Logger, now: cfg.Now, held: map[string]*heldMsg{}, settling: map[string]*heldMsg{}, fenceTTL: cfg.fenceTTL(), pol: pol,
		writer: rand.Text()[:16],
	}
	q.settled = sync.NewCond(&q.mu)
	q.parts = make([]*partition, cfg.Partitions)
	for p := range q.parts {
		q.parts[p] = &partition{id: p, subject: q.names.subject(p), kick: make(chan struct{}, 1)}
	}
	return q, nil
}

// PartitionOf returns the partition of a host (a urlnorm.Host value).
func PartitionOf(host string, partitions int) int {
	return int(urlnorm.HostKey(host) % uint64(partitions))
}

// Add publishes entries to their partitions and returns when the stream has
// stored every one of them: a page's links are durable before its own
// message is acknowledged. Publishes that fail (a cluster electing a new
// stream leader answers nothing for a few seconds) are repeated, with the
// same Nats-Msg-Id so that the server drops a repeat of one that was stored
// after all, for up to PublishTimeout. An error from Add is costly: the
// Crawler has already marked the links as seen, so they are lost unless
// another page links to them again.
//
// Once the node is stopping (stop), Add makes no further attempt: a failed
// attempt ends it at once with an error wrapping ErrStopping, and an
// attempt waits at most stopAckWait more for its acks, so that an outage
// does not hold the node's shutdown for PublishTimeout. The Crawler then
// settles the page as a retry, which Done hands back to the stream at once
// (see Done): the page is fetched again by the partition's next owner, and
// its links are found again.
func (q *Queue) Add(entries ...frontier.Entry) error {
	if len(entries) == 0 {
		return nil
	}
	msgs := make([]*nats.Msg, 0, len(entries))
	for _, e := range entries {
		host := e.Host
		if host == "" {
			h, err := urlnorm.HostOf(e.URL)
			if err != nil {
				return fmt.Errorf("%w: %q: %w", frontier.ErrInvalidEntry, e.URL, err)
			}
			host = h
		}
		data, err := json.Marshal(wireEntry{URL: e.URL, Host: host, Depth: e.Depth, Priority: e.Priority, Meta: e.Meta})
		if err != nil {
			return err
		}
		m := nats.NewMsg(q.names.subject(PartitionOf(host, q.cfg.Partitions)))
		m.Header.Set(jetstream.MsgIDHeader, msgID(urlnorm.Key(e.URL)))
		m.Data = data
		msgs = append(msgs, m)
	}
	return q.publishAll(msgs)
}

// publishAll publishes msgs, repeating the ones that failed for up to
// PublishTimeout, as Add describes.
func (q *Queue) publishAll(msgs []*nats.Msg) error {
	stopping := q.stopping()
	deadline := q.now().Add(PublishTimeout)
	wait := 100 * time.Millisecond
	for {
		failed, err := q.publish(msgs)
		if len(failed) == 0 {
			return nil
		}
		if q.isStopping() {
			return stoppedPublishing(len(failed), err)
		}
		if q.now().After(deadline) {
			return fmt.Errorf("distributed: publishing %d URLs: %w", len(failed), err)
		}
		q.log.Info("publish failed; retrying", "urls", len(failed), "err", err)
		t := time.NewTimer(wait)
		select {
		case <-stopping:
			t.Stop()
			return stoppedPublishing(len(failed), err)
		case <-t.C:
		}
		wait = min(2*wait, 2*time.Second)
		msgs = failed
	}
}

// stoppedPublishing is Add's error when it gives up because the node is
// stopping.
func stoppedPublishing(n int, last error) error {
	if errors.Is(last, ErrStopping) || last == nil {
		return fmt.Errorf("distributed: publishing %d URLs: %w", n, ErrStopping)
	}
	return fmt.Errorf("distributed: publishing %d URLs: %w (last attempt: %w)", n, ErrStopping, last)
}

// stopAckWait is how long an attempt of Add waits for its acks once the
// node is stopping (publishAckWait otherwise): a server that answers does
// so in milliseconds, and one that does not must not hold the shutdown.
const stopAckWait = 2 * time.Second

// PublishTimeout is how long Add keeps trying to publish a page's links.
const PublishTimeout = 2 * time.Minute

// publishAckWait is how long publish waits for the acks of a batch, and
// how long the JetStream context keeps an unanswered publish.
const publishAckWait = 10 * time.Second

// newJetStream returns the JetStream context a node publishes through. Its
// asynchronous publishes time out after publishAckWait: without that, the
// client keeps a publish whose ack never comes (the request was lost with a
// stream leader that died while this node stayed connected to another
// server) for ever, and once PublishAsyncMaxPending of them have piled up,
// every later publish stalls and fails. publish has given such a publish up
// by then and sends it again (with the same Nats-Msg-Id).
func newJetStream(nc *nats.Conn) (jetstream.JetStream, error) {
	return jetstream.New(nc, jetstream.WithPublishAsyncTimeout(publishAckWait))
}

// publish sends msgs asynchronously and waits for their acks; it returns
// the ones that were not stored and the first error.
func (q *Queue) publish(msgs []*nats.Msg) ([]*nats.Msg, error) {
	type pending struct {
		m *nats.Msg
		f jetstream.PubAckFuture
	}
	var (
		failed   []*nats.Msg
		firstErr error
		waiting  = make([]pending, 0, len(msgs))
	)
	fail := func(m *nats.Msg, err error) {
		failed = append(failed, m)
		if firstErr == nil {
			firstErr = err
		}
	}
	for _, m := range msgs {
		f, err := q.js.PublishMsgAsync(m)
		if err != nil {
			fail(m, err)
			continue
		}
		waiting = append(waiting, pending{m, f})
	}
	timeout := time.NewTimer(publishAckWait)
	defer timeout.Stop()
	// Once the node is stopping, the acks get stopAckWait more at most.
	stopping := q.stopping()
	var grace <-chan time.Time
	var expired error // why the wait ended: acks not in yet are failures
	for _, p := range waiting {
		if expired != nil {
			select {
			case ack := <-p.f.Ok():
				q.countPublished(ack)
			default:
				fail(p.m, expired)
			}
			continue
		}
	wait:
		for {
			select {
			case ack := <-p.f.Ok():
				q.countPublished(ack)
			case err := <-p.f.Err():
				fail(p.m, err)
			case <-timeout.C:
				expired = context.DeadlineExceeded
				fail(p.m, expired)
			case <-stopping:
				stopping = nil
				g := time.NewTimer(stopAckWait)
				defer g.Stop()
				grace = g.C
				continue
			case <-grace:
				expired = ErrStopping
				fail(p.m, expired)
			}
			break wait
		}
	}
	return failed, firstErr
}

func (q *Queue) countPublished(ack *jetstream.PubAck) {
	if ack.Stream == q.names.resultsStream() {
		q.counters.results.Add(1)
		if ack.Duplicate {
			q.counters.resultDuplicates.Add(1)
		}
		return
	}
	q.counters.published.Add(1)
	if ack.Duplicate {
		q.counters.publishDuplicates.Add(1)
	}
}

// Next returns a lease on a URL of an owned partition whose host may be
// contacted now, blocking until there is one or ctx ends.
func (q *Queue) Next(ctx context.Context) (*frontier.Lease, error) {
	for {
		l, err := q.front.Next(ctx)
		if err != nil {
			return nil, err
		}
		if q.claim(l) {
			return l, nil
		}
	}
}

// NextAt is Next without blocking. When nothing is ready locally it reports
// a zero time only if the whole crawl is finished (see the package
// documentation); otherwise a time shortly ahead, so the Crawler polls.
func (q *Queue) NextAt(now time.Time) (*frontier.Lease, time.Time, error) {
	for {
		l, at, err := q.front.NextAt(now)
		if err != nil {
			return nil, time.Time{}, err
		}
		if l == nil {
			if !at.IsZero() {
				return nil, at, nil
			}
			if q.finished(now) {
				return nil, time.Time{}, nil
			}
			return nil, now.Add(250 * time.Millisecond), nil
		}
		if q.claim(l) {
			return l, time.Time{}, nil
		}
	}
}

// claim ties a local lease to its held message, just before the URL is
// fetched. A lease whose message is no longer held here (its partition moved
// away, or a stale copy of a URL queued twice) is settled locally and
// reported false. So is a lease of a partition that is fenced (see
// fence.go): this node's pin is not confirmed, or the handover hold is not
// over. Its message stays held and goes back to the local frontier when the
// partition is open again.
func (q *Queue) claim(l *frontier.Lease) bool {
	now := q.now()
	q.mu.Lock()
	h := q.held[l.URL]
	if h == nil || h.leased || h.staged || !h.part.owned || h.part.gen != h.gen {
		q.mu.Unlock()
		q.drop(l)
		return false
	}
	p := h.part
	if !q.openLocked(p, now) {
		q.counters.fenced.Add(1)
		h.staged = true
		p.staged = append(p.staged, h)
		q.mu.Unlock()
		p.wake()
		q.drop(l)
		return false
	}
	h.leased = true
	p.leased++
	// The local frontier counts no attempts (every delivery is a fresh
	// entry there): the lease gets this acquisition's count.
	l.Attempt = h.attempt
	l.Fingerprint, l.Interval = h.fp, h.interval
	q.mu.Unlock()
	q.reserveHost(p.id, l.Host)
	return true
}

// drop settles a local lease that will not be fetched.
func (q *Queue) drop(l *frontier.Lease) {
	if _, err := q.front.Done(l, frontier.Failed()); err != nil && !errors.Is(err, frontier.ErrClosed) {
		q.log.Debug("dropping stale lease", "url", l.URL, "err", err)
	}
}

// Done settles a lease: a final outcome acknowledges the URL's message
// (synchronously, so the server has recorded it), a retry sends it back
// with a delay.
//
// Once the node is stopping, an ack that fails is not retried (the message
// is redelivered after AckWait: a duplicate fetch, never a loss), and a
// retry is handed back at once (Nak) without being counted as an attempt,
// so it is never given up: it may be the page whose Add gave up because
// the node is stopping, whose links are found again only if the page is
// fetched again.
//
// A success that the crawl's Recrawl schedule (or the outcome's RecrawlAt)
// asks to fetch again has its next generation scheduled in the stream
// before the ack (recrawl.go).
//
// It reports what it did to the URL's message: finished, failed or due for
// a recrawl (acked), retrying after the Nak's delay, given up (acked after
// MaxAttempts). A lease this
// node no longer holds settles nothing in the stream, and Done reports
// frontier.ErrLeaseExpired: its message is delivered again. An error of
// the local frontier comes with the Settlement of the message all the same.
func (q *Queue) Done(l *frontier.Lease, o frontier.Outcome) (frontier.Settlement, error) {
	q.mu.Lock()
	h := q.held[l.URL]
	if h != nil && h.leased {
		q.unholdLocked(h)
		h.part.leased--
		if !h.part.owned {
			q.settled.Broadcast()
		}
		q.settling[l.URL] = h
	} else {
		h = nil
	}
	q.mu.Unlock()
	acked := false
	if h != nil {
		defer q.endSettling(h, &acked)
	}

	var result []byte // the page's Result, published with a final outcome
	if q.results != nil {
		result = q.results.take(l.URL)
	}
	local := o
	if o.Kind == frontier.OutcomeRetry {
		local = frontier.Failed() // the retry is the stream's, not the local frontier's
	}
	local.RecrawlAt = time.Time{}
	_, ferr := q.front.Done(l, local)
	if h == nil {
		if ferr == nil {
			ferr = fmt.Errorf("%w: %s", frontier.ErrLeaseExpired, l.URL)
		}
		q.log.Debug("settling a URL no longer held here; it is delivered again", "url", l.URL)
		return frontier.Settlement{}, ferr
	}
	// The next owner of the partition learns when the host may be
	// contacted again before this URL is acknowledged or handed back.
	q.settleHost(h.part.id, l.Host)
	set := frontier.Settlement{Kind: frontier.SettlementFinished, Attempt: l.Attempt}
	if o.Kind == frontier.OutcomeFailed {
		set.Kind = frontier.SettlementFailed
	}

	retry := o.Kind == frontier.OutcomeRetry
	recrawl, recrawling := q.planRecrawl(h, o)
	stopping := q.isStopping()
	var delay time.Duration
	if retry && !stopping {
		// Attempts are counted here, by the acquisition that makes them:
		// the delivery count also grows with every handover.
		p := h.part
		p.book.Lock()
		d := q.planRetry(p.retries[h.seq], o.RetryAfter)
		if p.retries != nil {
			p.retries[h.seq] = d.Attempt
		}
		p.book.Unlock()
		set.Attempt = d.Attempt
		if d.Kind == frontier.SettlementGivenUp {
			retry = false
			set.Kind = frontier.SettlementGivenUp
			q.counters.given.Add(1)
			q.log.Warn("giving up a URL after its last attempt", "url", l.URL, "attempts", d.Attempt)
		}
		delay = d.At.Sub(q.now())
	}
	switch {
	case retry && stopping:
		// The next owner of the partition fetches it again, after its
		// handover hold (which keeps the host's politeness).
		if err := h.msg.Nak(); err != nil {
			q.log.Warn("nak failed; the URL comes back after AckWait", "url", l.URL, "err", err)
		}
		q.counters.naked.Add(1)
		set = frontier.Settlement{Kind: frontier.SettlementRetrying, At: q.now(), Attempt: l.Attempt}
	case retry:
		if err := h.msg.NakWithDelay(delay); err != nil {
			q.log.Warn("nak failed; the URL comes back after AckWait", "url", l.URL, "err", err)
		}
		q.counters.naked.Add(1)
		set = frontier.Settlement{Kind: frontier.SettlementRetrying, At: q.now().Add(delay), Attempt: set.Attempt}
	case recrawling && q.scheduleRecrawl(h, recrawl) != nil:
		// The next generation is not stored: the URL must not be
		// acknowledged without it, or it would never be fetched again.
		q.log.Warn("scheduling the URL's recrawl failed; the URL is handed back", "url", l.URL)
		if err := h.msg.Nak(); err != nil {
			q.log.Warn("nak failed; the URL comes back after AckWait", "url", l.URL, "err", err)
		}
		q.counters.naked.Add(1)
		set = frontier.Settlement{Kind: frontier.SettlementRetrying, At: q.now(), Attempt: set.Attempt}
	case q.publishResult(l.URL, h.generation, result) != nil:
		// The page's Result is not stored: it must not be acknowledged
		// without one. The next owner of the partition (or this node)
		// fetches it again.
		q.log.Warn("publishing the page's result failed; the URL is handed back", "url", l.URL)
		if err := h.msg.Nak(); err != nil {
			q.log.Warn("nak failed; the URL comes back after AckWait", "url", l.URL, "err", err)
		}
		q.counters.naked.Add(1)
		set = frontier.Settlement{Kind: frontier.SettlementRetrying, At: q.now(), Attempt: set.Attempt}
	default:
		// An ack that gets no answer (a consumer leader election) is
		// repeated: until the message is redelivered, a late ack still
		// counts, and saves a duplicate fetch.
		// Keep trying for half of AckWait: an election takes seconds,
		// and this worker has nothing better to do meanwhile. Not once the
		// node is stopping: the shutdown must not wait for an election.
		var err error
		deadline := time.Now().Add(q.cfg.AckWait / 2)
		stopping := q.stopping()
	ack:
		for try := 1; ; try++ {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			err = h.msg.DoubleAck(ctx)
			cancel()
			if err == nil || errors.Is(err, jetstream.ErrMsgAlreadyAckd) {
				err = nil
				break
			}
			if time.Now().After(deadline) {
				break
			}
			t := time.NewTimer(min(time.Duration(try)*250*time.Millisecond, time.Second))
			select {
			case <-stopping:
				t.Stop()
				err = fmt.Errorf("%w: %w", ErrStopping, err)
				break ack
			case <-t.C:
			}
		}
		if err != nil {
			// The server will redeliver it. Here it is acknowledged
			// then; at another owner it is a duplicate fetch, never a
			// loss.
			q.log.Warn("ack failed; the URL is acknowledged at its redelivery, or fetched again elsewhere", "url", l.URL, "err", err)
			h.part.book.Lock()
			if h.part.handled != nil && len(h.part.handled) < maxHandled {
				h.part.handled[h.seq] = struct{}{}
			}
			h.part.book.Unlock()
		} else {
			acked = true
			q.counters.acked.Add(1)
			h.part.book.Lock()
			delete(h.part.retries, h.seq)
			h.part.book.Unlock()
			h.part.closeOpen(h.seq)
		}
		if recrawling {
			set = frontier.Settlement{Kind: frontier.SettlementRecrawl, At: recrawl.At}
		}
	}
	if q.log.Enabled(context.Background(), slog.LevelDebug) { // once per page: no argument boxing unless logged
		q.log.Debug("settled", "url", l.URL, "partition", h.part.id, "seq", h.seq, "deliveries", h.tries, "kind", set.Kind)
	}
	return set, ferr
}

// endSettling ends Done's settlement of h: once its ack succeeded, the
// redeliveries that came meanwhile are acknowledged too (they are the same
// message); otherwise they are left to come back after AckWait.
func (q *Queue) endSettling(h *heldMsg, acked *bool) {
	q.mu.Lock()
	if q.settling[h.entry.URL] == h {
		delete(q.settling, h.entry.URL)
	}
	again := h.redelivered
	h.redelivered = nil
	q.mu.Unlock()
	if !*acked {
		return
	}
	for _, m := range again {
		_ = m.Ack()
		q.counters.settleRedelivered.Add(1)
	}
}

// closeOpen removes seq, acknowledged, from p.open: at once if p.mu is
// free, else by a goroutine once the delivery that holds it (a replay can
// take seconds) lets go, so that the worker settling it does not wait. Until
// then the entry only says that an acknowledged message is still open,
// which nothing acts on: the server does not deliver it again, and a
// snapshot that copies it lists a primary that never comes. The goroutines
// waiting at once are at most the partition's held messages
// (MaxHeldPerPartition): none is delivered while the lock is held.
func (p *partition) closeOpen(seq uint64) {
	if p.mu.TryLock() {
		delete(p.open, seq)
		p.mu.Unlock()
		return
	}
	go func() {
		p.mu.Lock()
		delete(p.open, seq)
		p.mu.Unlock()
	}()
}

// wasHandled reports whether seq is in p.handled. It requires p.mu held.
func (p *partition) wasHandled(seq uint64) bool {
	p.book.Lock()
	defer p.book.Unlock()
	_, ok := p.handled[seq]
	return ok
}

// maxHandled bounds a partition's handled set: past it, a redelivery whose
// ack failed is fetched again, as at another owner.
const maxHandled = 1 << 14

// ackHandled acknowledges the redelivery of a message this acquisition had
// settled for good but whose ack failed. If this ack fails too, the message
// comes back after AckWait and is judged again.
func (q *Queue) ackHandled(p *partition, m jetstream.Msg, seq uint64, url string) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	err := m.DoubleAck(ctx)
	cancel()
	if err != nil && !errors.Is(err, jetstream.ErrMsgAlreadyAckd) {
		q.log.Debug("acknowledging a redelivered URL already handled", "partition", p.id, "url", url, "err", err)
		return
	}
	q.counters.acked.Add(1)
	q.counters.reacked.Add(1)
	p.book.Lock()
	delete(p.handled, seq)
	delete(p.retries, seq)
	p.book.Unlock()
	p.mu.Lock()
	delete(p.open, seq)
	p.mu.Unlock()
	q.log.Debug("acknowledged a redelivered URL already handled", "partition", p.id, "url", url, "seq", seq)
}

// planRetry is frontier.Policy's decision for a URL of which prev fetches
// by this acquisition already ended in a retry, and whose latest asked for
// Retry-After after: given up at MaxAttempts, else due again after the
// policy's backoff. The policy is the one every crawlkit queue applies.
func (q *Queue) planRetry(prev int, after time.Duration) frontier.Decision {
	// Plan fails only for an outcome of an unknown kind.
	d, _ := q.cfg.policy().Plan(&frontier.Lease{Attempt: prev}, frontier.Outcome{Kind: frontier.OutcomeRetry, RetryAfter: after}, q.now())
	return d
}

// BlockHost keeps host from being leased before until.
func (q *Queue) BlockHost(host string, until time.Time) { q.front.BlockHost(host, until) }

// Stats returns the local frontier's counters.
func (q *Queue) Stats() frontier.Stats { return q.front.Stats() }

// Deduplicates reports that Add drops URLs the partition's owner holds or
// has finished (its seen set), as crawlkit.Queue requires.
func (q *Queue) Deduplicates() bool { return true }

// QueueStats returns the Queue's own counters.
func (q *Queue) QueueStats() QueueStats {
	q.mu.Lock()
	var owned []int
	for _, p := range q.parts {
		if p.owned {
			owned = append(owned, p.id)
		}
	}
	held := len(q.held)
	q.mu.Unlock()
	c := &q.counters
	return QueueStats{
		Owned: owned, Held: held,
		Published: c.published.Load(), PublishDuplicates: c.publishDuplicates.Load(),
		Delivered: c.delivered.Load(), Dropped: c.dropped.Load(),
		Acked: c.acked.Load(), Naked: c.naked.Load(), GivenUp: c.given.Load(), AckedLate: c.reacked.Load(),
		RedeliveredWhileSettling: c.settleRedelivered.Load(),
		Replayed:                 c.replayed.Load(), ReplaySeconds: time.Duration(c.replayNanos.Load()).Seconds(),
		Acquired: c.acquired.Load(), Released: c.released.Load(),
		Fenced: c.fenced.Load(), Holds: c.holds.Load(), Probes: c.probes.Load(),
		Restarts: c.restarts.Load(), Recrawls: c.recrawls.Load(),
		Results: c.results.Load(), ResultDuplicates: c.resultDuplicates.Load(),
		Snapshots: c.snapshots.Load(), SnapshotLoads: c.snapshotLoads.Load(),
		SnapshotKeys: c.snapshotKeys.Load(), Purges: c.purges.Load(),
		Balanced: c.balanced.Load(),
	}
}

// finished reports whether the whole crawl is done, checking the stream at
// most every 300 ms.
func (q *Queue) finished(now time.Time) bool {
	q.finMu.Lock()
	defer q.finMu.Unlock()
	if now.Sub(q.finChecked) < 300*time.Millisecond {
		return q.finResult
	}
	if q.recrawls() {
		// Scheduled generations wait in the stream, where no consumer
		// counts them: a crawl with a Recrawl schedule never ends by
		// itself (as a Crawler's own frontier with one).
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	done, err := q.crawlFinished(ctx)
	if err != nil {
		q.log.Debug("checking for the end of the crawl", "err", err)
	}
	q.finChecked, q.finResult = q.now(), done
	return done
}

// crawlFinished reports whether no partition has a message undelivered or
// unacknowledged (partitionsSettled). It requires finMu held. It starts at
// the partition that was busy last time; during the crawl, that one request
// usually settles it.
func (q *Queue) crawlFinished(ctx context.Context) (bool, error) {
	n := len(q.parts)
	first := q.busyHint
	done, busy, ci, err := partitionsSettled(ctx, q.stream, n, func(ctx context.Context, i int) (*jetstream.ConsumerInfo, error) {
		return q.parts[(first+i)%n].consumer.Info(ctx)
	})
	switch {
	case err != nil && busy >= 0:
		q.logBusy("reading a partition consumer", "partition", (first+busy)%n, "err", err)
	case ci != nil:
		q.busyHint = (first + busy) % n
		q.logBusy("crawl not finished", "partition", q.busyHint, "pending", ci.NumPending,
			"ack_pending", ci.NumAckPending, "waiting", ci.NumWaiting, "redelivered", ci.NumRedelivered)
	case !done && err == nil:
		q.logBusy("crawl not finished: stream grew while checked")
	}
	return done, err
}

// partitionsSettled reports whether none of the n partition consumers of
// stream s has a message undelivered or unacknowledged, and the stream's
// last sequence did not change while they were read (a link published
// meanwhile could move work from a consumer read later to one read
// earlier). info reads the i-th consumer's state from that consumer's own
// leader: a listing of all consumers' state waits for every leader, and
// after a server was killed it failed for minutes. It stops at the first
// consumer that is busy or cannot be read, and reports its index (busy; -1
// if none) and, if busy, its state. The nodes (Queue.crawlFinished) and the
// results writer (resultsDone) both decide the end of the crawl with it.
func partitionsSettled(ctx context.Context, s jetstream.Stream, n int,
	info func(ctx context.Context, i int) (*jetstream.ConsumerInfo, error)) (done bool, busy int, ci *jetstream.ConsumerInfo, err error) {
	before, err := s.Info(ctx)
	if err != nil {
		return false, -1, nil, err
	}
	for i := range n {
		c, err := info(ctx, i)
		if err != nil {
			return false, i, nil, err
		}
		if c.NumPending > 0 || c.NumAckPending > 0 {
			return false, i, c, nil
		}
	}
	after, err := s.Info(ctx)
	if err != nil {
		return false, -1, nil, err
	}
	return before.State.LastSeq == after.State.LastSeq, -1, nil, nil
}

// logBusy logs why the crawl is not finished, at most every 5 s.
func (q *Queue) logBusy(msg string, args ...any) {
	if time.Since(q.lastBusyLog) > 5*time.Second {
		q.lastBusyLog = time.Now()
		q.log.Info(msg, args...)
	}
}

// keepAlive sends InProgress for every held message, so that messages
// waiting in the local frontier or being fetched are not redelivered. A
// message that is neither leased nor part of a current acquisition (left
// behind by a race with a release) is handed back instead, so that nothing
// stays pending for ever.
func (q *Queue) keepAlive() {
	q.mu.Lock()
	msgs := make([]jetstream.Msg, 0, len(q.held))
	var back []jetstream.Msg
	for _, h := range q.held {
		if !h.leased && (!h.part.owned || h.part.gen != h.gen) {
			q.unholdLocked(h)
			back = append(back, h.msg)
			continue
		}
		msgs = append(msgs, h.msg)
	}
	q.mu.Unlock()
	for _, m := range msgs {
		_ = m.InProgress() // a lost one costs a redelivery, which is recognised
	}
	for _, m := range back {
		_ = m.Nak()
	}
}

// acquire starts consuming partition p: it rebuilds the seen set by
// replaying the partition, then pulls through the pinned priority group and
// starts the partition's guard (fence.go). Nothing of the partition is
// fetched before the guard has confirmed this node's pin.
func (q *Queue) acquire(ctx context.Context, p *partition) error {
	ci, err := p.consumer.Info(ctx)
	if err != nil {
		return fmt.Errorf("distributed: partition %d: %w", p.id, err)
	}
	store := bloom.NewMemoryStore()
	seen, err := bloom.New(bloom.Config{
		Expected: max(q.cfg.ExpectedURLs/uint64(q.cfg.Partitions), 4096),
		Store:    store,
	})
	if err != nil {
		return err
	}
	p.mu.Lock()
	p.seen, p.store, p.hw, p.ackFloor, p.open = seen, store, 0, ci.AckFloor.Stream, map[uint64]struct{}{}
	p.book.Lock()
	p.retries, p.handled = map[uint64]int{}, map[uint64]struct{}{}
	p.book.Unlock()
	p.judgedPin, p.judgedDseq = "", 0
	p.acq++
	p.fresh, p.snap, p.purgedTo = 0, snapshotRef{}, 0
	lastSeq, err := q.rebuild(ctx, p)
	if err != nil {
		p.seen, p.store = nil, nil
	}
	p.mu.Unlock()
	if err != nil {
		return err
	}

	q.mu.Lock()
	p.owned = true
	p.gen++
	gen := p.gen
	p.pin, p.lastDseq, p.confirmed, p.leader, p.checkLeader, p.lost, p.probed = "", 0, time.Time{}, "", false, 0, time.Time{}
	p.tenure, p.fetchFrom, p.staged, p.handingOver = time.Time{}, time.Time{}, nil, false
	p.lastDelivery, p.stallAsked, p.stalls = q.now(), time.Time{}, 0
	q.mu.Unlock()
	cc, err := q.consume(p, gen)
	if err != nil {
		q.mu.Lock()
		if p.gen == gen {
			p.owned = false
			p.gen++
		} else {
			q.counters.acquired.Add(1) // released meanwhile, and counted there
		}
		q.mu.Unlock()
		return fmt.Errorf("distributed: partition %d: %w", p.id, err)
	}
	stop := make(chan struct{})
	q.mu.Lock()
	current := p.gen == gen
	if current {
		p.cc, p.stop = cc, stop
	}
	q.mu.Unlock()
	q.counters.acquired.Add(1) // a release meanwhile counts too
	if !current {              // released meanwhile
		cc.Stop()
		return nil
	}
	go q.guard(stop, p, gen)
	q.log.Info("partition acquired", "partition", p.id, "replayed_to", lastSeq)
	return nil
}

// rebuild fills p's fresh seen set: from the partition's newest snapshot,
// if it has one, then by replaying the messages after it. The log below a
// snapshot may be purged, so a partition with a snapshot that cannot be
// read is not replayed from its start: rebuild fails. It returns the
// partition's last stream sequence. It requires p.mu held.
func (q *Queue) rebuild(ctx context.Context, p *partition) (uint64, error) {
	if q.snaps != nil {
		snap, ref, err := q.snaps.load(ctx, p.id)
		if err == nil && snap != nil {
			err = p.adopt(snap, ref)
			q.counters.snapshotLoads.Add(1)
		}
		if err != nil {
			return 0, fmt.Errorf("distributed: partition %d: %w", p.id, err)
		}
	}
	last, err := q.stream.GetLastMsgForSubject(ctx, p.subject)
	switch {
	case isMsgNotFound(err): // an empty (or wholly purged) partition
		return 0, nil
	case err != nil:
		return 0, fmt.Errorf("distributed: partition %d: %w", p.id, err)
	}
	return last.Sequence, q.replay(ctx, p, p.hw+1, last.Sequence+1)
}

// consume starts pulling partition p's messages for the acquisition gen.
func (q *Queue) consume(p *partition, gen int) (jetstream.ConsumeContext, error) {
	return p.consumer.Consume(func(m jetstream.Msg) { q.deliver(p, gen, m) },
		jetstream.PullPriorityGroup(priorityGroup),
		jetstream.PullMaxMessages(min(q.cfg.MaxHeldPerPartition, 256)),
		jetstream.PullExpiry(q.cfg.PullExpiry),
		jetstream.ConsumeErrHandler(func(_ jetstream.ConsumeContext, err error) {
			q.log.Debug("consume", "partition", p.id, "err", err)
		}))
}

// isMsgNotFound reports a "no message" answer, which a direct get gives as
// a bare API error.
func isMsgNotFound(err error) bool {
	var api *jetstream.APIError
	return errors.Is(err, jetstream.ErrMsgNotFound) ||
		(errors.As(err, &api) && api.ErrorCode == jetstream.JSErrCodeMessageNotFound)
}

// release stops consuming partition p: unleased messages go back to the
// stream at once, leased ones are waited for (up to AckWait), then the pin
// is released, if it is still this node's, so that the new owner is served
// without waiting for it to time out.
func (q *Queue) release(ctx context.Context, p *partition) {
	q.mu.Lock()
	if !p.owned {
		q.mu.Unlock()
		return
	}
	p.owned = false
	p.gen++
	cc, stop, pin := p.cc, p.stop, p.pin
	p.cc, p.stop, p.staged = nil, nil, nil
	var back []jetstream.Msg
	for _, h := range q.held {
		if h.part == p && !h.leased {
			back = append(back, h.msg)
			q.unholdLocked(h)
		}
	}
	q.mu.Unlock()
	if stop != nil {
		close(stop)
	}
	if cc != nil {
		cc.Stop()
	}
	stopped := q.now()
	for _, m := range back {
		_ = m.Nak()
	}
	deadline := time.AfterFunc(q.cfg.AckWait, func() {
		q.mu.Lock()
		q.settled.Broadcast()
		q.mu.Unlock()
	})
	start := q.now()
	q.mu.Lock()
	for p.leased > 0 && !p.owned && ctx.Err() == nil && q.now().Sub(start) < q.cfg.AckWait {
		q.settled.Wait()
	}
	q.mu.Unlock()
	deadline.Stop()
	q.unpin(ctx, p, pin, stopped)
	p.mu.Lock()
	p.seen, p.store, p.open = nil, nil, nil
	p.book.Lock()
	p.retries, p.handled = nil, nil
	p.book.Unlock()
	p.mu.Unlock()
	q.counters.released.Add(1)
	q.log.Info("partition released", "partition", p.id, "handed_back", len(back))
}

// replayStall is how long a replay waits for its next message before it
// fails and its acquisition is tried again. The range it reads is known to
// exist, and headers arrive by thousands a second, so a replay that gets
// nothing for this long is stuck (an ordered consumer whose pull was lost
// on a loaded server: two of a node's 21 partitions sat 10 s at their first
// message, which held them unowned until a server kill 6 s later and past
// it).
const replayStall = 4 * time.Second

// replayResetAttempts bounds how often a replay's ordered consumer is
// recreated in one recovery (1 s, 2 s, 4 s apart, plus the requests).
const replayResetAttempts = 3

// replay adds the URLs of partition p's messages with sequence in
// [from, until) to its seen set, marking the first message of each new URL
// as open when it lies above the ack floor. It requires p.mu held.
func (q *Queue) replay(ctx context.Context, p *partition, from, until uint64) error {
	if from >= until {
		return nil
	}
	start := time.Now()
	oc, err := q.stream.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{p.subject},
		DeliverPolicy:  jetstream.DeliverByStartSequencePolicy,
		OptStartSeq:    from,
		HeadersOnly:    true,
		// Replays are short-lived: let the server forget them soon.
		InactiveThreshold: 5 * time.Second,
		// The client recreates an ordered consumer that lost its
		// server, by default for ever: a replay stuck in that loop
		// blocked a node's rebalancing for good during a stream leader
		// election. After a few attempts the replay fails instead, and
		// its caller (acquire, or the next delivery) tries again.
		MaxResetAttempts: replayResetAttempts,
	})
	if err != nil {
		return fmt.Errorf("distributed: replaying partition %d: %w", p.id, err)
	}
	it, err := oc.Messages(jetstream.PullMaxMessages(4096))
	if err != nil {
		return fmt.Errorf("distributed: replaying partition %d: %w", p.id, err)
	}
	defer it.Stop()
	// Next does not watch ctx: stop the iterator when ctx ends.
	defer context.AfterFunc(ctx, it.Stop)()
	n := int64(0)
	defer func() {
		q.counters.replayed.Add(n)
		q.counters.replayNanos.Add(int64(time.Since(start)))
	}()
	for {
		m, err := it.Next(jetstream.NextMaxWait(replayStall))
		if err != nil {
			return fmt.Errorf("distributed: replaying partition %d at %d: %w", p.id, p.hw+1, err)
		}
		md, err := m.Metadata()
		if err != nil {
			return fmt.Errorf("distributed: replaying partition %d: %w", p.id, err)
		}
		seq := md.Sequence.Stream
		if seq >= until {
			return nil
		}
		n++
		if key, ok := headerKey(m.Headers()); ok {
			p.absorb(seq, key)
		}
		p.hw = seq
		if q.replayed != nil {
			q.replayed(seq)
		}
		if seq+1 >= until {
			return nil
		}
	}
}

// headerKey returns a message's dedup key: its Crawl-Key header (a
// scheduled recrawl, whose Nats-Msg-Id the server strips), else its
// Nats-Msg-Id.
func headerKey(h nats.Header) (uint64, bool) {
	if k := h.Get(keyHeader); k != "" {
		return keyOfMsgID(k)
	}
	return keyOfMsgID(h.Get(jetstream.MsgIDHeader))
}

// absorb adds the URL key of the partition's message seq, read by a
// replay, to the seen set: the first message of a URL is its primary, open
// if it lies above the ack floor. It requires p.mu held.
func (p *partition) absorb(seq, key uint64) {
	p.fresh++
	if seen, err := p.seen.TestAndAddKey(key); err == nil && !seen && seq > p.ackFloor {
		p.open[seq] = struct{}{}
	}
}

// deliver handles one message of partition p, received while the
// acquisition numbered gen lasts. Messages of one partition are delivered
// one at a time.
func (q *Queue) deliver(p *partition, gen int, m jetstream.Msg) {
	q.counters.delivered.Add(1)
	md, err := m.Metadata()
	if err != nil {
		_ = m.Nak()
		return
	}
	q.mu.Lock()
	current := p.owned && p.gen == gen
	if current {
		q.notePinLocked(p, m.Headers().Get(pinHeader), md.Sequence.Consumer)
		p.stalls = 0
		p.delivering++ // the end of its handling sets lastDelivery
	}
	q.mu.Unlock()
	if !current {
		_ = m.Nak()
		return
	}
	defer func() {
		q.mu.Lock()
		p.delivering--
		p.lastDelivery = q.now()
		q.mu.Unlock()
	}()
	var e wireEntry
	if err := json.Unmarshal(m.Data(), &e); err != nil || e.URL == "" {
		q.log.Warn("dropping an undecodable message", "partition", p.id, "seq", md.Sequence.Stream, "err", err)
		_ = m.Term()
		return
	}
	seq := md.Sequence.Stream

	p.mu.Lock()
	if p.seen == nil { // released meanwhile
		p.mu.Unlock()
		_ = m.Nak()
		return
	}
	pin, dseq := m.Headers().Get(pinHeader), md.Sequence.Consumer
	d := delivery{seq: seq, key: msgKey(urlnorm.Key(e.URL), e.Gen), pin: pin, dseq: dseq, delivered: md.NumDelivered}
	if q.snaps != nil && p.catchUp(d) {
		// Another owner may have purged what this node has not read.
		q.adoptNewer(p)
	}
	primary, err := p.judge(d, func(from, until uint64) error { return q.replay(context.Background(), p, from, until) })
	if err != nil {
		p.mu.Unlock()
		q.log.Warn("catching up", "partition", p.id, "err", err)
		_ = m.NakWithDelay(time.Second)
		return
	}
	if primary && md.NumDelivered > uint64(q.cfg.MaxAttempts+DefaultExtraDeliveries) {
		// The backstop for a URL that keeps killing the nodes that
		// fetch it: attempts themselves are counted in Done.
		delete(p.open, seq)
		primary = false
		q.counters.given.Add(1)
		q.log.Warn("giving up a URL after too many deliveries", "url", e.URL, "deliveries", md.NumDelivered)
	} else if primary && p.wasHandled(seq) {
		p.mu.Unlock()
		q.ackHandled(p, m, seq, e.URL)
		return
	} else if !primary {
		q.counters.dropped.Add(1)
		q.log.Debug("dropping a repeated URL", "partition", p.id, "url", e.URL, "seq", seq, "hw", p.hw,
			"deliveries", md.NumDelivered)
	}
	// Attempts are counted by the acquisition (see Done), not taken from
	// the delivery count, which handovers, fencing and crashes raise too.
	p.book.Lock()
	attempt := p.retries[seq]
	p.book.Unlock()
	p.mu.Unlock()
	if !primary {
		_ = m.Ack()
		return
	}

	entry := frontier.Entry{URL: e.URL, Host: e.Host, Depth: e.Depth, Priority: e.Priority, Meta: e.Meta}
	q.mu.Lock()
	if !p.owned || p.gen != gen {
		// Released while this message was judged.
		q.mu.Unlock()
		_ = m.Nak()
		return
	}
	if h := q.held[e.URL]; h != nil {
		q.mu.Unlock()
		if h.seq == seq {
			// A redelivery of a message this node holds (an
			// InProgress came late): keep the newer handle.
			q.mu.Lock()
			h.msg, h.tries = m, md.NumDelivered
			q.mu.Unlock()
			return
		}
		// Another generation of a URL held here (one whose ack
		// failed): one at a time.
		_ = m.NakWithDelay(time.Second)
		return
	}
	if s := q.settling[e.URL]; s != nil && s.seq == seq {
		// Redelivered while Done settles it here (its ack waits for
		// an election): endSettling acknowledges this handle with it.
		// If the URL is handed back instead, the server delivers it
		// again after AckWait, and it is judged then.
		s.redelivered = append(s.redelivered, m)
		q.mu.Unlock()
		q.log.Debug("a redelivery of a URL being settled here waits for its settlement", "partition", p.id, "url", e.URL, "seq", seq,
			"deliveries", md.NumDelivered)
		return
	}
	h := &heldMsg{msg: m, entry: entry, part: p, gen: gen, seq: seq, tries: md.NumDelivered, attempt: attempt,
		generation: e.Gen, fp: e.Fingerprint, interval: time.Duration(e.Interval)}
	q.held[e.URL] = h
	p.nheld++
	if e.NotBefore > 0 {
		entry.NotBefore = time.UnixMilli(e.NotBefore)
	}
	if now := q.now(); p.fetchFrom.After(now) && p.fetchFrom.After(entry.NotBefore) {
		entry.NotBefore = p.fetchFrom
	}
	q.mu.Unlock()
	if err := q.front.Add(entry); err != nil {
		q.mu.Lock()
		if q.held[e.URL] == h {
			q.unholdLocked(h)
		}
		q.mu.Unlock()
		q.log.Warn("queueing locally", "url", e.URL, "err", err)
		_ = m.NakWithDelay(time.Second)
	}
}

// delivery is what judge needs to know of a message delivered to this node.
type delivery struct {
	seq       uint64 // stream sequence
	key       uint64 // the URL's urlnorm.Key
	pin       string // Nats-Pin-Id it came with
	dseq      uint64 // consumer (delivery) sequence
	delivered uint64 // deliveries so far, this one included
}

// judge decides whether a delivery is its URL's primary message in the
// partition (the first one in stream order, not yet acknowledged), which is
// fetched; any other message of the URL is acknowledged unfetched. It
// requires p.mu held and p.seen set. replay(from, until) must add the
// partition's messages in [from, until) to the seen set (Queue.replay); an
// error from it is returned, and then nothing was judged.
//
// The seen set holds the URLs of every message of the partition up to hw.
// A delivery above hw first needs the messages between hw and it, which
// may have gone to other nodes, or to this one and never been judged (a
// catch-up that failed). The one case that needs no reading: a first
// delivery (the consumer delivers new messages in stream order) that
// directly follows, under the same pin, another first delivery judged here.
// Every message of the partition between the two would have been delivered
// between them, and none was. A redelivery does not start such a chain:
// the messages after it in stream order were delivered before it, to
// anyone.
func (p *partition) judge(d delivery, replay func(from, until uint64) error) (primary bool, err error) {
	first := d.delivered == 1
	if d.seq > p.hw {
		p.fresh++
		if p.catchUp(d) {
			if err := replay(p.hw+1, d.seq); err != nil {
				p.judgedPin = "" // a message was received and not judged
				return false, err
			}
		}
		seen, err := p.seen.TestAndAddKey(d.key)
		if err != nil {
			p.judgedPin = ""
			return false, err
		}
		primary = !seen
		if primary {
			p.open[d.seq] = struct{}{}
		}
		p.hw = d.seq
	} else {
		_, primary = p.open[d.seq]
	}
	if first {
		p.judgedPin, p.judgedDseq = d.pin, d.dseq
	} else {
		p.judgedPin = ""
	}
	return primary, nil
}

// catchUp reports whether judging d needs the messages between hw and it
// read first (see judge). It requires p.mu held.
func (p *partition) catchUp(d delivery) bool {
	chained := d.delivered == 1 && d.pin != "" && d.pin == p.judgedPin && d.dseq == p.judgedDseq+1
	return d.seq > p.hw+1 && !chained
}

// unholdLocked forgets a held message. It requires q.mu held.
func (q *Queue) unholdLocked(h *heldMsg) {
	if q.held[h.entry.URL] == h {
		delete(q.held, h.entry.URL)
		h.part.nheld--
	}
}

// abandon hands every held message back to the stream at once. The
// Crawler must have stopped: leases it abandoned will never settle.
func (q *Queue) abandon() {
	q.mu.Lock()
	msgs := make([]jetstream.Msg, 0, len(q.held))
	for _, h := range q.held {
		msgs = append(msgs, h.msg)
		if h.leased {
			h.part.leased--
		}
		q.unholdLocked(h)
	}
	q.mu.Unlock()
	for _, m := range msgs {
		_ = m.Nak()
	}
}

// stopping returns a channel that is closed once the node is stopping.
func (q *Queue) stopping() <-chan struct{} {
	q.stopMu.Lock()
	defer q.stopMu.Unlock()
	if q.stopC == nil {
		q.stopC = make(chan struct{})
	}
	return q.stopC
}

// isStopping reports whether stop was called.
func (q *Queue) isStopping() bool {
	select {
	case <-q.stopping():
		return true
	default:
		return false
	}
}

// stop tells the Queue that the node is stopping: Add and Done stop
// retrying, and their waits end at once (see Add and Done). The Node calls
// it when Run's context ends and when it leaves. It may be called more than
// once.
func (q *Queue) stop() {
	q.stopping()
	q.stopOnce.Do(func() { close(q.stopC) })
}

// close stops the local frontier.
func (q *Queue) close() error { return q.front.Close() }
