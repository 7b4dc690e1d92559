// Package frontier decides what a crawler fetches next. It queues URLs by
// priority and host, hands them out as leases when their host's politeness
// clock allows, and settles every lease with an outcome: done, retry later,
// failed, or recrawl at a later time.
//
// # Design
//
// The frontier follows Mercator's two-tier design (Heydon and Najork,
// "Mercator: a scalable, extensible web crawler", WWW 1999; Najork and
// Heydon, "High-performance web crawling", 2001):
//
//   - Front queues are F priority bands (Options.Bands, default 4). A
//     Prioritizer puts every added URL into a band; BFS (by depth, the
//     default) and OPIC (online page importance) are built in.
//   - Back queues are per host: each host's URLs, ordered by band and then
//     first in, first out. A host holds at most MaxLeasesPerHost (default 1)
//     unsettled leases.
//   - A heap orders hosts by the time they may next be contacted: the end of
//     their last fetch plus the delay the Politeness model returns
//     (fetch.Politeness fits; the default is FixedDelay(DefaultDelay)), or a
//     BlockHost time.
//
// Band selection. Hosts whose time has come wait in one ready list per band
// (the band of their best URL). Next picks a band by smooth weighted round
// robin over the bands that have ready hosts: band b has weight
// 2^(F-1-b) by default (8, 4, 2, 1 for four bands; Options.BandWeights
// overrides), so when every band has ready hosts, band b receives
// weight(b)/sum(weights) of the leases, and the lowest band still gets one
// lease in fifteen: low bands slow down but are never starved. Within a band,
// hosts are served in the order they became ready; a waiting host that gets a
// better URL joins the better band's list. Within a host, the best
// band is always served first.
//
// A worker asks Next for a lease, fetches the URL and calls Done with the
// outcome. A lease that is not settled before it expires (Options.LeaseTTL,
// default 5 minutes; Extend prolongs it) goes back to its queue, and a late
// Done reports ErrLeaseExpired; a lease settles at most once, so a queued URL
// finishes once. Outcomes:
//
//   - OutcomeSuccess: done; queued again for a recrawl at Outcome.RecrawlAt
//     or when the Schedule (FixedInterval, Adaptive) says.
//   - OutcomeNotModified: a 304; like success with unchanged content.
//   - OutcomeRetry: queued again after max(RetryAfter, exponential backoff)
//     until MaxAttempts attempts were made, then dropped as failed.
//   - OutcomeFailed: done, permanently.
//
// Done reports which of these it applied as a Settlement (a retry given
// up, a recrawl and when it is due), so that a caller keeps its counts
// without knowing the queue's policy.
//
// The frontier does not deduplicate: put a seen set (package bloom) in front
// of Add, as Mercator puts its URL-seen test in front of the frontier.
//
// # Time
//
// Every scheduling decision is a pure function of the frontier's state and
// an explicit time: AddAt, NextAt, DoneAt, ExtendAt take now. Add, Next, Done
// and Extend are thin wrappers that read Options.Now (time.Now by default);
// Next blocks until a lease is available or its context is done.
//
// # Storage
//
// With Options.Store nil the frontier keeps every URL in memory, in compact
// per-host queues. With a Store (MemoryStore, storage/pebble, or a user's
// own, checked by frontiertest.Run) every Add and every settle is written
// before it returns, and concurrent calls share one write (group commit).
// Only a bounded window of each host's URLs (Options.Window per band) and of
// the delayed URLs (Options.DelayedWindow) is held in memory; the rest is read
// through per-host cursors when the window drains. A recrawl or NotBefore URL
// that comes due goes to the head of its band, as without a Store, if the
// band's window has room; otherwise it is re-filed in the store as a queued
// URL at the band's tail (one write moves it from its delayed key to a queued
// key), so that a large cohort of due URLs (recrawls after downtime) is not
// loaded into memory at once. A retry goes to its band's tail, in memory or
// in the store, with or without a Store (see Options.RetryBase). Leases are not stored: on restart every URL that was
// leased but not settled is queued again.
//
// Store key layout:
//
//	"mseq"                         highest sequence number used
//	"q" host 0x00 band(1) seq(8)   a queued URL; seq orders a band first in, first out
//	"d" due(8) seq(8)              a URL waiting for its due time
package frontier

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
)

// Errors returned by the frontier. They are matchable with errors.Is.
var (
	// ErrClosed is returned by every method after Close.
	ErrClosed = errors.New("frontier: closed")
	// ErrLeaseExpired is returned by Done and Extend for a lease whose
	// time ran out; its URL went back to the queue.
	ErrLeaseExpired = errors.New("frontier: lease expired")
	// ErrLeaseSettled is returned by Done and Extend for a lease that was
	// already settled.
	ErrLeaseSettled = errors.New("frontier: lease already settled")
	// ErrForeignLease is returned for a nil lease or a lease from another
	// Frontier.
	ErrForeignLease = errors.New("frontier: lease does not belong to this frontier")
	// ErrInvalidEntry is returned by Add for an entry it cannot queue; the
	// error says which entry and why.
	ErrInvalidEntry = errors.New("frontier: invalid entry")
	// ErrInvalidOutcome is returned by Done for an outcome with an unknown
	// kind.
	ErrInvalidOutcome = errors.New("frontier: invalid outcome")
)

// Entry is a URL to queue.
type Entry struct {
	// URL is the normalized URL (urlnorm.Normalize). Required.
	URL string
	// Host is the URL's host as urlnorm.Host returns it; politeness is
	// kept per Host. When empty it is derived from URL (lower-cased host
	// and port).
	Host string
	// Priority is an importance score for the Prioritizer; OPIC keeps a
	// page's cash in it. It comes back in the Lease.
	Priority float64
	// Depth is the number of links from a seed (seeds are 0). Depths
	// above 65535 are stored as 65535.
	Depth int
	// NotBefore is the earliest time to fetch the URL; zero means now.
	NotBefore time.Time
	// Meta is opaque data kept with the URL and returned in its Lease
	// (at most 64 KiB).
	Meta []byte
}

// OutcomeKind says how a lease ended.
type OutcomeKind uint8

// Outcome kinds.
const (
	// OutcomeSuccess: the URL was fetched.
	OutcomeSuccess OutcomeKind = iota + 1
	// OutcomeNotModified: a conditional fetch answered 304.
	OutcomeNotModified
	// OutcomeRetry: a transient failure; try again later.
	OutcomeRetry
	// OutcomeFailed: a permanent failure; never try again.
	OutcomeFailed
)

// String returns the kind's name.
func (k OutcomeKind) String() string {
	switch k {
	case OutcomeSuccess:
		return "success"
	case OutcomeNotModified:
		return "not-modified"
	case OutcomeRetry:
		return "retry"
	case OutcomeFailed:
		return "failed"
	}
	return fmt.Sprintf("OutcomeKind(%d)", uint8(k))
}

// Outcome is the result of a lease, given to Done.
type Outcome struct {
	Kind OutcomeKind
	// Fingerprint identifies the content (for example a simhash
	// fingerprint) so the Schedule can tell whether it changed; zero
	// means unknown. OutcomeSuccess only.
	Fingerprint uint64
	// RecrawlAt, when set, queues the URL again at that time, overriding
	// the Schedule. OutcomeSuccess and OutcomeNotModified.
	RecrawlAt time.Time
	// RetryAfter is the least time to wait before retrying (for example
	// from a Retry-After header); the frontier waits at least its own
	// backoff. OutcomeRetry only.
	RetryAfter time.Duration
}

// SettlementKind says what settling a lease did to its URL.
type SettlementKind uint8

// Settlement kinds.
const (
	// SettlementFinished: fetched (OutcomeSuccess or OutcomeNotModified)
	// and not scheduled again.
	SettlementFinished SettlementKind = iota + 1
	// SettlementFailed: OutcomeFailed; never tried again.
	SettlementFailed
	// SettlementRetrying: OutcomeRetry, put back to be tried again at
	// Settlement.At.
	SettlementRetrying
	// SettlementGivenUp: OutcomeRetry on the last attempt MaxAttempts
	// allows; dropped as failed, never tried again.
	SettlementGivenUp
	// SettlementRecrawl: fetched, and due again at Settlement.At for a
	// recrawl (Outcome.RecrawlAt or the Schedule).
	SettlementRecrawl
)

