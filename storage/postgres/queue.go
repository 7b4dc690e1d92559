package postgres

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/crawlkit/crawlkit/frontier"
	"github.com/crawlkit/crawlkit/storage/internal/idle"
	"github.com/crawlkit/crawlkit/urlnorm"
)

// Defaults of QueueOptions.
const (
	DefaultLeaseTTL     = 5 * time.Minute
	DefaultMaxAttempts  = frontier.DefaultMaxAttempts
	DefaultRetryBase    = frontier.DefaultRetryBase
	DefaultRetryMax     = frontier.DefaultRetryMax
	DefaultBands        = 4
	DefaultPollInterval = 200 * time.Millisecond
	DefaultOpTimeout    = 30 * time.Second
)

// maxMeta bounds Entry.Meta, as frontier.Frontier does.
const maxMeta = 64 << 10

// addChunk bounds the URLs of one INSERT statement.
const addChunk = 4096

// QueueOptions configures a Queue. The zero value is a polite queue with
// frontier.Frontier's defaults.
type QueueOptions struct {
	// Politeness says when a host may be contacted again after a lease on
	// it settles. Every process sharing the crawl should pass its own
	// *fetch.Politeness (the one given to crawlkit.Config.Politeness),
	// which knows the host's Crawl-delay, backoff and the duration of the
	// fetch just made. Nil means frontier.FixedDelay(frontier.DefaultDelay).
	Politeness frontier.Politeness
	// Prioritizer assigns the bands that order a host's URLs (lower band
	// first, then first in, first out). Nil means frontier.BFS.
	Prioritizer frontier.Prioritizer
	// Bands is the number of bands, 1 to 16. Zero means 4.
	Bands int
	// LeaseTTL is how long a lease lasts before its URL is leased again.
	// It must be longer than the slowest fetch plus its handling. Zero
	// means 5 minutes.
	LeaseTTL time.Duration
	// MaxAttempts is how many fetches of a URL may end in OutcomeRetry
	// before it is dropped as failed. Zero means 5.
	MaxAttempts int
	// RetryBase and RetryMax bound the retry backoff: attempt n waits
	// RetryBase*2^(n-1), at most RetryMax, and at least the outcome's
	// RetryAfter. Zero means 30 seconds and 1 hour.
	RetryBase, RetryMax time.Duration
	// Schedule decides recrawls of successful URLs. Nil means no recrawl
	// unless an Outcome sets RecrawlAt.
	Schedule frontier.Schedule
	// PollInterval is the longest the Queue's waiting Next calls go
	// without asking the database again when nothing is ready: other
	// processes may settle leases at any time. One waiting call asks; the
	// others sleep until it finds work or URLs are added, by this Queue
	// or, heard through the listener (see NoListen), by another process.
	// Zero means 200 ms.
	PollInterval time.Duration
	// NoListen turns the listener off. By default, from its first Next
	// on, a Queue keeps one connection of its own (outside the pool)
	// listening on a notification channel named after the schema, on
	// which every Add that queues URLs notifies, so that waiting Next
	// calls in every process ask at once instead of at their next poll.
	// Without it (behind a pooler that does not pass LISTEN through, for
	// example) they find other processes' URLs within PollInterval.
	NoListen bool
	// OpTimeout bounds each database operation of the methods that take
	// no context (Add, NextAt, Done, BlockHost, Stats). Zero means 30 s.
	OpTimeout time.Duration
	// Now is the clock of the methods that take no time. Nil means
	// time.Now.
	Now func() time.Time
	// Logger receives the errors of BlockHost and Stats, which cannot
	// return them. Nil discards them.
	Logger *slog.Logger
}

