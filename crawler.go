package crawlkit

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/crawlkit/crawlkit/bloom"
	"github.com/crawlkit/crawlkit/extract"
	"github.com/crawlkit/crawlkit/fetch"
	"github.com/crawlkit/crawlkit/frontier"
	"github.com/crawlkit/crawlkit/robots"
	"github.com/crawlkit/crawlkit/simhash"
	"github.com/crawlkit/crawlkit/trap"
	"github.com/crawlkit/crawlkit/urlnorm"
	"golang.org/x/time/rate"
)

// ErrAlreadyRun is returned by a second call of Run: a Crawler runs once
// (make a new one on the same DataDir to resume).
var ErrAlreadyRun = errors.New("crawlkit: Run called twice")

// analyzedFalsePositiveRate is the rate at which the set of analyzed URLs
// takes a first fetch for a refetch, which then is neither indexed for
// near-duplicates nor reported to the trap detector.
const analyzedFalsePositiveRate = 1e-4

// maxDuplicateURLs bounds the fingerprint-id-to-URL map that names the page
// a near-duplicate duplicates.
const maxDuplicateURLs = 1 << 20

// Queue is the frontier a Crawler leases URLs from. *frontier.Frontier is
// the local implementation, which the Crawler builds for itself unless
// Config.Queue is set; a shared Queue (storage/postgres, storage/redis) lets
// several crawler processes work on one crawl.
//
// A Queue must drop URLs it already holds or has finished, atomically, so
// that concurrent Adds of one URL from several processes queue it once: the
// Crawler's own seen set only filters URLs this process has added before.
// NextAt must report a zero time only when nothing is queued and nothing is
// leased by any process, so that every process sees the end of the crawl.
// The Crawler logs an error of Next or NextAt and asks again after a
// backoff (100 ms, doubling up to 10 s), so a Queue may fail for a while.
//
// What else the Crawler relies on: Next blocks until a lease is ready
// (it never returns a nil lease with a nil error) or its context ends, and
// an error matching frontier.ErrClosed stops the worker that called it. The Crawler asks NextAt whether the crawl is over
// only when Stats().Leased is 0 (so Leased must count this handle's
// unsettled leases) and none of its workers is busy; Stats().InMemory plus
// Leased is what Crawler.Stats reports as URLs.Queued. When Add fails, the
// Crawler keeps the entries and offers all of them again in a later Add,
// which drops those a partly applied Add did queue.
// A Lease's Expires is read to keep it alive through an Extender; a zero
// Expires is never extended.
type Queue interface {
	Add(entries ...frontier.Entry) error
	Next(ctx context.Context) (*frontier.Lease, error)
	NextAt(now time.Time) (*frontier.Lease, time.Time, error)
	Done(l *frontier.Lease, o frontier.Outcome) (frontier.Settlement, error)
	BlockHost(host string, until time.Time)
	Stats() frontier.Stats
	// Deduplicates reports that Add drops URLs the queue holds or has
	// finished. A bare *frontier.Frontier lacks it on purpose: it drops
	// only the URLs it holds, so a second Run on it would fetch every
	// page again; the Crawler builds its own (with a seen set) when
	// Queue is nil. New refuses a Queue that answers false.
	Deduplicates() bool
}

