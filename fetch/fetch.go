// Package fetch is crawlkit's HTTP fetcher: polite to the servers it visits
// and safe against the hostile ones.
//
// A Fetcher wraps a *http.Client (the caller's or its own, tuned for many
// hosts, keep-alive and HTTP/2 over TLS) and adds what a crawler needs:
//
//   - a required User-Agent;
//   - timeouts for connecting, response headers, each attempt as a whole
//     (its redirects included), and a minimum transfer rate that stops
//     slow-drip servers;
//   - limits on body size (truncate and report, or fail), on decompressed
//     size and expansion ratio (gzip, deflate, br, zstd), on header bytes
//     and on redirects, with every redirect hop passed to the caller's
//     Check (robots.txt, scope) and to the address guard, and credential
//     headers dropped when a redirect leaves the site;
//   - the address Guard, on by default, which refuses loopback, private,
//     link-local (cloud metadata), CGNAT, multicast and other non-public
//     addresses on the address actually dialled;
//   - a DNSCache: TTL-aware, negative caching, single-flight, bounded;
//   - Politeness per host: delay, Crawl-delay, adaptive delay, Retry-After,
//     error backoff and a concurrency cap, shared with a scheduler through
//     Politeness.ReadyAt;
//   - conditional GET, retries with jittered backoff, Content-Type
//     sniffing, and a Response with timing and byte counts;
//   - for archiving (WARC), the address of the server that answered each
//     request and the header each request was sent with, for the final
//     response and every redirect hop (Response.RemoteAddr and
//     RequestHeader, Hop.RemoteAddr and RequestHeader).
//
// Bodies are decoded as browsers decode them where servers are sloppy: raw
// DEFLATE is accepted for "deflate", an empty body labelled with a coding
// is empty, and bytes after a complete stream that do not start another
// one (a gzip member, a zstd frame) are ignored, after gzip, brotli and
// zstd alike (a body with trailing junk is complete, not an error to
// retry). A body that does not decode otherwise (not encoded as labelled,
// corrupt, cut short by the server) fails with ErrBadEncoding and is not
// retried, since asking again gets the same bytes. Redirect Location
// values are resolved as browsers resolve them, including ones Go's
// url.Parse refuses.
//
// Errors match the package's sentinels (ErrBlockedAddress, ErrBodyTooLarge,
// ErrDecompressionBomb, ErrBadEncoding, ErrUnsupportedEncoding,
// ErrHeadersTooLarge, ErrTooManyRedirects, ErrTimeout, ErrDisallowed,
// ErrNotModified, ErrHostBlocked, …) with errors.Is.
package fetch

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/crawlkit/crawlkit/urlnorm"
)