// Queue is a crawlkit.Queue whose state lives in the DB's urls and hosts
// tables, shared by every process that opens the same schema. Its methods
// are safe for concurrent use.
//
// The guarantees across processes:
//   - Add queues a URL at most once over the life of the schema: a URL
//     queued, leased or finished before is dropped, atomically (the urls
//     primary key).
//   - A host holds at most one unexpired lease, and is leased no earlier
//     than the time its previous lease's settlement set from the
//     Politeness model (or a BlockHost time).
//   - Every lease settles at most once; a lease whose time ran out is
//     leased again (after the host's last politeness delay), and its late
//     Done fails with frontier.ErrLeaseExpired.
//   - NextAt returns a zero time only when no URL of the crawl is queued or
//     leased by any process.
//
// Across hosts, ready hosts are served in the order they became ready;
// within a host, lower bands first and first in, first out within a band.
type Queue struct {
	db     *DB
	opts   QueueOptions
	policy frontier.Policy
	polite frontier.Politeness
	prio   frontier.Prioritizer
	now    func() time.Time
	log    *slog.Logger

	ctx    context.Context // cancelled by Close
	cancel context.CancelFunc
	// idle lets one of this handle's goroutines waiting in Next poll
	// the database while the others sleep (see storage/internal/idle).
	idle idle.Gate
	// bg runs the listener and the notifier, each from its first use
	// until Close; added wakes the notifier (one pending signal stands for
	// any number of Adds).
	bg                 idle.Background
	listener, notifier idle.Task
	added              chan struct{}

	mu     sync.Mutex
	closed bool
	leases map[uint64]time.Time // this handle's unsettled leases and their expiry
	stats  frontier.Stats       // this handle's counters
	shared sharedCounts
}

// sharedCounts caches the crawl-wide counts Stats reports.
type sharedCounts struct {
	at                     time.Time
	hosts, queued, delayed int
}

// statsMaxAge is how long Stats reuses crawl-wide counts: counting a large
// urls table is not free, and Stats is called often.
const statsMaxAge = time.Second

var _ interface {
	Add(entries ...frontier.Entry) error
	Next(ctx context.Context) (*frontier.Lease, error)
	NextAt(now time.Time) (*frontier.Lease, time.Time, error)
	Done(l *frontier.Lease, o frontier.Outcome) (frontier.Settlement, error)
	BlockHost(host string, until time.Time)
	Stats() frontier.Stats
} = (*Queue)(nil)

// Queue returns a handle on the crawl's shared queue. Each process (or each
// crawler) takes its own; handles on one schema share everything but their
// Stats counters. Close the Queue before the DB.
func (db *DB) Queue(opts QueueOptions) (*Queue, error) {
	if db.isClosed() {
		return nil, ErrClosed
	}
	if opts.Bands == 0 {
		opts.Bands = DefaultBands
	}
	if opts.Bands < 1 || opts.Bands > 16 {
		return nil, fmt.Errorf("postgres: queue: Bands %d outside 1..16", opts.Bands)
	}
	if opts.LeaseTTL <= 0 {
		opts.LeaseTTL = DefaultLeaseTTL
	}
	if opts.MaxAttempts <= 0 {
		opts.MaxAttempts = DefaultMaxAttempts
	}
	if opts.RetryBase <= 0 {
		opts.RetryBase = DefaultRetryBase
	}
	if opts.RetryMax <= 0 {
		opts.RetryMax = DefaultRetryMax
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = DefaultPollInterval
	}
	if opts.OpTimeout <= 0 {
		opts.OpTimeout = DefaultOpTimeout
	}
	q := &Queue{
		db:     db,
		opts:   opts,
		policy: frontier.Policy{MaxAttempts: opts.MaxAttempts, RetryBase: opts.RetryBase, RetryMax: opts.RetryMax, Schedule: opts.Schedule},
		polite: opts.Politeness,
		prio:   opts.Prioritizer,
		now:    opts.Now,
		log:    opts.Logger,
		leases: map[uint64]time.Time{},
		added:  make(chan struct{}, 1),
	}
	if q.polite == nil {
		q.polite = frontier.FixedDelay(frontier.DefaultDelay)
	}
	if q.prio == nil {
		q.prio = frontier.BFS{}
	}
	if q.now == nil {
		q.now = time.Now
	}
	if q.log == nil {
		q.log = slog.New(slog.DiscardHandler)
	}
	q.ctx, q.cancel = context.WithCancel(db.ctx)
	return q, nil
}

// Close ends the handle: a blocked Next returns and later calls fail with
// ErrClosed (which matches frontier.ErrClosed). Leases it handed out and did not settle expire in the
// database as any crashed worker's would. The DB stays open. Close is
// idempotent.
func (q *Queue) Close() error {
	q.mu.Lock()
	q.closed = true
	q.cancel()
	q.mu.Unlock()
	q.bg.Stop()
	return nil
}

// opContext bounds an operation of a method without a context.
func (q *Queue) opContext() (context.Context, context.CancelFunc) {
	return context.WithTimeout(q.ctx, q.opts.OpTimeout)
}

// check reports ErrClosed after Close, of the queue or of the DB.
func (q *Queue) check() error {
	q.mu.Lock()
	closed := q.closed
	q.mu.Unlock()
	if closed || q.db.isClosed() {
		return ErrClosed
	}
	return nil
}