// String returns the kind's name.
func (k SettlementKind) String() string {
	switch k {
	case SettlementFinished:
		return "finished"
	case SettlementFailed:
		return "failed"
	case SettlementRetrying:
		return "retrying"
	case SettlementGivenUp:
		return "given-up"
	case SettlementRecrawl:
		return "recrawl"
	}
	return fmt.Sprintf("SettlementKind(%d)", uint8(k))
}

// Settlement is what Done did with a lease's URL. Done reports it because
// the caller cannot tell from the Outcome alone: whether a retry is given up
// depends on the queue's MaxAttempts and the URL's attempts, and whether a
// success is recrawled on its Schedule, which with a shared queue live in
// another process.
type Settlement struct {
	Kind SettlementKind
	// At is when the URL is due again: set for SettlementRetrying and
	// SettlementRecrawl, zero otherwise.
	At time.Time
	// Attempt is the URL's count of attempts that ended in OutcomeRetry
	// after this settlement, this one included: the Lease.Attempt of its
	// next lease when Retrying, zero for a Recrawl (which starts afresh),
	// the count that reached MaxAttempts when GivenUp.
	Attempt int
}

// Success returns an OutcomeSuccess with the content's fingerprint (zero if
// unknown).
func Success(fingerprint uint64) Outcome {
	return Outcome{Kind: OutcomeSuccess, Fingerprint: fingerprint}
}

// NotModified returns an OutcomeNotModified.
func NotModified() Outcome { return Outcome{Kind: OutcomeNotModified} }

// Retry returns an OutcomeRetry that waits at least after.
func Retry(after time.Duration) Outcome { return Outcome{Kind: OutcomeRetry, RetryAfter: after} }

// Failed returns an OutcomeFailed.
func Failed() Outcome { return Outcome{Kind: OutcomeFailed} }

type leaseState uint8

const (
	leaseActive leaseState = iota
	leaseSettling
	leaseSettled
	leaseExpired
)

// Lease is a URL handed to one worker until it is settled with Done or it
// expires. Its exported fields are read-only.
type Lease struct {
	// ID identifies the lease within its Frontier.
	ID uint64
	// URL, Host, Depth, Priority and Meta are the entry's.
	URL      string
	Host     string
	Depth    int
	Priority float64
	Meta     []byte
	// Attempt counts earlier attempts that ended in OutcomeRetry.
	Attempt int
	// Fingerprint and Interval are the content fingerprint and recrawl
	// interval recorded by the previous successful fetch; zero on a
	// first fetch.
	Fingerprint uint64
	Interval    time.Duration
	// Expires is when the lease runs out unless extended; Extend updates
	// it.
	Expires time.Time

	f        *Frontier
	h        *host
	it       item
	deadline int64
	heapIdx  int
	state    leaseState
}

// Options configures a Frontier. The zero value is a polite in-memory
// frontier.
type Options struct {
	// Store persists the queue. Nil keeps everything in memory.
	Store Store
	// Bands is the number of priority bands, 1 to 16. Zero means 4.
	Bands int
	// BandWeights are the relative shares of leases given to each band
	// when all have ready hosts (see the package documentation). Nil
	// means 2^(Bands-1-b). Non-positive weights are raised to 1.
	BandWeights []int
	// Prioritizer assigns bands. Nil means BFS.
	Prioritizer Prioritizer
	// Politeness says when a host may be contacted again after a fetch.
	// Nil means FixedDelay(DefaultDelay).
	Politeness Politeness
	// MaxLeasesPerHost bounds the unsettled leases of a host. Zero
	// means 1.
	MaxLeasesPerHost int
	// LeaseTTL is how long a lease lasts. Zero means 5 minutes.
	LeaseTTL time.Duration
	// MaxAttempts is how many fetches of a URL may end in OutcomeRetry
	// before it is dropped; at most 255. Zero means DefaultMaxAttempts.
	MaxAttempts int
	// RetryBase and RetryMax bound the exponential retry backoff:
	// attempt n waits RetryBase*2^(n-1), at most RetryMax (see
	// Policy.RetryDelay). Zero means DefaultRetryBase (30 seconds) and
	// DefaultRetryMax (1 hour). When its backoff is over, a retried URL queues
	// at the tail of its band, behind the URLs that never failed, as if
	// added then: a page that keeps failing costs its host one turn per
	// attempt, never the head of the queue.
	RetryBase, RetryMax time.Duration
	// Schedule decides recrawls of successful URLs. Nil means no recrawl
	// unless an Outcome sets RecrawlAt.
	Schedule Schedule
	// Window is how many URLs of each band of each host are held in
	// memory when a Store is set. Zero means 8: with 100k hosts that is
	// at most 800k URLs (per band in use) in memory, whatever the queue size.
	// A delayed URL (recrawl, NotBefore) that comes due joins the head of
	// its band when the band holds fewer than Window URLs in memory, and is
	// otherwise written back to the store at the band's tail, behind the
	// URLs already queued there. A retry joins the tail: in memory when
	// the band's window has room and nothing of the band is left in the
	// store, otherwise in the store.
	Window int
	// DelayedWindow is how many delayed URLs (retries, recrawls) are
	// held in memory when a Store is set (between one and two times it
	// while many URLs are due before the window's last one), and how many
	// due URLs may be on their way back to the store at a time. Zero means
	// 4096.
	DelayedWindow int
	// Now is the clock of the wrappers (Add, Next, Done, Extend,
	// BlockHost). Nil means time.Now.
	Now func() time.Time
}

// Stats is a snapshot of a frontier's counters.
type Stats struct {
	Hosts    int // hosts held in memory
	InMemory int // queued URLs held in memory (all of them without a Store)
	Delayed  int // of which waiting for a due time
	Leased   int // unsettled leases

	Added       uint64 // URLs accepted by Add
	Leases      uint64 // leases handed out
	Succeeded   uint64
	NotModified uint64
	Retried     uint64
	Failed      uint64 // OutcomeFailed, and retries past MaxAttempts
	Dropped     uint64 // of Failed: retries past MaxAttempts
	Recrawls    uint64 // settled URLs queued again for a recrawl
	Expired     uint64 // leases that expired
	Released    uint64 // leases given back unsettled by Release
	Corrupt     uint64 // undecodable store records skipped
}

// Frontier is a URL frontier. Its methods are safe for concurrent use.
type Frontier struct {
	store     Store
	bands     int
	weights   []int
	prio      Prioritizer
	polite    Politeness
	maxLeases int32
	leaseTTL  time.Duration
	policy    Policy // with its defaults filled
	window    int
	dwindow   int
	now       func() time.Time

	commit committer

	// base is the context of store reads, cancelled by Close (with the
	// caller's own in Next); loads counts the reads of band windows in
	// flight outside f.mu, which Close waits for. See loadBand.
	base       context.Context
	cancelBase context.CancelFunc
	loads      sync.WaitGroup

	mu         sync.Mutex
	closed     bool
	hosts      map[string]*host
	times      timeHeap
	ready      []ring[readyRef]
	wrr        []int
	tok        uint32
	leases     leaseHeap
	delayed    delayedHeap
	dcursor    dkey          // delayed keys up to dcursor are in memory, leased, promoted or being re-filed
	dmore      bool          // the store may hold delayed keys after dcursor
	dfloor     dkey          // the highest delayed key promote took: keys up to it may be in memory outside the heap
	moving     []delayedItem // due URLs promote found no room for, to re-file as queued URLs (see refile)
	nmoving    int           // URLs whose re-filing write is in flight
	appliedSeq uint64
	seq        uint64 // sequence numbers without a Store
	leaseID    uint64
	waiters    []*waiter // goroutines blocked in Next, first come first
	stats      Stats
}