// Config configures a Fetcher. Only UserAgent is required; every other zero
// field takes a safe, polite default. Where a negative value is mentioned it
// switches the limit off.
type Config struct {
	// UserAgent identifies the crawler on every request. Required; it
	// should name the bot and a contact, e.g.
	// "examplebot/1.0 (+https://example.com/bot)".
	UserAgent string

	// Client, if set, is used for requests instead of a new one. The
	// Fetcher uses a copy: it follows redirects itself and, when the
	// client's Transport is nil or an *http.Transport, installs its own
	// dialler (guard and DNS cache) in a clone of it. Cookies (Jar) are
	// kept; the client's Timeout is replaced by Config.Timeout.
	Client *http.Client
	// Transport, if set, overrides Client.Transport. Without one the
	// Fetcher makes an *http.Transport that keeps up to 8192 idle
	// connections (4 per host) for 60 s: a polite crawl returns to each of
	// thousands of hosts every second or so, and a smaller pool would close
	// most connections before their next request (measured on 5 000 hosts
	// at 1 request/s: 27% less CPU per page and 0.64 → 0.75 of the
	// politeness ceiling, for about 45 KB of memory per idle connection).
	// An *http.Transport is
	// cloned and given the guarded dialler (its own DialContext, if any,
	// becomes the custom dial function). If it has a Proxy, the guard checks
	// the proxy's address when dialling it and, before a request is handed
	// to the proxy, the target: an IP literal directly, a name by its
	// addresses in the DNS cache, all of which must pass (a name the DNS
	// cache cannot resolve is refused with the lookup error). The proxy
	// resolves the name again itself, so a name that answers the proxy
	// differently (DNS rebinding) can still reach an internal address:
	// restrict the proxy too, or set DisableGuard and rely on the proxy's
	// own rules. Any other RoundTripper is used as
	// is; the guard then checks the connection reported by httptrace
	// (GotConn) and closes it before the request is written, which only
	// works for RoundTrippers that report connections.
	Transport http.RoundTripper
	// RootCAs, if set, are the certificate authorities HTTPS servers are
	// verified against instead of the system's (a private or test CA);
	// verification itself is never turned off. It applies to the
	// default transport and to a *http.Transport given in Transport.
	RootCAs *x509.CertPool
	// Proxy, if set, chooses the proxy of each request as
	// http.Transport.Proxy does (http.ProxyFromEnvironment honours
	// HTTP_PROXY, HTTPS_PROXY and NO_PROXY; RotateProxies and
	// ProxyPerHost spread requests over several), on the Fetcher's own
	// transport or a clone of Transport. HTTP, HTTPS and SOCKS5 proxy URLs
	// work. The guard checks what the proxy is asked to reach, as the
	// Transport doc above says.
	Proxy func(*http.Request) (*url.URL, error)
	// ShareConns, if set, makes this Fetcher send its requests over that
	// Fetcher's connection pool instead of a pool of its own, so that, for
	// example, a robots.txt fetch and the page fetches after it use one
	// connection to the host instead of two. The connection settings are
	// then the other Fetcher's: its transport, dialler, DNS cache, address
	// guard, connect and TLS timeouts and header size limit (this Config's
	// DialContext, DNS, AllowCIDRs, DisableGuard, ConnectTimeout,
	// TLSTimeout and MaxHeaderBytes are not used); setting Transport, or a
	// Client with a Transport, as well is an error. Everything else
	// (politeness, limits, redirects, retries, headers, and the cookie
	// Jar of a Client without a Transport) is this Fetcher's. Closing this Fetcher
	// leaves the shared connections open; close the other one last.
	ShareConns *Fetcher
	// DialContext is a custom dial function (a proxy, a test network such
	// as crawltest's). With one, the DNS cache is bypassed and the guard
	// checks each connection's remote address before anything is sent; so a
	// dialler that always reaches 127.0.0.1 needs AllowCIDRs.
	DialContext DialFunc

	// DNS is a shared DNS cache. If nil, the Fetcher makes one from
	// DNSConfig and closes it on Close.
	DNS       *DNSCache
	DNSConfig DNSConfig

	// AllowCIDRs lets the guard pass addresses in these prefixes (for tests,
	// a local synthetic web or an intranet crawl). DisableGuard turns the
	// guard off entirely.
	AllowCIDRs   []netip.Prefix
	DisableGuard bool

	// Politeness is the per-host politeness model, possibly shared with a
	// scheduler. If nil, the Fetcher makes one from PolitenessConfig.
	Politeness       *Politeness
	PolitenessConfig PolitenessConfig
	// MaxPolitenessWait is the longest the Fetcher waits for a host to
	// become ready; a host blocked for longer fails at once with a
	// *HostBlockedError that says until when. Default 1 min.
	MaxPolitenessWait time.Duration
	// Contacted, if set, is told of every request the Fetcher sends (each
	// attempt and redirect hop), after it ends, with its politeness host key
	// and its start and end on Now. Set it to another Politeness's
	// Contacted method to make this Fetcher's requests count toward that
	// one's spacing: a crawler's robots.txt Fetcher, which has a politeness
	// model of its own, so that the first page does not follow robots.txt
	// at once on a host with a Crawl-delay.
	Contacted func(host string, started, ended time.Time)
	// HostKey maps a URL to the host string politeness is keyed by.
	// Default urlnorm.Host (lower case, punycode, no default port), the key
	// a frontier schedules by, so a shared Politeness sees one host under
	// one name.
	HostKey func(*url.URL) string

	// ConnectTimeout bounds a TCP connect (default 10 s); TLSTimeout a TLS
	// handshake (default 10 s); HeaderTimeout the wait for response headers
	// from the start of each request (default 30 s); Timeout one attempt as
	// a whole (default 60 s): the requests of its redirect chain, bodies
	// included, share it, so the chain takes at most Timeout of request
	// time however many hops it has. Politeness waits between hops are not
	// counted; MaxPolitenessWait bounds those. A request cut off by one of
	// these fails with ErrTimeout and counts as a failure of its URL toward
	// the host's error backoff (see Politeness); one ended by the caller's
	// context does not.
	ConnectTimeout, TLSTimeout, HeaderTimeout, Timeout time.Duration
	// MinTransferRate in bytes per second, averaged over each
	// TransferRateWindow while a body is read; a slower transfer fails
	// with ErrTimeout. Defaults 1024 B/s over 10 s windows. Negative: off.
	MinTransferRate    int64
	TransferRateWindow time.Duration

	// MaxBodyBytes bounds a decoded body (default 10 MiB); OnTooLarge picks
	// truncation (default) or failure beyond it.
	MaxBodyBytes int64
	OnTooLarge   TooLarge
	// KeepWire keeps each response as it was received, for an archive
	// (Response.Wire): its status line, TLS session and body with its
	// content codings intact. Without a content coding the body is the
	// decoded one and costs nothing more; with one, up to MaxBodyBytes of
	// encoded bytes are kept as the decoder reads them (a body is decoded
	// once).
	KeepWire bool
	// MaxExpansion bounds decoded bytes per byte on the wire for encoded
	// bodies, checked once ExpansionFloor bytes are decoded (defaults 100
	// and 1 MiB: real text rarely compresses beyond 20:1, while gzip and
	// brotli bombs reach 1000:1 and more; the floor keeps tiny, highly
	// repetitive pages from tripping it).
	MaxExpansion   float64
	ExpansionFloor int64
	// MaxHeaderBytes bounds the response header block (default 256 KiB).
	MaxHeaderBytes int64
	// MaxRedirects bounds a redirect chain (default 5). Negative: redirects
	// are not followed and the 3xx response is returned.
	MaxRedirects int
	// Check, if set, is called with the URL before the first request and
	// with every redirect target; an error refuses the URL and Fetch
	// returns it wrapped together with ErrDisallowed. Use it for robots.txt
	// and crawl scope.
	Check func(ctx context.Context, u *url.URL) error

	// MaxRetries is how many times a transient failure (network error,
	// 408, 500, 502, 503, 504, or 429 with a short Retry-After) is retried
	// (default 2; negative: none). RetryBackoff is the first wait, doubled
	// per retry up to MaxRetryBackoff and jittered (defaults 1 s and 10 s);
	// a retry also waits for the host's politeness.
	MaxRetries                    int
	RetryBackoff, MaxRetryBackoff time.Duration

	// Header holds default request headers (Accept, Accept-Language,
	// From, …); keys need not be canonical. User-Agent and
	// Accept-Encoding are the Fetcher's own; Host, Content-Length,
	// Transfer-Encoding and Trailer are ignored, as net/http ignores them.
	// Like net/http's Client, the Fetcher stops sending the credential
	// headers (Authorization, WWW-Authenticate, Cookie, Cookie2,
	// Proxy-Authorization, Proxy-Authenticate), whether set here or in
	// Request.Header, once a redirect leaves the requested URL's host for a
	// host that is neither it nor one of its subdomains, or goes from
	// https to http; they stay off for the rest of the chain. Cookies from
	// Client.Jar follow their own scope.
	Header http.Header

	// Now returns the current time for politeness (when a host is ready,
	// and the start and end of its requests) and DNS expiry; nil means
	// time.Now. Waiting for a host is a real timer for the time Now says
	// is left. The I/O timeouts above use real time, as the network does.
	Now func() time.Time
	// after is the timer of politeness and retry waits (time.After); the
	// package's tests replace it with one that advances their fake Now.
	after func(time.Duration) <-chan time.Time
	// Rand returns uniform values in [0, 1) for retry jitter (default
	// math/rand/v2.Float64).
	Rand func() float64
}