// Add queues entries that the crawl has not seen before, reading the clock
// from QueueOptions.Now.
func (q *Queue) Add(entries ...frontier.Entry) error {
	ctx, cancel := q.opContext()
	defer cancel()
	_, err := q.AddAt(ctx, q.now(), entries...)
	return err
}

// row is one entry ready for insertion.
type row struct {
	hash     int64
	url      string
	host     string
	hostHash int64
	depth    int32
	priority float64
	band     int16
	meta     []byte
	due      time.Time
}

// AddAt queues the entries at time now and reports how many were new to the
// crawl: an entry whose URL (by urlnorm.Key) was queued before, by any
// process, is dropped. Entries whose NotBefore is after now wait for it. An
// invalid entry (an empty URL, no host, Meta over 64 KiB, or a URL or host
// that is not UTF-8 or holds a NUL byte, which PostgreSQL's text cannot
// store) fails the whole call before anything is written
// (frontier.ErrInvalidEntry); otherwise the entries are written in
// statements of up to 4096 URLs, each committed on its own, and a failed
// call may be repeated.
func (q *Queue) AddAt(ctx context.Context, now time.Time, entries ...frontier.Entry) (int, error) {
	if err := q.check(); err != nil {
		return 0, err
	}
	rows := make([]row, 0, len(entries))
	seen := make(map[int64]bool, len(entries))
	for i := range entries {
		e := &entries[i]
		r, err := q.prepare(e, now)
		if err != nil {
			return 0, err
		}
		if seen[r.hash] {
			continue
		}
		seen[r.hash] = true
		rows = append(rows, r)
	}
	added := 0
	for len(rows) > 0 {
		n := min(len(rows), addChunk)
		k, err := q.insert(ctx, now, rows[:n])
		added += k
		if err != nil {
			q.count(func(s *frontier.Stats) { s.Added += uint64(added) })
			return added, err
		}
		rows = rows[n:]
	}
	q.count(func(s *frontier.Stats) { s.Added += uint64(added) })
	if added > 0 {
		q.idle.Wake() // this handle's sleepers poll now
		q.notifyAdded()
	}
	return added, nil
}

// prepare validates e and computes its row.
func (q *Queue) prepare(e *frontier.Entry, now time.Time) (row, error) {
	if e.URL == "" {
		return row{}, fmt.Errorf("%w: empty URL", frontier.ErrInvalidEntry)
	}
	if len(e.Meta) > maxMeta {
		return row{}, fmt.Errorf("%w: %s: meta of %d bytes exceeds %d", frontier.ErrInvalidEntry, e.URL, len(e.Meta), maxMeta)
	}
	if !storableText(e.URL) {
		return row{}, fmt.Errorf("%w: %q: URL is not UTF-8 text without NUL bytes", frontier.ErrInvalidEntry, e.URL)
	}
	host := e.Host
	if host == "" {
		h, err := urlnorm.HostOf(e.URL)
		if err != nil || h == "" {
			return row{}, fmt.Errorf("%w: %s: no host: %v", frontier.ErrInvalidEntry, e.URL, err)
		}
		host = h
	}
	if !storableText(host) {
		return row{}, fmt.Errorf("%w: %s: host %q is not UTF-8 text without NUL bytes", frontier.ErrInvalidEntry, e.URL, host)
	}
	band := q.prio.Band(e, q.opts.Bands)
	band = min(max(band, 0), q.opts.Bands-1)
	due := now
	if e.NotBefore.After(now) {
		due = e.NotBefore
	}
	depth := min(max(e.Depth, 0), 1<<31-1)
	return row{
		hash:     int64(urlnorm.Key(e.URL)),
		url:      e.URL,
		host:     host,
		hostHash: int64(urlnorm.HostKey(host)),
		depth:    int32(depth),
		priority: e.Priority,
		band:     int16(band),
		meta:     e.Meta,
		due:      due,
	}, nil
}

// storableText reports whether PostgreSQL's text type can hold s: the
// server rejects invalid UTF-8 and NUL bytes, which would fail the whole
// statement (and every repetition of it) instead of the one entry.
func storableText(s string) bool {
	return utf8.ValidString(s) && !strings.ContainsRune(s, 0)
}

