package crawlkit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path"
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
	"github.com/crawlkit/crawlkit/sitemap"
	"github.com/crawlkit/crawlkit/storage/pebble"
	"github.com/crawlkit/crawlkit/trap"
	"github.com/crawlkit/crawlkit/urlnorm"
)

// ErrAlreadyRun is returned by a second call of Run: a Crawler runs once
// (make a new one on the same DataDir to resume).
var ErrAlreadyRun = errors.New("crawlkit: Run called twice")

// errOutOfScope is returned by the redirect check for a target outside the
// crawl's scope.
var errOutOfScope = errors.New("crawlkit: redirect target out of scope")

// errRobots is returned by the redirect check for a target robots.txt does
// not allow.
var errRobots = errors.New("crawlkit: redirect target disallowed by robots.txt")

// robotsUnreachableError is returned by the redirect check for a target
// whose host's robots.txt could not be fetched: the whole host is
// disallowed until Until, when it is fetched again (RFC 9309 §2.3.1.4), so
// the URL that redirected there is tried again then, as a URL of that host
// would be (Config.RobotsRetries), rather than given up.
type robotsUnreachableError struct {
	Host  string
	Until time.Time
}

func (e *robotsUnreachableError) Error() string {
	return "crawlkit: redirect target " + e.Host + ": robots.txt unreachable, host disallowed until " + e.Until.Format(time.RFC3339)
}

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
}

// Crawler crawls from a set of seeds with the crawlkit packages: it leases
// URLs from the frontier, checks robots.txt, fetches, extracts links and
// text, detects near-duplicates, hands pages to the Handler and feeds links
// back through normalization, trap detection, scope and the seen set.
//
// Create one with New and call Run once. Stats, StatsHandler and
// MetricsHandler may be used while it runs.
type Crawler struct {
	cfg   Config
	token string
	seeds []*url.URL
	scope *scopeFilter
	stats *counters

	started atomic.Pointer[time.Time]
	ran     atomic.Bool
	// opened is set once Run's open has set up the fields below, so that
	// Stats, which may run at the same time, reads front only after it
	// was written.
	opened atomic.Bool

	// Set up by Run.
	db            *pebble.DB
	front         Queue
	ownFront      *frontier.Frontier // the frontier the Crawler made, to close
	fetcher       *fetch.Fetcher
	mediaFetcher  *fetch.Fetcher
	robotsFetcher *fetch.Fetcher
	robots        *robots.Cache
	seen          *bloom.Set
	seenStore     *pebble.SeenStore
	dns           *fetch.DNSCache
	index         *simhash.Index
	traps         *trap.Detector
	extractor     extract.Options
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

	pages        *pageBudget // nil without MaxPages
	limitReached atomic.Bool
	busy         atomic.Int64
	wake         chan struct{}

	// The URLs of indexed pages, by fingerprint id, so that a duplicate
	// can name its original: on disk with a DataDir, else a bounded map.
	names   *pebble.NameStore
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
		pages:        pages,
		extractor:    extract.Options{UserAgent: productToken(cfg.UserAgent)},
		token:        productToken(cfg.UserAgent),
		seeds:        seeds,
		scope:        newScopeFilter(cfg, seeds),
		stats:        newCounters(),
		wake:         make(chan struct{}, 1),
		dupURLs:      map[uint64]string{},
		blockedHosts: map[string]bool{},
		blockedSeen:  newHostSet(),
	}, nil
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
	return cr.stats.snapshot(started, now, queued, cr.cfg.Workers)
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

	var wg sync.WaitGroup
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
	wg.Wait()
	select {
	case <-drained:
		return nil
	default:
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return nil
}

