package robots

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/idna"

	"github.com/crawlkit/crawlkit/fetch"
)

// Defaults of Config.
const (
	DefaultTTL              = 24 * time.Hour      // RFC 9309 §2.4
	DefaultMinTTL           = 5 * time.Minute     // floor for Cache-Control max-age / no-cache
	DefaultMaxEntries       = 10000               // hosts kept in memory
	DefaultMaxCacheBytes    = 256 << 20           // estimated memory of the hosts kept
	DefaultMaxRedirects     = 5                   // RFC 9309 §2.3.1.2
	DefaultMinRetry         = time.Minute         // first retry of an unreachable robots.txt
	DefaultMaxRetry         = time.Hour           // longest retry interval
	DefaultUnreachableLimit = 30 * 24 * time.Hour // RFC 9309 §2.3.1.4
	DefaultFetchTimeout     = 30 * time.Second    // one robots.txt fetch, redirects included
)

// ErrUnsupportedURL is returned for URLs whose robots.txt cannot be
// located: not absolute http or https, or without a host.
var ErrUnsupportedURL = errors.New("robots: unsupported URL")

// FetchFunc performs a single GET of rawURL and returns the response, whose
// body the Cache reads (up to its byte limit) and closes. It must not
// follow redirects: it returns the 3xx response and the Cache follows the
// Location itself, counting hops. A non-nil error means the server could not
// be reached. A crawler can route robots.txt fetches through its own fetcher
// (address guard, DNS cache, politeness) this way.
type FetchFunc func(ctx context.Context, rawURL string) (*http.Response, error)

// Fallback chooses the policy for a robots.txt that has been unreachable
// for longer than Config.UnreachableLimit.
type Fallback uint8

const (
	// FallbackLastGood uses the last copy that was fetched successfully
	// (a parsed file, or allow-all after a 4xx), or allows everything if
	// there is none. This is what RFC 9309 §2.3.1.4 suggests.
	FallbackLastGood Fallback = iota
	// FallbackAllowAll allows everything.
	FallbackAllowAll
	// FallbackDisallowAll keeps disallowing everything.
	FallbackDisallowAll
)

