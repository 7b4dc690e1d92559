// Package crawltest serves a deterministic synthetic web for testing
// crawlers, in the spirit of net/http/httptest.
//
// NewWeb starts one net/http server on 127.0.0.1 that answers for many
// virtual hosts (h0000.test, h0001.test, …, chosen by the Host header). Any
// client reaches them through Web.Client, Web.Transport or Web.DialContext,
// so URLs keep real-looking hosts such as http://h0042.test/docs/page-7.html.
// The reserved .test top-level domain (RFC 6761 §6.2) guarantees that these
// names can never collide with a real site.
//
// The web is generated from Config.Seed on demand, page by page, so a web of
// a thousand hosts costs no memory until its pages are requested, and every
// run with the same Config serves byte-for-byte the same content. It holds
// what a crawler has to get right:
//
//   - pages of 10–30 KB of HTML (navigation, prose, lists) whose links are
//     written in every spelling a crawler must fold into one URL: relative,
//     with "..", absolute, scheme-relative, upper-case host, default port,
//     fragments, tracking parameters, percent-encoded unreserved characters,
//     empty queries and reordered query parameters; plus mailto: and
//     javascript: links, links to other hosts and broken links;
//   - robots.txt variants (see RobotsVariant): missing (404), failing (503,
//     which RFC 9309 §2.3.1.4 says means "disallow everything"), Disallow
//     prefixes, Crawl-delay, a group for a specific agent, wildcard rules;
//   - exact duplicates under different URLs (/index.html, print versions)
//     and clusters of near-duplicate pages;
//   - spider traps on some hosts (see TrapKind);
//   - hostile endpoints for fetcher tests on the host hostile.test (see
//     HostileURL and the Hostile* constants);
//   - optionally (Config.JSPages), a JavaScript site on app.test whose pages
//     build their links with scripts, the ways single-page applications do,
//     beside pages that need no script, with ground truth for which is which
//     (see JSHost and JSTruth).
//
// Web.Truth reports the ground truth computed from the generator: every page
// a robots-respecting crawler can reach from Web.Seeds, which of them are
// duplicates, and where the traps are. Web.Report returns the server's own
// accounting of what a crawler did: requests per URL, robots.txt fetches,
// robots violations, politeness violations (requests to one host that came
// too soon after the previous one, or overlapped it), duplicate fetches and
// trap fetches.
//
// Canonical URLs. Every page has one canonical URL, the form the generator
// uses: http://hNNNN.test/path?query with a lower-case host, no port, no
// fragment, no tracking parameters, no percent-encoding of unreserved
// characters, no dot segments, and query parameters in sorted order.
// Canonical maps any spelling of a page's URL to that form, so a crawler's
// output can be compared with the truth whatever normalization it applies.
//
// crawltest imports no other crawlkit package: it judges them and must not
// share their bugs.
package crawltest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// ErrUnknownHost is returned by Web.DialContext for an address that is not
// one of the web's virtual hosts. The synthetic web never connects anywhere
// else, so a test that follows a redirect to a real or private address fails
// with this error instead of sending traffic.
var ErrUnknownHost = errors.New("crawltest: not a host of the synthetic web")

// HostileHost is the virtual host that serves the hostile endpoints (see
// HostileURL). It has no robots.txt (404), and its requests are left out of
// the robots and politeness accounting.
const HostileHost = "hostile.test"