// waiter is a goroutine blocked in Next. Only the first waiter (the
// leader) sleeps with a timer for the frontier's next wake time; the others
// sleep until woken. A change that may make work available wakes the
// leader only, and a waiter that leaves the queue wakes the new leader, so
// a wake time or an Add wakes one goroutine, not every idle worker, and
// each lease hands the watch on to the next waiter.
type waiter struct {
	ch     chan struct{} // capacity 1: a pending wake-up
	queued bool
}

// wake wakes w without blocking; a wake-up already pending suffices.
func (w *waiter) wake() {
	select {
	case w.ch <- struct{}{}:
	default:
	}
}

// leave removes w (nil: none) from the waiters and, if it was the leader,
// wakes the new one. f.mu held.
func (f *Frontier) leave(w *waiter) {
	if w == nil || !w.queued {
		return
	}
	w.queued = false
	for i, x := range f.waiters {
		if x == w {
			f.waiters = append(f.waiters[:i], f.waiters[i+1:]...)
			if i == 0 && len(f.waiters) > 0 {
				f.waiters[0].wake()
			}
			return
		}
	}
}

// New returns a Frontier. With a Store it reads the store's hosts (one seek
// per host) and continues where an earlier frontier on the store stopped:
// every URL that was queued or leased but not settled is queued.
func New(opts Options) (*Frontier, error) {
	f := &Frontier{
		store:     opts.Store,
		bands:     opts.Bands,
		prio:      opts.Prioritizer,
		polite:    opts.Politeness,
		maxLeases: int32(opts.MaxLeasesPerHost),
		leaseTTL:  opts.LeaseTTL,
		policy: Policy{
			MaxAttempts: opts.MaxAttempts,
			RetryBase:   opts.RetryBase,
			RetryMax:    opts.RetryMax,
			Schedule:    opts.Schedule,
		}.withDefaults(),
		window:  opts.Window,
		dwindow: opts.DelayedWindow,
		now:     opts.Now,
		hosts:   make(map[string]*host),
		dcursor: dkey{due: math.MinInt64},
		dfloor:  dkey{due: math.MinInt64},
	}
	if f.bands == 0 {
		f.bands = 4
	}
	if f.bands < 1 || f.bands > 16 {
		return nil, fmt.Errorf("frontier: Bands %d out of range 1..16", opts.Bands)
	}
	if opts.BandWeights != nil && len(opts.BandWeights) != f.bands {
		return nil, fmt.Errorf("frontier: %d BandWeights for %d bands", len(opts.BandWeights), f.bands)
	}
	f.weights = make([]int, f.bands)
	for b := range f.weights {
		if opts.BandWeights != nil {
			f.weights[b] = max(opts.BandWeights[b], 1)
		} else {
			f.weights[b] = 1 << (f.bands - 1 - b)
		}
	}
	if f.prio == nil {
		f.prio = BFS{}
	}
	if f.polite == nil {
		f.polite = FixedDelay(DefaultDelay)
	}
	if f.maxLeases <= 0 {
		f.maxLeases = 1
	}
	if f.leaseTTL <= 0 {
		f.leaseTTL = 5 * time.Minute
	}
	// Attempt counts are kept in a byte.
	f.policy.MaxAttempts = min(f.policy.MaxAttempts, math.MaxUint8)
	if f.window <= 0 {
		f.window = 8
	}
	if f.dwindow <= 0 {
		f.dwindow = 4096
	}
	if f.now == nil {
		f.now = time.Now
	}
	f.ready = make([]ring[readyRef], f.bands)
	f.wrr = make([]int, f.bands)
	f.commit.f = f
	f.base, f.cancelBase = context.WithCancel(context.Background())
	if f.store != nil {
		if err := f.recover(); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// recover rebuilds the host index from the store: the sequence high-water
// mark, and every host that has queued URLs, found by seeking past one host
// at a time. The URLs themselves stay in the store until their band's window
// is loaded.
func (f *Frontier) recover() error {
	ctx := context.Background()
	kvs, err := f.store.Scan(ctx, metaSeqKey, append(metaSeqKey[:len(metaSeqKey):len(metaSeqKey)], 0), 1)
	if err != nil {
		return fmt.Errorf("frontier: reading store: %w", err)
	}
	if len(kvs) == 1 {
		if len(kvs[0].Value) != 8 {
			return fmt.Errorf("%w: sequence record of %d bytes", ErrCorrupt, len(kvs[0].Value))
		}
		f.commit.seq = binary.BigEndian.Uint64(kvs[0].Value)
	}
	f.appliedSeq = f.commit.seq
	f.dmore = true
	start := []byte{kindQueued}
	end := []byte{kindQueued + 1}
	var h *host
	for {
		kvs, err := f.store.Scan(ctx, start, end, 1)
		if err != nil {
			return fmt.Errorf("frontier: reading store: %w", err)
		}
		if len(kvs) == 0 {
			return nil
		}
		name, band, _, err := parseQueuedKey(kvs[0].Key)
		if err != nil {
			return err
		}
		if h == nil || h.name != name {
			if checkHost(name) != nil {
				return fmt.Errorf("%w: queued key with invalid host %q", ErrCorrupt, name)
			}
			h = f.hostFor(name)
			// Every configured band from the first one found may hold
			// URLs.
			h.band(max(int(band), f.bands-1))
			for b := int(band); b < len(h.bands); b++ {
				h.bands[b].more = true
			}
			f.schedule(h, math.MinInt64)
		} else {
			// A band past the configured ones: the store was written
			// with more bands. Its URLs are kept, after the others.
			h.band(int(band)).more = true
		}
		// Seek past the configured bands (or the band just found) of the
		// host: in the common case this lands on the next host's first
		// key, so recovery still costs one seek per host.
		next := hostPrefix(name)
		if nb := max(int(band)+1, f.bands); nb <= math.MaxUint8 {
			start = append(next, byte(nb))
		} else {
			start = append(next[:len(next)-1], 1)
		}
	}
}

// unixNano returns t in Unix nanoseconds, saturated to the int64 range.
// time.Time.UnixNano wraps for times after 2262, so a far-future block,
// NotBefore or recrawl time ("never", in effect) would otherwise land in the
// past and take effect at once.
func unixNano(t time.Time) int64 {
	switch {
	case t.After(maxTime):
		return math.MaxInt64
	case t.Before(minTime):
		return math.MinInt64
	}
	return t.UnixNano()
}

var (
	maxTime = time.Unix(0, math.MaxInt64)
	minTime = time.Unix(0, math.MinInt64)
)

// addNano returns now + d, saturated at math.MaxInt64 so that a huge lease
// TTL, retry wait or recrawl interval means "far in the future" rather than
// wrapping into the past.
func addNano(now int64, d time.Duration) int64 {
	if d > 0 && now > math.MaxInt64-int64(d) {
		return math.MaxInt64
	}
	return now + int64(d)
}

// checkHost validates a host name for use in keys.
func checkHost(h string) error {
	if h == "" {
		return errors.New("empty host")
	}
	if len(h) > maxHostBytes {
		return fmt.Errorf("host of %d bytes", len(h))
	}
	for i := 0; i < len(h); i++ {
		if h[i] <= ' ' || h[i] == 0x7f {
			return fmt.Errorf("host %q contains a control or space byte", h)
		}
	}
	return nil
}

// hostOf derives a host from a URL when the entry names none: the URL's
// host and port, lower-cased. Callers should pass urlnorm.Host instead.
func hostOf(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", err
	}
	if u.Host == "" {
		return "", errors.New("URL has no host")
	}
	return strings.ToLower(u.Host), nil
}

// prepared is a validated Entry.
type prepared struct {
	host string
	it   item
	due  int64 // > now: delayed
}

func (f *Frontier) prepare(now int64, entries []Entry, out []prepared) ([]prepared, error) {
	for i := range entries {
		p, err := f.prepareOne(now, &entries[i])
		if err != nil {
			return nil, fmt.Errorf("%w: entry %d: %v", ErrInvalidEntry, i, err)
		}
		out = append(out, p)
	}
	return out, nil
}

func (f *Frontier) prepareOne(now int64, e *Entry) (prepared, error) {
	if e.URL == "" {
		return prepared{}, errors.New("empty URL")
	}
	if len(e.URL) > maxURLBytes {
		return prepared{}, fmt.Errorf("URL of %d bytes exceeds %d", len(e.URL), maxURLBytes)
	}
	if len(e.Meta) > maxMetaBytes {
		return prepared{}, fmt.Errorf("metadata of %d bytes exceeds %d", len(e.Meta), maxMetaBytes)
	}
	h := e.Host
	if h == "" {
		var err error
		if h, err = hostOf(e.URL); err != nil {
			return prepared{}, fmt.Errorf("no host for %q: %v", e.URL, err)
		}
	}
	if err := checkHost(h); err != nil {
		return prepared{}, err
	}
	if e.Priority < 0 || math.IsNaN(e.Priority) || math.IsInf(e.Priority, 0) {
		return prepared{}, fmt.Errorf("priority %v is not a finite non-negative number", e.Priority)
	}
	var band int
	switch p := f.prio.(type) {
	case BFS:
		// Called on the concrete type so that entries do not escape to
		// the heap in the common case.
		band = p.Band(e, f.bands)
	default:
		ec := *e
		band = f.prio.Band(&ec, f.bands)
	}
	band = min(max(band, 0), f.bands-1)
	p := prepared{host: h, it: item{
		url:   e.URL,
		prio:  prio32(e.Priority),
		depth: uint16(min(max(e.Depth, 0), math.MaxUint16)),
		band:  uint8(band),
	}}
	if len(e.Meta) > 0 {
		p.it.ext = &itemExt{meta: string(e.Meta)}
	}
	if !e.NotBefore.IsZero() {
		if nb := unixNano(e.NotBefore); nb > now {
			p.due = nb
		}
	}
	return p, nil
}

// Add queues entries: all of them or, on error, none. With a Store they are
// durable when Add returns. Add reads the clock from Options.Now.
func (f *Frontier) Add(entries ...Entry) error { return f.AddAt(f.now(), entries...) }

// AddAt is Add at time now: entries whose NotBefore is after now wait for it.
func (f *Frontier) AddAt(now time.Time, entries ...Entry) error {
	if len(entries) == 0 {
		return nil
	}
	n := now.UnixNano()
	if f.store == nil {
		return f.addMemory(n, entries)
	}
	ps, err := f.prepare(n, entries, make([]prepared, 0, len(entries)))
	if err != nil {
		return err
	}
	f.mu.Lock()
	closed := f.closed
	f.mu.Unlock()
	if closed {
		return ErrClosed
	}
	op := &pendingOp{
		nseq: len(ps),
		write: func(seq uint64, m []Mutation) []Mutation {
			for i := range ps {
				p := &ps[i]
				p.it.seq = seq + uint64(i)
				r := p.it.record(p.host)
				if p.due != 0 {
					m = append(m, Mutation{Key: delayedKey(p.due, p.it.seq), Value: appendRecord(nil, &r, true)})
				} else {
					m = append(m, Mutation{Key: queuedKey(p.host, p.it.band, p.it.seq), Value: appendRecord(nil, &r, false)})
				}
			}
			return m
		},
		apply: func(uint64) {
			for i := range ps {
				f.insert(&ps[i], n)
			}
			f.stats.Added += uint64(len(ps))
		},
	}
	return f.commit.submit(op)
}

// addMemory adds entries to a frontier without a Store.
func (f *Frontier) addMemory(now int64, entries []Entry) error {
	var buf [8]prepared
	ps, err := f.prepare(now, entries, buf[:0])
	if err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return ErrClosed
	}
	for i := range ps {
		f.seq++
		ps[i].it.seq = f.seq
		f.insert(&ps[i], now)
	}
	f.stats.Added += uint64(len(ps))
	f.signal()
	return nil
}

