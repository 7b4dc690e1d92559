package redis

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"time"

	goredis "github.com/redis/go-redis/v9"

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
	// DefaultExpiryDelay is how long a host waits after a lease on it
	// expired unsettled, until a settle records the host's own delay.
	DefaultExpiryDelay = frontier.DefaultDelay
)

// maxMeta bounds Entry.Meta, as frontier.Frontier does.
const maxMeta = 64 << 10

// addChunk bounds the URLs of one add script call.
const addChunk = 1000

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
	// without asking the server again when nothing is ready: other
	// processes may settle leases at any time. One waiting call asks; the
	// others sleep until it finds work or URLs are added, by this Queue
	// or, heard through the listener (see NoListen), by another process.
	// Zero means 200 ms.
	PollInterval time.Duration
	// NoListen turns the listener off. By default, from its first Next
	// on, a Queue keeps one connection of its own subscribed to the
	// crawl's channel Prefix()+"added", on which every Add that queues
	// URLs publishes, so that waiting Next calls in every process ask at
	// once instead of at their next poll. Without it they find other
	// processes' URLs within PollInterval.
	NoListen bool
	// OpTimeout bounds each operation of the methods that take no context
	// (Add, NextAt, Done, BlockHost, Stats). Zero means 30 s.
	OpTimeout time.Duration
	// Now is the clock of the methods that take no time. Nil means
	// time.Now.
	Now func() time.Time
	// Logger receives the errors of BlockHost and Stats, which cannot
	// return them. Nil discards them.
	Logger *slog.Logger
}

// Queue is a crawlkit.Queue whose state lives in the crawl's Redis keys,
// shared by every process that opens the same crawl. Its methods are safe
// for concurrent use.
//
// The guarantees across processes (as long as the server keeps its writes;
// see the package documentation):
//   - Add queues a URL at most once over the life of the crawl: a URL
//     queued, leased or finished before is dropped, atomically.
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
	// bg runs the listener from the first Next until Close.
	bg       idle.Background
	listener idle.Task

	mu     sync.Mutex
	closed bool
	leases map[uint64]time.Time // this handle's unsettled leases and their expiry
	stats  frontier.Stats       // this handle's counters
}

var _ interface {
	Add(entries ...frontier.Entry) error
	Next(ctx context.Context) (*frontier.Lease, error)
	NextAt(now time.Time) (*frontier.Lease, time.Time, error)
	Done(l *frontier.Lease, o frontier.Outcome) (frontier.Settlement, error)
	BlockHost(host string, until time.Time)
	Stats() frontier.Stats
} = (*Queue)(nil)