// Config configures a Cache, and parsing (Config.Parse). The zero value is
// usable: it fetches through the fetch package with its address guard on
// and follows RFC 9309 with the defaults above.
type Config struct {
	// Client fetches robots.txt when Fetch is nil. It is used as it is,
	// over whatever addresses its transport reaches: setting one (for
	// example http.DefaultClient, or an httptest server's) is how a Cache
	// is allowed to fetch from loopback and private addresses. The Cache
	// follows redirects itself; the client's CheckRedirect, if any, is
	// still consulted for every hop. With neither Client nor Fetch, each
	// robots.txt is fetched through a fetch.Fetcher made for it, with the
	// fetch package's address guard on (loopback, private, link-local and
	// other non-public addresses refused), its timeouts and body limits,
	// and neither redirects (the Cache follows them) nor retries (the Cache
	// backs off itself): the zero Config is safe on untrusted links.
	Client *http.Client
	// Fetch, when set, is used instead of Client.
	Fetch FetchFunc
	// UserAgent is the User-Agent header sent with Client or the default
	// fetcher ("crawlkit-robots/1.0" when empty there: the fetch package
	// requires one). It is not used with Fetch.
	UserAgent string

	// GoogleExtensions enables leniencies of Google's reference parser that
	// RFC 9309 does not require: common misspellings of directive names
	// ("dissallow", "useragent", "user agent", ...) and directive names that
	// merely start with a known one, a missing ":" when a line has exactly a
	// key and a value, a partial UTF-8 byte order mark, "Allow: /x/index.html"
	// also allowing "/x/", truncation of lines to 16,663 octets, and product
	// tokens that are not valid (they match only the "*" group instead of
	// being rejected).
	GoogleExtensions bool
	// MaxFileBytes is how much of a robots.txt body is read and parsed.
	// When the body is longer it is cut at MaxFileBytes and the partial
	// last line dropped. Zero means DefaultMaxBytes.
	MaxFileBytes int
	// MaxCrawlDelay is the largest Crawl-delay that CrawlDelay.Capped
	// returns; larger values are reported with Exceeded set so the caller
	// can choose between capping and skipping the host. Zero means
	// DefaultMaxCrawlDelay.
	MaxCrawlDelay time.Duration

	// TTL is how long a fetched robots.txt is used before it is fetched
	// again. A shorter Cache-Control max-age (or no-cache / no-store) in
	// the response lowers it, but never below MinTTL. Zero means
	// DefaultTTL.
	TTL time.Duration
	// MinTTL is the floor for TTLs lowered by the response. Zero means
	// DefaultMinTTL.
	MinTTL time.Duration
	// MaxEntries bounds the number of hosts kept in memory; the least
	// recently used are evicted. Zero means DefaultMaxEntries.
	MaxEntries int
	// MaxCacheBytes bounds the estimated memory of the hosts kept in memory;
	// the least recently used are evicted until both bounds hold. An
	// entry's estimate is its parsed policy (rules, groups, and the
	// matcher compiled for one product token), the body the policy is
	// parsed from, and the bookkeeping around it: about 280 octets per
	// rule plus the body, so a 500 KiB file of short rules costs some
	// 8 MiB. A single entry larger than MaxCacheBytes is still returned and
	// kept, but alone: every other entry is evicted for it, and it is the
	// first evicted when the next host arrives. Fetches in progress are
	// not counted. Zero means DefaultMaxCacheBytes.
	MaxCacheBytes int64
	// MaxRedirects is how many redirects are followed; one more makes the
	// file unreachable. Zero means DefaultMaxRedirects.
	MaxRedirects int
	// FetchTimeout bounds one fetch, redirects and body included. Zero
	// means DefaultFetchTimeout.
	FetchTimeout time.Duration
	// MinRetry and MaxRetry bound the backoff between fetches of an
	// unreachable robots.txt: MinRetry after the first failure, doubling
	// up to MaxRetry. Zero means DefaultMinRetry / DefaultMaxRetry.
	MinRetry, MaxRetry time.Duration
	// UnreachableLimit is how long a robots.txt may stay unreachable (all
	// of it disallowed) before Fallback applies. Zero means
	// DefaultUnreachableLimit.
	UnreachableLimit time.Duration
	// Fallback is the policy after UnreachableLimit.
	Fallback Fallback

	// Store, when set, shares fetched files with other caches (or keeps
	// them across restarts). It is consulted before fetching and updated
	// after every fetch.
	Store Store
	// OnStoreError, when set, is told about Store errors. They never
	// change a decision: a failed Get fetches the file, a failed Put only
	// loses the sharing.
	OnStoreError func(origin string, err error)
	// Now returns the current time for Policy and Allowed. Nil means
	// time.Now.
	Now func() time.Time
}

// Store persists robots.txt fetch results under an origin key
// ("https://example.com", "http://example.com:8080"). Implementations must
// be safe for concurrent use. Get reports ok=false for an unknown origin.
//
// A Cache asks its Store before it fetches (an unexpired record is used as
// it is, an expired one keeps the origin's failure history) and puts every
// fetch result there. Store errors are not fatal: the Cache reports them to
// Config.OnStoreError and fetches, or keeps the result in memory only. It
// keeps the Record a Get returns, so the Store must not modify its byte
// slices afterwards.
type Store interface {
	Get(ctx context.Context, origin string) (rec Record, ok bool, err error)
	Put(ctx context.Context, origin string, rec Record) error
}

// Record is the stored result of fetching one origin's robots.txt: enough
// to rebuild its Policy without fetching again, and the history needed for
// the unreachable rules of RFC 9309 §2.3.1.4. Byte slices in a Record must
// not be modified once it has been handed to a Store.
type Record struct {
	// Status is the HTTP status of the final response, 0 if none arrived.
	Status int
	// Body is the response body for a 2xx status (at most the parse limit
	// plus one octet).
	Body []byte
	// URL is the robots.txt URL after redirects.
	URL string
	// Err says why the file was unreachable; "" when it was reachable.
	Err string
	// FetchedAt is when the fetch ended; Expires is when the record should
	// be fetched again.
	FetchedAt, Expires time.Time
	// Failures counts consecutive unreachable fetches.
	Failures int
	// UnreachableSince is when the current run of failures began.
	UnreachableSince time.Time
	// GoodStatus and GoodBody are the last reachable answer (2xx or 4xx),
	// GoodAt when it was fetched; GoodStatus is 0 if there never was one.
	GoodStatus int
	GoodBody   []byte
	GoodAt     time.Time
}