func (c *Config) ensureDefaults() {
	dur := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	dur(&c.ConnectTimeout, 10*time.Second)
	dur(&c.TLSTimeout, 10*time.Second)
	dur(&c.HeaderTimeout, 30*time.Second)
	dur(&c.Timeout, 60*time.Second)
	dur(&c.TransferRateWindow, 10*time.Second)
	dur(&c.MaxPolitenessWait, time.Minute)
	dur(&c.RetryBackoff, time.Second)
	dur(&c.MaxRetryBackoff, 10*time.Second)
	if c.MinTransferRate == 0 {
		c.MinTransferRate = 1024
	}
	if c.MaxBodyBytes <= 0 {
		c.MaxBodyBytes = 10 << 20
	}
	if c.MaxExpansion == 0 {
		c.MaxExpansion = 100
	}
	if c.ExpansionFloor <= 0 {
		c.ExpansionFloor = 1 << 20
	}
	if c.MaxHeaderBytes <= 0 {
		c.MaxHeaderBytes = 256 << 10
	}
	if c.MaxRedirects == 0 {
		c.MaxRedirects = 5
	}
	if c.MaxRetries == 0 {
		c.MaxRetries = 2
	} else if c.MaxRetries < 0 {
		c.MaxRetries = 0
	}
	if c.HostKey == nil {
		c.HostKey = urlnorm.Host
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.after == nil {
		c.after = time.After
	}
	if c.Rand == nil {
		c.Rand = rand.Float64
	}
}

// defaultAccept prefers HTML and XML (pages, feeds, sitemaps) but takes
// anything.
const defaultAccept = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"

// acceptEncoding lists the codings the Fetcher decodes itself.
const acceptEncoding = "gzip, deflate, br, zstd"

// Fetcher fetches URLs politely and safely. Create one with New, share it
// between goroutines, and Close it when done.
type Fetcher struct {
	cfg         Config
	client      http.Client
	transport   *http.Transport // nil when the caller's RoundTripper is opaque
	guard       *Guard
	traceGuard  bool // check connections in GotConn (opaque RoundTripper)
	dns         *DNSCache
	ownDNS      bool
	pol         *Politeness
	watch       *watchdogs
	sysClock    bool // cfg.Now was nil: time.Now
	dialer      *guardedDialer
	sharedConns bool        // the connection pool is another Fetcher's (Config.ShareConns)
	header      http.Header // request header template
	closed      atomic.Bool
	closing     chan struct{} // closed by Close, to end politeness and retry waits
}

// New returns a Fetcher for cfg. It fails with ErrNoUserAgent if
// cfg.UserAgent is empty.
func New(cfg Config) (*Fetcher, error) {
	if strings.TrimSpace(cfg.UserAgent) == "" {
		return nil, ErrNoUserAgent
	}
	if strings.ContainsAny(cfg.UserAgent, "\r\n") {
		return nil, fmt.Errorf("%w: User-Agent contains a line break", ErrNoUserAgent)
	}
	sysClock := cfg.Now == nil
	cfg.ensureDefaults()
	f := &Fetcher{sysClock: sysClock, cfg: cfg, dns: cfg.DNS, pol: cfg.Politeness, header: make(http.Header, len(cfg.Header)+3), closing: make(chan struct{})}
	for k, v := range cfg.Header {
		// Canonical keys, so that a default the Fetcher sets or a caller's
		// Request.Header overrides replaces the field instead of being
		// sent next to it.
		if k = http.CanonicalHeaderKey(k); !ignoredRequestFields[k] {
			f.header[k] = append(f.header[k], v...)
		}
	}
	if f.header.Get("Accept") == "" {
		f.header.Set("Accept", defaultAccept)
	}
	f.header.Set("User-Agent", cfg.UserAgent)
	f.header.Set("Accept-Encoding", acceptEncoding)
	if o := cfg.ShareConns; o != nil {
		if cfg.Transport != nil || (cfg.Client != nil && cfg.Client.Transport != nil) {
			return nil, errors.New("fetch: Config.ShareConns cannot be combined with Transport or a Client's Transport")
		}
		f.dns = o.dns
	}
	if f.dns == nil {
		dc := cfg.DNSConfig
		if dc.Now == nil {
			dc.Now = cfg.Now
		}
		f.dns = NewDNSCache(dc)
		f.ownDNS = true
	}
	if f.pol == nil {
		f.pol = NewPoliteness(cfg.PolitenessConfig)
	}
	if o := cfg.ShareConns; o != nil {
		f.client = http.Client{Transport: o.client.Transport}
		if cfg.Client != nil {
			f.client.Jar = cfg.Client.Jar
		}
		f.transport, f.guard, f.traceGuard, f.dialer = o.transport, o.guard, o.traceGuard, o.dialer
		f.sharedConns = true
		f.client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
		f.watch = newWatchdogs(watchTick(&f.cfg))
		return f, nil
	}
	if !cfg.DisableGuard {
		f.guard = NewGuard(cfg.AllowCIDRs...)
	}
	if cfg.Client != nil {
		f.client = *cfg.Client
	}
	rt := cfg.Transport
	if rt == nil {
		rt = f.client.Transport
	}
	d := &guardedDialer{guard: f.guard, dns: f.dns, custom: cfg.DialContext, net: defaultDialer(cfg.ConnectTimeout)}
	f.dialer = d
	switch t := rt.(type) {
	case nil:
		f.transport = &http.Transport{
			ForceAttemptHTTP2:   true,
			MaxIdleConns:        8192,
			MaxIdleConnsPerHost: 4,
			// Longer than the default politeness delay, so a polite
			// crawler still reuses its connection to a host.
			IdleConnTimeout:       60 * time.Second,
			ExpectContinueTimeout: time.Second,
			TLSClientConfig:       &tls.Config{MinVersion: tls.VersionTLS12},
		}
	case *http.Transport:
		f.transport = t.Clone()
		if d.custom == nil && t.DialContext != nil {
			d.custom = t.DialContext
		}
	default:
		f.client.Transport = rt
		f.traceGuard = f.guard != nil
	}
	if f.transport != nil && cfg.Proxy != nil {
		f.transport.Proxy = cfg.Proxy
	}
	if f.transport != nil && cfg.RootCAs != nil {
		tc := &tls.Config{MinVersion: tls.VersionTLS12}
		if f.transport.TLSClientConfig != nil {
			tc = f.transport.TLSClientConfig.Clone()
		}
		tc.RootCAs = cfg.RootCAs
		f.transport.TLSClientConfig = tc
	}
	if f.transport != nil {
		f.transport.DialContext = d.DialContext
		//lint:ignore SA1019 Dial is cleared so that DialContext is used
		f.transport.Dial = nil
		f.transport.ForceAttemptHTTP2 = true
		f.transport.DisableCompression = true // the Fetcher decodes, with limits
		f.transport.TLSHandshakeTimeout = cfg.TLSTimeout
		// The header timeout is enforced by the Fetcher's per-request
		// watchdog, which shares one timer with the other deadlines.
		f.transport.ResponseHeaderTimeout = 0
		f.transport.MaxResponseHeaderBytes = cfg.MaxHeaderBytes
		if f.transport.Proxy != nil {
			f.transport.Proxy = d.wrapProxy(f.transport.Proxy)
		}
		f.client.Transport = f.transport
	}
	// Redirects are followed by Fetch itself, hop by hop, so that each
	// target passes Check, the guard and politeness.
	f.client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	f.client.Transport = locationHider{f.client.Transport}
	f.client.Timeout = 0 // Config.Timeout applies per request through the context
	f.watch = newWatchdogs(watchTick(&f.cfg))
	return f, nil
}

// Politeness returns the Fetcher's politeness model, to share with a
// scheduler or to feed Crawl-delay into.
func (f *Fetcher) Politeness() *Politeness { return f.pol }

// DNS returns the Fetcher's DNS cache (for Prefetch).
func (f *Fetcher) DNS() *DNSCache { return f.dns }

// Close stops the Fetcher. Fetches in flight end at once with an error
// matching ErrClosed, wherever they are (waiting for politeness or a retry,
// connecting, reading a body); they do not count as failures of their
// hosts. Close does not wait for them to return. Fetches started after Close
// fail with ErrClosed. Close then releases idle connections and, if the
// Fetcher made its own DNS cache, stops its lookups. To let fetches finish
// instead, wait for them before calling Close.
func (f *Fetcher) Close() error {
	if f.closed.Swap(true) {
		return nil
	}
	close(f.closing)
	f.watch.close()
	if !f.sharedConns {
		f.client.CloseIdleConnections()
	}
	if f.ownDNS {
		f.dns.Close()
	}
	return nil
}

// Fetch GETs rawURL. See Do.
func (f *Fetcher) Fetch(ctx context.Context, rawURL string) (*Response, error) {
	return f.Do(ctx, &Request{URL: rawURL})
}

// Do performs req: it waits for the host's politeness, sends the request,
// follows redirects hop by hop, decodes and limits the body, and retries
// transient failures. Any HTTP status is a Response with a nil error
// (check StatusCode), except a 304 to a conditional request, which returns
// the Response together with ErrNotModified. Other errors come with a nil
// Response and match the package's sentinels. When ctx ends first, Do
// returns its error (context.Canceled or context.DeadlineExceeded,
// wrapped); that is the caller's doing, so the host is not charged with a
// failure.
func (f *Fetcher) Do(ctx context.Context, req *Request) (*Response, error) {
	if f.closed.Load() {
		return nil, ErrClosed
	}
	u, err := url.Parse(req.URL)
	if err != nil {
		return nil, fmt.Errorf("fetch: %w", err)
	}
	if err := checkURL(u); err != nil {
		return nil, err
	}
	method := req.Method
	if method == "" {
		method = http.MethodGet
	}
	if method != http.MethodGet && method != http.MethodHead && method != http.MethodPost {
		return nil, fmt.Errorf("fetch: method %s not supported (GET, HEAD or POST only)", method)
	}
	if req.Body != nil && method != http.MethodPost {
		return nil, fmt.Errorf("fetch: a request body is sent with POST only, not %s", method)
	}
	for attempt := 0; ; attempt++ {
		// POST is not idempotent (RFC 9110 §9.2.2): a failure is not
		// retried, since the server may have acted on the first attempt.
		last := attempt >= f.cfg.MaxRetries || method == http.MethodPost
		resp, err, retryURL := f.attempt(ctx, u, method, req, last)
		if resp != nil {
			resp.Attempts = attempt + 1
		}
		if retryURL == nil {
			return resp, err
		}
		wait := f.retryDelay(attempt)
		retryHost := f.cfg.HostKey(retryURL)
		if now := f.cfg.Now(); f.pol.ReadyAt(retryHost, now).Sub(now) > f.cfg.MaxPolitenessWait {
			// The host is blocked for longer than we wait: give up now and
			// let the failure count.
			f.pol.fail(retryHost, retryURL.String(), now)
			return resp, err
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("fetch %s: %w", u.Redacted(), ctx.Err())
		case <-f.closing:
			return nil, fmt.Errorf("fetch %s: %w", u.Redacted(), ErrClosed)
		case <-f.cfg.after(wait):
		}
	}
}

// retryDelay is the jittered exponential wait before retry attempt+1: a
// uniform value in [d/2, d) where d = RetryBackoff × 2^attempt, capped
// ("equal jitter").
func (f *Fetcher) retryDelay(attempt int) time.Duration {
	d := f.cfg.MaxRetryBackoff
	if attempt < 62 && f.cfg.RetryBackoff <= f.cfg.MaxRetryBackoff>>attempt {
		// Shifting only while below the cap keeps RetryBackoff<<attempt
		// from overflowing into a negative wait.
		d = f.cfg.RetryBackoff << attempt
	}
	return d/2 + time.Duration(f.cfg.Rand()*float64(d/2))
}

func checkURL(u *url.URL) error {
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("fetch %s: %w %q", u.Redacted(), ErrUnsupportedScheme, u.Scheme)
	}
	if u.Host == "" {
		return fmt.Errorf("fetch %s: URL has no host", u.Redacted())
	}
	return nil
}