// Crawler crawls from a set of seeds with the crawlkit packages: it leases
// URLs from the frontier, checks robots.txt, fetches, extracts links and
// text, detects near-duplicates, hands pages to the Handler and feeds links
// back through normalization, trap detection, scope and the seen set.
//
// Create one with New and call Run once. Stats and StatsHandler may be
// used while it runs (package metrics serves them to Prometheus).
type Crawler struct {
	cfg   Config
	token string
	seeds []*url.URL
	// politeKey is Config.PolitenessKey, or urlnorm.Host.
	politeKey func(*url.URL) string
	scope     *scopeFilter
	// filter applies AllowURLs and DenyURLs (nil without them); rate is
	// the global request rate cap (nil without MaxRequestsPerSecond).
	filter *urlFilter
	rate   *rate.Limiter
	stats  *counters

	started atomic.Pointer[time.Time]
	ran     atomic.Bool
	// opened is set once Run's open has set up the fields below, so that
	// Stats, which may run at the same time, reads front only after it
	// was written.
	opened atomic.Bool

	// Set up by Run.
	db             DataStore
	front          Queue
	ownFront       *frontier.Frontier // the frontier the Crawler made, to close
	fetcher        *fetch.Fetcher
	mediaFetcher   *fetch.Fetcher
	sitemapFetcher *fetch.Fetcher
	robotsFetcher  *fetch.Fetcher
	sessionFetcher *fetch.Fetcher // Config.Login's requests (login.go)
	jar            *cookieJar     // Config.Cookies (cookiestate.go)
	logins         logins
	robots         *robots.Cache
	seen           *bloom.Set
	claims         *claimedStore // the seen set's claims and disk, with a DataDir
	seenStore      SeenStore
	dns            *fetch.DNSCache
	index          *simhash.Index
	traps          *trap.Detector
	extractor      extract.Config
	// analyzed holds the keys of the URLs whose content analyze has
	// fingerprinted in this Run (see analyze).
	analyzed *bloom.Set
	// redirected holds the keys of URLs this Run fetched as redirect
	// targets of page fetches that succeeded (the page handled, a 2xx)
	// while they were already known, and so perhaps queued: a
	// lease of one of them that is its first successful fetch is settled
	// without a request (see takeRedirected). At most maxRedirected keys.
	redirectedMu sync.Mutex
	redirected   map[uint64]struct{}

	policy settlePolicy
	totals *totals // nil without a DataDir
	// restoredBlocks are the hosts an earlier Run left blocked, for the
	// frontier to hold once it is open.
	restoredBlocks []fetch.HostState
	// lastFetchErr is the text of the latest fetch error (DNS, TLS,
	// network), for ErrNothingFetched to name.
	lastFetchErr atomic.Value
	// debug caches whether the Logger takes Debug records: a crawl
	// rejects links by the hundred thousand, and building a record's
	// arguments allocates even for a handler that drops it.
	debug bool
	ended atomic.Int32
	// waitedOut: the monitor ended the crawl with work left that is
	// further away than MaxRetryWait.
	waitedOut atomic.Bool
	// stateSums holds the hash of each state record last written.
	stateMu   sync.Mutex
	stateSums map[string]uint64
	// sharePoke asks startSharing's goroutine for a share of the trap
	// state (nil without a StateStore).
	sharePoke chan struct{}
	// sharedChanges is the trap detector's Changes in the last share;
	// nextTrapShare is when the monitor may ask for the next one.
	sharedChanges atomic.Uint64
	nextTrapShare time.Time
	// nextTrapSave is when the monitor saves the trap learning next;
	// trapChanges is the detector's Changes at the last save, if trapSaved.
	nextTrapSave time.Time
	trapChanges  atomic.Uint64
	trapSaved    atomic.Bool
	guarded      hostSet // hosts whose robots.txt fetch the address guard refused
	usage        usageState
	waits        waits

	pages        *pageBudget // nil without MaxPages
	limitReached atomic.Bool
	busy         atomic.Int64
	wake         chan struct{}
	// slots holds a token per page being worked on (Workers at most),
	// lot one per parked page (park.go); workers counts the Run's worker,
	// monitor and parked goroutines.
	slots, lot chan struct{}
	workers    sync.WaitGroup

	// The URLs of indexed pages, by fingerprint id, so that a duplicate
	// can name its original: on disk with a DataDir, else a bounded map.
	names   NameStore
	dupMu   sync.Mutex
	dupURLs map[uint64]string

	blockedMu    sync.Mutex
	blockedHosts map[string]bool // the first maxActivity blocked hosts, for the dashboard
	blockedSeen  *bloom.Set      // every blocked host, counted once

	// pending holds admitted URLs the frontier refused (see enqueue).
	pendingMu   sync.Mutex
	pending     []frontier.Entry
	pendingKeys []uint64
}

// New checks cfg and returns a Crawler. It does no I/O: stores are opened
// and seeds queued by Run.
func New(cfg Config) (*Crawler, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	seeds := make([]*url.URL, 0, len(cfg.Seeds))
	for _, s := range cfg.Seeds {
		n, err := urlnorm.Normalize(s)
		if err != nil {
			return nil, fmt.Errorf("%w: seed %q: %w", ErrConfig, s, err)
		}
		u, err := url.Parse(n)
		if err != nil {
			return nil, fmt.Errorf("%w: seed %q: %w", ErrConfig, s, err)
		}
		seeds = append(seeds, u)
	}
	var pages *pageBudget
	if cfg.MaxPages > 0 {
		pages = newPageBudget(cfg.MaxPages)
	}
	return &Crawler{
		cfg:          cfg,
		debug:        cfg.Logger.Enabled(context.Background(), slog.LevelDebug),
		policy:       settlePolicy{robotsRetries: max(cfg.RobotsRetries, 0), maxRetryWait: cfg.MaxRetryWait},
		pages:        pages,
		extractor:    extract.Config{UserAgent: cfg.RobotsToken, MaxLinks: cfg.MaxLinksPerPage},
		token:        cfg.RobotsToken,
		seeds:        seeds,
		politeKey:    politenessKey(cfg),
		scope:        newScopeFilter(cfg, seeds),
		filter:       newURLFilter(cfg),
		rate:         newRate(cfg.MaxRequestsPerSecond),
		stats:        newCounters(),
		wake:         make(chan struct{}, 1),
		dupURLs:      map[uint64]string{},
		blockedHosts: map[string]bool{},
		blockedSeen:  newHostSet(),
	}, nil
}