// insert puts a newly added or written URL into memory. f.mu held.
func (f *Frontier) insert(p *prepared, now int64) {
	if p.due != 0 {
		f.insertDelayed(delayedItem{it: p.it, host: p.host, due: p.due})
		return
	}
	h := f.hostFor(p.host)
	bq := h.band(int(p.it.band))
	switch {
	case f.store == nil:
		bq.q.pushBack(p.it)
		h.queued++
	case p.it.seq <= bq.cursor:
		// A window load already read it from the store.
		return
	case bq.loading:
		// A window load is reading the band outside f.mu and may or
		// may not see this URL: the band keeps more set when it ends.
		bq.dirty = true
	case !bq.more && bq.q.len() < f.window:
		bq.q.pushBack(p.it)
		bq.cursor = p.it.seq
		h.queued++
	default:
		bq.more = true
	}
	f.schedule(h, now)
}

// insertDelayed puts a URL with a due time into memory or leaves it to the
// delayed window of the store. f.mu held.
func (f *Frontier) insertDelayed(d delayedItem) {
	if f.store == nil {
		f.delayed.push(d)
		return
	}
	k := dkey{d.due, d.it.seq}
	switch {
	case !f.dcursor.less(k):
		// Below the window's end: a load skipped it as not yet applied,
		// or it is a new URL due before the last one in memory.
		f.pushDelayed(d)
	case !f.dmore && len(f.delayed) < f.dwindow:
		f.delayed.push(d)
		f.dcursor = k
	default:
		f.dmore = true
	}
}

// pushDelayed puts a delayed URL whose key is at most f.dcursor into the
// heap. With a Store, a heap grown past twice DelayedWindow is trimmed back
// to the earliest DelayedWindow URLs (trimDelayed), so that a stream of URLs
// due before the window's end (short retries while the window reaches far
// into the future) cannot grow it without bound. f.mu held.
func (f *Frontier) pushDelayed(d delayedItem) {
	f.delayed.push(d)
	if f.store != nil && len(f.delayed) > 2*f.dwindow {
		f.trimDelayed()
	}
}

// trimDelayed keeps the earliest DelayedWindow delayed URLs in memory and
// drops the others, which are durable delayed keys: the window's end
// (f.dcursor) moves back to the last key kept and loadDelayed reads the
// rest again when the heap drains. The window never ends before f.dfloor,
// the highest key promote took out of the heap: URLs taken out (queued in
// memory, leased, being re-filed or settled) may still have their delayed
// keys in the store, and a load must not read them again; heap URLs up to
// f.dfloor are kept. A URL written by a group whose apply has not run is
// filed by that apply (insertDelayed) against the moved cursor, and one the
// trim drops that was filed by a running group's apply is read by a later
// load once the group's sequence numbers are applied. f.mu held.
func (f *Frontier) trimDelayed() {
	h := f.delayed
	slices.SortFunc(h, func(a, b delayedItem) int {
		ka, kb := dkey{a.due, a.it.seq}, dkey{b.due, b.it.seq}
		switch {
		case ka.less(kb):
			return -1
		case kb.less(ka):
			return 1
		}
		return 0
	})
	keep := f.dwindow
	last := dkey{h[keep-1].due, h[keep-1].it.seq}
	if last.less(f.dfloor) {
		last = f.dfloor
		for keep < len(h) && !last.less(dkey{h[keep].due, h[keep].it.seq}) {
			keep++
		}
	}
	// A sorted slice is a valid heap.
	if keep == len(h) {
		return
	}
	f.delayed = slices.Clone(h[:keep])
	f.dcursor = last
	f.dmore = true
}

// hostFor returns the host named name, creating it. f.mu held.
func (f *Frontier) hostFor(name string) *host {
	h := f.hosts[name]
	if h == nil {
		h = &host{name: name, heapIdx: -1, readyAt: math.MinInt64, blocked: math.MinInt64}
		f.hosts[name] = h
	}
	return h
}