// addSQL inserts a batch of URLs, dropping those already known, and lowers
// the due_at of their hosts. URLs are inserted in url_hash order and hosts in
// host order, so concurrent Adds of overlapping batches cannot deadlock; seq
// keeps the batch's own order.
const addSQL = `WITH b AS (SELECT nextval('url_seq') AS b),
input AS (
	SELECT t.*, (SELECT b FROM b) * 65536 + t.ord AS seq
	FROM unnest($1::bigint[], $2::text[], $3::text[], $4::bigint[], $5::integer[], $6::float8[],
		$7::smallint[], $8::bytea[], $9::timestamptz[]) WITH ORDINALITY
		AS t(url_hash, url, host, host_hash, depth, priority, band, meta, next_fetch_at, ord)
), ins AS (
	INSERT INTO urls (url_hash, url, host, host_hash, depth, source, discovered_at, priority, band, seq,
		meta, state, next_fetch_at)
	SELECT url_hash, url, host, host_hash, depth, CASE WHEN depth = 0 THEN 'seed' ELSE 'link' END, $10,
		priority, band, seq, meta, 0, next_fetch_at
	FROM input ORDER BY url_hash
	ON CONFLICT (url_hash) DO NOTHING
	RETURNING host, host_hash, next_fetch_at
), up AS (
	INSERT INTO hosts AS h (host, host_hash, due_at)
	SELECT host, min(host_hash), min(next_fetch_at) FROM ins GROUP BY host ORDER BY host
	ON CONFLICT (host) DO UPDATE SET due_at = least(h.due_at, excluded.due_at)
)
SELECT count(*) FROM ins`

// insert runs addSQL for rows.
func (q *Queue) insert(ctx context.Context, now time.Time, rows []row) (int, error) {
	n := len(rows)
	hashes, urls, hosts := make([]int64, n), make([]string, n), make([]string, n)
	hostHashes, depths := make([]int64, n), make([]int32, n)
	prios, bands := make([]float64, n), make([]int16, n)
	metas, dues := make([][]byte, n), make([]time.Time, n)
	for i, r := range rows {
		hashes[i], urls[i], hosts[i], hostHashes[i], depths[i] = r.hash, r.url, r.host, r.hostHash, r.depth
		prios[i], bands[i], metas[i], dues[i] = r.priority, r.band, r.meta, r.due
	}
	var added int64
	// Idempotent: a repeated insert drops what the first one wrote.
	err := retry(ctx, func() error {
		return q.db.pool.QueryRow(ctx, addSQL, hashes, urls, hosts, hostHashes, depths, prios, bands, metas, dues, now).Scan(&added)
	}, "add")
	return int(added), err
}

// NextAt leases the best due URL of a host that may be contacted at now, if
// any. Otherwise it returns a nil lease and the earliest time a host becomes
// ready (the end of a politeness delay, a block, a due time, or the end of
// an unsettled lease), or the zero time when no URL of the crawl is queued
// or leased. It never blocks on other workers.
func (q *Queue) NextAt(now time.Time) (*frontier.Lease, time.Time, error) {
	ctx, cancel := q.opContext()
	defer cancel()
	ls, at, err := q.LeaseAt(ctx, now, 1)
	if err != nil || len(ls) == 0 {
		return nil, at, err
	}
	return ls[0], time.Time{}, nil
}

// leaseSQL and nextSQL run together in one round trip: when the first leases
// nothing, the second tells when to ask again.
const (
	leaseSQL = `SELECT o_lease_id, o_url_hash, o_url, o_host, o_depth, o_priority, o_meta, o_attempts,
		o_fingerprint, o_interval, o_expired FROM crawlkit_lease($1, $2, $3)`
	nextSQL = `SELECT min(ready_at) FROM hosts WHERE due_at IS NOT NULL`
)