// Reachable reports whether the record's fetch reached the server with an
// answer the RFC treats as final (2xx or 4xx other than 429).
func (r *Record) Reachable() bool { return r.Err == "" && isReachableStatus(r.Status) }

func isReachableStatus(s int) bool {
	return s >= 200 && s < 300 || s >= 400 && s < 500 && s != http.StatusTooManyRequests
}

// FetchInfo describes how a Cache obtained a Policy.
type FetchInfo struct {
	// Origin is the cache key: scheme, host and non-default port.
	Origin string
	// URL is the robots.txt URL after redirects.
	URL string
	// Status is the HTTP status of the final response, 0 if none arrived.
	Status int
	// Err says why the file was unreachable; "" when it was reachable.
	Err string
	// FetchedAt is when the fetch ended; Expires is when the Cache fetches
	// again. For an unreachable file, Expires is the retry time, so a
	// scheduler can leave the host alone until then.
	FetchedAt, Expires time.Time
	// UnreachableSince is when the current run of failed fetches began;
	// zero when the file was reachable.
	UnreachableSince time.Time
	// Fallback reports that the file has been unreachable for longer than
	// the limit and the policy is Config.Fallback's choice.
	Fallback bool
}

// Cache fetches, parses and caches robots.txt per origin. It starts no
// goroutines; concurrent callers asking for the same origin wait for one
// fetch (single flight). Safe for concurrent use.
type Cache struct {
	cfg   Config
	opts  parseOptions
	fetch FetchFunc

	mu       sync.Mutex
	lru      *list.List // of *entry, most recently used first
	entries  map[string]*list.Element
	inflight map[string]*call
	bytes    int64 // sum of the entries' cost
}

// entry is one cached origin. It is not modified once made.
type entry struct {
	origin string
	// rec is the record without its bodies: Body is nil, and GoodBody is
	// nil when goodInPol says that pol was parsed from the same octets.
	rec       Record
	goodInPol bool
	pol       *Policy
	cost      int64 // estimated octets retained (see Config.MaxCacheBytes)
}

// newEntry makes the entry for rec and its policy. Lookups need only the
// policy, and the next fetch only the last good body, which for a parsed
// file is the policy's source: the entry keeps that one copy.
func newEntry(origin string, rec Record, pol *Policy) *entry {
	e := &entry{origin: origin, rec: rec, pol: pol}
	e.rec.Body = nil
	if string(rec.GoodBody) == pol.src {
		e.rec.GoodBody, e.goodInPol = nil, true
	}
	e.cost = entryOverhead + int64(2*len(origin)+len(rec.URL)+len(rec.Err)+len(e.rec.GoodBody)) + pol.memSize()
	return e
}

// record returns the entry's record with its last good body restored (a
// copy); Body stays nil, which is all an expired record is used for.
func (e *entry) record() Record {
	r := e.rec
	if e.goodInPol && e.pol.src != "" {
		r.GoodBody = []byte(e.pol.src)
	}
	return r
}

type call struct {
	done chan struct{}
	ent  *entry
	err  error
}

// NewCache returns a Cache configured by cfg.
func NewCache(cfg Config) *Cache {
	c := &Cache{
		cfg:      cfg,
		opts:     cfg.parseOptions(),
		lru:      list.New(),
		entries:  make(map[string]*list.Element),
		inflight: make(map[string]*call),
	}
	switch {
	case cfg.Fetch != nil:
		c.fetch = cfg.Fetch
	case cfg.Client != nil:
		c.fetch = clientFetch(cfg.Client, cfg.UserAgent)
	default:
		c.fetch = guardedFetch(cfg.UserAgent, c.opts.maxBytes)
	}
	return c
}

// defaultUserAgent is sent by the default fetcher of a Config without a
// UserAgent; the fetch package requires one.
const defaultUserAgent = "crawlkit-robots/1.0"

