package crawlkit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/crawlkit/crawlkit/bloom"
	"github.com/crawlkit/crawlkit/fetch"
	"github.com/crawlkit/crawlkit/frontier"
	"github.com/crawlkit/crawlkit/robots"
	"github.com/crawlkit/crawlkit/simhash"
	"github.com/crawlkit/crawlkit/trap"
	"github.com/crawlkit/crawlkit/urlnorm"
)

// Opening and closing a Run: the stores of the DataDir and the components
// the stages use.

// politenessConfig is the politeness model Config.Delay asks for: NoDelay
// switches both the fixed and the adaptive delay off (the model spells
// "off" negative), so requests to a host may follow each other at once.
func politenessConfig(cfg Config) fetch.PolitenessConfig {
	pc := fetch.PolitenessConfig{Delay: cfg.Delay, MaxConcurrent: cfg.MaxConnsPerHost, MaxCrawlDelay: cfg.MaxCrawlDelay}
	if cfg.Delay == NoDelay {
		pc.Delay, pc.DelayFactor = -1, -1
	}
	return pc
}

// open sets up the stores and components.
func (cr *Crawler) open() error {
	cfg := cr.cfg
	var (
		frontStore  frontier.Store
		robotsStore robots.Store
		fpStore     simhash.Store
		fpTables    simhash.TableStore
	)
	robotsStore, fpStore = cfg.RobotsStore, cfg.FingerprintStore
	if cfg.DataDir != "" {
		db, err := openDataDir(cfg)
		if err != nil {
			return err
		}
		cr.db = db
		if cr.totals, err = loadTotals(cfg.DataDir, cfg.Now()); err != nil {
			return err
		}
		frontStore = db.Frontier()
		if robotsStore == nil {
			robotsStore = db.Robots()
		}
		if fpStore == nil {
			fpTables = db.Fingerprints()
		}
		cr.seenStore = db.Seen()
		cr.names = db.Names()
	}

	guardAllow := cfg.AllowPrivate
	politeness := cfg.Politeness
	if politeness == nil {
		politeness = fetch.NewPoliteness(politenessConfig(cfg))
	}
	if cr.db != nil {
		if err := cr.restorePoliteness(politeness, cfg.Now()); err != nil {
			return err
		}
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
		HostKey:      cr.politeKey,
		MaxBodyBytes: cfg.MaxBodyBytes,
		Header:       header,
		Check:        cr.checkRequest,
		Proxy:        cfg.Proxy,
		RootCAs:      cfg.RootCAs,
		// One attempt per lease: the frontier retries a failing URL on its
		// own clock (RetryBackoff), while the host serves its other URLs;
		// retrying inside the fetch would hold the host for the backoff.
		MaxRetries:        -1,
		MaxPolitenessWait: maxPolitenessWait,
	}
	_, base.KeepWire = cfg.Sink.(ArchiveSink)
	var err error
	if cfg.Cookies {
		if cr.jar, err = openCookieJar(cfg.DataDir, cfg.Now); err != nil {
			return err
		}
		base.Client = &http.Client{Jar: cr.jar}
	}
	if cr.fetcher, err = fetch.New(base); err != nil {
		return fmt.Errorf("crawlkit: %w", err)
	}
	if err := cr.openSession(base); err != nil {
		return err
	}
	// Media and robots.txt fetches go over the page fetcher's connections:
	// a host's robots.txt and its first page then share one connection.
	media := base
	media.ShareConns, media.Client = cr.fetcher, nil
	media.MaxBodyBytes = cfg.MaxMediaBytes
	media.Header = cfg.Header.Clone()
	if cr.mediaFetcher, err = fetch.New(media); err != nil {
		return fmt.Errorf("crawlkit: %w", err)
	}
	// Sitemaps are fetched once, as seeds, outside any lease: a transient
	// failure is retried in the fetch rather than lose the sitemap.
	sm := media
	sm.MaxRetries = 0
	if cr.sitemapFetcher, err = fetch.New(sm); err != nil {
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
	rb.ShareConns, rb.Client = cr.fetcher, nil
	rb.Check = nil
	rpc := politenessConfig(cfg)
	rpc.MaxConcurrent = 1
	rb.Politeness = fetch.NewPoliteness(rpc)
	// A robots.txt request counts toward its host's spacing in the page
	// model, so the first page waits the host's delay (its Crawl-delay
	// too) after it.
	rb.Contacted = politeness.Contacted
	if cfg.PolitenessKey != nil {
		// Its own model stays per host, so that one host's failing
		// robots.txt does not back off the robots.txt of its whole
		// politeness group; its requests count toward the group's
		// spacing in the page model.
		rb.HostKey = urlnorm.Host
		rb.Contacted = func(host string, started, ended time.Time) {
			politeness.Contacted(cr.politeKey(&url.URL{Scheme: "http", Host: host}), started, ended)
		}
	}
	rb.MaxRedirects = -1
	rb.MaxRetries = -1
	rb.MaxBodyBytes = robots.DefaultMaxBytes + 1
	rb.Header = cfg.Header.Clone()
	if cr.robotsFetcher, err = fetch.New(rb); err != nil {
		return fmt.Errorf("crawlkit: %w", err)
	}
	cr.robots = robots.NewCache(robots.Config{
		Fetch:         cr.fetchRobots,
		MaxCrawlDelay: cfg.MaxCrawlDelay,
		Store:         robotsStore,
		OnStoreError: func(origin string, err error) {
			cfg.Logger.Warn("robots store error", "origin", origin, "err", err)
		},
		Now: cfg.Now,
	})

	if cfg.Queue != nil {
		cr.front = guardedQueue{q: cfg.Queue, logger: cfg.Logger}
	} else {
		f, err := frontier.New(frontier.Config{
			Store:            frontStore,
			Prioritizer:      prioritizer(cfg.Prioritizer),
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
		cr.front, cr.ownFront = ownQueue{f}, f
	}

	// A restored block the crawl would outwait holds the host's URLs in
	// the queue; a longer one is left to the fetch, whose HostBlockedError
	// gives each URL up (ReasonMaxWait), as in the Run that saw the block.
	for _, h := range cr.restoredBlocks {
		if h.BlockedUntil.Sub(cfg.Now()) <= cfg.MaxRetryWait {
			cr.front.BlockHost(h.Host, h.BlockedUntil)
		}
	}
	// The seen set's filter is backed by an exact store (seenset.go):
	// the claims and the disk with a DataDir (bloom.New reads the disk's
	// keys into the filter), a set of keys in memory otherwise.
	var exact bloom.Store = bloom.NewMemoryStore()
	if cr.seenStore != nil && cfg.Queue == nil {
		cr.claims = newClaimedStore(cr.seenStore)
		exact = cr.claims
	}
	if cr.seen, err = bloom.New(bloom.Config{Expected: cfg.ExpectedURLs, Store: exact}); err != nil {
		return fmt.Errorf("crawlkit: seen set: %w", err)
	}
	if cfg.NearDuplicateBits > 0 {
		opts := simhash.Config{K: cfg.NearDuplicateBits, Store: fpStore}
		if fpTables != nil {
			opts.Tables = fpTables
		}
		if cr.index, err = simhash.NewIndex(opts); err != nil {
			return fmt.Errorf("crawlkit: fingerprint index: %w", err)
		}
		if fpTables != nil && cr.index.Len() == 0 {
			if err := cr.importFingerprints(cr.db.LegacyFingerprints); err != nil {
				return err
			}
		}
		// At 10^-4 (19 bits per URL), one first fetch in 10 000 is taken
		// for a refetch and goes unindexed (see analyze).
		if cr.analyzed, err = bloom.New(bloom.Config{Expected: cfg.ExpectedURLs, FalsePositiveRate: analyzedFalsePositiveRate}); err != nil {
			return fmt.Errorf("crawlkit: analyzed-page set: %w", err)
		}
	}
	// Only URLs the seen set has not admitted reach the detector, and each
	// fetched page is reported once (analyze keeps refetches from it), so
	// it need not remember URL keys.
	tc := cfg.Trap
	tc.DistinctCandidates = true
	cr.traps = trap.New(tc)
	if cr.db != nil {
		if err := cr.restoreTraps(); err != nil {
			return fmt.Errorf("crawlkit: reading spider-trap state: %w", err)
		}
	}
	if cfg.StateStore != nil {
		if err := cr.shareTraps(); err != nil {
			cr.cfg.Logger.Warn("reading the shared spider-trap state; starting without it", "err", err)
		}
	}
	return nil
}

// importFingerprints copies into the (empty) on-disk index the
// fingerprints a data directory written before the index lived on disk
// keeps in its fingerprint store.
func (cr *Crawler) importFingerprints(forEach func(func(simhash.Entry) error) error) error {
	const batch = 10000
	var buf []simhash.Entry
	flush := func() error {
		err := cr.index.AddBatch(buf)
		buf = buf[:0]
		return err
	}
	err := forEach(func(e simhash.Entry) error {
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
	for _, f := range []*fetch.Fetcher{cr.sessionFetcher, cr.sitemapFetcher, cr.mediaFetcher, cr.robotsFetcher, cr.fetcher} {
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
	if cr.totals != nil {
		errs = append(errs, cr.saveTotals())
	}
	errs = append(errs, cr.jar.save())
	if cr.db != nil && cr.fetcher != nil {
		errs = append(errs, cr.saveState())
	}
	if cr.db != nil && cr.traps != nil {
		errs = append(errs, cr.saveTraps())
	}
	if cr.cfg.StateStore != nil && cr.traps != nil {
		errs = append(errs, cr.shareTraps())
	}
	if cr.db != nil {
		errs = append(errs, cr.db.Close())
	}
	return errors.Join(errs...)
}

// fetchRobots fetches a robots.txt through the robots fetcher (address
// guard, politeness, limits) for the robots cache, and tells the gate how
// it went (noteRobotsFetch).
func (cr *Crawler) fetchRobots(ctx context.Context, rawURL string) (*http.Response, error) {
	if err := cr.waitRate(ctx); err != nil {
		return nil, err
	}
	started := cr.cfg.Now()
	resp, err := cr.robotsFetcher.Fetch(ctx, rawURL)
	if u, perr := url.Parse(rawURL); perr == nil {
		cr.noteRobotsFetch(urlnorm.Host(u), err)
	}
	if err != nil {
		return nil, err
	}
	if as, ok := cr.cfg.Sink.(ArchiveSink); ok {
		if err := callRecovered("sink", func() error { return as.WriteRobots(ctx, started, resp) }); err != nil {
			cr.stats.sinkErrors.Add(1)
			cr.cfg.Logger.Warn("sink failed", "url", rawURL, "err", err)
		}
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

// ownQueue is the Crawler's own frontier as its Queue: the Crawler's seen
// set (on disk with a DataDir) drops known URLs before they reach it.
type ownQueue struct{ *frontier.Frontier }

func (ownQueue) Deduplicates() bool { return true }

// saveTotals writes the crawl's totals to the DataDir.
func (cr *Crawler) saveTotals() error {
	return cr.totals.save(cr.Stats(), cr.cfg.Now())
}