// politenessKey is Config.PolitenessKey, or urlnorm.Host without one. A
// user's key that panics or answers "" keys the URL by its host instead: a
// lost clock costs a group its shared spacing, not the crawl; the panic is
// logged, with its stack, the first time.
func politenessKey(cfg Config) func(*url.URL) string {
	fn := cfg.PolitenessKey
	if fn == nil {
		return urlnorm.Host
	}
	var once sync.Once
	return func(u *url.URL) (key string) {
		defer func() {
			if v := recover(); v != nil {
				once.Do(func() {
					if cfg.Logger != nil {
						cfg.Logger.Error("PolitenessKey panicked; URLs it fails on are keyed by their host", "url", u.String(), "panic", v, "stack", string(debug.Stack()))
					}
				})
				key = ""
			}
			if key == "" {
				key = urlnorm.Host(u)
			}
		}()
		return fn(u)
	}
}

// leaseHost is the host of a lease's URL. The lease's Host is its
// politeness key, which is the host unless Config.PolitenessKey groups
// hosts.
func (cr *Crawler) leaseHost(l *frontier.Lease) string {
	if cr.cfg.PolitenessKey == nil {
		return l.Host
	}
	if u, err := url.Parse(l.URL); err == nil {
		return urlnorm.Host(u)
	}
	return l.Host
}

// Stats returns a snapshot of the crawl's progress.
func (cr *Crawler) Stats() Stats {
	now := cr.cfg.Now()
	started := now
	if p := cr.started.Load(); p != nil {
		started = *p
	}
	var queued int64
	if cr.opened.Load() {
		fs := cr.front.Stats()
		queued = int64(fs.InMemory + fs.Leased)
	}
	st := cr.stats.snapshot(started, now, queued, cr.cfg.Workers)
	st.Waiting = cr.waits.snapshot(now)
	st.Waiting.LoginHosts = cr.logins.running()
	st.Usage = cr.usage.stats()
	if cr.totals != nil {
		t := cr.totals.with(st, now)
		st.Totals = &t
	}
	st.Waiting.InFlight = cr.busy.Load()
	switch cr.ended.Load() {
	case endComplete:
		st.Ended = "complete"
	case endMaxPages:
		st.Ended = "max-pages"
	case endCancelled:
		st.Ended = "cancelled"
	case endMaxWait:
		st.Ended = "max-wait"
	}
	return st
}

// Run crawls until the frontier is drained (nothing queued, nothing being
// fetched), MaxPages pages were fetched, or ctx is done. On return every
// goroutine it started has stopped and the stores are flushed and closed.
// Pages being fetched when ctx is cancelled get ShutdownGrace to finish; with
// a DataDir, a later Run resumes where this one stopped. Run returns nil when
// the crawl ended by itself or by MaxPages, and ctx's error when ctx ended it.
func (cr *Crawler) Run(ctx context.Context) (err error) {
	if !cr.ran.CompareAndSwap(false, true) {
		return ErrAlreadyRun
	}
	now := cr.cfg.Now()
	cr.started.Store(&now)
	if err := cr.open(); err != nil {
		cr.closeAll()
		return err
	}
	cr.opened.Store(true)
	defer func() {
		if cerr := cr.closeAll(); err == nil {
			err = cerr
		}
	}()

	// Workers keep fetching through a grace period after ctx ends; only
	// leasing stops at once.
	workCtx, cancelWork := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelWork()
	leaseCtx, stopLeasing := context.WithCancel(ctx)
	defer stopLeasing()

	if err := cr.addSeeds(leaseCtx); err != nil {
		return err
	}

	// Registered after closeAll, so it runs first: the final share in
	// closeAll follows the sharer's last.
	defer cr.startSharing(leaseCtx)()

	cr.slots = make(chan struct{}, cr.cfg.Workers)
	cr.lot = make(chan struct{}, lotPerWorker*cr.cfg.Workers)
	wg := &cr.workers
	for i := 0; i < cr.cfg.Workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cr.worker(leaseCtx, workCtx, stopLeasing)
		}()
	}
	drained := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		cr.monitor(leaseCtx, workCtx, stopLeasing, drained)
	}()

	<-leaseCtx.Done()
	if ctx.Err() != nil {
		grace := time.AfterFunc(cr.cfg.ShutdownGrace, cancelWork)
		defer grace.Stop()
	}
	stopped := make(chan struct{})
	go func() {
		wg.Wait()
		close(stopped)
	}()
	if err := cr.waitWorkers(ctx, stopped); err != nil {
		cr.ended.Store(endCancelled)
		return err
	}
	select {
	case <-drained:
		if cr.waitedOut.Load() {
			cr.ended.Store(endMaxWait)
			fs := cr.front.Stats()
			cr.stats.notFetched[ReasonMaxWait].Add(int64(fs.InMemory + fs.Leased))
		} else {
			cr.ended.Store(endComplete)
		}
		return cr.nothingFetched()
	default:
	}
	if cr.limitReached.Load() {
		cr.ended.Store(endMaxPages)
		fs := cr.front.Stats()
		cr.stats.notFetched[ReasonMaxPages].Store(int64(fs.InMemory + fs.Leased))
		return nil
	}
	if ctx.Err() != nil {
		cr.ended.Store(endCancelled)
		return ctx.Err()
	}
	cr.ended.Store(endComplete)
	return nil
}