// open sets up the stores and components.
func (cr *Crawler) open() error {
	cfg := cr.cfg
	var (
		frontStore  frontier.Store
		robotsStore robots.Store
		fpStore     simhash.Store
		fpTables    *pebble.FingerprintTables
	)
	robotsStore, fpStore = cfg.RobotsStore, cfg.FingerprintStore
	if cfg.DataDir != "" {
		db, err := pebble.Open(cfg.DataDir, pebble.Options{CacheBytes: cfg.DataDirCacheBytes, Logger: cfg.Logger})
		if err != nil {
			return fmt.Errorf("crawlkit: opening data directory: %w", err)
		}
		cr.db = db
		frontStore = db.Frontier()
		if robotsStore == nil {
			robotsStore = db.RobotsStore()
		}
		if fpStore == nil {
			fpTables = db.FingerprintTables()
		}
		cr.seenStore = db.SeenStore()
		cr.names = db.NameStore()
	}

	guardAllow := cfg.AllowPrivate
	politeness := cfg.Politeness
	if politeness == nil {
		politeness = fetch.NewPoliteness(fetch.PolitenessConfig{
			Delay:         cfg.Delay,
			MaxConcurrent: cfg.MaxConnsPerHost,
			MaxCrawlDelay: cfg.MaxCrawlDelay,
		})
	}
	dns := fetch.NewDNSCache(fetch.DNSConfig{})
	cr.dns = dns
	// Canonical keys, so that a caller's "accept" replaces the default
	// Accept below instead of being sent next to it.
	header := make(http.Header, len(cfg.Header)+1)
	for k, v := range cfg.Header {
		ck := http.CanonicalHeaderKey(k)
		header[ck] = append(header[ck], v...)
	}
	if header.Get("Accept") == "" {
		header.Set("Accept", "text/html,application/xhtml+xml;q=0.9,*/*;q=0.1")
	}
	base := fetch.Config{
		UserAgent:    cfg.UserAgent,
		DialContext:  cfg.DialContext,
		DNS:          dns,
		AllowCIDRs:   guardAllow,
		Politeness:   politeness,
		HostKey:      urlnorm.Host,
		MaxBodyBytes: cfg.MaxBodyBytes,
		Header:       header,
		Check:        cr.checkRedirect,
	}
	var err error
	if cr.fetcher, err = fetch.New(base); err != nil {
		return fmt.Errorf("crawlkit: %w", err)
	}
	// Media and robots.txt fetches go over the page fetcher's connections:
	// a host's robots.txt and its first page then share one connection.
	media := base
	media.ShareConns = cr.fetcher
	media.MaxBodyBytes = cfg.MaxMediaBytes
	media.Header = cfg.Header.Clone()
	if cr.mediaFetcher, err = fetch.New(media); err != nil {
		return fmt.Errorf("crawlkit: %w", err)
	}
	// robots.txt: no redirects (the robots cache follows them itself and
	// counts them), no retries (it backs off itself), 500 KiB is all it
	// reads (RFC 9309 §2.5). Its requests are spaced by a politeness model
	// of their own: a robots.txt answering 5xx makes the whole host
	// disallowed until the robots cache fetches it again, so a backoff or
	// Retry-After recorded for the page fetches would only keep the
	// frontier from settling the host's URLs.
	rb := base
	rb.ShareConns = cr.fetcher
	rb.Check = nil
	rb.Politeness = fetch.NewPoliteness(fetch.PolitenessConfig{Delay: cfg.Delay, MaxCrawlDelay: cfg.MaxCrawlDelay})
	rb.MaxRedirects = -1
	rb.MaxRetries = -1
	rb.MaxBodyBytes = robots.DefaultMaxBytes + 1
	rb.Header = cfg.Header.Clone()
	if cr.robotsFetcher, err = fetch.New(rb); err != nil {
		return fmt.Errorf("crawlkit: %w", err)
	}
	cr.robots = robots.NewCache(robots.Config{
		Fetch: cr.fetchRobots,
		Parse: robots.Options{MaxCrawlDelay: cfg.MaxCrawlDelay},
		Store: robotsStore,
		OnStoreError: func(origin string, err error) {
			cfg.Logger.Warn("robots store error", "origin", origin, "err", err)
		},
		Clock: cfg.Now,
	})

	if cfg.Queue != nil {
		cr.front = cfg.Queue
	} else {
		f, err := frontier.New(frontier.Options{
			Store:            frontStore,
			Prioritizer:      cfg.Prioritizer,
			Politeness:       politeness,
			Schedule:         cfg.Recrawl,
			Now:              cfg.Now,
			MaxLeasesPerHost: cfg.MaxConnsPerHost,
			RetryBase:        cfg.RetryBackoff,
			MaxAttempts:      cfg.MaxAttempts,
		})
		if err != nil {
			return fmt.Errorf("crawlkit: frontier: %w", err)
		}
		cr.front, cr.ownFront = f, f
	}

	if cr.seen, err = bloom.New(bloom.Options{Expected: cfg.ExpectedURLs}); err != nil {
		return fmt.Errorf("crawlkit: seen set: %w", err)
	}
	if cr.seenStore != nil && cfg.Queue == nil {
		// The filter claims URLs in memory; the store records them after
		// they are queued (see admit). Rebuild the filter from the store.
		if err := cr.seenStore.ForEach(func(key uint64) error {
			_, err := cr.seen.TestAndAddKey(key)
			return err
		}); err != nil {
			return fmt.Errorf("crawlkit: loading seen URLs: %w", err)
		}
	}
	if cfg.NearDuplicateBits > 0 {
		opts := simhash.Options{K: cfg.NearDuplicateBits, Store: fpStore}
		if fpTables != nil {
			opts.Tables = fpTables
		}
		if cr.index, err = simhash.NewIndex(opts); err != nil {
			return fmt.Errorf("crawlkit: fingerprint index: %w", err)
		}
		if fpTables != nil && cr.index.Len() == 0 {
			if err := cr.importFingerprints(cr.db.FingerprintStore()); err != nil {
				return err
			}
		}
		// At 10^-4 (19 bits per URL), one first fetch in 10 000 is taken
		// for a refetch and goes unindexed (see analyze).
		if cr.analyzed, err = bloom.New(bloom.Options{Expected: cfg.ExpectedURLs, FalsePositiveRate: analyzedFalsePositiveRate}); err != nil {
			return fmt.Errorf("crawlkit: analyzed-page set: %w", err)
		}
	}
	// Only URLs the seen set has not admitted reach the detector, and each
	// fetched page is reported once (analyze keeps refetches from it), so
	// it need not remember URL keys.
	tc := cfg.Trap
	tc.DistinctCandidates = true
	cr.traps = trap.New(tc)
	return nil
}

// importFingerprints copies into the (empty) on-disk index the
// fingerprints a data directory written before the index lived on disk
// keeps in its fingerprint store.
func (cr *Crawler) importFingerprints(old *pebble.FingerprintStore) error {
	const batch = 10000
	var buf []simhash.Entry
	flush := func() error {
		err := cr.index.AddBatch(buf)
		buf = buf[:0]
		return err
	}
	err := old.ForEach(func(e simhash.Entry) error {
		if buf = append(buf, e); len(buf) == batch {
			return flush()
		}
		return nil
	})
	if err == nil {
		err = flush()
	}
	if err != nil {
		return fmt.Errorf("crawlkit: importing fingerprints into the on-disk index: %w", err)
	}
	return nil
}

// closeAll stops the components in dependency order.
func (cr *Crawler) closeAll() error {
	var errs []error
	if cr.ownFront != nil {
		errs = append(errs, cr.ownFront.Close())
	}
	// The fetchers sharing the page fetcher's connections close first.
	for _, f := range []*fetch.Fetcher{cr.mediaFetcher, cr.robotsFetcher, cr.fetcher} {
		if f != nil {
			errs = append(errs, f.Close())
		}
	}
	if cr.dns != nil {
		cr.dns.Close()
	}
	if cr.cfg.Sink != nil {
		errs = append(errs, cr.cfg.Sink.Close())
	}
	if cr.db != nil {
		errs = append(errs, cr.db.Close())
	}
	return errors.Join(errs...)
}

// fetchRobots fetches a robots.txt through the robots fetcher (address
// guard, politeness, limits) for the robots cache.
func (cr *Crawler) fetchRobots(ctx context.Context, rawURL string) (*http.Response, error) {
	resp, err := cr.robotsFetcher.Fetch(ctx, rawURL)
	if err != nil {
		return nil, err
	}
	return &http.Response{
		Status:        fmt.Sprintf("%d %s", resp.StatusCode, http.StatusText(resp.StatusCode)),
		StatusCode:    resp.StatusCode,
		Proto:         resp.Proto,
		Header:        resp.Header,
		Body:          io.NopCloser(bytes.NewReader(resp.Body)),
		ContentLength: int64(len(resp.Body)),
	}, nil
}