// LeaseAt leases up to n URLs at time now, each of a different ready host,
// in one round trip. When it leases none it also returns when to ask again,
// as NextAt does.
func (q *Queue) LeaseAt(ctx context.Context, now time.Time, n int) ([]*frontier.Lease, time.Time, error) {
	if err := q.check(); err != nil {
		return nil, time.Time{}, err
	}
	if n <= 0 {
		return nil, time.Time{}, nil
	}
	expires := now.Add(q.opts.LeaseTTL).Truncate(time.Microsecond)
	var (
		leases  []*frontier.Lease
		next    pgtype.Timestamptz
		expired int
	)
	// Leasing is not idempotent (a repeat after a lost reply leaves the
	// first leases to expire), so only failures before the statement ran
	// are retried.
	err := retryIf(ctx, safeOnly, func() error {
		leases, expired = leases[:0], 0
		b := &pgx.Batch{}
		b.Queue(leaseSQL, now, n, expires)
		b.Queue(nextSQL)
		br := q.db.pool.SendBatch(ctx, b)
		defer br.Close()
		rows, err := br.Query()
		if err != nil {
			return err
		}
		for rows.Next() {
			var (
				id, hash, fp, interval int64
				l                      frontier.Lease
				depth, attempts        int32
				wasExpired             bool
			)
			if err := rows.Scan(&id, &hash, &l.URL, &l.Host, &depth, &l.Priority, &l.Meta, &attempts, &fp, &interval, &wasExpired); err != nil {
				rows.Close()
				return err
			}
			l.ID, l.Depth, l.Attempt = uint64(id), int(depth), int(attempts)
			l.Fingerprint, l.Interval, l.Expires = uint64(fp), time.Duration(interval)*time.Microsecond, expires
			if wasExpired {
				expired++
			}
			leases = append(leases, &l)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		if err := br.QueryRow().Scan(&next); err != nil {
			return err
		}
		return br.Close()
	}, "lease")
	if err != nil {
		return nil, time.Time{}, err
	}
	q.mu.Lock()
	for _, l := range leases {
		q.leases[l.ID] = l.Expires
	}
	q.stats.Leases += uint64(len(leases))
	q.stats.Expired += uint64(expired)
	q.mu.Unlock()
	if len(leases) > 0 || !next.Valid {
		return leases, time.Time{}, nil
	}
	at := next.Time
	if next.InfinityModifier != pgtype.Finite || !at.After(now) {
		// A ready host that another worker holds locked right now: ask
		// again shortly.
		at = now.Add(time.Millisecond)
	}
	return leases, at, nil
}

// Next returns a lease, waiting until one is available or ctx is done. While
// nothing is ready, one of the waiting calls asks the database again when the
// earliest host becomes ready, and at least every PollInterval (other
// processes add and settle URLs); the others sleep until it finds work, it
// stops waiting, or URLs are added (by this Queue, or by another process if
// the listener is on: see QueueOptions.NoListen), so idle workers cost one
// query per interval, not one each. Lost connections are waited out; other errors are
// returned.
func (q *Queue) Next(ctx context.Context) (*frontier.Lease, error) {
	if !q.opts.NoListen {
		q.bg.Start(&q.listener, q.listen)
	}
	return q.idle.Next(ctx, idle.Source{
		Ctx: q.ctx, OpTimeout: q.opts.OpTimeout, PollInterval: q.opts.PollInterval, Now: q.now,
		LeaseAt: q.LeaseAt, Unavailable: ErrUnavailable,
		OnUnavailable: func(err error) { q.log.Warn("postgres queue: waiting for the database", "err", err) },
	})
}

// Done settles l with outcome o, reading the clock from QueueOptions.Now.
func (q *Queue) Done(l *frontier.Lease, o frontier.Outcome) (frontier.Settlement, error) {
	ctx, cancel := q.opContext()
	defer cancel()
	return q.DoneAt(ctx, q.now(), l, o)
}

// Settlement is one lease and its outcome for DoneBatchAt, which sets Err
// and Result.
type Settlement struct {
	Lease   *frontier.Lease
	Outcome frontier.Outcome
	// Err is set by DoneBatchAt: nil when the lease was settled, or an
	// error as DoneAt returns it.
	Err error
	// Result is set by DoneBatchAt when Err is nil: what the settlement
	// did, as DoneAt reports it.
	Result frontier.Settlement
}

// DoneAt settles l with outcome o at time now: the URL is finished, or
// queued again for a retry or a recrawl (see frontier.Outcome), and the
// host's next contact time becomes the Politeness model's ReadyAt(host,
// now). It returns frontier.ErrLeaseExpired if the lease ran out before now
// (its URL is leased again), and frontier.ErrLeaseSettled if it was settled
// already. A settle interrupted by a lost connection is retried; the retry
// recognizes a settle that did commit. It reports what the settlement did:
// this queue's policy decided it, which the caller cannot see.
func (q *Queue) DoneAt(ctx context.Context, now time.Time, l *frontier.Lease, o frontier.Outcome) (frontier.Settlement, error) {
	s := []Settlement{{Lease: l, Outcome: o}}
	if err := q.DoneBatchAt(ctx, now, s); err != nil {
		return frontier.Settlement{}, err
	}
	return s[0].Result, s[0].Err
}

// settleSQL settles one lease (see crawlkit_settle in the migration).
const settleSQL = `SELECT crawlkit_settle($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`

// DoneBatchAt settles several leases at time now in one round trip and one
// transaction, setting each Settlement's Err. It returns an error only when
// the batch as a whole failed, in which case none was settled.
func (q *Queue) DoneBatchAt(ctx context.Context, now time.Time, batch []Settlement) error {
	if err := q.check(); err != nil {
		return err
	}
	var work []planned
	for i := range batch {
		st := &batch[i]
		st.Err, st.Result = nil, frontier.Settlement{}
		if st.Lease == nil {
			st.Err = frontier.ErrForeignLease
			continue
		}
		s, err := q.policy.Plan(st.Lease, st.Outcome, now)
		if err != nil {
			st.Err = err
			continue
		}
		pol := q.polite.ReadyAt(st.Lease.Host, now)
		if pol.Before(now) {
			pol = now
		}
		work = append(work, planned{i: i, s: s, pol: pol.Truncate(time.Microsecond)})
	}
	if len(work) == 0 {
		return nil
	}
	// Hosts are locked in one order by every batch, so batches cannot
	// deadlock each other.
	slices.SortFunc(work, func(a, b planned) int {
		ha, hb := batch[a.i].Lease.Host, batch[b.i].Lease.Host
		switch {
		case ha < hb:
			return -1
		case ha > hb:
			return 1
		}
		return 0
	})
	codes := make([]int32, len(work))
	// A settle reports 2 when the lease had settled the URL already. That
	// is this call's own success only when an earlier attempt failed in a
	// way that may have committed it (a lost reply); after no attempt, or
	// after attempts that were rolled back (deadlock, serialization
	// failure) or never sent, it is an earlier call's settle.
	mayHaveCommitted, ownEarlier := false, false
	err := retry(ctx, func() error {
		ownEarlier = mayHaveCommitted
		err := q.sendSettles(ctx, now, batch, work, codes)
		if err != nil && !safeOnly(err) {
			mayHaveCommitted = true
		}
		return err
	}, "settle")
	if err != nil {
		return err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	for i, w := range work {
		st := &batch[w.i]
		switch codes[i] {
		case 0:
		case 2:
			if !ownEarlier {
				st.Err = fmt.Errorf("%w: %s", frontier.ErrLeaseSettled, st.Lease.URL)
				continue
			}
			// A retry found the settle of an earlier attempt committed.
		default:
			delete(q.leases, st.Lease.ID)
			st.Err = fmt.Errorf("%w: %s", frontier.ErrLeaseExpired, st.Lease.URL)
			continue
		}
		delete(q.leases, st.Lease.ID)
		st.Result = w.s.Settlement
		switch st.Outcome.Kind {
		case frontier.OutcomeSuccess:
			q.stats.Succeeded++
		case frontier.OutcomeNotModified:
			q.stats.NotModified++
		case frontier.OutcomeRetry:
			if w.s.Kind == frontier.SettlementGivenUp {
				q.stats.Failed++
				q.stats.Dropped++
			} else {
				q.stats.Retried++
			}
		case frontier.OutcomeFailed:
			q.stats.Failed++
		}
		if w.s.Kind == frontier.SettlementRecrawl {
			q.stats.Recrawls++
		}
	}
	return nil
}

// planned is a settlement of DoneBatchAt ready to send: its index in the
// batch, its plan and the host's next contact time.
type planned struct {
	i   int
	s   frontier.Decision
	pol time.Time
}

// sendSettles runs one attempt of DoneBatchAt: the settles of work, in one
// batch (one implicit transaction), setting codes to their results.
func (q *Queue) sendSettles(ctx context.Context, now time.Time, batch []Settlement, work []planned, codes []int32) error {
	b := &pgx.Batch{}
	for _, w := range work {
		l := batch[w.i].Lease
		var next *time.Time
		if w.s.Requeue() {
			t := w.s.At
			next = &t
		}
		delay := pgtype.Interval{Microseconds: w.pol.Sub(now).Microseconds(), Valid: true}
		b.Queue(settleSQL, now, int64(l.ID), int64(urlnorm.Key(l.URL)), l.Host, dbState(&w.s), next,
			w.s.Attempt, int64(w.s.Fingerprint), w.s.Interval.Microseconds(), fetched(&w.s), w.pol, delay)
	}
	br := q.db.pool.SendBatch(ctx, b)
	for i := range work {
		if err := br.QueryRow().Scan(&codes[i]); err != nil {
			br.Close()
			return err
		}
	}
	return br.Close()
}

// Extend prolongs l to ttl from now (QueueOptions.Now).
func (q *Queue) Extend(l *frontier.Lease, ttl time.Duration) error {
	ctx, cancel := q.opContext()
	defer cancel()
	return q.ExtendAt(ctx, q.now(), l, ttl)
}

// ExtendAt prolongs l so that it expires at now+ttl, and updates l.Expires.
// It returns frontier.ErrLeaseExpired if the lease ran out before now, and
// frontier.ErrLeaseSettled if it was settled.
func (q *Queue) ExtendAt(ctx context.Context, now time.Time, l *frontier.Lease, ttl time.Duration) error {
	if err := q.check(); err != nil {
		return err
	}
	if l == nil {
		return frontier.ErrForeignLease
	}
	expires := now.Add(max(ttl, 0)).Truncate(time.Microsecond)
	var ok, settled bool
	err := retry(ctx, func() error {
		ok, settled = false, false
		return pgx.BeginFunc(ctx, q.db.pool, func(tx pgx.Tx) error {
			// Host first, as leasing and settling lock.
			if _, err := tx.Exec(ctx, "SELECT 1 FROM hosts WHERE host = $1 FOR UPDATE", l.Host); err != nil {
				return err
			}
			hash := int64(urlnorm.Key(l.URL))
			tag, err := tx.Exec(ctx, `UPDATE urls SET lease_expires = $3, next_fetch_at = $3
				WHERE url_hash = $1 AND lease_id = $2 AND state = 1 AND lease_expires > $4`,
				hash, int64(l.ID), expires, now)
			if err != nil {
				return err
			}
			if tag.RowsAffected() == 0 {
				return tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM urls WHERE url_hash = $1 AND settled_lease = $2)`,
					hash, int64(l.ID)).Scan(&settled)
			}
			ok = true
			_, err = tx.Exec(ctx, `UPDATE hosts SET lease_expires = $2, polite_at = $2::timestamptz + expiry_delay
				WHERE host = $1 AND lease_id = $3`, l.Host, expires, int64(l.ID))
			return err
		})
	}, "extend")
	if err != nil {
		return err
	}
	if settled {
		return fmt.Errorf("%w: %s", frontier.ErrLeaseSettled, l.URL)
	}
	if !ok {
		return fmt.Errorf("%w: %s", frontier.ErrLeaseExpired, l.URL)
	}
	l.Expires = expires
	q.mu.Lock()
	if _, mine := q.leases[l.ID]; mine {
		q.leases[l.ID] = expires
	}
	q.mu.Unlock()
	return nil
}

// BlockHost keeps host from being leased before until, for every process.
// Blocks only extend: an earlier until than the current block is ignored.
// Unlike frontier.Frontier's, blocks are stored. Errors are logged.
func (q *Queue) BlockHost(host string, until time.Time) {
	ctx, cancel := q.opContext()
	defer cancel()
	if err := q.BlockHostAt(ctx, host, until); err != nil {
		q.log.Warn("postgres queue: blocking host", "host", host, "err", err)
	}
}

// BlockHostAt is BlockHost with a context and an error.
func (q *Queue) BlockHostAt(ctx context.Context, host string, until time.Time) error {
	if err := q.check(); err != nil {
		return err
	}
	return retry(ctx, func() error {
		_, err := q.db.pool.Exec(ctx, `INSERT INTO hosts AS h (host, host_hash, blocked_until) VALUES ($1, $2, $3)
			ON CONFLICT (host) DO UPDATE SET blocked_until = greatest(h.blocked_until, excluded.blocked_until)`,
			host, int64(urlnorm.HostKey(host)), until)
		return err
	}, "block host")
}

// Record stores a fetch's HTTP status code and content hash in the URL's
// row (last_status_code, last_content_hash), for applications that query
// the URL database. The queue itself does not use them.
func (q *Queue) Record(ctx context.Context, url string, status int, contentHash uint64) error {
	if err := q.check(); err != nil {
		return err
	}
	return retry(ctx, func() error {
		_, err := q.db.pool.Exec(ctx, "UPDATE urls SET last_status_code = $2, last_content_hash = $3 WHERE url_hash = $1",
			int64(urlnorm.Key(url)), status, int64(contentHash))
		return err
	}, "record")
}

// Stats returns this handle's counters (Added, Leases, Succeeded, …, and
// Leased: its own unsettled, unexpired leases) and the crawl's shared
// counts: Hosts with unsettled URLs, InMemory URLs queued (in the database,
// not leased) and Delayed of them not yet due. The shared counts are
// refreshed at most once a second.
func (q *Queue) Stats() frontier.Stats {
	now := q.now()
	q.mu.Lock()
	s := q.stats
	for id, exp := range q.leases {
		if !exp.After(now) {
			delete(q.leases, id)
		}
	}
	s.Leased = len(q.leases)
	sc := q.shared
	q.mu.Unlock()
	if time.Since(sc.at) > statsMaxAge && q.check() == nil {
		ctx, cancel := context.WithTimeout(q.ctx, min(q.opts.OpTimeout, 5*time.Second))
		err := q.db.pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM hosts WHERE due_at IS NOT NULL),
				count(*) FILTER (WHERE state = 0 OR lease_expires <= $1),
				count(*) FILTER (WHERE state = 0 AND next_fetch_at > $1)
			FROM urls WHERE state IN (0, 1)`, now).Scan(&sc.hosts, &sc.queued, &sc.delayed)
		cancel()
		if err != nil {
			q.log.Warn("postgres queue: counting", "err", wrap("stats", err))
		} else {
			sc.at = time.Now()
			q.mu.Lock()
			q.shared = sc
			q.mu.Unlock()
		}
	}
	s.Hosts, s.InMemory, s.Delayed = sc.hosts, sc.queued, sc.delayed
	return s
}

// Deduplicates reports that Add drops URLs the queue holds or has
// finished, as crawlkit.Queue requires.
func (q *Queue) Deduplicates() bool { return true }

// count updates this handle's counters.
func (q *Queue) count(fn func(*frontier.Stats)) {
	q.mu.Lock()
	fn(&q.stats)
	q.mu.Unlock()
}

// listen runs the listener until Close: it keeps a connection listening on
// the schema's channel, and wakes this handle's waiting Next calls at every
// notification. A lost connection is opened again after a pause that
// doubles from 100 ms to 5 s.
func (q *Queue) listen() {
	pause := idle.Backoff{Min: 100 * time.Millisecond, Max: 5 * time.Second}
	for {
		err := q.listenConn(pause.Reset)
		if q.ctx.Err() != nil {
			return
		}
		q.log.Warn("postgres queue: listener lost, polling until it is back", "err", err, "retry_in", pause.Current())
		if !pause.Wait(q.ctx) {
			return
		}
	}
}

// listenApplication is the application_name of the listener's connection,
// which tells it apart in pg_stat_activity.
func listenApplication(schema string) string { return "crawlkit listener " + schema }

// listenConn opens a connection, listens on it and wakes the gate at every
// notification until the connection fails or the Queue closes. It calls
// listening once the LISTEN has succeeded.
func (q *Queue) listenConn(listening func()) error {
	cfg := q.db.pool.Config().ConnConfig.Copy()
	cfg.RuntimeParams["application_name"] = listenApplication(q.db.schema)
	ctx, cancel := context.WithTimeout(q.ctx, q.opts.OpTimeout)
	defer cancel()
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return wrap("listener: connect", err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		conn.Close(ctx)
	}()
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{q.db.schema}.Sanitize()); err != nil {
		return wrap("listener: listen", err)
	}
	listening()
	q.idle.Listening()
	for {
		if _, err := conn.WaitForNotification(q.ctx); err != nil {
			return wrap("listener: wait", err)
		}
		q.idle.Wake()
	}
}

// notifySQL tells the listeners of the schema's channel that URLs were
// added. It is a transaction of its own, committed without waiting for the
// disk: PostgreSQL serializes the commits of notifying transactions, which
// made concurrent Adds that notified themselves half as fast, and a
// notification lost in a server crash costs only a poll interval.
const notifySQL = `SELECT set_config('synchronous_commit', 'off', true), pg_notify($1, '')`

// notifyAdded has the notifier tell the other processes that this Queue
// added URLs. It does not wait.
func (q *Queue) notifyAdded() {
	select {
	case q.added <- struct{}{}:
	default: // a notification is pending already
	}
	q.bg.Start(&q.notifier, q.notify)
}

// notify sends a notification after Adds, one at a time until Close: Adds
// made while one is sent are told by the next.
func (q *Queue) notify() {
	for {
		select {
		case <-q.ctx.Done():
			return
		case <-q.added:
		}
		ctx, cancel := context.WithTimeout(q.ctx, q.opts.OpTimeout)
		_, err := q.db.pool.Exec(ctx, notifySQL, q.db.schema)
		cancel()
		if err != nil && q.ctx.Err() == nil {
			q.log.Warn("postgres queue: notifying other processes of added URLs", "err", err)
		}
	}
}
