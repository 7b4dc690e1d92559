// Package chromium is the render.Renderer that drives an installed Chromium
// over the DevTools protocol (github.com/chromedp/chromedp). A Browser keeps a pool of tabs of bounded
// size, bounds each render in time, in bytes loaded and in subresource
// requests, and it gives the browser no network of its own: every request a
// page makes is paused by the DevTools Fetch domain and answered by the
// caller's Fetcher (normally a *fetch.Fetcher), so the address guard, the
// robots.txt and scope check and the per-host politeness of the crawl apply to
// the browser exactly as they apply to plain fetches. The page being rendered
// is answered from the body the crawler already fetched, so rendering costs no
// second request for it. Requests that are refused are reported in
// render.Result.Blocked with the reason. As a second line of defence, the browser is
// started with a proxy that is a local sink which answers nothing, so a
// connection that escaped interception (a WebSocket, a preconnect, the
// browser's own background services) reaches nothing.
//
// A render ends once the page has loaded and then, for Config.Settle, no
// request was in flight, no short timer (setTimeout up to 1 s) pending and
// the DOM unchanged; or at Config.Timeout, when the DOM is taken as it is
// and the Result marked Truncated.
package chromium

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/chromedp/cdproto/cdp"
	cdpfetch "github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/crawlkit/crawlkit/extract"
	"github.com/crawlkit/crawlkit/fetch"
	"github.com/crawlkit/crawlkit/render"
)

// Defaults applied by New.
const (
	DefaultTabs          = 2
	DefaultTimeout       = 30 * time.Second
	DefaultMaxPageBytes  = 10 << 20
	DefaultMaxRequests   = 100
	DefaultSettle        = 500 * time.Millisecond
	DefaultMaxTabRenders = 100
)

// DefaultSkipTypes returns the resource types not loaded by default: they
// cost requests and politeness budget and never add links to the DOM. A new
// slice on every call, so that no importer changes another's default.
func DefaultSkipTypes() []string { return slices.Clone(defaultSkipTypes) }

// defaultSkipTypes is the list DefaultSkipTypes copies; never modified.
var defaultSkipTypes = []string{"Image", "Media", "Font", "Ping", "CSPViolationReport", "Manifest"}

// Config configures a Browser renderer. Every zero field takes a safe
// default; Fetcher or UserAgent is required.
type Config struct {
	// ExecPath is the browser executable. Empty looks for chromium,
	// chromium-browser, google-chrome and headless-shell on PATH.
	ExecPath string

	// Fetcher makes every request of the browser. The crawler passes a
	// *fetch.Fetcher sharing its guard allowances, robots.txt check and
	// politeness. Nil makes a *fetch.Fetcher from UserAgent and AllowCIDRs
	// (address guard on, default limits), closed by Close.
	Fetcher render.Fetcher
	// UserAgent is the browser's navigator.userAgent and, without a
	// Fetcher, the User-Agent of its requests.
	UserAgent string
	// AllowCIDRs are the address prefixes the guard lets through; they
	// should match the Fetcher's. URLs whose host is an IP address outside
	// them are refused before the Fetcher is called, so they are refused
	// even behind a custom dial function.
	AllowCIDRs []netip.Prefix

	// Tabs is the most pages rendered at once, each in a browser tab of
	// its own (default 2; each costs tens of MiB, see BENCHMARKS.md).
	Tabs int
	// Timeout bounds one render (default 30 s). A page whose network
	// does not settle by then is returned as it is, marked Truncated.
	Timeout time.Duration
	// MaxPageBytes bounds the body bytes handed to the browser for one
	// render, the page included (a longer page is cut and the render.Result
	// marked Truncated), and the bytes of the serialized DOM, render.Result.HTML,
	// which is cut at a UTF-8 character boundary (default 10 MiB).
	MaxPageBytes int64
	// MaxRequests bounds the subresource requests of one render (default
	// 100).
	MaxRequests int
	// Settle is how long the network must stay idle after the load event
	// for the render to end (default 500 ms): scripts that fetch data and
	// build the page from it get that long after their last response.
	Settle time.Duration
	// MaxTabRenders is how many pages a tab renders before it is replaced
	// by a fresh one (default 100), which bounds what a page can leave
	// behind (memory, cookies, storage).
	MaxTabRenders int
	// SkipTypes lists the browser resource types that are not loaded
	// (default DefaultSkipTypes()); an empty non-nil slice loads everything.
	SkipTypes []string
	// Extract configures link and text extraction from the rendered DOM.
	Extract extract.Config
}

