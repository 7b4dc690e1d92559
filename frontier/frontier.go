package frontier

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"
)

// The Frontier: its options, state, construction, counters and end.

// Config configures a Frontier. The zero value is a polite in-memory
// frontier.
type Config struct {
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
	// memory when a Store is set, up to MaxInMemory in all. Zero means 8.
	// A delayed URL (recrawl, NotBefore) that comes due joins the head of
	// its band when the band holds fewer than Window URLs in memory, and is
	// otherwise written back to the store at the band's tail, behind the
	// URLs already queued there. A retry joins the tail: in memory when
	// the band's window has room and nothing of the band is left in the
	// store, otherwise in the store.
	Window int
	// MaxInMemory is the budget of URLs the bands' windows hold in memory
	// when a Store is set. With more than MaxInMemory/Window hosts in
	// memory, a band takes in (when URLs are added or its window is
	// read) MaxInMemory/hosts URLs; with more hosts than MaxInMemory, none
	// until its host is leased, and then one. A band that holds more from
	// when there were fewer hosts keeps them until they are leased. So
	// memory grows with hosts, not with hosts × Window. Zero means 1<<20:
	// the full Window up to 131,072 hosts.
	MaxInMemory int
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
	maxMem    int
	dwindow   int
	now       func() time.Time

	commit committer

	// base is the context of store reads, cancelled by Close (with the
	// caller's own in Next); loads counts the reads of band windows in
	// flight outside f.mu, which Close waits for. See windowRead.
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
	reading    int           // windowReads in flight
	dloading   bool          // a windowRead is reading the delayed window
	dcut       bool          // a URL was delayed after dcursor while it did, left to the store:
	dlow       dkey          // the lowest such key, where the read's window is cut (see windowRead)
	moving     []delayedItem // due URLs promote found no room for, to re-file as queued URLs (see refile)
	nmoving    int           // URLs whose re-filing write is in flight
	appliedSeq uint64
	seq        uint64 // sequence numbers without a Store
	leaseID    uint64
	waiters    []*waiter // goroutines blocked in Next, first come first
	stats      Stats
}

// New returns a Frontier. With a Store it reads the store's hosts (a scan of
// a few keys per host or per several small hosts, not their URLs) and
// continues where an earlier frontier on the store stopped:
// every URL that was queued or leased but not settled is queued.
func New(opts Config) (*Frontier, error) {
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
		maxMem:  opts.MaxInMemory,
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
	if f.maxMem <= 0 {
		f.maxMem = 1 << 20
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
	s.InMemory += s.Delayed + f.nmoving + len(f.moving)
	return s
}

// Close stops the frontier: blocked Next calls and all later calls return
// ErrClosed. It waits for writes in flight, so the Store may be closed after
// it. Unsettled leases are not written anywhere: with a durable Store their
// URLs are queued again by the next New. Close is idempotent.
func (f *Frontier) Close() error {
	// Store reads in flight end first.
	f.cancelBase()
	f.mu.Lock()
	f.closed = true
	f.signal()
	f.mu.Unlock()
	f.loads.Wait()
	f.commit.close()
	return nil
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
