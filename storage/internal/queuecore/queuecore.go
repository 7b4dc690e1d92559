// Package queuecore is the part of the shared crawl queues of
// storage/postgres and storage/redis that does not depend on the store (their
// configuration is package sharedqueue's): the validation and preparation of added
// entries, the settle planning and its counting, the waiting loop of Next,
// the expiry of this handle's leases in Stats, the notifier and listener
// plumbing, and Close. Each store supplies a Backend with what is native to
// it (SQL statements, Lua scripts), so that the two queues behave the same
// by construction rather than by keeping two copies in step.
package queuecore

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/crawlkit/crawlkit/frontier"
	"github.com/crawlkit/crawlkit/storage/internal/idle"
	"github.com/crawlkit/crawlkit/storage/sharedqueue"
	"github.com/crawlkit/crawlkit/urlnorm"
)

// MaxMeta bounds Entry.Meta, as frontier.Frontier does, so that an entry
// one queue accepts every queue accepts.
const MaxMeta = 64 << 10

// Options are the stores' QueueConfig: both are sharedqueue.Config.
type Options = sharedqueue.Config

// Config is what a store tells the core about itself, beyond the user's
// Options, so that errors and logs name it as before.
type Config struct {
	// Name prefixes errors ("postgres: queue: …") and logs ("postgres
	// queue: …").
	Name string
	// Server names the store in the log of a lost connection ("the
	// database").
	Server string
	// Unavailable is the store's error for a lost connection, which Next
	// waits out.
	Unavailable error
	// Closed is the store's error for a closed handle.
	Closed error
	// TextOnly says that URLs and hosts must be UTF-8 without NUL bytes
	// (PostgreSQL's text), so that such an entry fails alone, as invalid,
	// rather than the whole write.
	TextOnly bool
	// CountsMaxAge is how long Stats reuses the crawl-wide counts; zero
	// asks the store at every call.
	CountsMaxAge time.Duration
}

// Entry is a validated frontier.Entry ready to be written.
type Entry struct {
	Key      uint64 // urlnorm.Key(URL), unique within one Add
	URL      string
	Host     string
	Depth    int // 0 to 2^31-1
	Priority float64
	Band     int // 0 to Bands-1
	Meta     []byte
	Due      time.Time // when it may be leased: now, or a later NotBefore
}

// LeaseResult is what one lease call of a Backend found.
type LeaseResult struct {
	Leases []*frontier.Lease
	// Expired counts the leases of Leases that had expired unsettled
	// before (Stats.Expired); Corrupt counts unreadable records the call
	// dropped instead of leasing (Stats.Corrupt).
	Expired, Corrupt int
	// Next is, when nothing was leased, the earliest time a host may be
	// ready, or zero when no URL is queued or leased. A time not after now
	// means soon (a host locked by another worker, leases to expire beyond
	// one call's share, unreadable records dropped): the caller asks again
	// in a millisecond.
	Next time.Time
}

// Planned is one lease of a settle batch with its plan, as a Backend
// writes it.
type Planned struct {
	I      int // index in the batch
	Lease  *frontier.Lease
	Plan   frontier.Decision
	Polite time.Time // the host's next contact time, not before now
}

// Code is a Backend's verdict on settling or extending one lease.
type Code int

const (
	// Applied: the lease was settled (or extended).
	Applied Code = iota
	// Expired: the lease had run out.
	Expired
	// Settled: the lease had been settled before.
	Settled
)

// CodeOf reads the code both stores' settle and extend operations reply
// (the SQL functions and the Lua scripts alike): 0 applied, 2 settled
// before, anything else expired.
func CodeOf(c int64) Code {
	switch c {
	case 0:
		return Applied
	case 2:
		return Settled
	}
	return Expired
}

// Counts are the crawl-wide counts of Stats.
type Counts struct{ Hosts, Queued, Delayed int }