// checkRedirect vets every URL the fetchers request (the first URL, every
// redirect target, every sitemap) against the scope and robots.txt, and
// applies the host's Crawl-delay before the request: a redirect or a
// sitemap may lead to a host none of whose URLs was leased, so checkRobots
// has not set its delay (or skipped it as too slow) yet.
func (cr *Crawler) checkRedirect(ctx context.Context, u *url.URL) error {
	if !cr.inScope(u) {
		return errOutOfScope
	}
	if cr.cfg.DangerouslyIgnoreRobotsTxt {
		return nil
	}
	pol, err := cr.robots.Policy(ctx, u.String())
	if err != nil {
		return err
	}
	if pol.Source() == robots.SourceUnreachable {
		host := urlnorm.Host(u)
		cr.markBlocked(host)
		return &robotsUnreachableError{Host: host, Until: pol.FetchInfo().Expires}
	}
	if !cr.applyCrawlDelay(pol, urlnorm.Host(u)) {
		return errRobots
	}
	d, err := pol.Allowed(cr.token, u.String())
	if err != nil {
		return err
	}
	if !d.Allowed {
		return errRobots
	}
	return nil
}

// inScope applies the scope to a URL about to be requested in the
// normalized form links are judged in (see Config.ScopeFunc): a redirect
// target is the server's spelling of a URL, not normalized. A URL that does
// not normalize is out of scope, as a link to it would not be followed.
// The URL requested is u, unchanged.
func (cr *Crawler) inScope(u *url.URL) bool {
	n, err := urlnorm.Normalize(u.String())
	if err != nil {
		return false
	}
	nu, err := url.Parse(n)
	if err != nil {
		return false
	}
	return cr.scope.allows(nu)
}

// applyCrawlDelay sets host's robots.txt Crawl-delay in the politeness
// model. It reports false when the host is not to be crawled at all: its
// Crawl-delay is over MaxCrawlDelay and CrawlDelayPolicy is SkipSlowHosts.
func (cr *Crawler) applyCrawlDelay(pol *robots.Policy, host string) bool {
	cd, err := pol.CrawlDelay(cr.token)
	if err != nil || !cd.Set {
		return true
	}
	if cd.Exceeded && cr.cfg.CrawlDelayPolicy == SkipSlowHosts {
		cr.markBlocked(host)
		return false
	}
	cr.fetcher.Politeness().SetCrawlDelay(host, cd.Capped())
	return true
}

// addSeeds queues the seeds (and, with SitemapSeeds, the pages their
// robots.txt sitemaps list, normalized like links).
func (cr *Crawler) addSeeds(ctx context.Context) error {
	var entries []frontier.Entry
	var keys []uint64
	for _, u := range cr.seeds {
		e, key, ok := cr.admitURL(u.String(), "", 0, &Link{})
		if ok {
			entries = append(entries, e)
			keys = append(keys, key)
		}
	}
	if err := cr.enqueue(entries, keys); err != nil {
		return err
	}
	if !cr.cfg.SitemapSeeds {
		return nil
	}
	return cr.addSitemapSeeds(ctx)
}

func (cr *Crawler) addSitemapSeeds(ctx context.Context) error {
	var sources []sitemap.Source
	for _, u := range cr.seeds {
		pol, err := cr.robots.Policy(ctx, u.String())
		if err != nil {
			continue
		}
		robotsURL := (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: "/robots.txt"}).String()
		sources = append(sources, sitemap.FromRobots(robotsURL, pol.Sitemaps())...)
	}
	if len(sources) == 0 {
		return nil
	}
	w := sitemap.Walker{
		Fetch: cr.fetchSitemap,
		// A sitemap's fetch may wait for its host's politeness delay,
		// up to MaxCrawlDelay, on top of the transfer.
		DocumentTimeout: sitemap.DefaultDocumentTimeout + 2*cr.cfg.MaxCrawlDelay,
		OnError: func(sitemapURL string, err error) {
			cr.cfg.Logger.Warn("sitemap skipped", "url", sitemapURL, "err", err)
		},
	}
	var entries []frontier.Entry
	var keys []uint64
	_, err := w.Walk(ctx, sources, func(_ string, e sitemap.Entry) error {
		// Sitemap URLs are not normalized: normalize them as links are,
		// so that the seen set and the frontier see one spelling. One
		// that does not normalize is dropped, as such a link is.
		n, err := urlnorm.Normalize(e.URL)
		if err != nil {
			return nil
		}
		fe, key, ok := cr.admitURL(n, "", 0, &Link{})
		if ok {
			entries = append(entries, fe)
			keys = append(keys, key)
		}
		if len(entries) >= 1000 {
			if err := cr.enqueue(entries, keys); err != nil {
				return err
			}
			entries, keys = entries[:0], keys[:0]
		}
		return nil
	})
	if err != nil && ctx.Err() == nil {
		return fmt.Errorf("crawlkit: sitemap seeds: %w", err)
	}
	return cr.enqueue(entries, keys)
}

func (cr *Crawler) fetchSitemap(ctx context.Context, rawURL string) (io.ReadCloser, error) {
	resp, err := cr.mediaFetcher.Fetch(ctx, rawURL)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, &sitemap.StatusError{URL: rawURL, StatusCode: resp.StatusCode}
	}
	if resp.Truncated {
		// Cut at MaxMediaBytes: the parser would read a clean end in the
		// middle of an entry, and a text sitemap's last URL would be a
		// prefix of the real one.
		return nil, fmt.Errorf("%w: %s is over MaxMediaBytes (%d)", sitemap.ErrTooLarge, rawURL, cr.cfg.MaxMediaBytes)
	}
	return io.NopCloser(bytes.NewReader(resp.Body)), nil
}