// Queue returns a handle on the crawl's shared queue. Each process (or each
// crawler) takes its own; handles on one crawl share everything but their
// Stats counters. Close the Queue before the DB.
func (db *DB) Queue(opts QueueOptions) (*Queue, error) {
	if db.isClosed() {
		return nil, ErrClosed
	}
	if opts.Bands == 0 {
		opts.Bands = DefaultBands
	}
	if opts.Bands < 1 || opts.Bands > 16 {
		return nil, fmt.Errorf("redis: queue: Bands %d outside 1..16", opts.Bands)
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
// ErrClosed (which matches frontier.ErrClosed). Leases it handed out and did not settle expire on the
// server as any crashed worker's would. The DB stays open. Close is
// idempotent.
func (q *Queue) Close() error {
	q.mu.Lock()
	q.closed = true
	q.cancel()
	q.mu.Unlock()
	q.bg.Stop()
	return nil
}

func (q *Queue) opContext() (context.Context, context.CancelFunc) {
	return context.WithTimeout(q.ctx, q.opts.OpTimeout)
}

func (q *Queue) check() error {
	q.mu.Lock()
	closed := q.closed
	q.mu.Unlock()
	if closed || q.db.isClosed() {
		return ErrClosed
	}
	return nil
}

// micros is t in microseconds since the Unix epoch, the scripts' time.
func micros(t time.Time) int64 { return t.UnixMicro() }

// urlID is the member naming a URL in the scripts' keys: its urlnorm.Key
// in hexadecimal.
func urlID(url string) string { return fmt.Sprintf("%016x", urlnorm.Key(url)) }

// Add queues entries that the crawl has not seen before, reading the clock
// from QueueOptions.Now.
func (q *Queue) Add(entries ...frontier.Entry) error {
	ctx, cancel := q.opContext()
	defer cancel()
	_, err := q.AddAt(ctx, q.now(), entries...)
	return err
}

// AddAt queues the entries at time now and reports how many were new to the
// crawl: an entry whose URL (by urlnorm.Key) was queued before, by any
// process, is dropped. Entries whose NotBefore is after now wait for it. An
// invalid entry fails the whole call before anything is written
// (frontier.ErrInvalidEntry); otherwise the entries go to the server in
// script calls of up to 1000 URLs, pipelined in one round trip, each applied
// atomically; a failed call may be repeated.
func (q *Queue) AddAt(ctx context.Context, now time.Time, entries ...frontier.Entry) (int, error) {
	if err := q.check(); err != nil {
		return 0, err
	}
	args := make([]any, 0, 5*len(entries))
	for i := range entries {
		e := &entries[i]
		if e.URL == "" {
			return 0, fmt.Errorf("%w: empty URL", frontier.ErrInvalidEntry)
		}
		if len(e.Meta) > maxMeta {
			return 0, fmt.Errorf("%w: %s: meta of %d bytes exceeds %d", frontier.ErrInvalidEntry, e.URL, len(e.Meta), maxMeta)
		}
		host := e.Host
		if host == "" {
			h, err := urlnorm.HostOf(e.URL)
			if err != nil || h == "" {
				return 0, fmt.Errorf("%w: %s: no host: %v", frontier.ErrInvalidEntry, e.URL, err)
			}
			host = h
		}
		band := min(max(q.prio.Band(e, q.opts.Bands), 0), q.opts.Bands-1)
		due := now
		if e.NotBefore.After(now) {
			due = e.NotBefore
		}
		rec := record{url: e.URL, host: host, depth: min(max(e.Depth, 0), 1<<31-1), priority: e.Priority, meta: e.Meta}
		args = append(args, urlID(e.URL), host, band, micros(due), rec.encode())
	}
	if len(args) == 0 {
		return 0, nil
	}
	var cmds []*goredis.Cmd
	// Safe to repeat: the script drops URLs it already queued.
	err := retry(ctx, "add", func() error {
		cmds = cmds[:0]
		_, err := q.db.client.Pipelined(ctx, func(p goredis.Pipeliner) error {
			for rest := args; len(rest) > 0; {
				n := min(len(rest)/5, addChunk)
				a := append([]any{q.db.prefix, micros(now), n}, rest[:5*n]...)
				cmds = append(cmds, q.db.scripts.add.EvalSha(ctx, p, []string{q.db.key("ready")}, a...))
				rest = rest[5*n:]
			}
			return nil
		})
		if isNoScript(err) {
			if err := q.loadScripts(ctx); err != nil {
				return err
			}
			return errNoScript
		}
		return err
	})
	if err != nil {
		return 0, err
	}
	added := 0
	for _, c := range cmds {
		n, _ := c.Int()
		added += n
	}
	q.mu.Lock()
	q.stats.Added += uint64(added)
	q.mu.Unlock()
	if added > 0 {
		q.idle.Wake() // this handle's sleepers poll now
	}
	return added, nil
}

// errNoScript makes retry run a pipeline again after the scripts were
// loaded into a server that had lost them (after a restart).
var errNoScript = errors.New("scripts reloaded")

func isNoScript(err error) bool {
	return err != nil && goredis.HasErrorPrefix(err, "NOSCRIPT")
}

// loadScripts loads every script into the server's script cache, for
// pipelines, which cannot fall back from EVALSHA to EVAL.
func (q *Queue) loadScripts(ctx context.Context) error {
	s := q.db.scripts
	for _, sc := range []*goredis.Script{s.add, s.lease, s.settle, s.extend, s.block} {
		if err := sc.Load(ctx, q.db.client).Err(); err != nil {
			return err
		}
	}
	return nil
}

// NextAt leases the best due URL of a host that may be contacted at now, if
// any. Otherwise it returns a nil lease and the earliest time a host may
// become ready (the end of a politeness delay, a block, a due time, or the
// end of an unsettled lease), or the zero time when no URL of the crawl is
// queued or leased. It never blocks on other workers.
func (q *Queue) NextAt(now time.Time) (*frontier.Lease, time.Time, error) {
	ctx, cancel := q.opContext()
	defer cancel()
	ls, at, err := q.LeaseAt(ctx, now, 1)
	if err != nil || len(ls) == 0 {
		return nil, at, err
	}
	return ls[0], time.Time{}, nil
}

// LeaseAt leases up to n URLs at time now, each of a different ready host,
// in one script call. When it leases none it also returns when to ask
// again, as NextAt does. Leasing is not repeated after a lost connection:
// leases whose reply was lost expire.
func (q *Queue) LeaseAt(ctx context.Context, now time.Time, n int) ([]*frontier.Lease, time.Time, error) {
	if err := q.check(); err != nil {
		return nil, time.Time{}, err
	}
	if n <= 0 {
		return nil, time.Time{}, nil
	}
	expires := time.UnixMicro(micros(now.Add(q.opts.LeaseTTL)))
	res, err := q.db.scripts.lease.Run(ctx, q.db.client, []string{q.db.key("ready")},
		q.db.prefix, micros(now), n, micros(expires), DefaultExpiryDelay.Microseconds()).Slice()
	if err != nil {
		return nil, time.Time{}, wrap("lease", err)
	}
	if len(res) < 2 || (len(res)-2)%3 != 0 {
		return nil, time.Time{}, fmt.Errorf("redis: lease: malformed reply of %d values", len(res))
	}
	expired, _ := res[0].(int64)
	var leases []*frontier.Lease
	var corrupt []any // settle arguments of leases whose record is unreadable
	for i := 2; i+2 < len(res); i += 3 {
		idStr, _ := res[i].(string)
		uid, _ := res[i+1].(string)
		blob, _ := res[i+2].(string)
		id, err := strconv.ParseUint(idStr, 10, 64)
		if err != nil {
			return nil, time.Time{}, fmt.Errorf("redis: lease: malformed lease id %q", idStr)
		}
		rec, err := decodeRecord([]byte(blob))
		if err != nil {
			// An unreadable record would come back at every expiry of
			// its lease, and failing the call would lose the good
			// leases of this batch with it. It is settled as failed
			// below, which deletes it, and counted in Stats.Corrupt.
			q.log.Warn("redis queue: dropping an unreadable URL record", "url_id", uid, "err", err)
			corrupt = append(corrupt, idStr, uid, stateFailed, 0, "", micros(now), 0)
			continue
		}
		leases = append(leases, &frontier.Lease{
			ID: id, URL: rec.url, Host: rec.host, Depth: rec.depth, Priority: rec.priority, Meta: rec.meta,
			Attempt: rec.attempts, Fingerprint: rec.fingerprint, Interval: rec.interval, Expires: expires,
		})
	}
	dropped := q.dropCorrupt(ctx, now, corrupt)
	q.mu.Lock()
	for _, l := range leases {
		q.leases[l.ID] = l.Expires
	}
	q.stats.Leases += uint64(len(leases))
	q.stats.Expired += uint64(expired)
	q.stats.Corrupt += uint64(dropped)
	q.mu.Unlock()
	if len(leases) > 0 {
		return leases, time.Time{}, nil
	}
	if len(corrupt) > 0 {
		// Every URL leased was unreadable; others may be ready.
		return nil, now.Add(time.Millisecond), nil
	}
	next, _ := res[1].(string)
	if next == "" {
		return nil, time.Time{}, nil
	}
	us, err := strconv.ParseInt(next, 10, 64)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("redis: lease: malformed time %q", next)
	}
	at := time.UnixMicro(us)
	if !at.After(now) {
		// Leases to expire or URLs to promote beyond one call's share:
		// ask again shortly.
		at = now.Add(time.Millisecond)
	}
	return nil, at, nil
}

// dropCorrupt settles as failed the leases described by args (seven
// settle-script arguments per lease) and returns how many it settled. A
// failure is logged, not returned: those leases then expire, and their
// records are met, and dropped, again.
func (q *Queue) dropCorrupt(ctx context.Context, now time.Time, args []any) int {
	n := len(args) / 7
	if n == 0 {
		return 0
	}
	head := []any{q.db.prefix, micros(now), DefaultExpiryDelay.Microseconds(), n}
	codes, err := q.db.scripts.settle.Run(ctx, q.db.client, []string{q.db.key("ready")}, append(head, args...)...).Int64Slice()
	if err != nil {
		q.log.Warn("redis queue: dropping unreadable URL records", "err", wrap("settle", err))
		return 0
	}
	dropped := 0
	for _, c := range codes {
		if c == 0 {
			dropped++
		}
	}
	return dropped
}

// Next returns a lease, waiting until one is available or ctx is done. While
// nothing is ready, one of the waiting calls asks the server again when the
// earliest host may become ready, and at least every PollInterval (other
// processes add and settle URLs); the others sleep until it finds work, it
// stops waiting, or URLs are added (by this Queue, or by another process if
// the listener is on: see QueueOptions.NoListen), so idle workers cost one
// script call per interval, not one each. Lost connections are waited out; other
// errors are returned.
func (q *Queue) Next(ctx context.Context) (*frontier.Lease, error) {
	if !q.opts.NoListen {
		q.bg.Start(&q.listener, q.listen)
	}
	return q.idle.Next(ctx, idle.Source{
		Ctx: q.ctx, OpTimeout: q.opts.OpTimeout, PollInterval: q.opts.PollInterval, Now: q.now,
		LeaseAt: q.LeaseAt, Unavailable: ErrUnavailable,
		OnUnavailable: func(err error) { q.log.Warn("redis queue: waiting for the server", "err", err) },
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

// DoneBatchAt settles several leases at time now in one script call
// (atomic, one round trip), setting each Settlement's Err. It returns an
// error only when the call failed, in which case none or all of the leases
// were settled.
func (q *Queue) DoneBatchAt(ctx context.Context, now time.Time, batch []Settlement) error {
	if err := q.check(); err != nil {
		return err
	}
	type planned struct {
		i int
		s frontier.Decision
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
		work = append(work, planned{i: i, s: s})
	}
	if len(work) == 0 {
		return nil
	}
	args := []any{q.db.prefix, micros(now), DefaultExpiryDelay.Microseconds(), len(work)}
	for _, w := range work {
		l := batch[w.i].Lease
		pol := q.polite.ReadyAt(l.Host, now)
		if pol.Before(now) {
			pol = now
		}
		var due int64
		var blob []byte
		if w.s.Requeue() {
			due = micros(w.s.At)
			rec := record{url: l.URL, host: l.Host, depth: l.Depth, priority: l.Priority, meta: l.Meta,
				attempts: w.s.Attempt, fingerprint: w.s.Fingerprint, interval: w.s.Interval}
			blob = rec.encode()
		}
		args = append(args, strconv.FormatUint(l.ID, 10), urlID(l.URL), dbState(&w.s), due, blob,
			micros(pol), pol.Sub(now).Microseconds())
	}
	var codes []int64
	attempt := 0
	// One script call settles the whole batch atomically; repeating it
	// after a lost reply is safe, since it recognizes its own settles.
	err := retry(ctx, "settle", func() error {
		attempt++
		var err error
		codes, err = q.db.scripts.settle.Run(ctx, q.db.client, []string{q.db.key("ready")}, args...).Int64Slice()
		if err == nil && len(codes) != len(work) {
			err = fmt.Errorf("%d codes for %d leases", len(codes), len(work))
		}
		return err
	})
	if err != nil {
		return err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	for k, w := range work {
		st := &batch[w.i]
		switch codes[k] {
		case 0:
		case 2:
			if attempt == 1 {
				st.Err = fmt.Errorf("%w: %s", frontier.ErrLeaseSettled, st.Lease.URL)
				continue
			}
			// A retry found the settle of an earlier attempt applied.
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
	expires := time.UnixMicro(micros(now.Add(max(ttl, 0))))
	var code int64
	err := retry(ctx, "extend", func() error {
		var err error
		code, err = q.db.scripts.extend.Run(ctx, q.db.client, []string{q.db.key("ready")},
			q.db.prefix, micros(now), strconv.FormatUint(l.ID, 10), micros(expires), urlID(l.URL)).Int64()
		return err
	})
	if err != nil {
		return err
	}
	switch code {
	case 0:
	case 2:
		return fmt.Errorf("%w: %s", frontier.ErrLeaseSettled, l.URL)
	default:
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
		q.log.Warn("redis queue: blocking host", "host", host, "err", err)
	}
}

// BlockHostAt is BlockHost with a context and an error.
func (q *Queue) BlockHostAt(ctx context.Context, host string, until time.Time) error {
	if err := q.check(); err != nil {
		return err
	}
	return retry(ctx, "block host", func() error {
		return q.db.scripts.block.Run(ctx, q.db.client, []string{q.db.key("ready")}, q.db.prefix, host, micros(until)).Err()
	})
}

// Stats returns this handle's counters (Added, Leases, Succeeded, …;
// Corrupt: unreadable URL records it leased and dropped; Leased: its own
// unsettled, unexpired leases) and the crawl's shared counts: Hosts with
// queued URLs or a lease, InMemory URLs queued on the server (not leased)
// and Delayed of them not yet due.
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
	q.mu.Unlock()
	if q.check() != nil {
		return s
	}
	ctx, cancel := context.WithTimeout(q.ctx, min(q.opts.OpTimeout, 5*time.Second))
	defer cancel()
	var queued *goredis.StringCmd
	var delayed, ready, leased *goredis.IntCmd
	_, err := q.db.client.Pipelined(ctx, func(p goredis.Pipeliner) error {
		queued = p.HGet(ctx, q.db.key("n"), "q")
		delayed = p.ZCard(ctx, q.db.key("dl"))
		ready = p.ZCard(ctx, q.db.key("ready"))
		leased = p.HLen(ctx, q.db.key("hl"))
		return nil
	})
	if err != nil && !errors.Is(err, goredis.Nil) {
		q.log.Warn("redis queue: counting", "err", wrap("stats", err))
		return s
	}
	nq, _ := queued.Int()
	s.Delayed = int(delayed.Val())
	s.InMemory = nq + s.Delayed
	s.Hosts = int(ready.Val() + leased.Val())
	return s
}

// Deduplicates reports that Add drops URLs the queue holds or has
// finished, as crawlkit.Queue requires.
func (q *Queue) Deduplicates() bool { return true }

// listenCheck is how long the listener's subscription may be quiet before
// it is pinged, so that a connection that died without a word is noticed
// and replaced.
const listenCheck = 30 * time.Second

// listen runs the listener until the Queue or the DB closes: a
// subscription to the crawl's "added" channel whose every message, and
// every (re)subscription, wakes this handle's waiting Next calls. The
// client reopens a lost connection, and subscribes again, at the next
// receive, which comes after a pause that doubles from 100 ms to 5 s.
func (q *Queue) listen() {
	ps := q.db.client.Subscribe(q.ctx, q.db.key("added"))
	stop := context.AfterFunc(q.ctx, func() { ps.Close() }) // ends a blocked receive
	defer func() {
		if stop() {
			ps.Close()
		}
	}()
	pause := idle.Backoff{Min: 100 * time.Millisecond, Max: 5 * time.Second}
	for {
		msg, err := ps.ReceiveTimeout(q.ctx, listenCheck)
		if q.ctx.Err() != nil {
			return
		}
		var nerr net.Error
		switch m := msg.(type) {
		case *goredis.Subscription:
			if m.Kind == "subscribe" {
				pause.Reset()
				q.idle.Listening()
			}
		case *goredis.Message:
			q.idle.Wake()
		}
		switch {
		case err == nil:
		case errors.As(err, &nerr) && nerr.Timeout():
			// Quiet: ask the server for a pong, which fails, and so
			// replaces the connection, if it is gone.
			if err := ps.Ping(q.ctx); err != nil && q.ctx.Err() == nil {
				q.log.Warn("redis queue: listener ping failed", "err", err)
			}
		default:
			q.log.Warn("redis queue: listener lost, polling until it is back", "err", err, "retry_in", pause.Current())
			if !pause.Wait(q.ctx) {
				return
			}
		}
	}
}