// Browser renders pages in a headless Chromium it starts and owns. Create
// one with New, use it from any number of goroutines, and Close it.
//
// If the browser process exits on its own (it crashed, or the kernel killed
// it for lack of memory), the renders in progress fail with
// render.ErrBrowserExited, and the next render starts a new browser with a fresh
// profile. Start attempts are spaced so that a browser that cannot start
// is not started in a loop: the next attempt is due 1 s after the last
// one, twice as long after each failed one, up to 1 min; until it is due,
// renders fail at once with render.ErrBrowserExited.
type Browser struct {
	cfg        Config
	guard      *fetch.Guard
	fetcher    render.Fetcher
	ownFetcher *fetch.Fetcher
	skip       map[network.ResourceType]bool

	exe          string
	sink         net.Listener
	escaped      atomic.Int64
	escMu        sync.Mutex
	escTargets   []string
	cur          atomic.Pointer[instance] // the browser, running or exited
	starting     chan struct{}            // held to check or replace cur
	nextStart    time.Time                // no start attempt before then; under starting
	backoff      time.Duration            // from one start attempt to the next; under starting
	startErr     error                    // of the last start attempt; under starting
	slots        chan struct{}
	renders      atomic.Int64
	tabsOpened   atomic.Int64
	restarts     atomic.Int64   // browsers started after the first exited
	background   sync.WaitGroup // the sink's accept loop
	renderers    sync.WaitGroup // Render calls in progress
	mu           sync.Mutex
	idle         []*tab
	closed       bool
	closing      context.Context // cancelled when Close starts: ends renders in progress
	stopRenders  context.CancelFunc
	closeOnce    sync.Once
	closeErr     error
	closedSignal chan struct{}
}

// New starts Browser and returns a renderer using it. It fails with
// render.ErrNoBrowser when no executable is found.
func New(cfg Config) (*Browser, error) {
	if cfg.Fetcher == nil && cfg.UserAgent == "" {
		return nil, fmt.Errorf("%w: Config needs a render.Fetcher or a UserAgent", render.ErrBadRequest)
	}
	if cfg.Tabs <= 0 {
		cfg.Tabs = DefaultTabs
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.MaxPageBytes <= 0 {
		cfg.MaxPageBytes = DefaultMaxPageBytes
	}
	if cfg.MaxRequests <= 0 {
		cfg.MaxRequests = DefaultMaxRequests
	}
	if cfg.Settle <= 0 {
		cfg.Settle = DefaultSettle
	}
	if cfg.MaxTabRenders <= 0 {
		cfg.MaxTabRenders = DefaultMaxTabRenders
	}
	if cfg.SkipTypes == nil {
		cfg.SkipTypes = defaultSkipTypes
	}
	exe := cfg.ExecPath
	if exe == "" {
		exe = FindBrowser()
		if exe == "" {
			return nil, render.ErrNoBrowser
		}
	} else if _, err := exec.LookPath(exe); err != nil {
		return nil, fmt.Errorf("%w: %w", render.ErrNoBrowser, err)
	}
	c := &Browser{
		cfg:          cfg,
		guard:        fetch.NewGuard(cfg.AllowCIDRs...),
		fetcher:      cfg.Fetcher,
		skip:         map[network.ResourceType]bool{},
		exe:          exe,
		slots:        make(chan struct{}, cfg.Tabs),
		starting:     make(chan struct{}, 1),
		closedSignal: make(chan struct{}),
	}
	c.closing, c.stopRenders = context.WithCancel(context.Background())
	for _, t := range cfg.SkipTypes {
		c.skip[network.ResourceType(t)] = true
	}
	if c.fetcher == nil {
		f, err := fetch.New(fetch.Config{UserAgent: cfg.UserAgent, AllowCIDRs: cfg.AllowCIDRs})
		if err != nil {
			return nil, fmt.Errorf("render: %w", err)
		}
		c.fetcher, c.ownFetcher = f, f
	}
	if err := c.startSink(); err != nil {
		c.Close()
		return nil, err
	}
	inst, err := c.startBrowser(context.Background())
	if err != nil {
		c.Close()
		return nil, err
	}
	c.cur.Store(inst)
	c.backoff = restartBackoff
	c.nextStart = time.Now().Add(c.backoff)
	return c, nil
}

// FindBrowser returns the path of a Browser executable on PATH, or "".
func FindBrowser() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// startSink starts the proxy sink.
func (c *Browser) startSink() error {
	// The sink is the browser's proxy: every connection the browser opens
	// by itself (one that interception did not catch) ends here, is
	// counted and closed. The browser has no other way out.
	sink, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("render: proxy sink: %w", err)
	}
	c.sink = sink
	c.background.Add(1)
	go func() {
		defer c.background.Done()
		c.acceptEscapes(sink)
	}()
	return nil
}