// schedule files h where it belongs after any change: in a ready list if it
// may be leased at now, in the time heap if it must wait (or if it is idle
// but its politeness time has not passed), or nowhere. f.mu held.
func (f *Frontier) schedule(h *host, now int64) {
	if h.loading {
		// Its loader files it when its store read ends (nextLocked).
		h.readyTok = 0
		f.times.remove(h)
		return
	}
	work := h.hasWork()
	if !work || h.outstanding >= f.maxLeases {
		h.readyTok = 0
		if work || h.outstanding > 0 {
			f.times.remove(h)
			return
		}
		// Idle: keep the host (and its politeness time) until that time
		// passes, then forget it.
		if at := h.eligibleAt(); at > now {
			f.times.upsert(h, at)
			return
		}
		f.times.remove(h)
		delete(f.hosts, h.name)
		return
	}
	if at := h.eligibleAt(); at > now {
		h.readyTok = 0
		f.times.upsert(h, at)
		return
	}
	f.times.remove(h)
	b := min(h.bestBand(), f.bands-1)
	if h.readyTok != 0 && int(h.readyBand) == b {
		return
	}
	// Not ready yet, or ready in a worse band than the one its best URL
	// is in now (a better URL arrived while it waited): file it in its
	// best band's list; the old entry goes stale.
	f.tok++
	if f.tok == 0 {
		f.tok = 1
	}
	h.readyTok = f.tok
	h.readyBand = uint8(b)
	f.ready[b].pushBack(readyRef{h: h, tok: h.readyTok})
}

// signal wakes the leading goroutine blocked in Next, which wakes the next
// one when it leaves; Close wakes them all. f.mu held.
func (f *Frontier) signal() {
	if f.closed {
		for _, w := range f.waiters {
			w.wake()
		}
		return
	}
	if len(f.waiters) > 0 {
		f.waiters[0].wake()
	}
}

// Next returns a lease on the best URL of a host that may be contacted now,
// blocking until there is one or ctx is done. It reads the clock from
// Options.Now; waiting uses real timers.
func (f *Frontier) Next(ctx context.Context) (*Lease, error) {
	var w *waiter
	for {
		now := f.now()
		if w == nil {
			// Most calls find a ready host at once and never wait.
			l, _, err := f.next(ctx, now, nil)
			if l != nil || err != nil {
				return l, err
			}
			w = &waiter{ch: make(chan struct{}, 1)}
		}
		l, wake, err := f.next(ctx, now, w)
		if l != nil || err != nil {
			return l, err
		}
		var timer *time.Timer
		var tc <-chan time.Time
		if !wake.IsZero() {
			timer = time.NewTimer(wake.Sub(now))
			tc = timer.C
		}
		select {
		case <-ctx.Done():
			if timer != nil {
				timer.Stop()
			}
			f.mu.Lock()
			f.leave(w)
			f.mu.Unlock()
			return nil, ctx.Err()
		case <-w.ch:
		case <-tc:
		}
		if timer != nil {
			timer.Stop()
		}
	}
}

// NextAt returns a lease on the best URL of a host that may be contacted at
// now, if there is one. Otherwise it returns a nil lease and the time at
// which one may become available (a host's politeness time, a delayed URL's
// due time or a lease's expiry), or the zero time if nothing will happen
// before the next Add or Done. It never waits for a lease; with a Store it
// may read a window of a host's URLs, which Close cancels.
func (f *Frontier) NextAt(now time.Time) (*Lease, time.Time, error) {
	return f.next(nil, now, nil)
}

// next leases the best ready URL at now. Without one it returns the next
// wake time, and with a waiter w it queues w (if it is not queued yet) and
// returns the wake time only if w leads the queue (the zero time
// otherwise: w sleeps until woken). A waiter that gets a lease, or an
// error, leaves the queue.
//
// The scheduling itself (nextLocked) is pure: no IO under f.mu. When the
// host it picked must first read a window of URLs from the store, it hands
// the read back as a bandLoad; next runs it with f.mu released, under ctx
// (nil: the frontier's own context, which Close cancels), and nextLocked
// resumes with that host.
func (f *Frontier) next(ctx context.Context, now time.Time, w *waiter) (*Lease, time.Time, error) {
	n := now.UnixNano()
	var loaded *bandLoad
	for {
		f.mu.Lock()
		l, wake, ld, err := f.nextLocked(n, w, loaded)
		loaded = nil
		op := f.refile(n)
		f.mu.Unlock()
		if op != nil {
			// Due URLs that did not fit in their hosts' windows are
			// re-filed now that f.mu is released: the write's apply
			// takes it.
			merr := op.submit(f)
			if l != nil || err != nil {
				// A failed move is tried again by a later call: its
				// URLs are back among the delayed ones.
				return l, wake, err
			}
			if merr != nil {
				f.mu.Lock()
				if ld != nil {
					f.loads.Done()
					f.endLoad(ld, n, false)
				}
				f.leave(w)
				f.mu.Unlock()
				return nil, time.Time{}, merr
			}
		}
		if ld != nil {
			f.scan(ctx, ld)
			loaded = ld
			continue
		}
		if op == nil {
			return l, wake, err
		}
		// The moved URLs may have made a host ready, and more due URLs
		// may wait for room: look again.
	}
}

// nextLocked is next with f.mu held. Due URLs that promote could not put
// into memory are left in f.moving for the caller to re-file. When the host
// popReady picked must read a band's window from the store first, it
// returns that read (a bandLoad) instead of a lease, and the caller calls
// it again with the read done as loaded, to go on with the same host.
func (f *Frontier) nextLocked(n int64, w *waiter, loaded *bandLoad) (*Lease, time.Time, *bandLoad, error) {
	var resume *host
	if loaded != nil {
		if err := f.endLoad(loaded, n, true); err != nil {
			f.leave(w)
			return nil, time.Time{}, nil, err
		}
		resume = loaded.h
	}
	if f.closed {
		f.leave(w)
		return nil, time.Time{}, nil, ErrClosed
	}
	f.expire(n)
	if err := f.promote(n); err != nil {
		if resume != nil {
			f.schedule(resume, n)
		}
		f.leave(w)
		return nil, time.Time{}, nil, err
	}
	skip := -1 // the band just loaded: not read again by this take
	if resume != nil {
		skip = loaded.b
		// Leases of the host may have settled or expired, or it may
		// have been blocked, while f.mu was released: it goes on only
		// if it may still be leased at n.
		if resume.outstanding >= f.maxLeases || resume.eligibleAt() > n {
			f.schedule(resume, n)
			resume = nil
		}
	}
	for {
		h := resume
		if h == nil {
			h = f.popReady()
		} else {
			resume = nil
		}
		if h == nil {
			break
		}
		it, ok, ld := f.take(h, skip)
		skip = -1
		if ld != nil {
			// The caller reads the window with f.mu released; the
			// host stays out of the ready lists meanwhile, and w
			// leaves the queue so that another waiter leads.
			f.leave(w)
			return nil, time.Time{}, ld, nil
		}
		if !ok {
			f.schedule(h, n)
			continue
		}
		l := f.lease(h, it, n)
		f.leave(w)
		if len(f.waiters) > 0 && f.anyReady() {
			// More work is ready now: hand it on.
			f.waiters[0].wake()
		}
		return l, time.Time{}, nil, nil
	}
	if w != nil {
		if !w.queued {
			w.queued = true
			f.waiters = append(f.waiters, w)
		}
		if f.waiters[0] != w {
			return nil, time.Time{}, nil, nil
		}
	}
	wake := f.wakeAt(n)
	if wake == math.MaxInt64 {
		return nil, time.Time{}, nil, nil
	}
	return nil, time.Unix(0, wake), nil, nil
}

// anyReady reports whether some host may be ready (its ready entry may be
// stale, which costs a waiter one wasted wake-up). f.mu held.
func (f *Frontier) anyReady() bool {
	for b := range f.ready {
		if f.ready[b].len() > 0 {
			return true
		}
	}
	return false
}