// worker leases and processes URLs until leasing stops.
func (cr *Crawler) worker(leaseCtx, workCtx context.Context, stop context.CancelFunc) {
	backoff := time.Duration(0)
	for {
		l, err := cr.front.Next(leaseCtx)
		switch {
		case err == nil:
			backoff = 0
		case leaseCtx.Err() != nil || errors.Is(err, frontier.ErrClosed):
			return
		default:
			// A shared Queue can fail for a while (a database restarting):
			// wait and ask again rather than lose the worker.
			backoff = queueBackoff(backoff)
			cr.cfg.Logger.Warn("leasing from the frontier failed; retrying", "err", err, "in", backoff)
			t := time.NewTimer(backoff)
			select {
			case <-leaseCtx.Done():
				t.Stop()
				return
			case <-t.C:
			}
			continue
		}
		if !cr.process(workCtx, l, stop) {
			return
		}
	}
}

// queueBackoff returns the wait before asking a failing Queue again after
// waiting d: 100 ms, doubling up to 10 s.
func queueBackoff(d time.Duration) time.Duration {
	return min(max(2*d, 100*time.Millisecond), 10*time.Second)
}

// monitor ends the crawl when the frontier is drained: no worker busy,
// nothing leased, and nothing that will become ready without a new Add.
func (cr *Crawler) monitor(leaseCtx, workCtx context.Context, stop context.CancelFunc, drained chan<- struct{}) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	poll := time.NewTicker(50 * time.Millisecond)
	defer poll.Stop()
	// After a NextAt error the monitor asks again from retryAt on, as the
	// workers do after a Next error, keeping its ticks meanwhile.
	var backoff time.Duration
	var retryAt time.Time
	for {
		select {
		case <-leaseCtx.Done():
			return
		case now := <-tick.C:
			cr.stats.tick(now)
			continue
		case <-cr.wake:
		case <-poll.C:
		}
		if cr.hasPending() {
			if err := cr.enqueue(nil, nil); err != nil {
				cr.cfg.Logger.Warn("queueing pending links", "err", err)
			}
			continue
		}
		if cr.busy.Load() != 0 || cr.front.Stats().Leased != 0 {
			continue
		}
		if !retryAt.IsZero() && time.Now().Before(retryAt) {
			continue
		}
		l, at, err := cr.front.NextAt(cr.cfg.Now())
		switch {
		case err == nil:
			backoff, retryAt = 0, time.Time{}
		case errors.Is(err, frontier.ErrClosed):
			return
		default:
			// A shared Queue can fail for a while: the end of the crawl
			// is noticed once it answers again.
			backoff = queueBackoff(backoff)
			retryAt = time.Now().Add(backoff)
			cr.cfg.Logger.Warn("asking the frontier for ready URLs failed; retrying", "err", err, "in", backoff)
			continue
		}
		if l != nil {
			// Became ready just now: fetch it here.
			if !cr.process(workCtx, l, stop) {
				return
			}
			continue
		}
		if at.IsZero() && cr.busy.Load() == 0 {
			close(drained)
			stop()
			return
		}
	}
}

// process fetches one leased URL and settles its lease. It reports false
// when the crawl should stop (MaxPages reached).
func (cr *Crawler) process(ctx context.Context, l *frontier.Lease, stop context.CancelFunc) bool {
	cr.busy.Add(1)
	cr.stats.activeWorkers.Add(1)
	cr.stats.hostBusy(l.Host, 1)
	defer func() {
		cr.stats.hostBusy(l.Host, -1)
		cr.stats.activeWorkers.Add(-1)
		cr.busy.Add(-1)
		select {
		case cr.wake <- struct{}{}:
		default:
		}
	}()

	keep := cr.keepLease(l)
	outcome, ok := cr.fetchAndHandle(ctx, l)
	keep()
	if !ok {
		if cr.limitReached.Load() {
			// MaxPages: leave the lease unsettled; with a durable store
			// it is queued again by the next Run.
			stop()
			return false
		}
		return true // abandoned: ctx ended mid-fetch; the lease expires
	}
	s, err := cr.front.Done(l, outcome)
	if err != nil && !errors.Is(err, frontier.ErrClosed) {
		cr.cfg.Logger.Warn("settling lease", "url", l.URL, "err", err)
	}
	if err == nil && s.Kind == frontier.SettlementGivenUp {
		// The queue gave the URL up instead of putting it back: it was
		// counted as retried, but failed.
		cr.stats.retried.Add(-1)
		cr.stats.failed.Add(1)
	}
	return true
}

// gotResponse reports whether a page fetch that returned err got an answer
// from the server, which Config.MaxPages counts: a success, a 304, or an
// answer the fetcher refused once it came (without that, a site whose every
// link redirects out of scope would never use the budget up).
func gotResponse(err error) bool {
	return err == nil || errors.Is(err, fetch.ErrNotModified) || refusedAnswer(err)
}

// refusedAnswers are the fetcher's refusals of an answer it got: limits
// and checks applied to the response, which asking again would meet again.
var refusedAnswers = []error{fetch.ErrDisallowed, fetch.ErrTooManyRedirects, fetch.ErrHeadersTooLarge,
	fetch.ErrBodyTooLarge, fetch.ErrDecompressionBomb, fetch.ErrUnsupportedEncoding, fetch.ErrBadEncoding}

// refusedAnswer reports whether err is one of refusedAnswers.
func refusedAnswer(err error) bool {
	for _, r := range refusedAnswers {
		if errors.Is(err, r) {
			return true
		}
	}
	return false
}

// pageBudget enforces Config.MaxPages. A request is admitted only while
// the responses received and the requests in flight are fewer than the
// limit, and one that ends without a response gives its place back. A
// request that finds the remaining places taken by requests in flight
// waits until they end, so that failing requests neither let more than
// MaxPages responses in nor stop the crawl short of them.
type pageBudget struct {
	max      int
	mu       sync.Mutex
	changed  sync.Cond // signalled when a request in flight ends
	done     int       // responses received
	inFlight int
}

func newPageBudget(max int) *pageBudget {
	b := &pageBudget{max: max}
	b.changed.L = &b.mu
	return b
}

// acquire admits a request, waiting for requests in flight if needed. It
// reports false once MaxPages responses were received.
func (b *pageBudget) acquire() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	for b.done < b.max && b.done+b.inFlight >= b.max {
		b.changed.Wait()
	}
	if b.done >= b.max {
		return false
	}
	b.inFlight++
	return true
}

// release ends a request admitted by acquire; response reports that it got
// one.
func (b *pageBudget) release(response bool) {
	b.mu.Lock()
	b.inFlight--
	if response {
		b.done++
	}
	b.mu.Unlock()
	b.changed.Broadcast()
}