// Spacing of browser start attempts after the browser exited (see
// Browser).
const (
	restartBackoff    = time.Second
	maxRestartBackoff = time.Minute
)

// instance is one browser process.
type instance struct {
	ctx         context.Context // the chromedp context that owns the browser
	kill        context.CancelFunc
	stopBrowser context.CancelFunc
	stopAlloc   context.CancelFunc
	lost        <-chan struct{} // closed when the connection to the browser drops
	dir         string          // its profile
	pid         int
	stopOnce    sync.Once
	stopErr     error
}

// exited reports whether the browser process has gone (or its connection,
// which chromedp answers by killing it).
func (in *instance) exited() bool {
	select {
	case <-in.lost:
		return true
	default:
		return false
	}
}

// stop stops the browser, waits for its process to exit, and removes its
// profile directory. It is safe to call more than once.
func (in *instance) stop() error {
	in.stopOnce.Do(func() {
		in.stopBrowser()
		in.stopAlloc() // waits for the process to exit
		in.kill()
		if err := os.RemoveAll(in.dir); err != nil {
			in.stopErr = fmt.Errorf("render: removing profile: %w", err)
		}
	})
	return in.stopErr
}

// startBrowser starts a browser with a profile directory of its own. Ending
// ctx or Close stops the start.
func (c *Browser) startBrowser(ctx context.Context) (*instance, error) {
	dir, err := os.MkdirTemp("", "crawlkit-render-*")
	if err != nil {
		return nil, fmt.Errorf("render: profile directory: %w", err)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(c.exe),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(dir),
		chromedp.ProxyServer("http://" + c.sink.Addr().String()),
		// Without "<-loopback>" Browser bypasses the proxy for
		// loopback addresses; with it, those go to the sink too.
		chromedp.Flag("proxy-bypass-list", "<-loopback>"),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-default-apps", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-breakpad", true),
		chromedp.Flag("disable-domain-reliability", true),
		chromedp.Flag("disable-client-side-phishing-detection", true),
		chromedp.Flag("no-pings", true),
		chromedp.Flag("dns-prefetch-disable", true),
		chromedp.Flag("metrics-recording-only", true),
		chromedp.Flag("safebrowsing-disable-auto-update", true),
		chromedp.Flag("password-store", "basic"),
		chromedp.Flag("use-mock-keychain", true),
		chromedp.Flag("disable-field-trial-config", true),
		chromedp.Flag("no-service-autorun", true),
		chromedp.Flag("block-new-web-contents", true),
		chromedp.Flag("force-webrtc-ip-handling-policy", "disable_non_proxied_udp"),
		chromedp.Flag("blink-settings", "imagesEnabled=false"),
		// Keep frames from other sites in the page's process, so that
		// their requests are intercepted with the page's. The browser
		// has no network of its own, which is what site isolation
		// protects in a user's browser.
		chromedp.Flag("disable-site-isolation-trials", true),
		chromedp.Flag("disable-features", "IsolateOrigins,site-per-process,Translate,MediaRouter,OptimizationHints,AutofillServerCommunication,LocalNetworkAccessChecks,PrivateNetworkAccessSendPreflights,NetworkTimeServiceQuerying,DiceWebSigninInterception,AccountConsistency,PushMessaging,CertificateTransparencyComponentUpdater"),
		chromedp.WindowSize(1280, 1024),
	}
	if c.cfg.UserAgent != "" {
		opts = append(opts, chromedp.UserAgent(c.cfg.UserAgent))
	}
	// The first Do starts the browser and binds its life to bctx (see
	// chromedp.NewContext), which only instance.stop cancels; a start
	// that ctx or Close stops cancels its parent, pctx, without waiting.
	pctx, kill := context.WithCancel(context.Background())
	actx, acancel := chromedp.NewExecAllocator(pctx, opts...)
	bctx, bcancel := chromedp.NewContext(actx)
	inst := &instance{ctx: bctx, kill: kill, stopBrowser: bcancel, stopAlloc: acancel, dir: dir}
	stop := context.AfterFunc(ctx, kill)
	stopOnClose := context.AfterFunc(c.closing, kill)
	err = chromedp.Do(bctx)
	if stopped, stoppedOnClose := stop(), stopOnClose(); !stopped || !stoppedOnClose {
		err = errors.Join(err, context.Canceled)
	}
	if err != nil {
		_ = inst.stop()
		switch {
		case c.closing.Err() != nil:
			return nil, render.ErrClosed
		case ctx.Err() != nil:
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("render: starting %s: %w", c.exe, err)
	}
	b := chromedp.FromContext(bctx).Browser
	inst.lost = b.LostConnection
	if p := b.Process(); p != nil {
		inst.pid = p.Pid
	}
	return inst, nil
}

