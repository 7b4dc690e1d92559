package crawlkit

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"net/netip"
	"net/url"
	"regexp"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/crawlkit/crawlkit/fetch"
	"github.com/crawlkit/crawlkit/frontier"
	"github.com/crawlkit/crawlkit/httpcache"
	"github.com/crawlkit/crawlkit/robots"
	"github.com/crawlkit/crawlkit/simhash"
	"github.com/crawlkit/crawlkit/trap"
	"github.com/crawlkit/crawlkit/urlnorm"
)

// ErrConfig is wrapped by every error New returns for an unusable Config.
var ErrConfig = errors.New("crawlkit: invalid config")

// Scope says which discovered URLs a crawl follows.
type Scope int

const (
	// ScopeSameHost follows links to the hosts of the seeds only (the
	// default).
	ScopeSameHost Scope = iota
	// ScopeSameDomain follows links to any host under the registrable
	// domains of the seeds (www.example.com and blog.example.com for a
	// seed on example.com).
	ScopeSameDomain
	// ScopeAny follows links to any host.
	ScopeAny
)

// String returns the scope's flag name: "host", "domain" or "any".
func (s Scope) String() string {
	switch s {
	case ScopeSameHost:
		return "host"
	case ScopeSameDomain:
		return "domain"
	case ScopeAny:
		return "any"
	}
	return fmt.Sprintf("Scope(%d)", int(s))
}

// ParseScope parses a scope's flag name ("host", "domain", "any").
func ParseScope(s string) (Scope, error) {
	switch strings.ToLower(s) {
	case "host", "":
		return ScopeSameHost, nil
	case "domain":
		return ScopeSameDomain, nil
	case "any":
		return ScopeAny, nil
	}
	return 0, fmt.Errorf("%w: unknown scope %q (want host, domain or any)", ErrConfig, s)
}

// CrawlDelayPolicy says what to do with a host whose robots.txt asks for a
// Crawl-delay longer than Config.MaxCrawlDelay.
type CrawlDelayPolicy int

const (
	// CapCrawlDelay crawls the host at MaxCrawlDelay (the default).
	CapCrawlDelay CrawlDelayPolicy = iota
	// SkipSlowHosts does not crawl the host at all; its URLs are settled
	// as blocked by robots.txt, and so are redirects to it.
	SkipSlowHosts
)