// Extender is implemented by Queues whose leases can be prolonged: the
// frontier and the PostgreSQL and Redis queues. The Crawler extends every
// lease it works on through it (see Config.Queue).
type Extender interface {
	Extend(l *frontier.Lease, ttl time.Duration) error
}

// keepLease keeps l alive while its work runs, if the Queue is an Extender:
// whenever half of the lease's time has passed it extends the lease by its
// full duration again. A robots.txt fetch, a host's crawl delay, a slow
// server and a slow Handler may together outlast a lease; without this its
// URL would go to another worker, and be fetched twice, while it is still
// being worked on. The returned function stops it, and must be called
// before the lease is settled.
func (cr *Crawler) keepLease(l *frontier.Lease) (stop func()) {
	ex, ok := cr.front.(Extender)
	if !ok || l.Expires.IsZero() {
		return func() {}
	}
	ttl := l.Expires.Sub(cr.cfg.Now())
	if ttl <= 0 {
		return func() {}
	}
	done := make(chan struct{})
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		t := time.NewTimer(ttl / 2)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			err := ex.Extend(l, ttl)
			switch {
			case err == nil:
				t.Reset(ttl / 2)
			case errors.Is(err, frontier.ErrLeaseExpired), errors.Is(err, frontier.ErrLeaseSettled),
				errors.Is(err, frontier.ErrClosed), errors.Is(err, frontier.ErrForeignLease):
				// Nothing left to keep: the settlement reports what
				// became of the lease.
				return
			default:
				// A shared queue failing for a moment: try again
				// before the lease runs out.
				cr.cfg.Logger.Warn("extending a lease failed; retrying", "url", l.URL, "err", err)
				t.Reset(ttl / 8)
			}
		}
	}()
	return func() {
		close(done)
		<-exited
	}
}

// fetchAndHandle does the work of one lease and returns its outcome; ok is
// false when the work was abandoned because ctx ended.
func (cr *Crawler) fetchAndHandle(ctx context.Context, l *frontier.Lease) (frontier.Outcome, bool) {
	media := len(l.Meta) > 0 && l.Meta[0] == metaMedia
	if !media && cr.takeRedirected(l) {
		// The page was fetched, and handled, as another URL's redirect
		// target after this URL had been queued.
		cr.stats.redirectFetched.Add(1)
		return frontier.Success(0), true
	}
	if !cr.cfg.DangerouslyIgnoreRobotsTxt {
		if o, done := cr.checkRobots(ctx, l); done {
			return o, ctx.Err() == nil
		}
	}
	// MaxPages counts responses to requests for pages robots.txt allows,
	// not leases, nor requests that got no response.
	if cr.pages != nil && !cr.pages.acquire() {
		cr.limitReached.Store(true)
		return frontier.Outcome{}, false
	}
	f := cr.fetcher
	if media {
		f = cr.mediaFetcher
	}
	fetched := cr.cfg.Now()
	resp, err := f.Do(ctx, &fetch.Request{URL: l.URL})
	if cr.pages != nil {
		cr.pages.release(gotResponse(err))
	}
	if err != nil {
		if ctx.Err() != nil {
			return frontier.Outcome{}, false
		}
		return cr.fetchError(l, err), true
	}
	cr.stats.fetched.Add(1)
	cr.stats.bytes.Add(int64(len(resp.Body)))
	cr.stats.wireBytes.Add(resp.WireBytes)
	// redirectedKey is the key of the URL the fetch was redirected to
	// when that URL was known already, and so perhaps queued: it is
	// remembered (see takeRedirected) once the page is settled as a
	// success, and only for a page fetch. A media fetch neither handles
	// a page nor follows its links, and a failed or retried one did not
	// get the target's content, so the target's own lease must fetch it.
	var redirectedKey uint64
	var redirectedKnown bool
	// Before the page's links are followed: it may link to itself. A
	// media URL that redirected to an HTML page (hotlink protection) did
	// not crawl that page: it stays unseen, for a link to find.
	if len(resp.Redirects) > 0 && !(media && isHTML(resp.ContentType)) {
		redirectedKey, redirectedKnown = cr.markRedirectTarget(l, resp.FinalURL)
	}

	page := &Page{
		URL:           l.URL,
		FinalURL:      resp.FinalURL.String(),
		Depth:         l.Depth,
		Attempt:       l.Attempt,
		StatusCode:    resp.StatusCode,
		Header:        resp.Header,
		ContentType:   resp.ContentType,
		Body:          resp.Body,
		Truncated:     resp.Truncated,
		Media:         media,
		Fetched:       fetched,
		Timing:        resp.Timing,
		Redirects:     resp.Redirects,
		RequestHeader: resp.RequestHeader,
		RemoteAddr:    resp.RemoteAddr,
	}
	var outcome frontier.Outcome
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		outcome = frontier.Success(0)
		if media {
			if !cr.wantMedia(resp.ContentType) {
				// Not a type the user asked for: settle without
				// handing it on.
				cr.stats.successful.Add(1)
				return outcome, true
			}
		} else if isHTML(resp.ContentType) {
			if stopLinks := cr.analyze(page); !stopLinks {
				cr.renderRouted(ctx, page)
				if err := cr.followLinks(l, page); err != nil {
					// The links could not be queued: fetch the page
					// again later rather than lose them.
					cr.cfg.Logger.Warn("queueing links", "url", l.URL, "err", err)
					cr.stats.retried.Add(1)
					return frontier.Retry(0), true
				}
			}
			outcome.Fingerprint = page.Fingerprint
		}
	case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500:
		if resp.StatusCode >= 500 {
			cr.stats.err5xx.Add(1)
		} else {
			cr.stats.err4xx.Add(1)
		}
		var after time.Duration
		if ra, ok := fetch.ParseRetryAfter(resp.Header.Get("Retry-After"), cr.cfg.Now()); ok {
			after = ra
		}
		outcome = frontier.Retry(after)
	default:
		if resp.StatusCode >= 400 {
			cr.stats.err4xx.Add(1)
		}
		outcome = frontier.Failed()
	}
	cr.stats.hostFetched(l.Host, outcome.Kind == frontier.OutcomeFailed || outcome.Kind == frontier.OutcomeRetry, cr.cfg.Now())

	if cr.cfg.Handler != nil {
		if err := cr.cfg.Handler(ctx, page); err != nil {
			cr.cfg.Logger.Warn("handler failed; the URL will be fetched again", "url", l.URL, "err", err)
			cr.stats.retried.Add(1)
			return frontier.Retry(0), true
		}
	}
	if cr.cfg.Sink != nil {
		if err := cr.cfg.Sink.Write(ctx, page); err != nil {
			cr.stats.sinkErrors.Add(1)
			cr.cfg.Logger.Warn("sink failed", "url", l.URL, "err", err)
		}
	}
	if redirectedKnown && !media && outcome.Kind == frontier.OutcomeSuccess {
		cr.rememberRedirected(redirectedKey)
	}
	switch outcome.Kind {
	case frontier.OutcomeSuccess:
		cr.stats.successful.Add(1)
	case frontier.OutcomeRetry:
		cr.stats.retried.Add(1)
	default:
		cr.stats.failed.Add(1)
	}
	return outcome, true
}