// browser returns the running browser. When the last one has exited, it
// starts a new one if a start attempt is due (see Browser), and fails with
// render.ErrBrowserExited otherwise.
func (c *Browser) browser(ctx context.Context) (*instance, error) {
	select {
	case c.starting <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.closedSignal:
		return nil, render.ErrClosed
	}
	defer func() { <-c.starting }()
	old := c.cur.Load()
	if !old.exited() {
		return old, nil
	}
	if wait := time.Until(c.nextStart); wait > 0 {
		if c.startErr != nil {
			return nil, fmt.Errorf("%w: next start attempt in %v, the last failed: %w", render.ErrBrowserExited, wait.Round(time.Millisecond), c.startErr)
		}
		return nil, fmt.Errorf("%w: next start attempt in %v", render.ErrBrowserExited, wait.Round(time.Millisecond))
	}
	_ = old.stop() // reaps the process and removes its profile
	inst, err := c.startBrowser(ctx)
	if err != nil {
		if errors.Is(err, render.ErrClosed) {
			return nil, err
		}
		if ctx.Err() != nil {
			// Not the browser's fault, so the wait does not grow; but the
			// next attempt still waits, or renders whose deadlines are
			// shorter than the browser's start would each start one and
			// kill it half-way.
			c.nextStart = time.Now().Add(c.backoff)
			return nil, err
		}
		c.startErr = err
		c.backoff = min(2*c.backoff, maxRestartBackoff)
		c.nextStart = time.Now().Add(c.backoff)
		return nil, fmt.Errorf("%w: %w", render.ErrBrowserExited, err)
	}
	c.cur.Store(inst)
	c.restarts.Add(1)
	c.startErr = nil
	c.backoff = restartBackoff
	c.nextStart = time.Now().Add(c.backoff)
	return inst, nil
}

// maxEscapeTargets bounds the targets recorded by the proxy sink.
const maxEscapeTargets = 64

// acceptEscapes runs the proxy sink until it is closed: each connection is
// counted, the target of its first request line recorded, and closed
// without an answer.
func (c *Browser) acceptEscapes(sink net.Listener) {
	var readers sync.WaitGroup
	defer readers.Wait()
	active := make(chan struct{}, 8)
	for {
		conn, err := sink.Accept()
		if err != nil {
			return // closed by Close
		}
		c.escaped.Add(1)
		select {
		case active <- struct{}{}:
		default:
			_ = conn.Close() // too many at once: count only
			continue
		}
		readers.Add(1)
		go func() {
			defer readers.Done()
			defer func() { <-active }()
			defer conn.Close()
			_ = conn.SetReadDeadline(time.Now().Add(time.Second))
			buf := make([]byte, 512)
			n, _ := io.ReadAtLeast(conn, buf, 1)
			if target := proxyTarget(buf[:n]); target != "" {
				c.escMu.Lock()
				if len(c.escTargets) < maxEscapeTargets && !slices.Contains(c.escTargets, target) {
					c.escTargets = append(c.escTargets, target)
				}
				c.escMu.Unlock()
			}
		}()
	}
}