// attempt makes one attempt at req, following redirects. A non-nil retry
// reports that the failure is transient and names the URL that failed (the
// last hop's), so the caller may try again.
func (f *Fetcher) attempt(ctx context.Context, u *url.URL, method string, req *Request, last bool) (resp *Response, err error, retry *url.URL) {
	resp = &Response{URL: u}
	cur := u
	// Config.Timeout is shared by the requests of the whole chain: each hop
	// gets what the previous ones left (real time, politeness waits
	// excluded).
	budget := f.cfg.Timeout
	dropCredentials := false
	for hop := 0; ; hop++ {
		if f.closed.Load() {
			return nil, fmt.Errorf("fetch %s: %w", cur.Redacted(), ErrClosed), nil
		}
		if hop > 0 && !dropCredentials {
			dropCredentials = !credentialsFollow(u, cur)
		}
		if f.cfg.Check != nil {
			if cerr := f.cfg.Check(ctx, cur); cerr != nil {
				return nil, fmt.Errorf("fetch %s: %w: %w", cur.Redacted(), ErrDisallowed, cerr), nil
			}
		}
		host := f.cfg.HostKey(cur)
		started, err := f.acquire(ctx, host)
		if err != nil {
			return nil, fmt.Errorf("fetch %s: %w", cur.Redacted(), err), nil
		}
		// Reading the clock is not free (hundreds of nanoseconds on some
		// virtual machines), so with the system clock the politeness
		// timestamps double as the request's timing.
		realStart := started
		if !f.sysClock {
			realStart = f.watch.now()
		}
		var deadline time.Time
		if f.cfg.Timeout > 0 {
			deadline = realStart.Add(budget)
		}
		ex := f.exchange(ctx, cur, method, req, hop == 0, dropCredentials, resp, realStart, deadline)
		budget -= ex.end.Sub(realStart)
		ended := ex.end
		if !f.sysClock {
			ended = f.cfg.Now()
		}
		out := Outcome{URL: cur.String(), Status: ex.status}
		if ex.err != nil && !ex.aborted && !isPolicyError(ex.err) {
			// Only trouble reaching or hearing from the server counts
			// for the error backoff; a body over our limits, the caller
			// giving up and Close do not.
			out.Err = ex.err
		}
		if ex.status == http.StatusTooManyRequests || ex.status == http.StatusServiceUnavailable {
			out.RetryAfter, out.HasRetryAfter = ParseRetryAfter(resp.Header.Get("Retry-After"), ended)
		}
		again := !last && f.retryable(ex, out)
		out.Interim = again
		f.pol.Release(host, started, ended, out)
		if f.cfg.Contacted != nil {
			f.cfg.Contacted(host, started, ended)
		}
		if again {
			retry = cur
		}
		if ex.err != nil {
			return nil, ex.err, retry
		}
		if ex.location == nil {
			if resp.NotModified {
				return resp, fmt.Errorf("fetch %s: %w", cur.Redacted(), ErrNotModified), nil
			}
			return resp, nil, retry
		}
		resp.Redirects = append(resp.Redirects, Hop{URL: cur, Status: ex.status, Header: resp.Header, Date: started,
			RemoteAddr: resp.RemoteAddr, RequestHeader: resp.RequestHeader, Wire: resp.Wire})
		if hop >= f.cfg.MaxRedirects {
			return nil, fmt.Errorf("fetch %s: %w (more than %d)", u.Redacted(), ErrTooManyRedirects, f.cfg.MaxRedirects), nil
		}
		if err := checkURL(ex.location); err != nil {
			return nil, fmt.Errorf("redirect from %s: %w", cur.Redacted(), err), nil
		}
		if f.cfg.Timeout > 0 && budget <= 0 {
			return nil, fmt.Errorf("fetch %s: %w: %w (%s) before following the redirect to %s",
				u.Redacted(), ErrTimeout, errTotalTimeout, f.cfg.Timeout, ex.location.Redacted()), nil
		}
		if ex.status == http.StatusSeeOther && method != http.MethodHead {
			method = http.MethodGet
		}
		if method == http.MethodPost && (ex.status == http.StatusMovedPermanently || ex.status == http.StatusFound) {
			// RFC 9110 §15.4.2, §15.4.3: user agents may change a POST
			// to a GET for 301 and 302, and browsers do (a login form
			// answered with a redirect to the member's page). 307 and
			// 308 repeat the POST with its body.
			method = http.MethodGet
		}
		cur = ex.location
	}
}