// Config configures a Crawler. Only UserAgent and Seeds are required; every
// zero field takes a safe, polite default: robots.txt obeyed, one request
// per second and one connection per host, private addresses refused, bodies
// limited to 10 MiB.
type Config struct {
	// UserAgent identifies the crawler on every request. It should give
	// a contact, for example "examplebot/1.0 (+https://example.com/bot)".
	// The robots.txt product token is RobotsToken, or else derived from
	// it: its leading token ("examplebot"), or in the browser-compatible
	// form "Mozilla/5.0 (compatible; examplebot/1.0; +https://…)" the
	// first token of the comment that is not "compatible". New refuses a
	// UserAgent whose only token is a browser's ("Mozilla"): name the
	// crawler's token with RobotsToken.
	UserAgent string
	// RobotsToken is the product token robots.txt groups are matched
	// against (RFC 9309 §2.2.1: letters, '-' and '_' only; New refuses a
	// token with a digit, such as "mybot2"). Empty derives it from
	// UserAgent.
	RobotsToken string
	// Seeds are the URLs the crawl starts from (depth 0).
	Seeds []string

	// Scope limits which hosts are followed; ScopeFunc, if set, replaces
	// it and is called for every normalized candidate URL: seeds, links,
	// sitemap entries, and every URL requested (redirect targets and
	// sitemaps too), always in its urlnorm.Normalize form, so one URL is
	// judged the same however a page or a Location header spells it. A
	// redirect target that does not normalize is out of scope. What is
	// requested is the URL as the server named it.
	Scope     Scope
	ScopeFunc func(u *url.URL) bool
	// MaxDepth is the most links followed from a seed; 0 means no limit.
	MaxDepth int
	// MaxPages stops the crawl after this many pages were fetched: fetches
	// that got an HTTP response, of any status (a 304 Not Modified
	// included), or one refused once it came (a redirect to a URL the
	// crawl does not follow, too many redirects, headers or a body over
	// the limits, an unknown or broken Content-Encoding), which Stats'
	// URLs.Fetched does not count. Requests that got no response (a host
	// that does not resolve, a refused connection, a timeout) and URLs
	// robots.txt disallows do not count. 0 means no limit.
	MaxPages int
	// Workers is the number of pages fetched at once (default
	// DefaultWorkers, 64: at 200 ms per response that is up to 320 pages
	// a second, when that many hosts are ready). The frontier leases a
	// host's URLs to at most MaxConnsPerHost workers at a time (one by
	// default), so more workers than that many per host add nothing; an
	// idle worker costs a parked goroutine. A page that must wait for its
	// host first (its delay after the host's robots.txt fetch) waits
	// without its worker, which takes another URL meanwhile: up to 16 ×
	// Workers such pages (Stats.Workers.Parked), so up to 17 × Workers
	// URLs are leased at once, never more than Workers fetched.
	Workers int

	// Delay is the least time between two requests to one host (default
	// 1 s; NoDelay for none, for sites you run). A robots.txt Crawl-delay
	// or a slow server raises it per host; the Crawl-delay applies to
	// every request to the host, those of redirects from other hosts, of
	// sitemaps and of its robots.txt included. With a Queue, Delay is
	// refused unless Politeness is set: the queue schedules hosts by its
	// own politeness model, which Delay cannot reach.
	Delay time.Duration
	// MaxConnsPerHost is the most requests in flight to one host
	// (default 1).
	MaxConnsPerHost int
	// MaxCrawlDelay caps a robots.txt Crawl-delay (default 30 s); what
	// happens above it is CrawlDelayPolicy's choice.
	MaxCrawlDelay    time.Duration
	CrawlDelayPolicy CrawlDelayPolicy

	// DangerouslyIgnoreRobotsTxt turns robots.txt off. Crawling sites
	// against their operators' wishes gets crawlers blocked and can be
	// unlawful; set it only for sites you control.
	DangerouslyIgnoreRobotsTxt bool
	// RobotsRetries is how many times a URL whose host's robots.txt is
	// unreachable (5xx, 429, network error: all of the host is disallowed,
	// RFC 9309 §2.3.1.4) is put back to wait for the next robots.txt
	// fetch before it is dropped (default 3; negative: dropped at once).
	// A URL that redirects to such a host is put back the same way.
	RobotsRetries int
	// MaxRetryWait bounds how long a URL is put off for a wait its server
	// imposes: a Retry-After, a host block, an unreachable robots.txt's
	// next fetch. A URL whose next attempt would be further away is given
	// up (Reason MaxWait) rather than kept, so that a crawl whose only
	// work left is such waits ends in minutes (default 5 min; RFC 9309
	// §2.3.1.4 asks only that an unreachable robots.txt's host is not
	// crawled, which giving its URLs up respects). Raise it for long
	// crawls that should outwait an outage.
	MaxRetryWait time.Duration
	// FollowNofollow follows links of pages marked nofollow (meta robots
	// or X-Robots-Tag) and links marked rel=nofollow. By default they are
	// not followed.
	FollowNofollow bool
	// SkipDuplicateLinks does not follow the links of pages whose content
	// is a near-duplicate of another page already fetched. By default they
	// are followed.
	SkipDuplicateLinks bool
	// NearDuplicateBits is the SimHash distance at or under which a page
	// is a near-duplicate of an earlier one (default 3, at most 4;
	// negative turns near-duplicate detection off). A page's fingerprint
	// is indexed at its first fetch in a Run, unless it is a duplicate; a
	// page fetched again (Recrawl, a retry) is compared with the other
	// pages' fingerprints, never its own, and its index entry keeps the
	// first fetch's fingerprint.
	NearDuplicateBits int
	// SitemapSeeds also seeds the crawl with the page URLs of the sitemaps
	// listed in the seeds' robots.txt files. Sitemaps are fetched like
	// media; one larger than MaxMediaBytes is skipped, with a warning.
	SitemapSeeds bool
	// LLMsTxtSeeds also seeds the crawl with the links of each seed
	// origin's /llms.txt (https://llmstxt.org), fetched like a sitemap
	// once robots.txt allows it; a link it cannot resolve is counted
	// (ReasonInvalidURL) and the rest are admitted like links.
	LLMsTxtSeeds bool
	// MediaTypes lists the content types of media links (images, video,
	// audio and embedded documents: the src and srcset of img and source
	// elements, the src of video, audio and embed elements and the poster
	// of video elements; object elements are not read) to fetch, such as
	// "image/*" or "application/pdf".
	// Media links are always recorded on the Page; by default none is
	// fetched. MaxMediaBytes bounds a media body (default 50 MiB).
	MediaTypes    []string
	MaxMediaBytes int64

	// MaxLinksPerPage is the most links read from one page (default
	// 100 000: generated API indexes link to tens of thousands of pages).
	// The links of a page over it are cut, and the page is counted in
	// Stats.URLs.LinksTruncated and logged.
	MaxLinksPerPage int
	// MaxBodyBytes bounds an HTML page (default 10 MiB); longer pages are
	// truncated and marked so.
	MaxBodyBytes int64
	// AllowPrivate lets the address guard pass these prefixes, for
	// intranet crawls and local test webs. The guard refuses loopback,
	// private, link-local and other non-public addresses otherwise.
	AllowPrivate []netip.Prefix
	// DialContext, if set, makes every connection (for example crawltest's
	// Web.DialContext, which routes virtual hosts to a local server).
	DialContext fetch.DialFunc
	// RootCAs, if set, are the certificate authorities HTTPS servers are
	// verified against instead of the system's, for a site with a
	// private CA (fetch.Config.RootCAs); verification is never off.
	RootCAs *x509.CertPool
	// Header holds extra request headers sent with every request.
	Header http.Header

	// DataDir, if set, keeps the crawl's state (frontier, seen URLs,
	// fingerprints, robots.txt files, politeness and trap state) in a
	// DataStore in that directory, so a crawl survives a crash and a later
	// Run with the same DataDir resumes it. Empty keeps everything in
	// memory. It needs a DataStore linked in: import package datadir
	// (Pebble), or New fails with ErrNoDataStore.
	DataDir string
	// DataDirCacheBytes is the size of the DataDir store's block cache
	// (Pebble's, allocated outside the Go heap; default 64 MiB). It is
	// the one part of a DataDir crawl's memory that fills up as the crawl
	// grows, up to this bound: a larger cache saves disk reads of the
	// frontier and the near-duplicate tables, a smaller one saves memory.
	DataDirCacheBytes int64
	// ExpectedURLs sizes the seen-URL set (default 1 million); it grows
	// past that without losing precision.
	ExpectedURLs uint64

	// Queue, if set, is the frontier the crawl leases from, instead of a
	// frontier.Frontier of the Crawler's own (see Queue). It lets several
	// crawler processes share one crawl. The caller closes it after Run.
	// If it is an Extender, as the PostgreSQL and Redis queues are, the
	// Crawler keeps each lease alive while it works on the URL, so the
	// queue's lease duration need only cover a pause of the worker, not
	// the slowest fetch; otherwise the lease must outlast the work.
	Queue Queue
	// RobotsStore and FingerprintStore, if set, keep robots.txt files and
	// content fingerprints in a store of the caller's (for example the
	// PostgreSQL or Redis one of a shared crawl, so that processes fetch a
	// robots.txt once between them and see each other's near-duplicates).
	// Nil uses the DataDir's Pebble store, or memory. With a
	// FingerprintStore the near-duplicate index is rebuilt in memory from
	// it at Run (about 60 bytes per page); with a DataDir and no
	// FingerprintStore the index's tables live on disk (simhash
	// Options.Tables), so the Crawler's memory does not grow with the
	// pages it fingerprints.
	RobotsStore      robots.Store
	FingerprintStore simhash.Store
	// AllowURLs and DenyURLs filter URLs after the Scope: a URL (in its
	// normalized form) matching any DenyURLs pattern, or none of a
	// non-empty AllowURLs, is not fetched (ReasonFilter), redirect
	// targets included. Glob writes a pattern in shell style.
	AllowURLs, DenyURLs []*regexp.Regexp
	// Cookies keeps the cookies sites set, per crawl, in memory
	// (net/http/cookiejar with the public suffix list), and sends them
	// back as a browser would, so that a site that needs a session cookie
	// can be crawled. Off by default: a crawler usually should not be
	// tracked from page to page. With a DataDir they are saved in it
	// (session cookies too: a crawl's session spans its Runs), every
	// second and when Run returns, and a later Run starts with them;
	// without one they are not kept across Runs.
	Cookies bool
	// Login signs the crawl in to hosts (keyed as HostHeader is): a
	// host's LoginFunc is called once, before the first page request of
	// the host, by the worker that leased it (the host's other workers
	// wait), and posts a form or JSON through its Session; the cookies
	// the answers set go with the host's requests afterwards. A login
	// that fails leaves the host's URLs unfetched for the Run
	// (ReasonLoginFailed), said once at Info. Login implies Cookies.
	// Without a DataDir every Run logs in again; with one, a host logged
	// in by an earlier Run less than 12 hours ago is not logged in again
	// while a cookie of its domain saved then is live (servers forget
	// sessions too, and a session cookie does not say when). The crawl
	// itself never submits a form: its page requests are GET only.
	Login map[string]LoginFunc
	// HostHeader adds headers to the page requests of one host (keyed by
	// host as urlnorm.Host gives it: lower case, default port dropped),
	// for an API key or an Authorization (see BasicAuth, BearerAuth).
	// They are not sent with a redirect to another host.
	HostHeader map[string]http.Header
	// BeforeRequest, if set, sees each page request before it is sent:
	// it may change its headers, or return ErrSkip to leave the URL
	// unfetched (ReasonSkipped); another error puts the URL back to be
	// fetched later, like a Handler error.
	BeforeRequest func(ctx context.Context, r *Request) error
	// OnError, if set, hears of every page fetch that got no answer (a
	// network error, a timeout, the address guard, a body over its
	// limit), with the fetch's error; the URL's Reason is counted as
	// always. The Handler sees every answer, whatever its status.
	OnError func(ctx context.Context, url string, err error)
	// Proxy, if set, sends the crawl's requests (pages, robots.txt,
	// sitemaps) through proxies, chosen per request as http.Transport's
	// Proxy does: http.ProxyURL for one, http.ProxyFromEnvironment for
	// HTTP_PROXY/NO_PROXY, fetch.RotateProxies or fetch.ProxyPerHost for
	// several (HTTP, HTTPS and SOCKS5 proxy URLs). The address guard still
	// checks each target before it is handed to the proxy, by the target's
	// own DNS answers; the proxy resolves the name again itself, which the
	// guard cannot see (see fetch.Config.Transport).
	Proxy func(*http.Request) (*url.URL, error)
	// MaxRequestsPerSecond caps the requests of the whole crawl (pages,
	// redirect hops, robots.txt files, sitemaps), across hosts, on top of
	// each host's politeness; zero means no cap. For a crawl that must
	// stay under a network or proxy budget.
	MaxRequestsPerSecond float64
	// StateStore, if set, keeps the spider-trap detector's learning in a
	// store of the caller's, merged with what the other processes of a
	// shared crawl learned, every second and at the end of Run (see
	// StateStore). The PostgreSQL and Redis stores have one. Nil keeps it
	// in the DataDir, or in memory.
	StateStore StateStore
	// Politeness, if set, is the per-host politeness model the fetcher
	// records into and the frontier schedules by; pass the same one to a
	// shared Queue. Nil makes one from Delay, MaxConnsPerHost and
	// MaxCrawlDelay.
	Politeness *fetch.Politeness
	// PolitenessKey maps a URL to the key of the politeness clock it
	// goes by, and of its group in the queue (the frontier leases a key's
	// URLs to MaxConnsPerHost workers at a time; a distributed queue
	// partitions by it). Nil means its host (urlnorm.Host): one clock per
	// host. PolitenessByDomain shares one clock among the hosts of a
	// registrable domain, PolitenessByAddress among the hosts on one IP
	// address, for sites that serve many host names from one server.
	// robots.txt, Crawl-delay, scope, logins and host statistics stay per
	// host; a Crawl-delay or Retry-After of one host spaces its whole group.
	PolitenessKey func(*url.URL) string

	// RetryBackoff is the wait before the first retry of a URL whose
	// fetch failed transiently (network error, 5xx, 429 without
	// Retry-After) or whose Handler failed; it doubles with each attempt
	// up to an hour. Zero means 30 s. MaxAttempts bounds the attempts of
	// a URL (default 5). Both configure the Crawler's own frontier; with
	// Queue set they are not used, and the queue's own options (such as
	// postgres.QueueConfig's RetryBase and MaxAttempts) apply instead.
	RetryBackoff time.Duration
	MaxAttempts  int

	// Prioritizer orders the frontier (default breadth first by depth).
	Prioritizer frontier.Prioritizer
	// Recrawl, if set, schedules successful pages to be fetched again
	// (frontier.FixedInterval, frontier.Adaptive); Run then never drains
	// and returns when ctx is done or MaxPages is reached.
	//
	// Prioritizer and Recrawl, like RetryBackoff and MaxAttempts,
	// configure the Crawler's own frontier: with Queue set they are not
	// used; give them to the queue (the Prioritizer and Schedule of
	// postgres.QueueConfig or redis.QueueConfig). New refuses Recrawl
	// with a Queue, since a crawl that silently never recrawls is hard to
	// notice.
	Recrawl frontier.Schedule
	// Trap configures spider-trap detection. The Crawler judges each URL
	// once (its seen set answers the rest) and reports each page's content
	// to the detector once per Run, at the page's first fetch with text, so
	// it always sets DistinctCandidates: the detector keeps counts, not a
	// key per URL. A page fetched again (Recrawl, a retry after a Handler
	// error) is not reported again, so it does not count as another URL
	// serving its own content; a page whose content changes is judged by
	// its first content. Content is reported only with near-duplicate
	// detection on (NearDuplicateBits not negative).
	Trap trap.Config
	// Cache, if set, answers page requests from an on-disk response
	// cache (httpcache.Open), for developing a Handler without fetching
	// the same pages again and again: a fresh entry (RFC 9111 §4.2) is
	// served without a request, a stale one is revalidated with a
	// conditional request whose 304 serves the stored body, and new
	// answers are stored. Robots.txt is still obeyed and every page still
	// goes to the Handler; Stats.URLs.CacheHits counts the pages answered
	// from it. Off (nil) by default: a crawl should see what servers
	// serve now.
	Cache *httpcache.Cache
	// Render, if set, renders the pages whose links need JavaScript in a
	// headless browser and follows the rendered DOM's links (see
	// RenderConfig). Nil renders nothing.
	Render *RenderConfig
	// Usage reads the usage preferences of the pages (Page.Usage) and
	// applies them (see UsagePolicy). The zero value reads none.
	Usage UsagePolicy

	// Handler is called for every fetched page, from the worker that
	// fetched it, before the page's links are queued: it may select in
	// the page (Page.Find, Each), skip links (Link.Skip) and add URLs
	// (Page.Enqueue). An error puts the URL back to be fetched again later
	// (up to the frontier's attempt limit), so a failing store loses
	// nothing; the page's links are queued all the same.
	Handler Handler
	// Sink, if set, receives every fetch as well, after Handler (for
	// example a WARCSink).
	Sink Sink

	// Logger receives the crawl's account of itself: at Debug every link
	// not followed and every URL not fetched or put off, with its Reason;
	// at Info each rule that stops a whole host or URL pattern, once; at
	// Warn store, Handler and Sink failures. Nil discards it.
	Logger *slog.Logger
	// Now is the crawler's clock; nil means time.Now.
	Now func() time.Time
	// ShutdownGrace is how long pages already being fetched when ctx is
	// cancelled may take to finish (default 10 s); after it their leases
	// are left to expire and are fetched again by the next Run.
	ShutdownGrace time.Duration
}