// proxyTarget returns the host:port a proxy request line asks for
// ("CONNECT host:443 HTTP/1.1", "GET http://host/path HTTP/1.1").
func proxyTarget(b []byte) string {
	line, _, _ := strings.Cut(string(b), "\r\n")
	method, rest, ok := strings.Cut(line, " ")
	if !ok {
		return ""
	}
	target, _, _ := strings.Cut(rest, " ")
	if method == http.MethodConnect {
		return target
	}
	u, err := url.Parse(target)
	if err != nil || u.Host == "" {
		return ""
	}
	if u.Port() == "" {
		return u.Host + ":80"
	}
	return u.Host
}

// escapedConns reports the connections the browser opened by itself, past
// request interception, to its proxy (the sink, which answers nothing):
// how many, and the distinct host:port targets they asked for (at most
// 64). Page requests never get there; Browser's own background services
// (component updates, account checks) that its flags do not silence do.
// Only the package's tests read it (export_test.go).
func (c *Browser) escapedConns() (n int64, targets []string) {
	c.escMu.Lock()
	defer c.escMu.Unlock()
	return c.escaped.Load(), slices.Clone(c.escTargets)
}

// browserPID returns the process id of the browser (0 if unknown). It
// changes when the browser is restarted after it exited. Only the
// package's tests and benchmarks read it (export_test.go).
func (c *Browser) browserPID() int {
	if inst := c.cur.Load(); inst != nil {
		return inst.pid
	}
	return 0
}

// Close stops every render in progress, closes the tabs, stops the browser
// and removes its profile directory. It is safe to call more than once.
func (c *Browser) Close() error {
	c.closeOnce.Do(func() {
		c.mu.Lock()
		c.closed = true
		idle := c.idle
		c.idle = nil
		c.mu.Unlock()
		close(c.closedSignal)
		c.stopRenders()
		c.renderers.Wait()
		for _, t := range idle {
			t.close()
		}
		var errs []error
		if inst := c.cur.Load(); inst != nil {
			errs = append(errs, inst.stop())
		}
		if c.sink != nil {
			_ = c.sink.Close()
		}
		c.background.Wait()
		if c.ownFetcher != nil {
			errs = append(errs, c.ownFetcher.Close())
		}
		c.closeErr = errors.Join(errs...)
	})
	return c.closeErr
}

// Render loads req in a tab, runs its scripts until the network settles
// (or the timeout), and returns the DOM and what extract finds in it.
func (c *Browser) Render(ctx context.Context, req *render.Request) (*render.Result, error) {
	start := time.Now()
	if req == nil || !isHTTPURL(req.URL) {
		return nil, fmt.Errorf("%w: URL must be an absolute http(s) URL", render.ErrBadRequest)
	}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil, render.ErrClosed
	}
	c.renderers.Add(1)
	c.mu.Unlock()
	defer c.renderers.Done()

	select {
	case c.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.closedSignal:
		return nil, render.ErrClosed
	}
	defer func() { <-c.slots }()

	t, err := c.takeTab(ctx)
	if err != nil {
		return nil, err
	}
	res, healthy, err := c.renderIn(ctx, t, req)
	c.putTab(t, healthy)
	if res != nil {
		res.Duration = time.Since(start)
	}
	c.renders.Add(1)
	return res, err
}

// takeTab returns an idle tab or opens a new one. Idle tabs of a browser
// that has exited are closed.
func (c *Browser) takeTab(ctx context.Context) (*tab, error) {
	for {
		c.mu.Lock()
		n := len(c.idle)
		if n == 0 {
			c.mu.Unlock()
			return c.openTab(ctx)
		}
		t := c.idle[n-1]
		c.idle = c.idle[:n-1]
		c.mu.Unlock()
		if !t.inst.exited() {
			return t, nil
		}
		t.close()
	}
}