// guardedFetch is the FetchFunc of a Config without Client or Fetch: a
// fetch.Fetcher per robots.txt, so that the address guard applies and the
// Cache, which has no Close, leaves no goroutine or idle connection
// behind. A robots.txt is fetched once a day or so per origin, so the
// connection it does not reuse costs little.
func guardedFetch(ua string, maxBytes int) FetchFunc {
	return fetchWith(defaultFetchConfig(ua, maxBytes))
}

// defaultFetchConfig is the fetch.Config of guardedFetch: as the crawler's
// robots.txt Fetcher (open.go), no redirects, no retries and the parse
// limit plus the octet that tells a cut line; no politeness delay, since
// the Cache fetches an origin's file once per TTL.
func defaultFetchConfig(ua string, maxBytes int) fetch.Config {
	if strings.TrimSpace(ua) == "" || strings.ContainsAny(ua, "\r\n") {
		ua = defaultUserAgent
	}
	return fetch.Config{
		UserAgent:        ua,
		MaxRedirects:     -1,
		MaxRetries:       -1,
		MaxBodyBytes:     int64(maxBytes) + 1,
		PolitenessConfig: fetch.PolitenessConfig{Delay: -1, DelayFactor: -1},
	}
}

// fetchWith is a FetchFunc over a fetch.Fetcher made from cfg for each
// call.
func fetchWith(cfg fetch.Config) FetchFunc {
	return func(ctx context.Context, rawURL string) (*http.Response, error) {
		f, err := fetch.New(cfg)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		return FetchWith(f)(ctx, rawURL)
	}
}

// clientFetch adapts an *http.Client to a FetchFunc that does not follow
// redirects.
func clientFetch(client *http.Client, ua string) FetchFunc {
	single := *client
	single.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return func(ctx context.Context, rawURL string) (*http.Response, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
		if err != nil {
			return nil, err
		}
		if ua != "" {
			req.Header.Set("User-Agent", ua)
		}
		return single.Do(req)
	}
}

func (c *Cache) now() time.Time {
	if c.cfg.Now != nil {
		return c.cfg.Now()
	}
	return time.Now()
}

// Policy returns the policy for the origin of rawURL, fetching its
// robots.txt if it is not cached or has expired. See PolicyAt.
func (c *Cache) Policy(ctx context.Context, rawURL string) (*Policy, error) {
	return c.PolicyAt(ctx, rawURL, c.now())
}

// Allowed reports whether the crawler with the given product token may
// fetch rawURL, fetching the origin's robots.txt first if needed.
func (c *Cache) Allowed(ctx context.Context, token, rawURL string) (Decision, error) {
	p, err := c.Policy(ctx, rawURL)
	if err != nil {
		return Decision{}, err
	}
	return p.Allowed(token, rawURL)
}