// Config describes a synthetic web. The zero value is a small web with
// every feature enabled; fields left at zero take the documented defaults.
type Config struct {
	// Hosts is the number of virtual hosts (default 10). Host i is named
	// HostName(i), for example "h0007.test".
	Hosts int
	// PagesPerHost is the number of distinct pages on each host, not
	// counting duplicates and trap pages (default 20).
	PagesPerHost int
	// LinksPerPage is the number of links from each page's text to other
	// pages (default 10). Navigation, footer, junk and trap links come on
	// top. Pages stay within 10–30 KB up to about 40 links per page; more
	// links make them longer.
	LinksPerPage int
	// Seed selects the web: the same Seed and sizes give the same web.
	Seed int64

	// Agent is the crawler's robots.txt product token, used by Truth and
	// written into the robots.txt of hosts with the RobotsAgentGroup
	// variant (default "crawlkit"). Request accounting does not use it:
	// each request is judged by the product token of its own User-Agent.
	Agent string
	// MaxDepth bounds the link depth (seeds are at depth 0) that Truth
	// considers reachable; 0 means no bound.
	MaxDepth int
	// RobotsVariants lists the robots.txt variants to deal out to hosts:
	// host i gets RobotsVariants[i % len(RobotsVariants)]. Nil means
	// AllRobotsVariants().
	RobotsVariants []RobotsVariant
	// CrawlDelay is the Crawl-delay that hosts with a Crawl-delay write in
	// their robots.txt (default 1s; it is written in seconds with up to
	// three decimals).
	CrawlDelay time.Duration
	// NoTraps removes the spider traps.
	NoTraps bool

	// MinGap is the shortest allowed time between the end of one request
	// to a host and the start of the next; a request that comes sooner
	// counts as a spacing violation (see Report for when a request ends).
	// A host's Crawl-delay, where it has one, raises the gap for that
	// host. Zero means only Crawl-delay is enforced.
	MinGap time.Duration
	// MaxPerHost is the number of requests to one host that may be in
	// flight at once before further requests count as concurrency
	// violations (default 1).
	MaxPerHost int
	// PolitenessGroup, if set, maps a host name to the group whose
	// requests are spaced and counted together, as one server behind
	// several host names sees them: MinGap, the Crawl-delay of the
	// requested host and MaxPerHost then apply to the group's requests,
	// and a host's Gaps, MinGap and MaxInFlight are measured on its
	// group's requests. Nil: every host is its own group.
	PolitenessGroup func(host string) string
	// Now returns the current time for the accounting (default
	// time.Now). Tests inject a fake clock to make spacing checks
	// deterministic. It is called with the accounting's lock held, so it
	// must not call the Web's methods.
	Now func() time.Time
	// Latency delays every page and robots.txt response by this much, to
	// simulate a slow network or server.
	Latency time.Duration
	// OnRequest, if set, is called for every request after it has been
	// accounted and before it is answered, on the request's goroutine.
	OnRequest func(*http.Request)

	// DripInterval is the pause between bytes of the slow-drip endpoint
	// (default 200ms).
	DripInterval time.Duration
	// BombSize is the decompressed size of the compression bombs
	// (default 1 GiB).
	BombSize int64
	// EndlessSize caps the "endless" body, which otherwise runs until the
	// client goes away (default 4 GiB).
	EndlessSize int64

	// JSPages, if positive, serves the JavaScript site on JSHost with this
	// many pages, its home included: the home and /p/1 … /p/(JSPages-1)
	// (the JSLeakPath page comes on top); see JSHost and JSTruth. Zero
	// serves no such host.
	JSPages int
}