// putTab returns a tab to the pool, or closes it when it is worn out or
// broken.
func (c *Browser) putTab(t *tab, healthy bool) {
	t.renders++
	if healthy && t.renders < c.cfg.MaxTabRenders && !t.inst.exited() {
		c.mu.Lock()
		if !c.closed {
			c.idle = append(c.idle, t)
			c.mu.Unlock()
			return
		}
		c.mu.Unlock()
	}
	t.close()
}

// tab is one browser tab in a browser context of its own, with request
// interception on.
type tab struct {
	c       *Browser
	inst    *instance // the browser it is in
	ctx     context.Context
	cancel  context.CancelFunc
	renders int

	mu  sync.Mutex
	cur *renderState

	wg sync.WaitGroup // the event loops
}

// openTab opens a tab, in a new browser if the last one has exited, and
// starts its event loops. Ending ctx or Close stops it.
func (c *Browser) openTab(ctx context.Context) (*tab, error) {
	inst, err := c.browser(ctx)
	if err != nil {
		return nil, err
	}
	tctx, cancel := chromedp.NewContext(inst.ctx, chromedp.WithNewBrowserContext())
	t := &tab{c: c, inst: inst, ctx: tctx, cancel: cancel}
	// Subscribe before interception is on, so no paused request is
	// missed.
	paused := chromedp.Events(tctx, cdpfetch.RequestPaused)
	dialogs := chromedp.Events(tctx, page.JavascriptDialogOpening)
	octx, ocancel := context.WithTimeout(tctx, 30*time.Second)
	defer ocancel()
	stop := context.AfterFunc(ctx, ocancel)
	defer stop()
	stopOnClose := context.AfterFunc(c.closing, ocancel)
	defer stopOnClose()
	err = chromedp.Do(octx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		if _, err := cdp.Call(ctx, tg, network.SetBypassServiceWorker, network.SetBypassServiceWorkerParams{Bypass: true}); err != nil {
			return err
		}
		if _, err := cdp.Call(ctx, tg, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: quietJS}); err != nil {
			return err
		}
		_, err := cdp.Call(ctx, tg, cdpfetch.Enable, cdpfetch.EnableParams{
			Patterns: []*cdpfetch.RequestPattern{{URLPattern: "*", RequestStage: cdpfetch.RequestStageRequest}},
		})
		return err
	}))
	if err != nil {
		cancel()
		switch {
		case c.closing.Err() != nil:
			return nil, render.ErrClosed
		case ctx.Err() != nil:
			return nil, ctx.Err()
		case inst.exited():
			return nil, fmt.Errorf("%w: opening a tab: %w", render.ErrBrowserExited, err)
		}
		return nil, fmt.Errorf("render: opening a tab: %w", err)
	}
	c.tabsOpened.Add(1)
	t.wg.Add(2)
	go func() {
		defer t.wg.Done()
		for ev, err := range paused {
			if err != nil {
				return
			}
			t.paused(&ev)
		}
	}()
	go func() {
		defer t.wg.Done()
		for ev, err := range dialogs {
			if err != nil {
				return
			}
			_ = ev
			// alert(), confirm() and prompt() block the page until
			// answered: dismiss them.
			_, _ = chromedp.Call(tctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
		}
	}()
	return t, nil
}

// close closes the tab and waits for its event loops.
func (t *tab) close() {
	t.cancel()
	t.wg.Wait()
}

// paused handles one paused request: for the render in progress, or
// refused when none is.
func (t *tab) paused(ev *cdpfetch.EventRequestPaused) {
	t.mu.Lock()
	st := t.cur
	t.mu.Unlock()
	if st == nil {
		t.fail(ev.RequestID, network.ErrorReasonAborted)
		return
	}
	st.handle(t, ev)
}

// fail makes a paused request fail.
func (t *tab) fail(id cdpfetch.RequestID, reason network.ErrorReason) {
	ctx, cancel := context.WithTimeout(t.ctx, 5*time.Second)
	defer cancel()
	_, _ = chromedp.Call(ctx, cdpfetch.FailRequest, cdpfetch.FailRequestParams{RequestID: id, ErrorReason: reason})
}