// PolicyAt returns the policy for the origin (scheme, host, port) of
// rawURL as of now. A fetch failure is not an error: it yields the
// disallow-all policy of an unreachable file (see FetchInfo). Errors are
// ErrUnsupportedURL and the context's error when ctx ends first.
func (c *Cache) PolicyAt(ctx context.Context, rawURL string, now time.Time) (*Policy, error) {
	origin, err := Origin(rawURL)
	if err != nil {
		return nil, err
	}
	for {
		c.mu.Lock()
		var old *entry
		if el, ok := c.entries[origin]; ok {
			e := el.Value.(*entry)
			if now.Before(e.rec.Expires) {
				c.lru.MoveToFront(el)
				c.mu.Unlock()
				return e.pol, nil
			}
			old = e
		}
		if cl, ok := c.inflight[origin]; ok {
			c.mu.Unlock()
			select {
			case <-cl.done:
				if cl.err == nil {
					return cl.ent.pol, nil
				}
				// The fetching caller gave up (its context ended); this
				// caller tries in turn.
				continue
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		cl := &call{done: make(chan struct{})}
		c.inflight[origin] = cl
		c.mu.Unlock()

		var prev *Record
		if old != nil {
			r := old.record()
			prev = &r
		}
		ent, err := c.load(ctx, origin, prev, now)

		c.mu.Lock()
		delete(c.inflight, origin)
		if err == nil {
			c.insert(ent)
		}
		c.mu.Unlock()
		cl.ent, cl.err = ent, err
		close(cl.done)
		if err != nil {
			return nil, err
		}
		return ent.pol, nil
	}
}

// insert adds or replaces an entry and evicts the least recently used ones
// until at most MaxEntries remain and their cost is at most MaxCacheBytes, or e
// is the only one left. c.mu must be held.
func (c *Cache) insert(e *entry) {
	if el, ok := c.entries[e.origin]; ok {
		c.bytes -= el.Value.(*entry).cost
		el.Value = e
		c.lru.MoveToFront(el)
	} else {
		c.entries[e.origin] = c.lru.PushFront(e)
	}
	c.bytes += e.cost
	maxEntries, maxBytes := c.cfg.MaxEntries, c.cfg.MaxCacheBytes
	if maxEntries <= 0 {
		maxEntries = DefaultMaxEntries
	}
	if maxBytes <= 0 {
		maxBytes = DefaultMaxCacheBytes
	}
	for c.lru.Len() > 1 && (c.lru.Len() > maxEntries || c.bytes > maxBytes) {
		el := c.lru.Back()
		old := el.Value.(*entry)
		c.lru.Remove(el)
		delete(c.entries, old.origin)
		c.bytes -= old.cost
	}
}

// Len returns the number of origins held in memory.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len()
}

// Bytes returns the estimated memory held by the cached origins, the
// quantity Config.MaxCacheBytes bounds.
func (c *Cache) Bytes() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bytes
}

// load obtains a fresh entry: from the Store if it has an unexpired record,
// else by fetching. prev is the expired in-memory record, if any.
func (c *Cache) load(ctx context.Context, origin string, prev *Record, now time.Time) (*entry, error) {
	if c.cfg.Store != nil {
		// Another cache sharing the store may have fetched the file
		// already; and a record there keeps the history (failures, last
		// good copy) of an origin this cache has evicted.
		rec, ok, err := c.cfg.Store.Get(ctx, origin)
		switch {
		case err != nil:
			c.storeError(origin, fmt.Errorf("robots: store get: %w", err))
		case ok && now.Before(rec.Expires):
			return newEntry(origin, rec, c.policyFor(origin, &rec)), nil
		case ok && (prev == nil || rec.FetchedAt.After(prev.FetchedAt)):
			prev = &rec
		}
	}
	rec, err := c.fetchRecord(ctx, origin, prev, now)
	if err != nil {
		return nil, err
	}
	if c.cfg.Store != nil {
		if err := c.cfg.Store.Put(ctx, origin, rec); err != nil {
			c.storeError(origin, fmt.Errorf("robots: store put: %w", err))
		}
	}
	return newEntry(origin, rec, c.policyFor(origin, &rec)), nil
}

func (c *Cache) storeError(origin string, err error) {
	if c.cfg.OnStoreError != nil {
		c.cfg.OnStoreError(origin, err)
	}
}

// policyFor builds the policy a record stands for (RFC 9309 §2.3.1).
func (c *Cache) policyFor(origin string, rec *Record) *Policy {
	info := FetchInfo{
		Origin: origin, URL: rec.URL, Status: rec.Status, Err: rec.Err,
		FetchedAt: rec.FetchedAt, Expires: rec.Expires, UnreachableSince: rec.UnreachableSince,
	}
	var p *Policy
	switch {
	case rec.Reachable():
		p = c.fromStatus(rec.Status, rec.Body)
	case rec.FetchedAt.Sub(rec.UnreachableSince) >= c.unreachableLimit():
		info.Fallback = true
		switch {
		case c.cfg.Fallback == FallbackDisallowAll:
			p = DisallowAll()
		case c.cfg.Fallback == FallbackLastGood && rec.GoodStatus != 0:
			p = c.fromStatus(rec.GoodStatus, rec.GoodBody)
		default:
			p = AllowAll()
		}
	default:
		p = DisallowAll()
	}
	p.info = info
	return p
}