// Backend is what a store does natively, in its own statements: the core
// calls it with validated input and does the rest. Its methods retry lost
// connections as the store allows, and wrap their errors.
type Backend interface {
	// Closed reports whether the store's DB handle is closed.
	Closed() bool
	// Round is t at the store's time resolution, as leases carry it.
	Round(t time.Time) time.Time
	// Add writes entries (distinct keys) at now and returns how many were
	// new to the crawl, also when it fails part way.
	Add(ctx context.Context, now time.Time, entries []Entry) (int, error)
	// Lease leases up to n URLs of distinct ready hosts at now, until
	// expires.
	Lease(ctx context.Context, now time.Time, n int, expires time.Time) (LeaseResult, error)
	// Settle writes the plans of work at now, all or none, and returns a
	// code for each (codes[k] for work[k]; it may reorder work). retried
	// says that a Settled code may be this call's own earlier attempt
	// (a reply lost after it was applied).
	Settle(ctx context.Context, now time.Time, work []Planned) (codes []Code, retried bool, err error)
	// Extend makes l expire at expires if it is still held at now.
	Extend(ctx context.Context, now time.Time, l *frontier.Lease, expires time.Time) (Code, error)
	// Block keeps host from being leased before until; blocks only extend.
	Block(ctx context.Context, host string, until time.Time) error
	// Counts counts the crawl's hosts with work, queued URLs and those of
	// them not yet due.
	Counts(ctx context.Context, now time.Time) (Counts, error)
	// Listen wakes g at every Add of another process, and calls
	// g.Listening at every (re)start, until ctx ends.
	Listen(ctx context.Context, g *idle.Gate)
}

// Notifier is a Backend whose Adds do not tell other processes themselves
// (PostgreSQL's, whose NOTIFY would serialize them): the core calls Notify
// from one goroutine after Adds that queued URLs, one call for any number
// of them.
type Notifier interface {
	Notify(ctx context.Context) error
}

// Queue is the core of a store's Queue: every method of the stores' Queue
// but Record is this type's, with the same contract (the stores document
// it). Its methods are safe for concurrent use.
type Queue struct {
	b      Backend
	cfg    Config
	opts   Options
	policy frontier.Policy
	polite frontier.Politeness
	prio   frontier.Prioritizer
	now    func() time.Time
	log    *slog.Logger

	ctx    context.Context // cancelled by Close
	cancel context.CancelFunc
	// idle lets one of this handle's goroutines waiting in Next poll
	// the store while the others sleep.
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
	at time.Time
	Counts
}