// credentialHeaders are the request headers that carry credentials, the
// ones net/http's Client drops on a redirect to another site.
var credentialHeaders = map[string]bool{
	"Authorization": true, "Www-Authenticate": true, "Cookie": true, "Cookie2": true,
	"Proxy-Authorization": true, "Proxy-Authenticate": true,
}

// credentialsFollow reports whether credentials sent with a request for
// initial may be sent to dest, a redirect target: dest is on initial's host
// or a subdomain of it (net/http's rule for Client redirects; the port does
// not matter), and the redirect does not go from https to plain http.
func credentialsFollow(initial, dest *url.URL) bool {
	if initial.Scheme == "https" && dest.Scheme != "https" {
		return false
	}
	ih, dh := bareHost(initial), bareHost(dest)
	if dh == ih {
		return true
	}
	if _, err := netip.ParseAddr(ih); err == nil {
		return false // an IP address has no subdomains
	}
	if strings.ContainsAny(dh, ":%") {
		return false // an IPv6 address, not a subdomain
	}
	return strings.HasSuffix(dh, "."+ih)
}

// bareHost returns u's host in canonical form (lower case, punycode, no
// trailing dot) without the port and without IPv6 brackets.
func bareHost(u *url.URL) string {
	h := urlnorm.Host(u)
	if host, _, err := net.SplitHostPort(h); err == nil {
		return host
	}
	return strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
}