// fulfill answers a paused request.
func (t *tab) fulfill(id cdpfetch.RequestID, status int, header http.Header, body []byte) {
	ctx, cancel := context.WithTimeout(t.ctx, 10*time.Second)
	defer cancel()
	if status < 100 || status > 999 {
		status = http.StatusOK
	}
	p := cdpfetch.FulfillRequestParams{RequestID: id, ResponseCode: int64(status), ResponseHeaders: headerEntries(header)}
	if len(body) > 0 {
		p.Body = body
	}
	_, _ = chromedp.Call(ctx, cdpfetch.FulfillRequest, p)
}

// headerEntries converts response headers for the browser, leaving out
// those that described the wire form of a body it gets decoded.
func headerEntries(h http.Header) []*cdpfetch.HeaderEntry {
	var out []*cdpfetch.HeaderEntry
	for name, values := range h {
		switch http.CanonicalHeaderKey(name) {
		case "Content-Encoding", "Content-Length", "Transfer-Encoding", "Connection", "Keep-Alive",
			"Alt-Svc", "Strict-Transport-Security", "Public-Key-Pins":
			continue
		}
		for _, v := range values {
			out = append(out, &cdpfetch.HeaderEntry{Name: name, Value: v})
		}
	}
	return out
}

// renderIn renders req in tab t. healthy reports whether the tab may be
// reused.
func (c *Browser) renderIn(ctx context.Context, t *tab, req *render.Request) (res *render.Result, healthy bool, err error) {
	// Actions must run on a context derived from the tab's (which carries
	// the tab); the caller's ctx ends the render through AfterFunc.
	rctx, cancel := context.WithTimeout(t.ctx, c.cfg.Timeout)
	defer cancel()
	stop := context.AfterFunc(ctx, cancel)
	defer stop()
	stopOnClose := context.AfterFunc(c.closing, cancel)
	defer stopOnClose()

	st := newRenderState(rctx, c, req)
	t.mu.Lock()
	t.cur = st
	t.mu.Unlock()
	defer func() {
		t.mu.Lock()
		t.cur = nil
		t.mu.Unlock()
		cancel()
		st.wg.Wait()
		// Leave the page, so that its scripts stop and its pending
		// requests fail; a tab that cannot do that is not reused.
		bctx, bcancel := context.WithTimeout(t.ctx, 5*time.Second)
		defer bcancel()
		if err := chromedp.Do(bctx, chromedp.Navigate("about:blank")); err != nil {
			healthy = false
		}
	}()

	navErr := chromedp.Do(rctx, chromedp.Navigate(req.URL))
	if docErr := st.documentError(); docErr != nil {
		return nil, true, fmt.Errorf("%w: %s: %w", render.ErrDocument, req.URL, docErr)
	}
	timedOut := false
	if navErr != nil {
		if t.inst.exited() && c.closing.Err() == nil {
			return nil, false, fmt.Errorf("%w: loading %s: %w", render.ErrBrowserExited, req.URL, navErr)
		}
		if rctx.Err() == nil {
			return nil, false, fmt.Errorf("render: loading %s: %w", req.URL, navErr)
		}
		if ctx.Err() != nil {
			return nil, true, ctx.Err()
		}
		if c.closing.Err() != nil {
			return nil, false, render.ErrClosed
		}
		timedOut = true
	} else if !st.settle(rctx, c.cfg.Settle) || !c.quiet(rctx, st, c.cfg.Settle) {
		if ctx.Err() != nil {
			return nil, true, ctx.Err()
		}
		if c.closing.Err() != nil {
			return nil, false, render.ErrClosed
		}
		if t.inst.exited() {
			return nil, false, fmt.Errorf("%w: rendering %s", render.ErrBrowserExited, req.URL)
		}
		timedOut = true
	}
	if !st.served() {
		return nil, true, fmt.Errorf("%w: %s", render.ErrTimeout, req.URL)
	}
	// The snapshot gets a few seconds of its own after a timeout.
	sctx, scancel := context.WithTimeout(t.ctx, 5*time.Second)
	defer scancel()
	snap, err := chromedp.Run(sctx, chromedp.Evaluate[[]string](snapshotJS(c.cfg.MaxPageBytes)))
	if err != nil || len(snap) != 3 {
		if ctx.Err() != nil {
			return nil, true, ctx.Err()
		}
		if t.inst.exited() && c.closing.Err() == nil {
			return nil, false, fmt.Errorf("%w: reading the DOM of %s: %w", render.ErrBrowserExited, req.URL, err)
		}
		return nil, false, fmt.Errorf("render: reading the DOM of %s: %w", req.URL, err)
	}
	res = st.result()
	res.URL = snap[0]
	if !isHTTPURL(res.URL) {
		res.URL = req.URL
	}
	res.HTML = []byte(snap[1])
	if snap[2] == "1" {
		res.Truncated = true
	}
	// The script cuts the DOM to MaxPageBytes UTF-16 code units, which
	// take up to three times as many bytes in UTF-8: cut it again, at a
	// character boundary.
	if n := c.cfg.MaxPageBytes; int64(len(res.HTML)) > n {
		for n > 0 && !utf8.RuneStart(res.HTML[n]) {
			n--
		}
		res.HTML = res.HTML[:n]
		res.Truncated = true
	}
	if timedOut {
		res.Truncated = true
	}
	hdr := http.Header{"Content-Type": {"text/html; charset=utf-8"}}
	if req.Header != nil {
		if v := req.Header.Values("X-Robots-Tag"); len(v) > 0 {
			hdr["X-Robots-Tag"] = v
		}
	}
	doc, err := c.cfg.Extract.ExtractBytes(res.HTML, res.URL, hdr)
	if doc == nil {
		return nil, true, fmt.Errorf("render: extracting %s: %w", res.URL, err)
	}
	res.Document = doc
	return res, true, nil
}