// New returns a queue on b, with the defaults filled in, that ends when
// parent does or at Close.
func New(parent context.Context, opts Options, b Backend, cfg Config) (*Queue, error) {
	opts, err := opts.WithDefaults()
	if err != nil {
		return nil, fmt.Errorf("%s: queue: %w", cfg.Name, err)
	}
	q := &Queue{
		b:      b,
		cfg:    cfg,
		opts:   opts,
		policy: opts.Policy(),
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
	q.ctx, q.cancel = context.WithCancel(parent)
	return q, nil
}

// Options returns the options with their defaults filled in, which a
// Backend may need (LeaseTTL, OpTimeout).
func (q *Queue) Options() Options { return q.opts }

// Logger returns the queue's logger, for a Backend's own warnings.
func (q *Queue) Logger() *slog.Logger { return q.log }

// Gate returns the gate of this handle's waiting Next calls, for tests.
func (q *Queue) Gate() *idle.Gate { return &q.idle }

// ListenerStarted reports whether the listener has been started, for tests.
func (q *Queue) ListenerStarted() bool { return q.listener.Started() }

// Close ends the handle: a blocked Next returns, the listener and notifier
// stop, and later calls fail with Config.Closed. It is idempotent.
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

// Check reports Config.Closed after Close, of the queue or of the DB.
func (q *Queue) Check() error {
	q.mu.Lock()
	closed := q.closed
	q.mu.Unlock()
	if closed || q.b.Closed() {
		return q.cfg.Closed
	}
	return nil
}

// Add is AddAt with the queue's clock and OpTimeout.
func (q *Queue) Add(entries ...frontier.Entry) error {
	ctx, cancel := q.opContext()
	defer cancel()
	_, err := q.AddAt(ctx, q.now(), entries...)
	return err
}

// AddAt validates every entry first (nothing is written if one is
// invalid), drops the repeats of a URL within the call, and has the Backend
// write the rest; URLs added wake this handle's waiting Next calls and,
// through a Notifier, other processes'.
func (q *Queue) AddAt(ctx context.Context, now time.Time, entries ...frontier.Entry) (int, error) {
	if err := q.Check(); err != nil {
		return 0, err
	}
	prepared := make([]Entry, 0, len(entries))
	seen := make(map[uint64]bool, len(entries))
	for i := range entries {
		e, err := q.prepare(&entries[i], now)
		if err != nil {
			return 0, err
		}
		if seen[e.Key] {
			continue
		}
		seen[e.Key] = true
		prepared = append(prepared, e)
	}
	if len(prepared) == 0 {
		return 0, nil
	}
	added, err := q.b.Add(ctx, now, prepared)
	q.mu.Lock()
	q.stats.Added += uint64(added)
	q.mu.Unlock()
	if err != nil {
		return added, err
	}
	if added > 0 {
		q.idle.Wake() // this handle's sleepers poll now
		q.notifyAdded()
	}
	return added, nil
}

// prepare validates e and computes its Entry.
func (q *Queue) prepare(e *frontier.Entry, now time.Time) (Entry, error) {
	if e.URL == "" {
		return Entry{}, fmt.Errorf("%w: empty URL", frontier.ErrInvalidEntry)
	}
	if len(e.Meta) > MaxMeta {
		return Entry{}, fmt.Errorf("%w: %s: meta of %d bytes exceeds %d", frontier.ErrInvalidEntry, e.URL, len(e.Meta), MaxMeta)
	}
	if q.cfg.TextOnly && !storableText(e.URL) {
		return Entry{}, fmt.Errorf("%w: %q: URL is not UTF-8 text without NUL bytes", frontier.ErrInvalidEntry, e.URL)
	}
	host := e.Host
	if host == "" {
		h, err := urlnorm.HostOf(e.URL)
		if err != nil || h == "" {
			return Entry{}, fmt.Errorf("%w: %s: no host: %v", frontier.ErrInvalidEntry, e.URL, err)
		}
		host = h
	}
	if q.cfg.TextOnly && !storableText(host) {
		return Entry{}, fmt.Errorf("%w: %s: host %q is not UTF-8 text without NUL bytes", frontier.ErrInvalidEntry, e.URL, host)
	}
	due := now
	if e.NotBefore.After(now) {
		due = e.NotBefore
	}
	return Entry{
		Key:      urlnorm.Key(e.URL),
		URL:      e.URL,
		Host:     host,
		Depth:    min(max(e.Depth, 0), 1<<31-1),
		Priority: e.Priority,
		Band:     min(max(q.prio.Band(e, q.opts.Bands), 0), q.opts.Bands-1),
		Meta:     e.Meta,
		Due:      due,
	}, nil
}

// storableText reports whether PostgreSQL's text type can hold s: the
// server rejects invalid UTF-8 and NUL bytes, which would fail the whole
// statement (and every repetition of it) instead of the one entry.
func storableText(s string) bool {
	return utf8.ValidString(s) && !strings.ContainsRune(s, 0)
}

// NextAt is LeaseAt of one URL with the queue's OpTimeout.
func (q *Queue) NextAt(now time.Time) (*frontier.Lease, time.Time, error) {
	ctx, cancel := q.opContext()
	defer cancel()
	ls, at, err := q.LeaseAt(ctx, now, 1)
	if err != nil || len(ls) == 0 {
		return nil, at, err
	}
	return ls[0], time.Time{}, nil
}

// LeaseAt leases up to n URLs at now and records them in this handle's
// counters. With none it returns when to ask again: a time after now, or
// zero when no URL is queued or leased.
func (q *Queue) LeaseAt(ctx context.Context, now time.Time, n int) ([]*frontier.Lease, time.Time, error) {
	if err := q.Check(); err != nil {
		return nil, time.Time{}, err
	}
	if n <= 0 {
		return nil, time.Time{}, nil
	}
	res, err := q.b.Lease(ctx, now, n, q.b.Round(now.Add(q.opts.LeaseTTL)))
	if err != nil {
		return nil, time.Time{}, err
	}
	q.mu.Lock()
	for _, l := range res.Leases {
		q.leases[l.ID] = l.Expires
	}
	q.stats.Leases += uint64(len(res.Leases))
	q.stats.Expired += uint64(res.Expired)
	q.stats.Corrupt += uint64(res.Corrupt)
	q.mu.Unlock()
	switch {
	case len(res.Leases) > 0:
		return res.Leases, time.Time{}, nil
	case res.Next.IsZero():
		return nil, time.Time{}, nil
	case !res.Next.After(now):
		// Ready, but not for this call: ask again shortly.
		return nil, now.Add(time.Millisecond), nil
	}
	return nil, res.Next, nil
}

// Next leases one URL, waiting at the gate (see idle.Gate.Next), and starts
// the listener at its first call unless NoListen.
func (q *Queue) Next(ctx context.Context) (*frontier.Lease, error) {
	if !q.opts.NoListen {
		q.bg.Start(&q.listener, func() { q.b.Listen(q.ctx, &q.idle) })
	}
	return q.idle.Next(ctx, idle.Source{
		Ctx: q.ctx, OpTimeout: q.opts.OpTimeout, PollInterval: q.opts.PollInterval, Now: q.now,
		LeaseAt: q.LeaseAt, Unavailable: q.cfg.Unavailable,
		OnUnavailable: func(err error) { q.log.Warn(q.cfg.Name+" queue: waiting for "+q.cfg.Server, "err", err) },
	})
}

// Done is DoneAt with the queue's clock and OpTimeout.
func (q *Queue) Done(l *frontier.Lease, o frontier.Outcome) (frontier.Settlement, error) {
	ctx, cancel := q.opContext()
	defer cancel()
	return q.DoneAt(ctx, q.now(), l, o)
}

// Settlement is one lease and its outcome for DoneBatchAt: the stores'
// Settlement.
type Settlement = sharedqueue.Settlement

// DoneAt is DoneBatchAt of one lease.
func (q *Queue) DoneAt(ctx context.Context, now time.Time, l *frontier.Lease, o frontier.Outcome) (frontier.Settlement, error) {
	s := []Settlement{{Lease: l, Outcome: o}}
	if err := q.DoneBatchAt(ctx, now, s); err != nil {
		return frontier.Settlement{}, err
	}
	return s[0].Result, s[0].Err
}

// DoneBatchAt plans each settlement by the queue's policy and the host's
// next contact time by its Politeness, has the Backend write them in one
// go, and sets each one's Err and Result from the Backend's codes. It
// returns an error only when the Backend failed as a whole.
func (q *Queue) DoneBatchAt(ctx context.Context, now time.Time, batch []Settlement) error {
	if err := q.Check(); err != nil {
		return err
	}
	var work []Planned
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
		work = append(work, Planned{I: i, Lease: st.Lease, Plan: s, Polite: pol})
	}
	if len(work) == 0 {
		return nil
	}
	codes, retried, err := q.b.Settle(ctx, now, work)
	if err != nil {
		return err
	}
	if len(codes) != len(work) {
		return fmt.Errorf("%s: settle: %d codes for %d leases", q.cfg.Name, len(codes), len(work))
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	for k, w := range work {
		st := &batch[w.I]
		switch codes[k] {
		case Applied:
		case Settled:
			if !retried {
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
		st.Result = w.Plan.Settlement
		q.count(st.Outcome.Kind, &w.Plan)
	}
	return nil
}

// count adds a settlement to this handle's counters; q.mu is held.
func (q *Queue) count(kind frontier.OutcomeKind, s *frontier.Decision) {
	switch kind {
	case frontier.OutcomeSuccess:
		q.stats.Succeeded++
	case frontier.OutcomeNotModified:
		q.stats.NotModified++
	case frontier.OutcomeRetry:
		if s.Kind == frontier.SettlementGivenUp {
			q.stats.Failed++
			q.stats.Dropped++
		} else {
			q.stats.Retried++
		}
	case frontier.OutcomeFailed:
		q.stats.Failed++
	}
	if s.Kind == frontier.SettlementRecrawl {
		q.stats.Recrawls++
	}
}

// Extend is ExtendAt with the queue's clock and OpTimeout.
func (q *Queue) Extend(l *frontier.Lease, ttl time.Duration) error {
	ctx, cancel := q.opContext()
	defer cancel()
	return q.ExtendAt(ctx, q.now(), l, ttl)
}

// ExtendAt has the Backend make l expire at now+ttl and updates l.Expires
// and this handle's record of it.
func (q *Queue) ExtendAt(ctx context.Context, now time.Time, l *frontier.Lease, ttl time.Duration) error {
	if err := q.Check(); err != nil {
		return err
	}
	if l == nil {
		return frontier.ErrForeignLease
	}
	expires := q.b.Round(now.Add(max(ttl, 0)))
	code, err := q.b.Extend(ctx, now, l, expires)
	if err != nil {
		return err
	}
	switch code {
	case Applied:
	case Settled:
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

// BlockHost is BlockHostAt with the queue's OpTimeout, its error logged.
func (q *Queue) BlockHost(host string, until time.Time) {
	ctx, cancel := q.opContext()
	defer cancel()
	if err := q.BlockHostAt(ctx, host, until); err != nil {
		q.log.Warn(q.cfg.Name+" queue: blocking host", "host", host, "err", err)
	}
}

// BlockHostAt has the Backend block host until until.
func (q *Queue) BlockHostAt(ctx context.Context, host string, until time.Time) error {
	if err := q.Check(); err != nil {
		return err
	}
	return q.b.Block(ctx, host, until)
}

// Stats returns this handle's counters, Leased its unexpired unsettled
// leases, and the Backend's crawl-wide counts (reused for
// Config.CountsMaxAge; left out, and logged, when the Backend fails).
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
	if time.Since(sc.at) > q.cfg.CountsMaxAge && q.Check() == nil {
		ctx, cancel := context.WithTimeout(q.ctx, min(q.opts.OpTimeout, 5*time.Second))
		c, err := q.b.Counts(ctx, now)
		cancel()
		if err != nil {
			q.log.Warn(q.cfg.Name+" queue: counting", "err", err)
		} else {
			sc = sharedCounts{at: time.Now(), Counts: c}
			if q.cfg.CountsMaxAge > 0 {
				q.mu.Lock()
				q.shared = sc
				q.mu.Unlock()
			}
		}
	}
	s.Hosts, s.InMemory, s.Delayed = sc.Hosts, sc.Queued, sc.Delayed
	return s
}

// notifyAdded has the notifier tell the other processes that this queue
// added URLs, if the Backend is a Notifier. It does not wait.
func (q *Queue) notifyAdded() {
	n, ok := q.b.(Notifier)
	if !ok {
		return
	}
	select {
	case q.added <- struct{}{}:
	default: // a notification is pending already
	}
	q.bg.Start(&q.notifier, func() { q.notify(n) })
}

// notify calls n.Notify after Adds, one at a time until Close: Adds made
// while one is sent are told by the next.
func (q *Queue) notify(n Notifier) {
	for {
		select {
		case <-q.ctx.Done():
			return
		case <-q.added:
		}
		ctx, cancel := context.WithTimeout(q.ctx, q.opts.OpTimeout)
		err := n.Notify(ctx)
		cancel()
		if err != nil && q.ctx.Err() == nil {
			q.log.Warn(q.cfg.Name+" queue: notifying other processes of added URLs", "err", err)
		}
	}
}