// markRedirectTarget records the URL a redirected fetch of l ended at as
// seen, through the checks a link to it passes (scope, depth, trap, seen
// set), so that links found later do not fetch it again: its content is
// handled as l's page. It is not queued. A target that was seen already
// (queued from a link before) is fetched under its own URL as well; one
// that fails the checks is not recorded. known reports a target that was
// seen already, and so is perhaps queued and fetched again when leased
// unless its key is remembered (rememberRedirected).
func (cr *Crawler) markRedirectTarget(l *frontier.Lease, final *url.URL) (targetKey uint64, known bool) {
	if final == nil {
		return 0, false
	}
	n, err := urlnorm.Normalize(final.String())
	if err != nil || n == l.URL {
		return 0, false
	}
	var link Link
	_, key, ok := cr.admitURL(n, l.URL, l.Depth, &link)
	if !ok {
		return urlnorm.Key(n), link.Followed
	}
	// Recorded on disk without a sync of its own: the synced write that
	// settles l makes it durable, and a crash before that fetches l, and
	// so the target, again.
	if cr.seenStore != nil && cr.cfg.Queue == nil {
		if err := cr.seenStore.AddLazy([]uint64{key}); err != nil {
			cr.cfg.Logger.Warn("seen store", "err", err)
		}
	}
	return 0, false
}

// maxRedirected bounds Crawler.redirected. Forgetting a key costs at most
// one extra fetch of its URL.
const maxRedirected = 1 << 16

// rememberRedirected records that the URL with key was fetched as a
// redirect target although it was already known to the crawl.
func (cr *Crawler) rememberRedirected(key uint64) {
	cr.redirectedMu.Lock()
	defer cr.redirectedMu.Unlock()
	if cr.redirected == nil {
		cr.redirected = make(map[uint64]struct{})
	}
	if len(cr.redirected) >= maxRedirected {
		for k := range cr.redirected {
			delete(cr.redirected, k)
			break
		}
	}
	cr.redirected[key] = struct{}{}
}

// takeRedirected reports whether l's URL was already fetched in this Run
// as the target of another URL's redirect, and forgets that, so that it
// answers true once. A lease of a URL fetched successfully before (a
// recrawl) is never skipped: the redirect may have been long ago.
func (cr *Crawler) takeRedirected(l *frontier.Lease) bool {
	if l.Fingerprint != 0 || l.Interval != 0 {
		return false
	}
	cr.redirectedMu.Lock()
	defer cr.redirectedMu.Unlock()
	if len(cr.redirected) == 0 {
		return false
	}
	key := urlnorm.Key(l.URL)
	if _, ok := cr.redirected[key]; !ok {
		return false
	}
	delete(cr.redirected, key)
	return true
}

// checkRobots applies robots.txt to a lease. done reports that the lease is
// settled by it with outcome o.
func (cr *Crawler) checkRobots(ctx context.Context, l *frontier.Lease) (o frontier.Outcome, done bool) {
	pol, err := cr.robots.Policy(ctx, l.URL)
	if err != nil {
		if ctx.Err() != nil {
			return frontier.Outcome{}, true
		}
		cr.stats.failed.Add(1)
		return frontier.Failed(), true
	}
	if pol.Source() == robots.SourceUnreachable {
		cr.markBlocked(l.Host)
		info := pol.FetchInfo()
		if l.Attempt < cr.cfg.RobotsRetries {
			wait := info.Expires.Sub(cr.cfg.Now())
			cr.front.BlockHost(l.Host, info.Expires)
			cr.stats.retried.Add(1)
			return frontier.Retry(wait), true
		}
		cr.stats.robotsBlocked.Add(1)
		return frontier.Failed(), true
	}
	if !cr.applyCrawlDelay(pol, l.Host) {
		cr.stats.robotsBlocked.Add(1)
		return frontier.Failed(), true
	}
	d, err := pol.Allowed(cr.token, l.URL)
	if err != nil || !d.Allowed {
		if root, rerr := pol.Allowed(cr.token, "/"); rerr == nil && !root.Allowed {
			cr.markBlocked(l.Host)
		}
		cr.stats.robotsBlocked.Add(1)
		return frontier.Failed(), true
	}
	return frontier.Outcome{}, false
}

// markBlocked counts host as blocked by robots.txt, once. The hosts are
// counted in a Bloom filter; the first maxActivity of them are kept by
// name for the dashboard, so that a crawl of many blocked hosts does not
// grow the Crawler's memory by one map entry each.
func (cr *Crawler) markBlocked(host string) {
	cr.blockedMu.Lock()
	defer cr.blockedMu.Unlock()
	if cr.blockedHosts[host] {
		return
	}
	if seen, _ := cr.blockedSeen.TestAndAdd(host); seen {
		return
	}
	cr.stats.hostsBlocked.Add(1)
	if len(cr.blockedHosts) < maxActivity {
		cr.blockedHosts[host] = true
	}
}