// lease hands out it from h. f.mu held.
func (f *Frontier) lease(h *host, it item, now int64) *Lease {
	f.leaseID++
	l := &Lease{
		ID:       f.leaseID,
		URL:      it.url,
		Host:     h.name,
		Depth:    int(it.depth),
		Priority: float64(it.prio),
		Attempt:  int(it.attempts),
		f:        f,
		h:        h,
		it:       it,
		deadline: addNano(now, f.leaseTTL),
	}
	if it.ext != nil {
		if it.ext.meta != "" {
			l.Meta = []byte(it.ext.meta)
		}
		l.Fingerprint = it.ext.fp
		l.Interval = time.Duration(it.ext.interval)
	}
	l.Expires = time.Unix(0, l.deadline)
	f.leases.push(l)
	h.outstanding++
	f.stats.Leases++
	f.schedule(h, now)
	return l
}

// expire returns the URLs of leases whose time ran out at now to their
// queues. f.mu held.
func (f *Frontier) expire(now int64) {
	for len(f.leases) > 0 && f.leases[0].deadline <= now {
		f.expireLease(f.leases[0])
	}
}

func (f *Frontier) expireLease(l *Lease) {
	f.requeueLease(l)
	f.stats.Expired++
}

// requeueLease ends l unsettled and queues its URL again at the head of its
// band, its attempt count unchanged; the host may be leased again from its
// politeness time after l's deadline. f.mu held.
func (f *Frontier) requeueLease(l *Lease) {
	f.leases.remove(l)
	l.state = leaseExpired
	h := l.h
	h.outstanding--
	h.band(int(l.it.band)).q.pushFront(l.it)
	h.queued++
	h.readyAt = max(h.readyAt, unixNano(f.polite.ReadyAt(h.name, time.Unix(0, l.deadline))))
	f.schedule(h, l.deadline)
	f.signal()
}

// promote moves due delayed URLs into their hosts' queues and hosts whose
// time has come into the ready lists. With a Store, a due URL whose band
// already holds Window URLs in memory is not added to it: it is appended to
// f.moving, for the caller to re-file as a queued URL at the band's tail
// once f.mu is released (refile). At most DelayedWindow URLs are being moved
// at a time; when that many are, the remaining due URLs wait in the delayed
// heap for a later call, so memory and the time spent here stay bounded
// however many URLs are due. f.mu held.
func (f *Frontier) promote(now int64) error {
	for {
		if len(f.delayed) == 0 {
			if !f.dmore {
				break
			}
			if err := f.loadDelayed(); err != nil {
				return err
			}
			if len(f.delayed) == 0 {
				break
			}
		}
		if f.delayed[0].due > now {
			break
		}
		h := f.hosts[f.delayed[0].host]
		retry := f.delayed[0].it.attempts > 0
		if f.store != nil && h != nil && (h.bandFull(f.delayed[0].it.band, f.window) ||
			retry && h.bandMore(f.delayed[0].it.band)) {
			// The band's tail is in the store: a retry goes there, and
			// anything else when memory holds a full window already.
			if len(f.moving)+f.nmoving >= f.dwindow {
				break
			}
			f.moving = append(f.moving, f.popDelayed())
			continue
		}
		d := f.popDelayed()
		if h == nil {
			h = f.hostFor(d.host)
		}
		if f.store != nil {
			if d.it.ext == nil {
				d.it.ext = &itemExt{}
			}
			d.it.ext.delayed = true
			d.it.ext.due = d.due
		}
		// A retry goes to the tail of its band: it had its turn, and
		// at the head it would be fetched (and fail) again before URLs
		// that never failed. Other due URLs (recrawls, NotBefore) go to
		// the head: they have waited already.
		if retry {
			h.band(int(d.it.band)).q.pushBack(d.it)
		} else {
			h.band(int(d.it.band)).q.pushFront(d.it)
		}
		h.queued++
		f.schedule(h, now)
	}
	for len(f.times) > 0 && f.times[0].heapAt <= now {
		f.schedule(f.times[0], now)
	}
	return nil
}

// popDelayed removes the earliest delayed URL from the heap, remembering
// the highest key taken out of it (see trimDelayed). f.mu held.
func (f *Frontier) popDelayed() delayedItem {
	d := f.delayed.pop()
	if k := (dkey{d.due, d.it.seq}); f.dfloor.less(k) {
		f.dfloor = k
	}
	return d
}

// refile returns the write that re-files the due URLs promote left in
// f.moving as queued URLs, or nil if there are none; the caller submits it
// after releasing f.mu. One Store.Write deletes each URL's delayed key and
// puts a queued key (same host and band, a new sequence number, so the URL
// goes to the band's tail) with the same record, so a crash leaves each URL
// under exactly one of the two keys. From here until the write's apply or
// fail the URLs are held only by the op: no queue holds them, so none can
// be leased while it is moved. The apply files them like Added URLs
// (insert: into memory if the band's window has room and nothing of the
// band is left in the store, otherwise the band is marked as having more
// in the store); a failed write puts them back among the delayed URLs,
// whose keys the store still holds. f.mu held.
func (f *Frontier) refile(now int64) *moveOp {
	if len(f.moving) == 0 {
		return nil
	}
	ds := f.moving
	f.moving = nil
	f.nmoving += len(ds)
	vals := make([][]byte, len(ds))
	for i := range ds {
		r := ds[i].it.record(ds[i].host)
		vals[i] = appendRecord(nil, &r, false)
	}
	m := &moveOp{}
	m.op = pendingOp{
		nseq: len(ds),
		write: func(seq uint64, muts []Mutation) []Mutation {
			for i := range ds {
				d := &ds[i]
				muts = append(muts,
					Mutation{Key: delayedKey(d.due, d.it.seq), Delete: true},
					Mutation{Key: queuedKey(d.host, d.it.band, seq+uint64(i)), Value: vals[i]})
			}
			return muts
		},
		apply: func(seq uint64) {
			m.ran = true
			f.nmoving -= len(ds)
			for i := range ds {
				p := prepared{host: ds[i].host, it: ds[i].it}
				p.it.seq = seq + uint64(i)
				p.it.ext = queuedExt(p.it.ext)
				f.insert(&p, now)
			}
		},
		fail: func() {
			m.ran = true
			f.nmoving -= len(ds)
			for i := range ds {
				f.pushDelayed(ds[i])
			}
			f.signal()
		},
	}
	return m
}

// moveOp is a re-filing write built by refile.
type moveOp struct {
	op  pendingOp
	ran bool // apply or fail ran; f.mu
}

// submit writes m through the group commit. An op the committer refused
// (after Close) is undone as a failed one. f.mu not held.
func (m *moveOp) submit(f *Frontier) error {
	err := f.commit.submit(&m.op)
	if err != nil {
		f.mu.Lock()
		if !m.ran {
			m.op.fail()
		}
		f.mu.Unlock()
	}
	return err
}

// queuedExt returns the extension of a delayed URL re-filed under a queued
// key: the same fields without the delayed key's.
func queuedExt(e *itemExt) *itemExt {
	if e == nil || (e.meta == "" && !e.recrawl) {
		return nil
	}
	c := *e
	c.delayed, c.due = false, 0
	return &c
}

// popReady picks a band by smooth weighted round robin among the bands with
// ready hosts (nginx's algorithm: each band's credit grows by its weight,
// the richest band is picked and pays the total), and returns the band's
// longest-ready host. f.mu held.
func (f *Frontier) popReady() *host {
	total, best := 0, -1
	for b := range f.ready {
		r := &f.ready[b]
		for r.len() > 0 && r.front().tok != r.front().h.readyTok {
			r.popFront()
		}
		if r.len() == 0 {
			continue
		}
		f.wrr[b] += f.weights[b]
		total += f.weights[b]
		if best < 0 || f.wrr[b] > f.wrr[best] {
			best = b
		}
	}
	if best < 0 {
		return nil
	}
	f.wrr[best] -= total
	ref := f.ready[best].popFront()
	ref.h.readyTok = 0
	return ref.h
}