func (c *Config) ensureDefaults() error {
	if c.Hosts == 0 {
		c.Hosts = 10
	}
	if c.PagesPerHost == 0 {
		c.PagesPerHost = 20
	}
	if c.LinksPerPage == 0 {
		c.LinksPerPage = 10
	}
	if c.Hosts < 0 || c.PagesPerHost < 0 || c.LinksPerPage < 0 {
		return fmt.Errorf("%w: Hosts, PagesPerHost and LinksPerPage must not be negative", ErrConfig)
	}
	if c.Hosts > maxHosts || c.PagesPerHost > maxPages {
		return fmt.Errorf("%w: at most %d hosts of %d pages", ErrConfig, maxHosts, maxPages)
	}
	if c.JSPages < 0 || c.JSPages > maxJSPages {
		return fmt.Errorf("%w: JSPages must be within 0..%d", ErrConfig, maxJSPages)
	}
	if c.Agent == "" {
		c.Agent = "crawlkit"
	}
	if !validToken(c.Agent) {
		return fmt.Errorf("%w: Agent %q is not a product token (letters, '-' and '_')", ErrConfig, c.Agent)
	}
	// Copy, so that later changes to the caller's slice cannot change a
	// running web.
	if c.RobotsVariants == nil {
		c.RobotsVariants = AllRobotsVariants()
	} else {
		c.RobotsVariants = slices.Clone(c.RobotsVariants)
	}
	if len(c.RobotsVariants) == 0 {
		return fmt.Errorf("%w: RobotsVariants is empty", ErrConfig)
	}
	for _, v := range c.RobotsVariants {
		if v < 0 || int(v) >= len(robotsNames) {
			return fmt.Errorf("%w: unknown robots variant %d", ErrConfig, int(v))
		}
	}
	if c.CrawlDelay == 0 {
		c.CrawlDelay = time.Second
	}
	if c.CrawlDelay < time.Millisecond {
		return fmt.Errorf("%w: CrawlDelay must be at least 1ms", ErrConfig)
	}
	if c.MaxPerHost == 0 {
		c.MaxPerHost = 1
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.DripInterval <= 0 {
		c.DripInterval = 200 * time.Millisecond
	}
	if c.BombSize <= 0 {
		c.BombSize = 1 << 30
	}
	if c.EndlessSize <= 0 {
		c.EndlessSize = 4 << 30
	}
	return nil
}

// ErrConfig is wrapped by the errors NewWeb returns for an invalid Config.
var ErrConfig = errors.New("crawltest: invalid config")

const (
	maxHosts = 1_000_000
	maxPages = 1_000_000
)

// Web is a running synthetic web. Create one with NewWeb and stop it with
// Close. Its methods are safe for concurrent use.
type Web struct {
	cfg   Config
	gen   *generator
	ln    net.Listener
	srv   *http.Server
	tr    *http.Transport
	acct  *accounting
	done  chan struct{} // closed by Close; ends hostile endpoints
	bombs bombCache
	js    jsAccounting

	// mu guards closed and the handler count in wg, so that no handler
	// starts (wg.Add) once Close is waiting for the others (wg.Wait).
	mu     sync.Mutex
	closed bool
	wg     sync.WaitGroup
	serveg sync.WaitGroup // the Serve goroutine
	once   sync.Once
}

// NewWeb generates the web described by cfg and starts serving it on a
// loopback port. The caller must call Close.
func NewWeb(cfg Config) (*Web, error) {
	if err := cfg.ensureDefaults(); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("crawltest: listen: %w", err)
	}
	w := &Web{
		cfg:  cfg,
		gen:  newGenerator(&cfg),
		ln:   ln,
		done: make(chan struct{}),
	}
	w.acct = newAccounting(w)
	w.srv = &http.Server{
		Handler:           http.HandlerFunc(w.serve),
		ReadHeaderTimeout: 30 * time.Second,
		// Long enough for the ever-growing query trap to run for a
		// long while, short enough to bound memory per request.
		MaxHeaderBytes: 1 << 20,
	}
	w.tr = &http.Transport{
		DialContext:         w.DialContext,
		MaxIdleConns:        1024,
		MaxIdleConnsPerHost: 64,
		IdleConnTimeout:     90 * time.Second,
		// Bound what the default client accepts from the huge-headers
		// endpoint while still letting it through.
		MaxResponseHeaderBytes: 16 << 20,
	}
	w.serveg.Add(1)
	go func() {
		defer w.serveg.Done()
		// Serve returns http.ErrServerClosed once Close runs.
		_ = w.srv.Serve(ln)
	}()
	return w, nil
}

// Close stops the server, ends every open response (including the hostile
// endpoints; a response not yet complete ends with a broken connection,
// never a clean one) and waits until all of the web's goroutines have
// returned.
func (w *Web) Close() {
	w.once.Do(func() {
		w.mu.Lock()
		w.closed = true
		w.mu.Unlock()
		close(w.done)
		_ = w.srv.Close()
		w.serveg.Wait()
		w.wg.Wait()
		w.tr.CloseIdleConnections()
	})
}

// Addr returns the server's real address (127.0.0.1:port). Clients do not
// need it: Client, Transport and DialContext route virtual hosts to it.
func (w *Web) Addr() string { return w.ln.Addr().String() }

// Config returns the web's configuration with defaults filled in.
func (w *Web) Config() Config { return w.cfg }

// DialContext connects to the web's server for any virtual host address
// ("h0042.test:80", "hostile.test:80"; upper case and a trailing dot are
// accepted). The connection's remote address is 127.0.0.1, so a fetcher
// with a private-address guard must be told to allow loopback. Any other
// address is refused with ErrUnknownHost before anything is dialed.
func (w *Web) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	if !w.isVirtualHost(host) {
		return nil, fmt.Errorf("dial %s %s: %w", network, addr, ErrUnknownHost)
	}
	var d net.Dialer
	return d.DialContext(ctx, "tcp", w.ln.Addr().String())
}