// fetchError maps a fetch error to an outcome.
func (cr *Crawler) fetchError(l *frontier.Lease, err error) frontier.Outcome {
	var hb *fetch.HostBlockedError
	var ru *robotsUnreachableError
	switch {
	case errors.As(err, &ru):
		if l.Attempt < cr.cfg.RobotsRetries {
			cr.stats.retried.Add(1)
			return frontier.Retry(max(0, ru.Until.Sub(cr.cfg.Now())))
		}
		cr.stats.robotsBlocked.Add(1)
		return frontier.Failed()
	case errors.Is(err, fetch.ErrNotModified):
		cr.stats.fetched.Add(1)
		cr.stats.successful.Add(1)
		return frontier.NotModified()
	case errors.Is(err, errRobots):
		cr.stats.robotsBlocked.Add(1)
		return frontier.Failed()
	case errors.Is(err, errOutOfScope):
		cr.stats.outOfScope.Add(1)
		return frontier.Failed()
	case errors.As(err, &hb):
		cr.stats.retried.Add(1)
		return frontier.Retry(time.Until(hb.Until))
	case errors.Is(err, fetch.ErrTimeout):
		cr.stats.errTimeout.Add(1)
		cr.stats.retried.Add(1)
		return frontier.Retry(0)
	case isTransient(err):
		cr.stats.errNetwork.Add(1)
		cr.stats.retried.Add(1)
		return frontier.Retry(0)
	default:
		cr.cfg.Logger.Warn("fetch failed", "url", l.URL, "err", err)
		cr.stats.errNetwork.Add(1)
		cr.stats.failed.Add(1)
		return frontier.Failed()
	}
}

// isTransient reports network errors worth another attempt later.
func isTransient(err error) bool {
	if errors.Is(err, fetch.ErrBlockedAddress) || refusedAnswer(err) {
		return false
	}
	var ue *url.Error
	return errors.As(err, &ue) || strings.Contains(err.Error(), "connection")
}

// isPageKind reports links that lead to pages: the crawl follows them.
func isPageKind(k extract.Kind) bool {
	switch k {
	case extract.KindA, extract.KindArea, extract.KindIframe, extract.KindFrame, extract.KindMetaRefresh:
		return true
	}
	return false
}

// isMediaKind reports links to images, video, audio and embedded
// documents: fetched only for Config.MediaTypes.
func isMediaKind(k extract.Kind) bool {
	switch k {
	case extract.KindImg, extract.KindSource, extract.KindMedia:
		return true
	}
	return false
}

func isHTML(contentType string) bool {
	return contentType == "text/html" || contentType == "application/xhtml+xml"
}

// wantMedia reports whether a media body of type ct is one the user asked
// for.
func (cr *Crawler) wantMedia(ct string) bool {
	for _, pattern := range cr.cfg.MediaTypes {
		if ok, _ := path.Match(pattern, ct); ok {
			return true
		}
	}
	return false
}

// analyze extracts the page's links, text and metadata, fingerprints it and
// checks for near-duplicates. It reports whether the page's links must not
// be followed: the trap detector stopped its pattern, or it is a
// near-duplicate and Config.SkipDuplicateLinks is set.
//
// A URL's content is indexed and reported to the trap detector once per
// Run, at its first fetch with text: the detector counts each report as
// another URL, so a page fetched again (Recrawl, a retry after a Handler
// error, a lease that ran out) would count as a repeat of itself. The
// analyzed set tells a refetch (up to its false-positive rate, 10^-4, which
// makes that share of first fetches go unindexed and unreported). A refetch's links are judged
// one by one, as every link is, but not stopped as a whole by a verdict on
// its own pattern. A refetch is still compared with the index, but never
// with its own entry, and adds none: the index keeps the URL's first
// fingerprint, so it does not grow with refetches.
func (cr *Crawler) analyze(p *Page) (stopLinks bool) {
	cr.extractPage(p)
	if cr.index == nil || p.Text == "" {
		return false
	}
	p.Fingerprint = simhash.Fingerprint(p.Text)
	id := urlnorm.Key(p.URL)
	refetch, _ := cr.analyzed.TestAndAddKey(id)
	matches, err := cr.index.AppendNearErr(nil, p.Fingerprint)
	if err != nil {
		cr.cfg.Logger.Warn("fingerprint index", "url", p.URL, "err", err)
	}
	var best *simhash.Match
	indexed := false // the index holds this URL's content already
	for i, m := range matches {
		switch {
		case m.ID == id:
			indexed = true
		case best == nil || m.Distance < best.Distance:
			best = &matches[i]
		}
	}
	switch {
	case best != nil:
		p.DuplicateOf = cr.nameOf(best.ID)
		p.Distance = best.Distance
		cr.stats.duplicates.Add(1)
	case !refetch:
		// A first fetch whose own entry is in the index already (from an
		// earlier Run on this DataDir, or another process sharing the
		// FingerprintStore) keeps that entry.
		if !indexed {
			if err := cr.index.Add(p.Fingerprint, id); err != nil {
				cr.cfg.Logger.Warn("fingerprint index", "err", err)
			}
		}
		cr.rememberName(id, p.URL)
	}
	if !refetch {
		if v := cr.traps.Observe(p.URL, p.Fingerprint); v.Rejected() {
			return true
		}
	}
	return p.DuplicateOf != "" && cr.cfg.SkipDuplicateLinks
}

// rememberName records the URL of the page indexed under id.
func (cr *Crawler) rememberName(id uint64, u string) {
	if cr.names != nil {
		if err := cr.names.Put(id, u); err != nil {
			cr.cfg.Logger.Warn("page name store", "err", err)
		}
		return
	}
	cr.dupMu.Lock()
	if len(cr.dupURLs) >= maxDuplicateURLs {
		for k := range cr.dupURLs { // drop an arbitrary entry
			delete(cr.dupURLs, k)
			break
		}
	}
	cr.dupURLs[id] = u
	cr.dupMu.Unlock()
}

// nameOf returns the URL of the page indexed under id, or "(forgotten)"
// when it is no longer known.
func (cr *Crawler) nameOf(id uint64) string {
	var name string
	if cr.names != nil {
		n, _, err := cr.names.Get(id)
		if err != nil {
			cr.cfg.Logger.Warn("page name store", "err", err)
		}
		name = n
	} else {
		cr.dupMu.Lock()
		name = cr.dupURLs[id]
		cr.dupMu.Unlock()
	}
	if name == "" {
		return "(forgotten)"
	}
	return name
}