// Handler receives fetched pages.
type Handler func(ctx context.Context, p *Page) error

// Defaults applied by New.
const (
	DefaultWorkers         = 64
	DefaultDelay           = time.Second
	DefaultMaxCrawlDelay   = 30 * time.Second
	DefaultRobotsRetries   = 3
	DefaultMaxMediaBytes   = 50 << 20
	DefaultMaxBodyBytes    = 10 << 20
	DefaultExpectedURLs    = 1 << 20
	DefaultShutdownGrace   = 10 * time.Second
	DefaultMaxAttempts     = frontier.DefaultMaxAttempts
	DefaultMaxRetryWait    = 5 * time.Minute
	DefaultMaxLinksPerPage = 100_000
)

// NoDelay as Config.Delay asks for no delay between requests to a host
// (the zero value means the 1 s default). Use it only on sites you run.
const NoDelay time.Duration = -1

// maxWorkers bounds Config.Workers: each worker is a goroutine with
// buffers of up to MaxBodyBytes, and more than this many requests in
// flight from one process is a denial of service, not a crawl.
const maxWorkers = 4096

// withDefaults returns c with zero fields set to their defaults, or an
// error naming the first unusable field.
func (c Config) withDefaults() (Config, error) {
	if c.UserAgent == "" {
		return c, fmt.Errorf("%w: UserAgent is required (name the crawler and a contact, e.g. \"examplebot/1.0 (+https://example.com/bot)\")", ErrConfig)
	}
	if i := badHeaderByte(c.UserAgent); i >= 0 {
		return c, fmt.Errorf("%w: UserAgent has a control byte %q at %d", ErrConfig, c.UserAgent[i], i)
	}
	if c.RobotsToken == "" {
		c.RobotsToken = productToken(c.UserAgent)
		if browserToken(c.RobotsToken) {
			return c, fmt.Errorf("%w: UserAgent %q names a browser's token (%q) where robots.txt needs the crawler's: set RobotsToken, e.g. \"examplebot\", or use the form \"Mozilla/5.0 (compatible; examplebot/1.0; +https://example.com/bot)\"", ErrConfig, c.UserAgent, c.RobotsToken)
		}
	}
	if err := c.Usage.check(); err != nil {
		return c, err
	}
	if !robots.ValidProductToken(c.RobotsToken) {
		return c, fmt.Errorf("%w: robots.txt product token %q (RobotsToken, or the start of UserAgent %q) is not letters, '-' and '_' only (RFC 9309 §2.2.1: no digits)", ErrConfig, c.RobotsToken, c.UserAgent)
	}
	for k, vs := range c.Header {
		for _, v := range vs {
			if i := badHeaderByte(v); i >= 0 {
				return c, fmt.Errorf("%w: Header %q has a control byte %q at %d", ErrConfig, k, v[i], i)
			}
		}
	}
	for host, h := range c.HostHeader {
		for k, vs := range h {
			for _, v := range vs {
				if i := badHeaderByte(v); i >= 0 {
					return c, fmt.Errorf("%w: HostHeader[%q] %q has a control byte %q at %d", ErrConfig, host, k, v[i], i)
				}
			}
		}
	}
	if err := checkLoginHosts(c.Login); err != nil {
		return c, err
	}
	if len(c.Login) > 0 {
		c.Cookies = true
	}
	if len(c.Seeds) == 0 {
		return c, fmt.Errorf("%w: no Seeds", ErrConfig)
	}
	if c.Queue != nil && c.Recrawl != nil {
		return c, fmt.Errorf("%w: Recrawl schedules the Crawler's own frontier and is not used with a Queue; give the queue its recrawl schedule (postgres.QueueConfig.Schedule, redis.QueueConfig.Schedule)", ErrConfig)
	}
	if c.Queue != nil {
		var dedup bool
		if err := callRecovered("queue", func() error { dedup = c.Queue.Deduplicates(); return nil }); err != nil {
			return c, fmt.Errorf("%w: Queue.Deduplicates: %w", ErrConfig, err)
		}
		if !dedup {
			return c, fmt.Errorf("%w: Queue does not deduplicate (Deduplicates is false): a second Run would fetch every page again; leave Queue nil for the Crawler's own frontier", ErrConfig)
		}
	}
	if c.Queue != nil && c.Delay != 0 && c.Politeness == nil {
		return c, fmt.Errorf("%w: Delay does not reach a Queue's schedule; make one politeness model, fetch.NewPoliteness(fetch.PolitenessConfig{Delay: …}), and pass it as Config.Politeness and as the queue's Politeness (postgres.QueueConfig.Politeness, redis.QueueConfig.Politeness)", ErrConfig)
	}
	if c.Workers > maxWorkers {
		return c, fmt.Errorf("%w: Workers %d is above %d", ErrConfig, c.Workers, maxWorkers)
	}
	if c.Scope < ScopeSameHost || c.Scope > ScopeAny {
		return c, fmt.Errorf("%w: unknown Scope %d", ErrConfig, int(c.Scope))
	}
	if c.MaxDepth < 0 || c.MaxPages < 0 || c.Workers < 0 || c.MaxConnsPerHost < 0 || c.MaxLinksPerPage < 0 {
		return c, fmt.Errorf("%w: MaxDepth, MaxPages, Workers, MaxConnsPerHost and MaxLinksPerPage must not be negative", ErrConfig)
	}
	if c.MaxRequestsPerSecond < 0 || math.IsNaN(c.MaxRequestsPerSecond) {
		return c, fmt.Errorf("%w: MaxRequestsPerSecond %v: must be zero (no cap) or positive", ErrConfig, c.MaxRequestsPerSecond)
	}
	for i, re := range append(slices.Clone(c.AllowURLs), c.DenyURLs...) {
		if re == nil {
			return c, fmt.Errorf("%w: AllowURLs/DenyURLs: pattern %d is nil", ErrConfig, i)
		}
	}
	if (c.Delay < 0 && c.Delay != NoDelay) || c.MaxCrawlDelay < 0 || c.RetryBackoff < 0 || c.MaxRetryWait < 0 {
		return c, fmt.Errorf("%w: Delay (NoDelay aside), MaxCrawlDelay, RetryBackoff and MaxRetryWait must not be negative", ErrConfig)
	}
	if c.MaxBodyBytes < 0 || c.MaxMediaBytes < 0 || c.ShutdownGrace < 0 {
		return c, fmt.Errorf("%w: MaxBodyBytes, MaxMediaBytes and ShutdownGrace must not be negative", ErrConfig)
	}
	if c.CrawlDelayPolicy != CapCrawlDelay && c.CrawlDelayPolicy != SkipSlowHosts {
		return c, fmt.Errorf("%w: unknown CrawlDelayPolicy %d", ErrConfig, int(c.CrawlDelayPolicy))
	}
	if c.DataDir != "" && registeredDataDir() == nil {
		return c, fmt.Errorf("%w: %w", ErrConfig, ErrNoDataStore)
	}
	if c.DataDirCacheBytes < 0 {
		return c, fmt.Errorf("%w: DataDirCacheBytes %d must not be negative", ErrConfig, c.DataDirCacheBytes)
	}
	if c.MaxAttempts < 0 || c.MaxAttempts > 255 {
		return c, fmt.Errorf("%w: MaxAttempts %d is outside 0..255", ErrConfig, c.MaxAttempts)
	}
	if c.NearDuplicateBits > 4 {
		return c, fmt.Errorf("%w: NearDuplicateBits %d is above 4", ErrConfig, c.NearDuplicateBits)
	}
	if c.Workers == 0 {
		c.Workers = DefaultWorkers
	}
	if c.MaxAttempts == 0 {
		c.MaxAttempts = DefaultMaxAttempts
	}
	if c.Delay == 0 {
		c.Delay = DefaultDelay
	}
	if c.MaxConnsPerHost == 0 {
		c.MaxConnsPerHost = 1
	}
	if c.MaxCrawlDelay == 0 {
		c.MaxCrawlDelay = DefaultMaxCrawlDelay
	}
	if c.MaxLinksPerPage == 0 {
		c.MaxLinksPerPage = DefaultMaxLinksPerPage
	}
	if c.MaxRetryWait == 0 {
		c.MaxRetryWait = DefaultMaxRetryWait
	}
	if c.RobotsRetries == 0 {
		c.RobotsRetries = DefaultRobotsRetries
	}
	if c.NearDuplicateBits == 0 {
		c.NearDuplicateBits = 3
	}
	if c.MaxMediaBytes == 0 {
		c.MaxMediaBytes = DefaultMaxMediaBytes
	}
	if c.MaxBodyBytes == 0 {
		c.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if c.ExpectedURLs == 0 {
		c.ExpectedURLs = DefaultExpectedURLs
	}
	if c.ShutdownGrace == 0 {
		c.ShutdownGrace = DefaultShutdownGrace
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	for _, mt := range c.MediaTypes {
		if !strings.Contains(mt, "/") {
			return c, fmt.Errorf("%w: media type %q is not of the form type/subtype or type/*", ErrConfig, mt)
		}
	}
	return c, nil
}

// productToken returns the robots.txt product token of a User-Agent: its
// leading token, or for "Mozilla/5.0 (compatible; name/1.0; …)", the form
// Googlebot and bingbot use, the first token of the comment after
// "compatible". A token runs over letters, digits, '-' and '_': digits
// are taken in although RFC 9309 §2.2.1 allows none, so that withDefaults
// refuses "mybot2/1.0" outright rather than crawl as "mybot", a different
// robots.txt group.
func productToken(ua string) string {
	tok := leadingToken(ua)
	if !browserToken(tok) {
		return tok
	}
	open := strings.IndexByte(ua, '(')
	if open < 0 {
		return tok
	}
	comment := ua[open+1:]
	if end := strings.IndexByte(comment, ')'); end >= 0 {
		comment = comment[:end]
	}
	for _, part := range strings.Split(comment, ";") {
		if t := leadingToken(strings.TrimSpace(part)); t != "" && !browserToken(t) {
			// "Windows NT 10.0" and the like are not product tokens: a
			// product names itself with a version ("name/1.0").
			if rest := strings.TrimSpace(part)[len(t):]; strings.HasPrefix(rest, "/") {
				return t
			}
		}
	}
	return tok
}

// leadingToken returns s's leading run of letters, digits, '-' and '_'.
func leadingToken(s string) string {
	end := 0
	for end < len(s) {
		c := s[end]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' {
			end++
			continue
		}
		break
	}
	return s[:end]
}

// callFn calls Config.ScopeFunc; a panic in it leaves u out of scope and
// is logged with its stack, rather than taking the crawl down.
func (f *scopeFilter) callFn(u *url.URL) (in bool) {
	defer func() {
		if v := recover(); v != nil {
			in = false
			f.log.Error("ScopeFunc panicked; the URL is taken as out of scope", "url", u.String(), "panic", v, "stack", string(debug.Stack()))
		}
	}()
	return f.fn(u)
}

// browserToken reports a product token browsers send, which names no
// crawler: robots.txt groups for it would be a browser's, not ours.
func browserToken(t string) bool {
	switch strings.ToLower(t) {
	case "mozilla", "opera", "safari", "chrome", "applewebkit", "gecko", "compatible":
		return true
	}
	return false
}

// badHeaderByte returns the index of the first byte of v that may not
// appear in a header field value (RFC 9110 §5.5: CTLs other than HTAB),
// or -1.
func badHeaderByte(v string) int {
	for i := 0; i < len(v); i++ {
		if c := v[i]; (c < 0x20 && c != '\t') || c == 0x7f {
			return i
		}
	}
	return -1
}

// scopeFilter decides whether a normalized URL is in the crawl's scope.
type scopeFilter struct {
	log     *slog.Logger
	scope   Scope
	fn      func(*url.URL) bool
	hosts   map[string]bool
	domains map[string]bool
}

func newScopeFilter(c Config, seeds []*url.URL) *scopeFilter {
	f := &scopeFilter{scope: c.Scope, fn: c.ScopeFunc, log: c.Logger, hosts: map[string]bool{}, domains: map[string]bool{}}
	for _, u := range seeds {
		h := urlnorm.Host(u)
		f.hosts[h] = true
		if d, err := urlnorm.RegistrableDomain(u.Hostname()); err == nil {
			f.domains[d] = true
		} else {
			// An IP address or a bare public suffix: the host is its own
			// domain.
			f.domains[u.Hostname()] = true
		}
	}
	return f
}

func (f *scopeFilter) allows(u *url.URL) bool {
	if f.fn != nil {
		return f.callFn(u)
	}
	switch f.scope {
	case ScopeAny:
		return true
	case ScopeSameDomain:
		d, err := urlnorm.RegistrableDomain(u.Hostname())
		if err != nil {
			d = u.Hostname()
		}
		return f.domains[d]
	default:
		return f.hosts[urlnorm.Host(u)]
	}
}