func (c *Cache) fromStatus(status int, body []byte) *Policy {
	if status >= 200 && status < 300 {
		return parseBody(body, c.opts)
	}
	return AllowAll() // 4xx: unavailable (RFC 9309 §2.3.1.3)
}

func (c *Cache) unreachableLimit() time.Duration {
	if c.cfg.UnreachableLimit > 0 {
		return c.cfg.UnreachableLimit
	}
	return DefaultUnreachableLimit
}

// fetchRecord fetches origin's robots.txt and returns the new record. It
// fails only when ctx ends; every other failure is recorded as unreachable.
func (c *Cache) fetchRecord(ctx context.Context, origin string, prev *Record, now time.Time) (Record, error) {
	timeout := c.cfg.FetchTimeout
	if timeout <= 0 {
		timeout = DefaultFetchTimeout
	}
	fctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	res := c.get(fctx, origin+"/robots.txt")
	if err := ctx.Err(); err != nil {
		return Record{}, err
	}
	// The record is stamped with the caller's now, not the wall clock after
	// the fetch, so expiry and backoff stay a function of the given time.
	rec := Record{Status: res.status, Body: res.body, URL: res.url, FetchedAt: now}
	if res.err != nil {
		rec.Err = res.err.Error()
	} else if !isReachableStatus(res.status) {
		rec.Err = fmt.Sprintf("HTTP status %d", res.status)
	}
	if prev != nil {
		rec.GoodStatus, rec.GoodBody, rec.GoodAt = prev.GoodStatus, prev.GoodBody, prev.GoodAt
	}
	if rec.Reachable() {
		rec.GoodStatus, rec.GoodBody, rec.GoodAt = rec.Status, rec.Body, now
		rec.Expires = now.Add(c.ttl(res.header))
		return rec, nil
	}
	rec.Body = nil
	rec.Failures = 1
	rec.UnreachableSince = now
	if prev != nil && !prev.Reachable() {
		rec.Failures = prev.Failures + 1
		rec.UnreachableSince = prev.UnreachableSince
	}
	rec.Expires = now.Add(c.backoff(rec.Failures))
	return rec, nil
}

// backoff is the wait before fetch number failures+1 of an unreachable
// file: MinRetry doubling up to MaxRetry.
func (c *Cache) backoff(failures int) time.Duration {
	lo, hi := c.cfg.MinRetry, c.cfg.MaxRetry
	if lo <= 0 {
		lo = DefaultMinRetry
	}
	if hi <= 0 {
		hi = DefaultMaxRetry
	}
	d := lo
	for i := 1; i < failures && d < hi; i++ {
		d *= 2
	}
	return min(d, hi)
}

// ttl is Config.TTL, lowered by the response's Cache-Control (RFC 9309
// §2.4 lets crawlers use standard HTTP caching), never below MinTTL.
func (c *Cache) ttl(h http.Header) time.Duration {
	ttl, floor := c.cfg.TTL, c.cfg.MinTTL
	if ttl <= 0 {
		ttl = DefaultTTL
	}
	if floor <= 0 {
		floor = DefaultMinTTL
	}
	if d, ok := maxAge(h.Values("Cache-Control")); ok && d < ttl {
		ttl = min(max(d, floor), ttl)
	}
	return ttl
}

// maxAge reads the freshness lifetime from Cache-Control values: s-maxage
// or max-age, and zero for no-cache and no-store.
func maxAge(values []string) (time.Duration, bool) {
	var (
		age   time.Duration
		found bool
		sAge  bool
	)
	for _, v := range values {
		for _, d := range strings.Split(v, ",") {
			name, val, _ := strings.Cut(strings.TrimSpace(d), "=")
			name = strings.ToLower(strings.TrimSpace(name))
			switch name {
			case "no-cache", "no-store":
				return 0, true
			case "max-age", "s-maxage":
				n, err := strconv.ParseInt(strings.Trim(strings.TrimSpace(val), `"`), 10, 64)
				if err != nil || n < 0 {
					continue
				}
				if sAge && name == "max-age" {
					continue // s-maxage takes precedence for a shared cache
				}
				age, found = time.Duration(min(n, int64(1<<62)/int64(time.Second)))*time.Second, true
				sAge = sAge || name == "s-maxage"
			}
		}
	}
	return age, found
}