// isVirtualHost reports whether host names a host this web serves.
func (w *Web) isVirtualHost(host string) bool {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if host == HostileHost || host == JSHost && w.cfg.JSPages > 0 {
		return true
	}
	_, ok := w.gen.hostIndex(host)
	return ok
}

// Transport returns the web's transport: it dials every virtual host
// through DialContext and uses no proxy. It is shared by Client; callers may
// Clone it to change settings.
func (w *Web) Transport() *http.Transport { return w.tr }

// Client returns a new http.Client that reaches every virtual host through
// Transport. It follows up to 10 redirects like http.DefaultClient.
func (w *Web) Client() *http.Client { return &http.Client{Transport: w.tr} }

// Seeds returns the root URL of every host ("http://h0000.test/", …), the
// starting points from which Truth computes reachability.
func (w *Web) Seeds() []string {
	seeds := make([]string, w.cfg.Hosts)
	for i := range seeds {
		seeds[i] = "http://" + HostName(i) + "/"
	}
	return seeds
}

// HostName returns the name of virtual host i, such as "h0042.test".
func HostName(i int) string {
	if i < 0 {
		return fmt.Sprintf("h%04d.test", i)
	}
	var b [24]byte
	n := len(b) - len(".test")
	copy(b[n:], ".test")
	for d := 0; d < 4 || i > 0; d++ {
		n--
		b[n] = byte('0' + i%10)
		i /= 10
	}
	n--
	b[n] = 'h'
	return string(b[n:])
}

// HostInfo describes one virtual host.
type HostInfo struct {
	Name   string        // e.g. "h0003.test"
	Robots RobotsVariant // what its /robots.txt serves
	// CrawlDelay is the Crawl-delay the host asks of Config.Agent (zero if
	// none).
	CrawlDelay time.Duration
	Trap       TrapKind // the spider trap the host contains, or NoTrap
}

// Hosts describes every virtual host, in order.
func (w *Web) Hosts() []HostInfo {
	hosts := make([]HostInfo, w.cfg.Hosts)
	for i := range hosts {
		hosts[i] = HostInfo{
			Name:       HostName(i),
			Robots:     w.gen.robots(i),
			CrawlDelay: w.gen.crawlDelay(i, w.cfg.Agent),
			Trap:       w.gen.trap(i),
		}
	}
	return hosts
}

// serve is the server's handler: it accounts for the request and answers
// it for whichever virtual host it names.
func (w *Web) serve(rw http.ResponseWriter, r *http.Request) {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		http.Error(rw, "crawltest: web closed", http.StatusServiceUnavailable)
		return
	}
	w.wg.Add(1)
	w.mu.Unlock()
	defer w.wg.Done()
	host := strings.ToLower(r.Host)
	if h, p, err := net.SplitHostPort(host); err == nil && p == "80" {
		host = h
	}
	host = strings.TrimSuffix(host, ".")
	if host == HostileHost {
		w.acct.hostile(r)
		if w.cfg.OnRequest != nil {
			w.cfg.OnRequest(r)
		}
		w.serveHostile(rw, r)
		return
	}
	if host == JSHost && w.cfg.JSPages > 0 {
		w.acct.hostile(r)
		w.serveJS(rw, r)
		return
	}
	hi, ok := w.gen.hostIndex(host)
	if !ok {
		http.Error(rw, "crawltest: unknown virtual host "+r.Host, http.StatusMisdirectedRequest)
		return
	}
	res := w.gen.resolve(hi, r)
	end := w.acct.begin(hi, r, res)
	ended := false
	ready := func() {
		if !ended {
			ended = true
			end()
		}
	}
	defer ready()
	if w.cfg.OnRequest != nil {
		w.cfg.OnRequest(r)
	}
	if w.cfg.Latency > 0 {
		w.sleep(r.Context(), w.cfg.Latency)
	}
	// The request stops counting as in flight once its response is
	// ready, before any of it is written: a client cannot see the
	// response before the server has recorded its end, so a client that
	// waits for one response before sending the next request is never
	// blamed for overlapping, whichever connection it uses.
	ready()
	w.gen.write(rw, r, hi, res)
}

// sleep waits for d. If the request ends or the web closes first, it
// aborts the handler (http.ErrAbortHandler), so that the connection is cut
// instead of carrying a clean, empty response.
func (w *Web) sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
		panic(http.ErrAbortHandler)
	case <-w.done:
		panic(http.ErrAbortHandler)
	}
}