// isPolicyError reports whether err is one of the Fetcher's own limits or
// refusals rather than a failure of the server or the network.
func isPolicyError(err error) bool {
	for _, target := range []error{ErrBodyTooLarge, ErrDecompressionBomb, ErrUnsupportedEncoding, ErrBadEncoding,
		ErrHeadersTooLarge, ErrBlockedAddress, ErrDisallowed, ErrUnsupportedScheme} {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}

// retryable reports whether an exchange's failure is worth retrying at once.
func (f *Fetcher) retryable(ex exchangeResult, o Outcome) bool {
	if ex.err != nil {
		return ex.transient
	}
	switch ex.status {
	case http.StatusRequestTimeout, http.StatusInternalServerError, http.StatusBadGateway, http.StatusGatewayTimeout:
		return true
	case http.StatusServiceUnavailable:
		return !o.HasRetryAfter || o.RetryAfter <= f.cfg.MaxPolitenessWait
	case http.StatusTooManyRequests:
		// Without Retry-After a 429 is answered with the error backoff, not
		// with a quick retry.
		return o.HasRetryAfter && o.RetryAfter <= f.cfg.MaxPolitenessWait
	}
	return false
}

// acquire waits until politeness admits a request to host and returns the
// admission time.
func (f *Fetcher) acquire(ctx context.Context, host string) (time.Time, error) {
	now := f.cfg.Now()
	deadline := now.Add(f.cfg.MaxPolitenessWait)
	for ; ; now = f.cfg.Now() {
		ok, at, released := f.pol.tryAcquire(host, now)
		if ok {
			return now, nil
		}
		var wake <-chan time.Time
		if !at.IsZero() {
			if at.After(deadline) {
				return time.Time{}, &HostBlockedError{Host: host, Until: at}
			}
			wake = f.cfg.after(at.Sub(now))
		} else {
			if !now.Before(deadline) {
				return time.Time{}, &HostBlockedError{Host: host, Until: now}
			}
			wake = f.cfg.after(deadline.Sub(now))
		}
		select {
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		case <-f.closing:
			return time.Time{}, ErrClosed
		case <-wake:
		case <-released:
		}
	}
}

// Errors used as context causes, to tell our own timeouts and Close apart.
var (
	errTotalTimeout  = errors.New("request exceeded its total timeout")
	errHeaderTimeout = errors.New("no response headers in time")
	errSlowTransfer  = errors.New("transfer below the minimum rate")
	errClosed        = errors.New("closed by Fetcher.Close")
)

// exchangeResult is the outcome of one HTTP exchange (one hop).
type exchangeResult struct {
	status    int
	location  *url.URL // redirect target, when the response is a redirect
	err       error
	transient bool      // err is worth retrying
	aborted   bool      // err is the caller's context ending or Close, not the host's doing
	end       time.Time // when the exchange ended (real time)
}

// exchange sends one request for u and fills resp from the answer. start
// is when the request starts and deadline (zero: none) when the attempt's
// total timeout expires, both in real time. dropCredentials removes the
// credential headers.
func (f *Fetcher) exchange(parent context.Context, u *url.URL, method string, req *Request, first, dropCredentials bool, resp *Response, start, deadline time.Time) (ex exchangeResult) {
	defer func() {
		if ex.end.IsZero() {
			ex.end = f.watch.now()
		}
	}()
	ctx, cancel := context.WithCancelCause(parent)
	defer cancel(nil)
	wd := f.startWatchdog(cancel, start, deadline)
	defer f.stopWatchdog(wd)
	// The reqTrace is the request's context (see reqTrace.Value) and holds
	// its httptrace hooks, so that tracing costs two allocations beyond
	// the reqTrace itself on plain HTTP: the GotConn method value and
	// httptrace's context. GotConn is needed on every request: it is the
	// only report of which connection, new or kept alive, carried it.
	rt := &reqTrace{Context: ctx, f: f, u: u}
	rt.trace.GotConn = rt.gotConn
	if u.Scheme == "https" {
		rt.trace.TLSHandshakeStart = rt.tlsHandshakeStart
		rt.trace.TLSHandshakeDone = rt.tlsHandshakeDone
	}
	ctx = httptrace.WithClientTrace(rt, &rt.trace)
	// Built directly rather than with http.NewRequest, which would format
	// and reparse the already parsed URL.
	uc := *u
	hr := (&http.Request{
		Method:     method,
		URL:        &uc,
		Proto:      "HTTP/1.1",
		ProtoMajor: 1,
		ProtoMinor: 1,
		Header:     f.header.Clone(),
		Host:       strings.TrimSuffix(u.Host, ":"),
	}).WithContext(ctx)
	for k, v := range req.Header {
		ck := http.CanonicalHeaderKey(k)
		if ck != k {
			if _, dup := req.Header[ck]; dup {
				continue // the canonical spelling wins, whatever the map order
			}
		}
		switch ck {
		case "User-Agent", "Accept-Encoding", "If-None-Match", "If-Modified-Since":
		default:
			if !ignoredRequestFields[ck] {
				hr.Header[ck] = v
			}
		}
	}
	if method == http.MethodPost {
		body := req.Body
		hr.Body = io.NopCloser(bytes.NewReader(body))
		hr.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
		hr.ContentLength = int64(len(body))
	} else if req.Method == http.MethodPost {
		// A POST a redirect turned into a GET has no body to describe.
		hr.Header.Del("Content-Type")
	}
	if dropCredentials {
		for k := range hr.Header {
			if credentialHeaders[http.CanonicalHeaderKey(k)] {
				delete(hr.Header, k)
			}
		}
	}
	conditional := first && !req.Validators.IsZero()
	if conditional {
		if req.Validators.ETag != "" {
			hr.Header.Set("If-None-Match", req.Validators.ETag)
		}
		if req.Validators.LastModified != "" {
			hr.Header.Set("If-Modified-Since", req.Validators.LastModified)
		}
	}
	hresp, err := f.client.Do(hr)
	if err == nil {
		unhideLocation(hresp.Header)
	}
	headersAt := f.watch.now()
	remote := rt.headers(headersAt.Sub(start))
	if err != nil {
		f.stopWatchdog(wd)
		rt.mu.Lock()
		if rt.blocked != nil {
			err = rt.blocked
		}
		rt.mu.Unlock()
		return f.classify(parent, ctx, u, err)
	}
	defer hresp.Body.Close()
	resp.FinalURL = u
	resp.StatusCode = hresp.StatusCode
	resp.Proto = hresp.Proto
	resp.Header = hresp.Header
	resp.RemoteAddr = remote
	resp.Wire = nil
	if f.cfg.KeepWire {
		resp.Wire = newWire(hresp)
	}
	// The header as sent, cookies from the client's jar included (the
	// Client adds them to hr.Header). The transport is done with it: the
	// body is closed before the Response is handed on.
	resp.RequestHeader = hr.Header
	ex.status = hresp.StatusCode

	if isRedirect(hresp.StatusCode) && f.cfg.MaxRedirects > 0 {
		if loc := hresp.Header.Get("Location"); loc != "" {
			f.headersDone(wd)
			// Resolved as browsers do (the URL Standard), since servers
			// write Location values for browsers.
			next, err := urlnorm.Resolve(u, loc)
			if err != nil {
				return exchangeResult{status: ex.status, err: fmt.Errorf("fetch %s: bad redirect Location %s: %w", u.Redacted(), quoteShort(loc), err)}
			}
			if next.Fragment == "" {
				// RFC 9110 §10.2.2: a Location without a fragment
				// inherits the original request's.
				next.Fragment, next.RawFragment = u.Fragment, u.RawFragment
			}
			// Drain a little so the connection can be reused; a large
			// redirect body is abandoned with its connection.
			io.Copy(io.Discard, io.LimitReader(hresp.Body, 4<<10))
			ex.location = next
			ex.end = f.watch.now()
			resp.Timing = rt.result(ex.end.Sub(start))
			return ex
		}
	}
	if hresp.StatusCode == http.StatusNotModified && conditional {
		resp.NotModified = true
	}

	codings, err := contentEncodings(hresp.Header.Values("Content-Encoding"))
	if err != nil {
		return exchangeResult{status: ex.status, err: fmt.Errorf("fetch %s: %w", u.Redacted(), err)}
	}
	wire := &wireCounter{r: hresp.Body, limit: f.cfg.MaxBodyBytes + 1}
	f.watchBody(wd, wire, headersAt)
	var body io.Reader = wire
	closeDec := func() {}
	if len(codings) > 0 && method != http.MethodHead && hresp.StatusCode != http.StatusNotModified {
		if f.cfg.KeepWire {
			// The encoded bytes, which the decoder reads but does not
			// keep; hresp.ContentLength is their length, if known.
			wire.kept = &wireKeeper{max: f.cfg.MaxBodyBytes}
			if n := hresp.ContentLength; n > 0 {
				wire.kept.buf = make([]byte, 0, min(n, f.cfg.MaxBodyBytes))
			}
		}
		body, closeDec, err = decoder(wire, codings)
		if err != nil && wire.empty() {
			// An empty body labelled with a coding (seen on 204s and
			// error pages): nothing to decode.
			body, closeDec, err = wire, func() {}, nil
		}
		if err != nil {
			return f.decodeFailure(parent, ctx, u, hresp, wire, codings, err)
		}
	}
	defer closeDec()
	hint := hresp.ContentLength
	if len(codings) > 0 && hint > 0 {
		// Guess the decoded size from the compressed one (HTML compresses
		// four to six times), so that the buffer rarely grows; readBody
		// caps the guess.
		hint *= compressedRatio
	}
	res, err := readBody(body, wire, len(codings) > 0, hint, bodyLimits{
		maxBody: f.cfg.MaxBodyBytes, onTooLarge: f.cfg.OnTooLarge,
		maxExpansion: f.cfg.MaxExpansion, expansionFloor: f.cfg.ExpansionFloor,
	})
	if err == nil && !wire.eof && hresp.ContentLength >= 0 && hresp.ContentLength-wire.n.Load() <= drainLimit {
		// The decoder ended before the body did (junk after a gzip
		// stream, a body cut at the limit): read the little that is left,
		// which the server has promised, so the connection can be kept
		// alive. A body of unknown length is not drained, since its end
		// may never come.
		io.Copy(io.Discard, wire)
	}
	f.stopWatchdog(wd)
	ex.end = f.watch.now()
	resp.Timing = rt.result(ex.end.Sub(start))
	resp.WireBytes = wire.n.Load()
	if err != nil && wire.empty() {
		// An empty body labelled with a coding whose decoder only fails
		// on its first read (br, deflate): nothing to decode.
		res, err = bodyResult{body: []byte{}}, nil
	}
	if err != nil {
		if errors.Is(err, ErrBodyTooLarge) || errors.Is(err, ErrDecompressionBomb) || errors.Is(err, ErrUnsupportedEncoding) {
			return exchangeResult{status: ex.status, err: fmt.Errorf("fetch %s: %w", u.Redacted(), err)}
		}
		if len(codings) > 0 {
			return f.decodeFailure(parent, ctx, u, hresp, wire, codings, err)
		}
		r := f.classify(parent, ctx, u, err)
		r.status = ex.status
		return r
	}
	resp.Body, resp.Truncated = res.body, res.truncated
	if resp.Wire != nil {
		resp.Wire.Body, resp.Wire.Truncated = resp.Body, resp.Truncated
		if wire.kept != nil {
			resp.Wire.Body = wire.kept.buf
			if resp.Wire.Body == nil {
				resp.Wire.Body = []byte{}
			}
			resp.Wire.Truncated = wire.kept.overflow || !wire.eof
		}
	}
	resp.ContentEncoding = codings
	declared, cs, ok := ParseContentType(hresp.Header.Get("Content-Type"))
	resp.DeclaredType = declared
	resp.ContentType, resp.Charset, resp.Sniffed = sniffParsed(declared, cs, ok, resp.Body)
	return ex
}

// decodeFailure classifies err, a failure to decode a body encoded with
// codings. If the connection delivered the body without failing, the body
// itself is at fault (not encoded as labelled, corrupt, truncated by the
// server): that is ErrBadEncoding, and asking again would get the same
// bytes, so it is not retried. A truncated stream in a body delimited by
// the connection closing is the exception, as the connection may have
// been cut. Otherwise the transfer failed, and the error is the
// connection's.
func (f *Fetcher) decodeFailure(parent, ctx context.Context, u *url.URL, hresp *http.Response, wire *wireCounter, codings []string, err error) exchangeResult {
	closeDelimited := hresp.ProtoMajor == 1 && hresp.ContentLength < 0 && len(hresp.TransferEncoding) == 0
	err = fmt.Errorf("decode %s: %w", strings.Join(codings, ","), err)
	var r exchangeResult
	if wire.intact() && f.ctxCause(parent, ctx) == nil && !(closeDelimited && errors.Is(err, io.ErrUnexpectedEOF)) {
		r = exchangeResult{err: fmt.Errorf("fetch %s: %w: %w", u.Redacted(), ErrBadEncoding, err)}
	} else {
		r = f.classify(parent, ctx, u, err)
	}
	r.status = hresp.StatusCode
	return r
}

// hiddenLocation is the key under which locationHider keeps a redirect's
// Location: not a valid field name, so no server can send it.
const hiddenLocation = "Fetch hidden Location"

// locationHider keeps the Location of redirect responses away from
// net/http's Client, which parses it with url.Parse before asking
// CheckRedirect and fails the request on a value url.Parse refuses (an
// invalid percent escape, a tab) though browsers follow it, and quotes the
// whole value, however long, in its error. Fetch resolves Location itself,
// as browsers do (urlnorm.Resolve), after unhideLocation.
type locationHider struct{ rt http.RoundTripper }

func (h locationHider) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := h.rt.RoundTrip(r)
	if err == nil && isRedirect(resp.StatusCode) {
		if loc, ok := resp.Header["Location"]; ok {
			resp.Header[hiddenLocation] = loc
			delete(resp.Header, "Location")
		}
	}
	return resp, err
}