// fetchResult is the outcome of get.
type fetchResult struct {
	status int
	body   []byte
	url    string
	header http.Header
	err    error
}

// errTooManyRedirects is recorded when the redirect limit is exceeded.
var errTooManyRedirects = errors.New("robots: too many redirects")

// get fetches robots.txt, following up to MaxRedirects redirects across
// hosts (RFC 9309 §2.3.1.2), and reads at most the parse limit plus one
// octet of a 2xx body.
func (c *Cache) get(ctx context.Context, u string) fetchResult {
	maxRedirects := c.cfg.MaxRedirects
	if maxRedirects <= 0 {
		maxRedirects = DefaultMaxRedirects
	}
	var via []*http.Request
	for hop := 0; ; hop++ {
		resp, err := c.fetch(ctx, u)
		if err != nil {
			return fetchResult{url: u, err: err}
		}
		if resp == nil {
			return fetchResult{url: u, err: errors.New("robots: fetch returned no response")}
		}
		if resp.Body == nil {
			resp.Body = http.NoBody
		}
		if resp.Request != nil {
			via = append(via, resp.Request)
		}
		if isRedirect(resp.StatusCode) {
			resp.Body.Close()
			loc := resp.Header.Get("Location")
			if loc == "" {
				return fetchResult{status: resp.StatusCode, url: u, err: fmt.Errorf("robots: HTTP %d without Location", resp.StatusCode)}
			}
			if hop == maxRedirects {
				return fetchResult{status: resp.StatusCode, url: u, err: fmt.Errorf("%w: more than %d", errTooManyRedirects, maxRedirects)}
			}
			next, err := resolveRedirect(u, loc)
			if err != nil {
				return fetchResult{status: resp.StatusCode, url: u, err: err}
			}
			if err := c.checkRedirect(ctx, next, via); err != nil {
				return fetchResult{status: resp.StatusCode, url: u, err: err}
			}
			u = next
			continue
		}
		res := fetchResult{status: resp.StatusCode, url: u, header: resp.Header}
		if resp.StatusCode >= 200 && resp.StatusCode < 300 {
			limit := int64(c.opts.maxBytes) + 1
			res.body, res.err = io.ReadAll(io.LimitReader(resp.Body, limit))
			if res.err != nil {
				res.err = fmt.Errorf("robots: reading body: %w", res.err)
			}
		}
		resp.Body.Close()
		return res
	}
}

// checkRedirect consults the configured client's own redirect policy.
func (c *Cache) checkRedirect(ctx context.Context, next string, via []*http.Request) error {
	if c.cfg.Fetch != nil || c.cfg.Client == nil || c.cfg.Client.CheckRedirect == nil || len(via) == 0 {
		return nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, next, nil)
	if err != nil {
		return err
	}
	return c.cfg.Client.CheckRedirect(req, via)
}

func isRedirect(status int) bool {
	switch status {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther,
		http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		return true
	}
	return false
}

func resolveRedirect(base, loc string) (string, error) {
	b, err := url.Parse(base)
	if err != nil {
		return "", err
	}
	l, err := url.Parse(loc)
	if err != nil {
		return "", fmt.Errorf("robots: bad redirect Location %q: %w", loc, err)
	}
	n := b.ResolveReference(l)
	if n.Scheme != "http" && n.Scheme != "https" {
		return "", fmt.Errorf("%w: redirect to %q", ErrUnsupportedURL, n.String())
	}
	return n.String(), nil
}

// Origin returns the cache key of rawURL's robots.txt: lower-case scheme,
// host in lower-case ASCII (IDNA), and the port unless it is the scheme's
// default. RFC 9309 §2.3: a robots.txt applies to one scheme, host and port.
func Origin(rawURL string) (string, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrUnsupportedURL, err)
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		return "", fmt.Errorf("%w: %q is not an http(s) URL", ErrUnsupportedURL, rawURL)
	}
	host := u.Hostname()
	if host == "" {
		return "", fmt.Errorf("%w: %q has no host", ErrUnsupportedURL, rawURL)
	}
	if strings.Contains(host, ":") {
		host = "[" + strings.ToLower(host) + "]" // IPv6 literal
	} else {
		h, err := idna.Lookup.ToASCII(host)
		if err != nil {
			return "", fmt.Errorf("%w: host %q: %w", ErrUnsupportedURL, host, err)
		}
		host = strings.TrimSuffix(strings.ToLower(h), ".")
	}
	port := u.Port()
	if port == "" || scheme == "http" && port == "80" || scheme == "https" && port == "443" {
		return scheme + "://" + host, nil
	}
	return scheme + "://" + host + ":" + port, nil
}