// take removes h's best URL from memory. When the best band with URLs is
// empty in memory but may have more in the store, it returns the read of
// its next window instead (see loadBand), unless the band is skip, whose
// window was just read: then it goes on to the next band. f.mu held.
func (f *Frontier) take(h *host, skip int) (item, bool, *bandLoad) {
	for b := range h.bands {
		bq := &h.bands[b]
		if bq.q.len() == 0 && bq.more && b != skip {
			return item{}, false, f.loadBand(h, b)
		}
		if bq.q.len() > 0 {
			h.queued--
			return bq.q.popFront(), true, nil
		}
	}
	return item{}, false, nil
}

// bandLoad is the read of the next window of band b of host h from the
// store, which runs with f.mu released: a store read may be a network
// round trip (storage/postgres), and holding the scheduler's lock through
// it would stall every Add, Done and Stats of every host, with nothing
// able to cancel it.
//
// While it runs, h.loading keeps the host out of the ready lists and the
// time heap (no other call leases it or reads its bands), and the band's
// loading flag makes insert leave URLs added meanwhile to the store,
// marking the band dirty: the read may or may not have seen them, so the
// band keeps more set. The band's cursor only moves when the read ends.
// URLs that return to the band meanwhile (an expired or released lease, a
// due recrawl) are in memory already and stay ahead of the window read.
type bandLoad struct {
	h          *host
	b          int
	start, end []byte
	kvs        []KV
	err        error
}

// loadBand marks band b of h as being read and returns the read for the
// caller to run (scan) with f.mu released. f.mu held, f not closed.
func (f *Frontier) loadBand(h *host, b int) *bandLoad {
	bq := &h.bands[b]
	h.loading, bq.loading = true, true
	f.loads.Add(1)
	return &bandLoad{
		h:     h,
		b:     b,
		start: queuedKey(h.name, uint8(b), bq.cursor+1),
		end:   append(hostPrefix(h.name), uint8(b)+1),
	}
}

// scan runs ld's store read under ctx (nil: f.base) and f.base, the
// context Close cancels. f.mu not held.
func (f *Frontier) scan(ctx context.Context, ld *bandLoad) {
	defer f.loads.Done()
	sctx, stop := f.base, func() {}
	if ctx != nil && ctx.Done() != nil {
		var cancel context.CancelFunc
		sctx, cancel = context.WithCancel(ctx)
		unhook := context.AfterFunc(f.base, cancel)
		stop = func() { unhook(); cancel() }
	}
	ld.kvs, ld.err = f.store.Scan(sctx, ld.start, ld.end, f.window)
	stop()
	switch {
	case ld.err == nil:
	case f.base.Err() != nil:
		ld.err = ErrClosed
	case ctx != nil && ctx.Err() != nil:
		ld.err = ctx.Err()
	default:
		ld.err = fmt.Errorf("frontier: reading queue of %s: %w", ld.h.name, ld.err)
	}
}

// endLoad ends ld. With file set and a successful read (on an open
// frontier) it files the window read into the band, and the caller goes
// on with the host; otherwise the band is left as it was, the host is
// scheduled again and a waiter woken (another call may lease it). It
// returns ld's error, or ErrClosed after Close. f.mu held.
func (f *Frontier) endLoad(ld *bandLoad, now int64, file bool) error {
	h := ld.h
	bq := &h.bands[ld.b]
	h.loading, bq.loading = false, false
	dirty := bq.dirty
	bq.dirty = false
	err := ld.err
	if err == nil && f.closed {
		err = ErrClosed
	}
	if err != nil || !file {
		f.schedule(h, now)
		f.signal()
		return err
	}
	f.fileWindow(h, ld.b, ld.start, ld.kvs)
	bq.more = bq.more || dirty
	// The leading waiter computed its wake time without the host; it
	// looks again once the caller has gone on with it.
	f.signal()
	return nil
}

// fileWindow files a window of band b of h read from the store at start:
// the URLs go to the band's tail and its cursor past them. f.mu held.
func (f *Frontier) fileWindow(h *host, b int, start []byte, kvs []KV) {
	bq := &h.bands[b]
	bq.more = len(kvs) == f.window
	prefix := start[:len(start)-8] // every key in [start, end) begins with it
	for _, kv := range kvs {
		tail := kv.Key[len(prefix):]
		if len(tail) != 8 {
			// A malformed key. The cursor still moves past it (and no
			// further than the last well-formed key before it could
			// sort), or every load would read it again and the band
			// would never drain: Next would spin on the host.
			f.stats.Corrupt++
			var pad [8]byte
			copy(pad[:], tail)
			c := binary.BigEndian.Uint64(pad[:])
			if len(tail) < 8 {
				c-- // tail sorts before c's key, after c-1's
			}
			bq.cursor = max(bq.cursor, c)
			if bq.cursor == math.MaxUint64 {
				bq.more = false
			}
			continue
		}
		seq := binary.BigEndian.Uint64(tail)
		bq.cursor = max(bq.cursor, seq)
		r, err := decodeRecord(kv.Value, false)
		if err != nil {
			f.stats.Corrupt++
			continue
		}
		bq.q.pushBack(itemFromRecord(&r, uint8(b), seq))
		h.queued++
	}
}

// loadDelayed reads the next window of delayed URLs from the store. URLs
// written by a group whose memory update has not run yet are skipped; that
// update files them. f.mu held.
func (f *Frontier) loadDelayed() error {
	start := delayedKey(f.dcursor.due, f.dcursor.seq+1)
	kvs, err := f.store.Scan(f.base, start, []byte{kindDelayed + 1}, f.dwindow)
	if err != nil {
		return fmt.Errorf("frontier: reading delayed URLs: %w", err)
	}
	f.dmore = len(kvs) == f.dwindow
	for _, kv := range kvs {
		due, seq, err := parseDelayedKey(kv.Key)
		if err != nil {
			f.stats.Corrupt++
			continue
		}
		if seq > f.appliedSeq {
			continue
		}
		f.dcursor = dkey{due, seq}
		r, err := decodeRecord(kv.Value, true)
		if err != nil {
			f.stats.Corrupt++
			continue
		}
		f.delayed.push(delayedItem{it: itemFromRecord(&r, r.band, seq), host: r.host, due: due})
	}
	return nil
}

// wakeAt is the earliest time after now something may become leasable
// without an Add or Done; math.MaxInt64 if none. f.mu held.
func (f *Frontier) wakeAt(now int64) int64 {
	w := int64(math.MaxInt64)
	if len(f.times) > 0 {
		w = min(w, f.times[0].heapAt)
	}
	if len(f.delayed) > 0 {
		w = min(w, f.delayed[0].due)
	}
	if len(f.leases) > 0 {
		w = min(w, f.leases[0].deadline)
	}
	if f.nmoving > 0 {
		// Another call is re-filing URLs (and due URLs may wait for
		// room among them): they are in no queue until its write is
		// applied, which wakes the leading waiter. Until then, report
		// a time soon after now, never "nothing queued" and never a
		// time that has passed already.
		soon := addNano(now, time.Millisecond)
		if w = min(w, soon); w <= now {
			w = soon
		}
	}
	return w
}

// Done settles l with outcome o and reports what it did. With a Store the
// settlement is durable when Done returns a nil error. It reads the clock
// from Options.Now.
func (f *Frontier) Done(l *Lease, o Outcome) (Settlement, error) { return f.DoneAt(f.now(), l, o) }

// settlement is what a Done does to the queue; result is how DoneAt
// reports it.
type settlement struct {
	kind    OutcomeKind
	requeue bool
	next    item
	due     int64
	dropped bool
	result  Settlement
}