// extractPage fills p's links, text and metadata from its HTML body. Links
// are normalized here; one that does not normalize keeps an empty URL and
// says why in Rejected.
func (cr *Crawler) extractPage(p *Page) {
	doc, err := cr.extractor.ExtractBytes(p.Body, p.FinalURL, p.Header)
	if doc == nil {
		cr.cfg.Logger.Warn("extracting links", "url", p.FinalURL, "err", err)
		return
	}
	// A token-size error still returns what was read before it.
	p.Title, p.Description, p.Language = doc.Title, doc.Description, doc.Language
	p.Canonical, p.Text = doc.Canonical, doc.Text
	p.Noindex, p.Nofollow = doc.Robots.Noindex, doc.Robots.Nofollow
	p.Links = make([]Link, len(doc.Links))
	for i, dl := range doc.Links {
		l := Link{Raw: dl.Raw, Kind: dl.Kind, Text: dl.Text, Rel: dl.Rel, Hreflang: dl.Hreflang,
			Nofollow: !dl.Follow && dl.Kind != extract.KindForm}
		if n, err := urlnorm.Normalize(dl.URL); err == nil {
			l.URL = n
		} else {
			l.Rejected = err.Error()
		}
		p.Links[i] = l
	}
}

// Meta byte values stored with frontier entries.
const (
	metaPage  = 0
	metaMedia = 1
)

// followLinks admits the page's links to the frontier. It returns an error
// only when the frontier could not queue them.
func (cr *Crawler) followLinks(l *frontier.Lease, p *Page) error {
	nofollowPage := p.Nofollow && !cr.cfg.FollowNofollow
	var entries []frontier.Entry
	var keys []uint64
	for i := range p.Links {
		link := &p.Links[i]
		if link.URL == "" {
			continue
		}
		switch {
		case nofollowPage || (link.Nofollow && !cr.cfg.FollowNofollow):
			link.Rejected = "nofollow"
			continue
		case isMediaKind(link.Kind) && len(cr.cfg.MediaTypes) == 0:
			link.Rejected = "media"
			continue
		case !isPageKind(link.Kind) && !isMediaKind(link.Kind):
			link.Rejected = "not a page link"
			continue
		}
		e, key, ok := cr.admitURL(link.URL, l.URL, l.Depth+1, link)
		if !ok {
			continue
		}
		if isMediaKind(link.Kind) {
			e.Meta = []byte{metaMedia}
		}
		entries = append(entries, e)
		keys = append(keys, key)
	}
	return cr.enqueue(entries, keys)
}

// admitURL runs a URL through scope, depth, trap and seen checks. ok means
// it is new and should be queued; link.Followed and link.Rejected are set.
func (cr *Crawler) admitURL(raw, source string, depth int, link *Link) (frontier.Entry, uint64, bool) {
	if cr.cfg.MaxDepth > 0 && depth > cr.cfg.MaxDepth {
		link.Rejected = "depth"
		cr.stats.outOfScope.Add(1)
		return frontier.Entry{}, 0, false
	}
	// Most links of a crawl point to pages already seen: answer those
	// before parsing. Only URLs that passed the checks below are ever
	// recorded, so a seen URL is one that passed them.
	key := urlnorm.Key(raw)
	if seen, _ := cr.seen.ContainsKey(key); seen {
		link.Followed = true
		return frontier.Entry{}, 0, false
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		link.Rejected = "unsupported URL"
		return frontier.Entry{}, 0, false
	}
	if !cr.scope.allows(u) {
		link.Rejected = "scope"
		cr.stats.outOfScope.Add(1)
		return frontier.Entry{}, 0, false
	}
	if v := cr.traps.JudgeAt(cr.cfg.Now(), trap.Candidate{URL: raw, Source: source, Depth: depth}); v.Rejected() {
		link.Rejected = v.Reason
		cr.stats.trapRejected.Add(1)
		return frontier.Entry{}, 0, false
	}
	seen, err := cr.seen.TestAndAddKey(key)
	if err != nil || seen {
		link.Followed = seen
		return frontier.Entry{}, 0, false
	}
	link.Followed = true
	host := urlnorm.Host(u)
	cr.stats.hostSeen(host)
	cr.stats.discovered.Add(1)
	return frontier.Entry{URL: raw, Host: host, Depth: depth}, key, true
}

// enqueue queues admitted URLs durably, then records them in the seen
// store. The order matters for crash safety: a URL is claimed in the
// in-memory filter first, so two workers never queue it twice; it is
// recorded as seen on disk only after it is durably queued, so a crash in
// between can queue it again (a bounded duplicate) but never lose it.
//
// When the frontier refuses the batch, the URLs are already claimed in the
// filter, so a retry of their page would not offer them again: they wait in
// a pending list that every later enqueue, and the monitor, tries first,
// and the crawl does not end while it holds anything. The error is
// returned so the page is fetched again if the process dies meanwhile.
func (cr *Crawler) enqueue(entries []frontier.Entry, keys []uint64) error {
	cr.pendingMu.Lock()
	if len(cr.pending) > 0 {
		entries = append(cr.pending, entries...)
		keys = append(cr.pendingKeys, keys...)
		cr.pending, cr.pendingKeys = nil, nil
	}
	cr.pendingMu.Unlock()
	if len(entries) == 0 {
		return nil
	}
	if err := cr.front.Add(entries...); err != nil {
		cr.pendingMu.Lock()
		cr.pending = append(cr.pending, entries...)
		cr.pendingKeys = append(cr.pendingKeys, keys...)
		cr.pendingMu.Unlock()
		return err
	}
	if cr.seenStore != nil && cr.cfg.Queue == nil {
		if err := cr.seenStore.AddBatch(keys); err != nil {
			// The URLs are queued; a rediscovery after a restart may
			// queue them again, which costs a duplicate, not a loss.
			cr.cfg.Logger.Warn("seen store", "err", err)
		}
	}
	return nil
}

// hasPending reports whether admitted URLs wait for the frontier to take
// them.
func (cr *Crawler) hasPending() bool {
	cr.pendingMu.Lock()
	defer cr.pendingMu.Unlock()
	return len(cr.pending) > 0
}