// MemoryStore is an in-memory Store, bounded by record count and by the
// bytes its records hold, evicting the least recently written until both
// bounds hold. Safe for concurrent use.
//
// The byte bound matters because a record carries up to two robots.txt
// bodies (Body and GoodBody, each up to the parse limit): 10 000 records
// of 500 KiB files would otherwise hold some 10 GiB.
type MemoryStore struct {
	mu       sync.Mutex
	max      int
	maxBytes int64
	bytes    int64
	recs     map[string]*list.Element
	order    *list.List // of memRec, most recently written first
}

type memRec struct {
	origin string
	rec    Record
	size   int64
}

// memRecOverhead approximates what a record costs beyond its strings and
// bodies: the Record and list element, the map entry, the slice headers.
const memRecOverhead = 256

// recordBytes is what MemoryStore counts for a record under origin: its
// strings and bodies, a body shared by Body and GoodBody once.
func recordBytes(origin string, rec Record) int64 {
	n := int64(memRecOverhead + len(origin) + len(rec.URL) + len(rec.Err) + cap(rec.Body))
	if len(rec.GoodBody) == 0 || len(rec.Body) == 0 || &rec.GoodBody[0] != &rec.Body[0] {
		n += int64(cap(rec.GoodBody))
	}
	return n
}

// NewMemoryStore returns a MemoryStore holding at most max records (0 or
// less means DefaultMaxEntries) and DefaultMaxCacheBytes of them.
func NewMemoryStore(max int) *MemoryStore {
	return NewMemoryStoreSize(max, 0)
}

// NewMemoryStoreSize returns a MemoryStore holding at most maxRecords
// records (0 or less means DefaultMaxEntries) and at most maxBytes bytes
// of them (0 or less means DefaultMaxCacheBytes). A record is counted by
// its bodies, strings and a fixed overhead of some 256 bytes. A single
// record larger than maxBytes is kept, alone, until the next Put of
// another origin evicts it.
func NewMemoryStoreSize(maxRecords int, maxBytes int64) *MemoryStore {
	if maxRecords <= 0 {
		maxRecords = DefaultMaxEntries
	}
	if maxBytes <= 0 {
		maxBytes = DefaultMaxCacheBytes
	}
	return &MemoryStore{max: maxRecords, maxBytes: maxBytes, recs: make(map[string]*list.Element), order: list.New()}
}

// Get implements Store.
func (s *MemoryStore) Get(_ context.Context, origin string) (Record, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	el, ok := s.recs[origin]
	if !ok {
		return Record{}, false, nil
	}
	return el.Value.(*memRec).rec, true, nil
}

// Put implements Store.
func (s *MemoryStore) Put(_ context.Context, origin string, rec Record) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	size := recordBytes(origin, rec)
	if el, ok := s.recs[origin]; ok {
		mr := el.Value.(*memRec)
		s.bytes += size - mr.size
		mr.rec, mr.size = rec, size
		s.order.MoveToFront(el)
	} else {
		s.recs[origin] = s.order.PushFront(&memRec{origin: origin, rec: rec, size: size})
		s.bytes += size
	}
	// Evict from the back, never the record just written.
	for s.order.Len() > 1 && (s.order.Len() > s.max || s.bytes > s.maxBytes) {
		el := s.order.Back()
		mr := el.Value.(*memRec)
		s.order.Remove(el)
		delete(s.recs, mr.origin)
		s.bytes -= mr.size
	}
	return nil
}

// Bytes returns the bytes the records held are counted for (see
// NewMemoryStoreSize).
func (s *MemoryStore) Bytes() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bytes
}

// Len returns the number of records held.
func (s *MemoryStore) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.order.Len()
}