// quietJS runs before every document's own scripts. It counts the
// page's pending short timers (setTimeout of up to 1000 ms, the way
// pages defer rendering) and notes the time of its last DOM mutation, so
// that a render waits for both to settle, not only for the network.
const quietJS = `(() => {
	const st = {pending: 0, last: performance.now()};
	const live = new Set();
	const set = window.setTimeout, clear = window.clearTimeout;
	window.setTimeout = function (fn, ms, ...args) {
		if (typeof fn !== "function" || !(ms <= 1000)) return set.call(this, fn, ms, ...args);
		let id;
		st.pending++;
		id = set.call(this, function () {
			if (live.delete(id)) st.pending--;
			return fn.apply(this, args);
		}, ms);
		live.add(id);
		return id;
	};
	window.clearTimeout = function (id) {
		if (live.delete(id)) st.pending--;
		return clear.call(this, id);
	};
	new MutationObserver(() => { st.last = performance.now(); })
		.observe(document, {subtree: true, childList: true, attributes: true, characterData: true});
	Object.defineProperty(window, "__crawlkitQuiet", {
		value: () => [st.pending, performance.now() - st.last], enumerable: false,
	});
})();`

// quiet waits until the page has no pending short timer and no DOM
// mutation for d, as well as no request in flight; it reports whether that
// happened before ctx ended.
func (c *Browser) quiet(ctx context.Context, st *renderState, d time.Duration) bool {
	for {
		v, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](`window.__crawlkitQuiet ? window.__crawlkitQuiet() : [0, 1e9]`))
		if err != nil {
			return false
		}
		domQuiet := len(v) == 2 && v[0] == 0 && v[1] >= float64(d.Milliseconds())
		if domQuiet && !st.activeSince(time.Now().Add(-d)) {
			return true
		}
		t := time.NewTimer(50 * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return false
		case <-t.C:
		}
	}
}

// snapshotJS returns the script that reads the document's URL and its
// serialized DOM, cut to max characters (the page's doctype is left out:
// extract does not need it).
func snapshotJS(max int64) string {
	return `(() => {
	const h = document.documentElement ? document.documentElement.outerHTML : "";
	const max = ` + strconv.FormatInt(max, 10) + `;
	return [String(location.href), h.length > max ? h.slice(0, max) : h, h.length > max ? "1" : "0"];
})()`
}

func isHTTPURL(s string) bool {
	if len(s) > 8 && (s[:7] == "http://" || s[:8] == "https://") {
		return true
	}
	return false
}