// CloseIdleConnections closes the wrapped RoundTripper's idle connections.
func (h locationHider) CloseIdleConnections() {
	if c, ok := h.rt.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// unhideLocation puts back the Location locationHider kept aside.
func unhideLocation(h http.Header) {
	if loc, ok := h[hiddenLocation]; ok {
		h["Location"] = loc
		delete(h, hiddenLocation)
	}
}

// quoteShort quotes s for an error message, cut to its first 200 bytes.
func quoteShort(s string) string {
	const max = 200
	if len(s) <= max {
		return strconv.Quote(s)
	}
	return fmt.Sprintf("%q… (%d bytes)", s[:max], len(s))
}

func isRedirect(code int) bool {
	switch code {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther,
		http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		return true
	}
	return false
}

// watchdog holds one request's deadlines: the wait for response headers,
// the attempt's total timeout and, while the body is read, the minimum
// transfer rate. The Fetcher's watchdogs goroutine checks every registered
// watchdog on a shared ticker and cancels the request's context with
// errHeaderTimeout, errTotalTimeout or errSlowTransfer as the cause. A
// shared ticker instead of a timer per request keeps the runtime's timer
// heap small and the per-request cost low; deadlines are enforced within
// one tick. These are I/O deadlines, in real time. Close cancels every
// registered request with errClosed.
type watchdog struct {
	cancel         context.CancelCauseFunc
	total, headers time.Time // deadlines; zero: none
	window         time.Duration
	need           int64 // bytes required per window; 0: no rate floor

	// Guarded by watchdogs.mu.
	prev, next *watchdog    // registry list links
	body       bool         // headers have arrived
	wire       *wireCounter // set while the body is read with a rate floor
	last       int64        // wire count at the previous window
	windowEnd  time.Time
	stopped    bool
}

// watchdogs is the registry of in-flight requests' watchdogs and the
// goroutine that checks them; Fetcher.Close stops it.
type watchdogs struct {
	tick time.Duration
	// now reads real time for the deadlines and the requests' timing
	// (time.Now). Tests replace it, under mu and before the first request,
	// together with a fake Config.Now (with time.Now the politeness
	// timestamps are used as request start times instead).
	now    func() time.Time
	mu     sync.Mutex
	head   *watchdog // list of registered watchdogs
	closed bool      // set by close: requests are cancelled on registration
	stop   chan struct{}
	done   chan struct{}
}

func newWatchdogs(tick time.Duration) *watchdogs {
	ws := &watchdogs{tick: tick, now: time.Now, stop: make(chan struct{}), done: make(chan struct{})}
	go ws.run()
	return ws
}

func (ws *watchdogs) run() {
	defer close(ws.done)
	t := time.NewTicker(ws.tick)
	defer t.Stop()
	for {
		select {
		case <-ws.stop:
			return
		case <-t.C:
			ws.check()
		}
	}
}

// check cancels every request past one of its deadlines.
func (ws *watchdogs) check() {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	now := ws.now()
	for w := ws.head; w != nil; w = w.next {
		if cause := w.expiredLocked(now); cause != nil {
			w.cancel(cause)
		}
	}
}

// close cancels every registered request with errClosed, so that none is
// left without its deadlines, makes later registrations fail the same way,
// and stops the goroutine.
func (ws *watchdogs) close() {
	ws.mu.Lock()
	ws.closed = true
	for w := ws.head; w != nil; w = w.next {
		w.cancel(errClosed)
	}
	ws.mu.Unlock()
	close(ws.stop)
	<-ws.done
}

// watchTick chooses the ticker period: an eighth of the shortest deadline
// or window, so each is enforced within about 12% of its length, between
// 1 ms and 1 s.
func watchTick(cfg *Config) time.Duration {
	shortest := time.Second * 8
	for _, d := range []time.Duration{cfg.Timeout, cfg.HeaderTimeout, cfg.TransferRateWindow} {
		if d > 0 && d < shortest {
			shortest = d
		}
	}
	return min(max(shortest/8, time.Millisecond), time.Second)
}

// startWatchdog registers a watchdog for a request starting at now, whose
// attempt's total timeout expires at total (zero: never). After Close the
// request is cancelled at once.
func (f *Fetcher) startWatchdog(cancel context.CancelCauseFunc, now, total time.Time) *watchdog {
	w := &watchdog{cancel: cancel, window: f.cfg.TransferRateWindow, total: total}
	if f.cfg.MinTransferRate > 0 && f.cfg.TransferRateWindow > 0 {
		w.need = int64(float64(f.cfg.MinTransferRate) * f.cfg.TransferRateWindow.Seconds())
	}
	if f.cfg.HeaderTimeout > 0 {
		w.headers = now.Add(f.cfg.HeaderTimeout)
	}
	ws := f.watch
	ws.mu.Lock()
	if ws.closed {
		w.stopped = true
		ws.mu.Unlock()
		cancel(errClosed)
		return w
	}
	w.next = ws.head
	if ws.head != nil {
		ws.head.prev = w
	}
	ws.head = w
	ws.mu.Unlock()
	return w
}

// expiredLocked returns the cause if w is past a deadline. Requires
// watchdogs.mu held.
func (w *watchdog) expiredLocked(now time.Time) error {
	switch {
	case w.stopped:
		return nil
	case !w.total.IsZero() && !now.Before(w.total):
		return errTotalTimeout
	case !w.body && !w.headers.IsZero() && !now.Before(w.headers):
		return errHeaderTimeout
	case w.wire != nil && !now.Before(w.windowEnd):
		n := w.wire.n.Load()
		if n-w.last < w.need {
			return errSlowTransfer
		}
		w.last, w.windowEnd = n, now.Add(w.window)
	}
	return nil
}

// watchBody ends the header phase at now and starts the transfer-rate
// checks on wire.
func (f *Fetcher) watchBody(w *watchdog, wire *wireCounter, now time.Time) {
	f.watch.mu.Lock()
	defer f.watch.mu.Unlock()
	w.body = true
	if w.need > 0 {
		w.wire, w.last, w.windowEnd = wire, wire.n.Load(), now.Add(w.window)
	}
}

// headersDone ends the header phase.
func (f *Fetcher) headersDone(w *watchdog) {
	f.watch.mu.Lock()
	defer f.watch.mu.Unlock()
	w.body = true
}

// stopWatchdog unregisters w; it is idempotent.
func (f *Fetcher) stopWatchdog(w *watchdog) {
	ws := f.watch
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if w.stopped {
		return
	}
	w.stopped = true
	if w.prev != nil {
		w.prev.next = w.next
	} else {
		ws.head = w.next
	}
	if w.next != nil {
		w.next.prev = w.prev
	}
	w.prev, w.next = nil, nil
}

// ctxCause returns our own timeout, Close or the caller's cancellation
// behind a failure, or nil.
func (f *Fetcher) ctxCause(parent, ctx context.Context) error {
	if err := parent.Err(); err != nil {
		return err
	}
	switch cause := context.Cause(ctx); cause {
	case errClosed:
		return ErrClosed
	case errTotalTimeout:
		return fmt.Errorf("%w: %w (%s)", ErrTimeout, cause, f.cfg.Timeout)
	case errHeaderTimeout:
		return fmt.Errorf("%w: %w (%s)", ErrTimeout, cause, f.cfg.HeaderTimeout)
	case errSlowTransfer:
		return fmt.Errorf("%w: %w (%d B/s over %s)", ErrTimeout, cause, f.cfg.MinTransferRate, f.cfg.TransferRateWindow)
	}
	return nil
}

// classify wraps a transport or body error with the sentinel it stands for
// and decides whether it is transient.
func (f *Fetcher) classify(parent, ctx context.Context, u *url.URL, err error) exchangeResult {
	wrap := func(e error, transient bool) exchangeResult {
		return exchangeResult{err: fmt.Errorf("fetch %s: %w", u.Redacted(), e), transient: transient}
	}
	if cerr := f.ctxCause(parent, ctx); cerr != nil {
		r := wrap(cerr, false)
		// The caller giving up or closing the Fetcher is not the host's
		// failure; our own timeouts are.
		r.aborted = parent.Err() != nil || cerr == ErrClosed
		return r
	}
	if errors.Is(err, ErrBlockedAddress) {
		return wrap(err, false)
	}
	// net/http reports oversized headers only as text: "server response
	// headers exceeded N bytes" over HTTP/1, and over HTTP/2 "response
	// header list larger than advertised limit" when the header block came
	// in one frame. A larger block, or a single field over the limit, ends
	// the HTTP/2 connection with a PROTOCOL_ERROR or COMPRESSION_ERROR
	// that net/http does not tell apart from other framing errors, so that
	// one is reported as it comes.
	if msg := err.Error(); strings.Contains(msg, "response headers exceeded") ||
		strings.Contains(msg, "response header list larger than advertised limit") {
		return wrap(fmt.Errorf("%w: over %d bytes", ErrHeadersTooLarge, f.cfg.MaxHeaderBytes), false)
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return wrap(fmt.Errorf("%w: %w", ErrTimeout, err), true)
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) && dnsErr.IsNotFound {
		return wrap(err, false)
	}
	return wrap(err, true)
}

// reqTrace collects one request's timing and connection: DNS and connect
// times from the Fetcher's dialler (found through the context), TLS times,
// connection reuse and the remote address from httptrace, and from the
// transport's Proxy function whether the request went through a proxy.
// Dials may finish on the transport's goroutines after the request gave up
// on them, so fields are guarded.
//
// A reqTrace is the context the request is sent with: it extends the
// request's own context with itself under reqTraceKey, which saves a
// context.WithValue allocation per request.
type reqTrace struct {
	context.Context
	f     *Fetcher
	u     *url.URL
	trace httptrace.ClientTrace

	mu       sync.Mutex
	timing   Timing
	dialed   bool
	connSeen bool           // GotConn reported the connection
	proxied  bool           // the transport's Proxy chose a proxy
	remote   netip.AddrPort // the connection's remote address, unless proxied
	tlsStart time.Time
	blocked  error
}

// Value returns rt for reqTraceKey and otherwise the request context's
// value.
func (rt *reqTrace) Value(key any) any {
	if _, ok := key.(reqTraceKey); ok {
		return rt
	}
	return rt.Context.Value(key)
}

// drainLimit is the most of a body left unread after its decoder ended
// that is read to keep the connection alive.
const drainLimit = 4 << 10

// ignoredRequestFields are the fields net/http does not send from a
// request's Header (it writes its own), left out of the header template so
// that Response.RequestHeader does not report them.
var ignoredRequestFields = map[string]bool{
	"Host": true, "Content-Length": true, "Transfer-Encoding": true, "Trailer": true,
}

// reqTraceKey is the context key under which the dialler finds the
// request's reqTrace.
type reqTraceKey struct{}

// traceFrom returns the reqTrace in ctx, or nil.
func traceFrom(ctx context.Context) *reqTrace {
	rt, _ := ctx.Value(reqTraceKey{}).(*reqTrace)
	return rt
}

func (rt *reqTrace) dial(dns, connect time.Duration) {
	if rt == nil {
		return
	}
	rt.mu.Lock()
	defer rt.mu.Unlock()
	rt.dialed = true
	rt.timing.DNS, rt.timing.Connect = dns, connect
}

// setProxied records that the request is sent through a proxy.
func (rt *reqTrace) setProxied() {
	if rt == nil {
		return
	}
	rt.mu.Lock()
	defer rt.mu.Unlock()
	rt.proxied = true
}

// headers records the time to the response headers and returns the remote
// address of the connection that carried the request.
func (rt *reqTrace) headers(firstByte time.Duration) netip.AddrPort {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	rt.timing.FirstByte = firstByte
	return rt.remote
}

// result returns the timing with total set. For a RoundTripper that does
// not report its connections, a request that did not dial reused one.
func (rt *reqTrace) result(total time.Duration) Timing {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	t := rt.timing
	t.Total = total
	if !rt.connSeen && !rt.dialed && t.TLS == 0 {
		t.Reused = true
	}
	return t
}

func (rt *reqTrace) tlsHandshakeStart() {
	rt.mu.Lock()
	rt.tlsStart = time.Now()
	rt.mu.Unlock()
}

func (rt *reqTrace) tlsHandshakeDone(tls.ConnectionState, error) {
	rt.mu.Lock()
	rt.timing.TLS = time.Since(rt.tlsStart)
	rt.mu.Unlock()
}

func (rt *reqTrace) gotConn(info httptrace.GotConnInfo) {
	ap, apErr := remoteAddrPort(info.Conn)
	rt.mu.Lock()
	defer rt.mu.Unlock()
	rt.connSeen = true
	rt.timing.Reused = info.Reused
	// The last connection reported is the one that carried the request
	// (net/http retries a request that failed on a kept-alive connection
	// on another).
	rt.remote = netip.AddrPort{}
	if apErr == nil && !rt.proxied {
		rt.remote = netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
	}
	if !rt.f.traceGuard {
		return
	}
	host := rt.u.Hostname()
	if apErr != nil {
		rt.blocked = &BlockedAddressError{Host: host, Reason: "unverifiable (" + apErr.Error() + ")"}
	} else {
		rt.blocked = rt.f.guard.Check(host, ap.Addr())
	}
	if rt.blocked != nil {
		// Closing before the request is written means not one byte
		// reaches the refused address.
		info.Conn.Close()
	}
}