// DoneAt is Done at time now. It returns ErrLeaseExpired if the lease ran
// out before now (its URL is queued again), ErrLeaseSettled if it was
// settled already, and on a store error leaves the lease active so Done can
// be called again. The Settlement is set only with a nil error.
func (f *Frontier) DoneAt(now time.Time, l *Lease, o Outcome) (Settlement, error) {
	if o.Kind < OutcomeSuccess || o.Kind > OutcomeFailed {
		return Settlement{}, fmt.Errorf("%w: kind %d", ErrInvalidOutcome, o.Kind)
	}
	n := now.UnixNano()
	f.mu.Lock()
	if err := f.checkLease(l, n); err != nil {
		f.mu.Unlock()
		return Settlement{}, err
	}
	s := f.plan(l, o, now)
	if f.store == nil {
		if s.requeue {
			f.seq++
			s.next.seq = f.seq
		}
		f.settle(l, &s, n)
		f.mu.Unlock()
		return s.result, nil
	}
	if err := f.doneStored(l, s, n); err != nil {
		return Settlement{}, err
	}
	return s.result, nil
}

// doneStored settles l through a durable write. f.mu held on entry,
// released on return.
func (f *Frontier) doneStored(l *Lease, s settlement, n int64) error {
	l.state = leaseSettling
	f.leases.remove(l)
	f.mu.Unlock()

	h := l.h
	op := &pendingOp{
		write: func(seq uint64, m []Mutation) []Mutation {
			if l.it.ext != nil && l.it.ext.delayed {
				m = append(m, Mutation{Key: delayedKey(l.it.ext.due, l.it.seq), Delete: true})
			} else {
				m = append(m, Mutation{Key: queuedKey(h.name, l.it.band, l.it.seq), Delete: true})
			}
			if s.requeue {
				s.next.seq = seq
				r := s.next.record(h.name)
				m = append(m, Mutation{Key: delayedKey(s.due, seq), Value: appendRecord(nil, &r, true)})
			}
			return m
		},
		apply: func(uint64) { f.settle(l, &s, n) },
		fail: func() {
			l.state = leaseActive
			f.leases.push(l)
		},
	}
	if s.requeue {
		op.nseq = 1
	}
	return f.commit.submit(op)
}

// checkLease reports why l cannot be settled or extended at now, expiring
// it if its time ran out. f.mu held.
func (f *Frontier) checkLease(l *Lease, now int64) error {
	if f.closed {
		return ErrClosed
	}
	if l == nil || l.f != f {
		return ErrForeignLease
	}
	switch l.state {
	case leaseSettled, leaseSettling:
		return fmt.Errorf("%w: %s", ErrLeaseSettled, l.URL)
	case leaseExpired:
		return fmt.Errorf("%w: %s", ErrLeaseExpired, l.URL)
	}
	if now >= l.deadline {
		f.expireLease(l)
		return fmt.Errorf("%w: %s", ErrLeaseExpired, l.URL)
	}
	return nil
}

// plan decides what settling l with o at now does, by f.policy, and
// translates the Decision into the change to the queue. The previous
// fingerprint and interval are read from the lease's item, not from the
// Lease's exported copies. f.mu held.
func (f *Frontier) plan(l *Lease, o Outcome, now time.Time) settlement {
	prev := l.it
	var fp uint64
	var interval int64
	if prev.ext != nil && prev.ext.recrawl {
		fp, interval = prev.ext.fp, prev.ext.interval
	}
	d := f.policy.plan(int(prev.attempts), fp, time.Duration(interval), o, now)
	s := settlement{kind: o.Kind, result: d.Settlement}
	switch d.Kind {
	case SettlementGivenUp:
		s.dropped = true
	case SettlementRetrying:
		s.requeue = true
		s.next = prev
		s.next.attempts = uint8(d.Attempt)
	case SettlementRecrawl:
		s.requeue = true
		s.next = prev
		s.next.attempts = 0
		s.next.ext = &itemExt{meta: prev.meta(), fp: d.Fingerprint, interval: int64(d.Interval), recrawl: true}
	}
	if s.requeue {
		// Times past 2262 saturate, as every time the frontier keeps.
		s.due = unixNano(d.At)
		s.result.At = time.Unix(0, s.due)
	}
	return s
}

// settle applies a settlement: the host's politeness clock restarts at now
// and the URL is queued again or finished. f.mu held.
func (f *Frontier) settle(l *Lease, s *settlement, now int64) {
	f.leases.remove(l)
	l.state = leaseSettled
	h := l.h
	h.outstanding--
	h.readyAt = max(h.readyAt, unixNano(f.polite.ReadyAt(h.name, time.Unix(0, now))))
	switch s.kind {
	case OutcomeSuccess:
		f.stats.Succeeded++
	case OutcomeNotModified:
		f.stats.NotModified++
	case OutcomeRetry:
		if s.dropped {
			f.stats.Failed++
			f.stats.Dropped++
		} else {
			f.stats.Retried++
		}
	case OutcomeFailed:
		f.stats.Failed++
	}
	if s.requeue {
		if s.kind != OutcomeRetry {
			f.stats.Recrawls++
		}
		s.next.band = min(s.next.band, uint8(f.bands-1))
		f.insertDelayed(delayedItem{it: s.next, host: h.name, due: s.due})
	}
	f.schedule(h, now)
	f.signal()
}

// Extend prolongs l to ttl from now (Options.Now).
func (f *Frontier) Extend(l *Lease, ttl time.Duration) error { return f.ExtendAt(f.now(), l, ttl) }

// ExtendAt prolongs l so that it expires at now+ttl. It returns
// ErrLeaseExpired if the lease ran out before now, and ErrLeaseSettled if it
// was settled.
func (f *Frontier) ExtendAt(now time.Time, l *Lease, ttl time.Duration) error {
	n := now.UnixNano()
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.checkLease(l, n); err != nil {
		return err
	}
	l.deadline = addNano(n, max(ttl, 0))
	l.Expires = time.Unix(0, l.deadline)
	f.leases.fix(l)
	return nil
}

// Release gives l back unsettled at the current time. See ReleaseAt.
func (f *Frontier) Release(l *Lease) error { return f.ReleaseAt(f.now(), l) }

// ReleaseAt gives l back unsettled at time now, for a URL that was not
// fetched for a reason that is not its own (its host's robots.txt could not
// be read, say): its URL is queued again at the head of its band with its
// attempt count unchanged, as when a lease expires, and its host may be
// leased again from its politeness time after now (block the host first to
// hold it longer). It is counted in Stats.Released. It returns the errors
// DoneAt returns for a lease that cannot be settled; afterwards, Done,
// Extend and Release of l return ErrLeaseExpired, as for an expired lease.
func (f *Frontier) ReleaseAt(now time.Time, l *Lease) error {
	n := now.UnixNano()
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.checkLease(l, n); err != nil {
		return err
	}
	l.deadline = n
	l.Expires = now
	f.requeueLease(l)
	f.stats.Released++
	return nil
}

// BlockHost keeps host from being leased before until (for example after
// robots.txt answered 5xx, or a Retry-After on the whole host). Blocks only
// extend: an earlier until than the current block is ignored. Blocks live in
// memory only.
func (f *Frontier) BlockHost(host string, until time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return
	}
	h := f.hostFor(host)
	h.blocked = max(h.blocked, unixNano(until))
	// Schedule as if at the beginning of time: the host goes to the time
	// heap, and the next Next moves it back if the block is already over.
	h.readyTok = 0
	f.schedule(h, math.MinInt64)
}

// Stats returns a snapshot of the frontier's counters.
func (f *Frontier) Stats() Stats {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.stats
	s.Hosts = len(f.hosts)
	s.Leased = len(f.leases)
	for _, h := range f.hosts {
		s.InMemory += int(h.queued)
	}
	s.Delayed = len(f.delayed)
	s.InMemory += s.Delayed + f.nmoving
	return s
}

// Close stops the frontier: blocked Next calls and all later calls return
// ErrClosed. It waits for writes in flight, so the Store may be closed after
// it. Unsettled leases are not written anywhere: with a durable Store their
// URLs are queued again by the next New. Close is idempotent.
func (f *Frontier) Close() error {
	// Store reads in flight end first: one under f.mu (loadDelayed)
	// would keep Close from taking it.
	f.cancelBase()
	f.mu.Lock()
	f.closed = true
	f.signal()
	f.mu.Unlock()
	f.loads.Wait()
	f.commit.close()
	return nil
}