// How a Run ended, for Stats.Ended.
const (
	endRunning int32 = iota
	endComplete
	endMaxPages
	endCancelled
	endMaxWait
)

// waitWorkers waits until the workers stopped. Once ctx ended, a worker
// still busy ShutdownGrace after (a Handler that ignores its context) is
// abandoned: Run returns an ErrAbandoned naming how many were left.
func (cr *Crawler) waitWorkers(ctx context.Context, stopped <-chan struct{}) error {
	select {
	case <-stopped:
		return nil
	case <-ctx.Done():
	}
	// The grace timer cancels the workers' context at ShutdownGrace; a
	// worker that honours it stops within moments of that.
	t := time.NewTimer(cr.cfg.ShutdownGrace + abandonAfter)
	defer t.Stop()
	select {
	case <-stopped:
		return nil
	case <-t.C:
		n := cr.busy.Load()
		cr.cfg.Logger.Error("workers did not stop after ShutdownGrace; abandoning them", "busy", n)
		return fmt.Errorf("%w: %d workers still busy (a Handler or Sink that ignores its context?): %w", ErrAbandoned, n, ctx.Err())
	}
}

// abandonAfter is how long after ShutdownGrace Run waits for workers whose
// context was cancelled.
const abandonAfter = 2 * time.Second

// ErrAbandoned is returned by Run when workers were still busy
// ShutdownGrace after ctx ended: their pages' leases expire and are
// fetched again by a later Run; their goroutines are left to the Handler.
var ErrAbandoned = errors.New("crawlkit: workers abandoned after ShutdownGrace")

// ErrNothingFetched is returned by Run when the crawl ended by itself
// without one answer from a server, although URLs were queued: every seed
// was refused (by the address guard, robots.txt, an unreachable robots.txt)
// or failed (DNS, TLS, network). The error names the reasons.
var ErrNothingFetched = errors.New("crawlkit: no page could be fetched")

// nothingFetched returns ErrNothingFetched with the reasons when this Run
// queued or leased URLs and got no answer for any, else nil.
func (cr *Crawler) nothingFetched() error {
	s := cr.stats
	if s.fetched.Load() > 0 || s.successful.Load() > 0 || s.redirectFetched.Load() > 0 {
		return nil
	}
	var parts []string
	for r, n := range s.notFetched.snapshot() {
		parts = append(parts, fmt.Sprintf("%d %s", n, r))
	}
	if n := s.errNetwork.Load() + s.errTimeout.Load(); n > 0 {
		parts = append(parts, fmt.Sprintf("%d network errors", n))
	}
	if n := s.failed.Load() - s.notFetched.get(ReasonRetryBudget); n > 0 && len(parts) == 0 {
		parts = append(parts, fmt.Sprintf("%d failed", n))
	}
	if len(parts) == 0 {
		return nil // nothing was queued: a finished crawl resumed
	}
	slices.Sort(parts)
	hint := ""
	if s.notFetched.get(ReasonGuard) > 0 {
		hint = "; the address guard refuses private and loopback addresses: allow them with Config.AllowPrivate"
	}
	if last, ok := cr.lastFetchErr.Load().(string); ok {
		hint += "; last fetch error: " + last
	}
	return fmt.Errorf("%w: %s%s", ErrNothingFetched, strings.Join(parts, ", "), hint)
}
