// Package dashboard serves a live crawl dashboard: one web page, embedded in
// the binary, that shows a crawl's throughput (now, average, peak, and a chart
// of the last hour, or of Config.Window), queue depth by priority band, errors
// by category, the most active and the blocked hosts, and the workers,
// updated live over Server-Sent Events. It also answers URL and host analysis questions when it is
// given an Analyzer.
//
// The page is plain HTML, CSS and JavaScript compiled into the binary with
// embed: no build step, no CDN, nothing fetched from another origin, so it works
// on a machine without a network.
//
// # Data
//
// The dashboard imports no other crawlkit package but an internal one. It
// asks a Source, a plain func() Snapshot, for the numbers once per
// Config.Interval, keeps a bounded series of samples for the chart
// (Config.Window, one hour by default), and pushes every sample to the open
// pages. Whatever produces the numbers adapts them to a Snapshot. For the
// root package's crawlkit.Stats the adapter is a few conversions, because
// URLCounts, Throughput, HostCounts and WorkerCounts have the same fields in
// the same order as crawlkit's URLStats, Throughput, HostStats and
// WorkerStats:
//
//	src := func() dashboard.Snapshot {
//		s := crawler.Stats()
//		return dashboard.Snapshot{
//			URLs:       dashboard.URLCounts(s.URLs),
//			Throughput: dashboard.Throughput(s.Throughput),
//			Hosts:      dashboard.HostCounts(s.Hosts),
//			Workers:    dashboard.WorkerCounts(s.Workers),
//			Bytes:      s.Bytes,
//		}
//	}
//
// The frontier service (package service/frontierapi) produces complete Snapshots
// itself, queue bands, error categories, host and worker lists included,
// and implements Analyzer.
//
// History is a bounded, in-memory record of fetches, links and robots
// blocks per URL and per host, from which a Source can fill the host lists
// and an Analyzer the fetch history of a URL and the counts of a host.
//
// # Endpoints
//
// Relative to where the Handler is mounted (it uses relative links only, so
// it can live under any prefix with http.StripPrefix):
//
//	GET /                 the page
//	GET /api/snapshot     {"snapshot": Snapshot, "history": [Point...],
//	                      "window_ms": Config.Window in milliseconds,
//	                      "analysis_token": true when analysis needs one}
//	GET /api/events       text/event-stream; one "sample" event per Interval:
//	                      data: {"snapshot": Snapshot, "point": Point}
//	                      ("point" only when the sample adds a point to the
//	                      chart's history, see Config.Window); a client
//	                      that takes no event for Config.WriteTimeout is
//	                      dropped, and Close ends every stream
//	GET /api/url?url=U    URLReport (404 without an Analyzer; 401 without
//	                      Config.AnalysisToken when it is set)
//	GET /api/host?host=H  HostReport (likewise)
//
// # Access
//
// The page, its snapshot and its event stream need no authentication (a
// browser's EventSource cannot send an Authorization header). Serve the
// dashboard on a loopback or otherwise protected address (frontierd serves
// it on its own listener, 127.0.0.1 by default), or wrap the Handler in your
// own access control.
//
// The analysis endpoints make the Analyzer work, frontierd's fetch robots.txt
// for any URL asked about: with Config.AnalysisToken set they need
// "Authorization: Bearer <token>" (401 otherwise), which the page asks for
// and sends.
//
// Every request must name the dashboard in its Host header, and in its
// Origin header when it has one, or it gets 403: the address it came in on
// (on a loopback address also localhost, 127.0.0.1 or [::1], with the port),
// or one of Config.AllowedHosts. A web page the operator visits therefore
// cannot read a loopback dashboard by DNS rebinding, nor a cross-origin
// request reach it. Reached under another name (a reverse proxy's, an SSH
// tunnel on another local port), the dashboard needs that name in
// AllowedHosts.
package dashboard

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/crawlkit/crawlkit/internal/hostcheck"
)

// Snapshot is what the dashboard shows at one moment. Zero fields show as
// zero; nil lists show as empty.
type Snapshot struct {
	// Time is when the snapshot was taken; the dashboard sets it to the
	// sample time when it is zero.
	Time       time.Time    `json:"time"`
	URLs       URLCounts    `json:"urls"`
	Throughput Throughput   `json:"throughput"`
	Hosts      HostCounts   `json:"hosts"`
	Workers    WorkerCounts `json:"workers"`
	// Bytes is the body bytes fetched so far.
	Bytes int64 `json:"bytes"`

	// QueueByBand is the number of queued URLs in each priority band,
	// band 0 (most urgent) first.
	QueueByBand []int64 `json:"queue_by_band"`
	// Errors counts failed fetches and refused URLs by category.
	Errors ErrorCounts `json:"errors"`
	// TopHosts are the most active hosts, most active first.
	TopHosts []HostActivity `json:"top_hosts"`
	// BlockedHosts are hosts that may not be fetched now.
	BlockedHosts []BlockedHost `json:"blocked_hosts"`
	// WorkerList describes the workers, when the source knows them.
	WorkerList []Worker `json:"worker_list"`

	// NotFetched counts the URLs that were not fetched and will not be,
	// by reason (a reason's name, such as "robots" or "out_of_scope", to
	// the number of URLs), when the source reports reasons.
	NotFetched map[string]int64 `json:"not_fetched,omitempty"`
	// Deferred counts the URLs put back to be fetched later, by reason.
	Deferred map[string]int64 `json:"deferred,omitempty"`
	// LinksRejected counts the links that were not followed, by reason.
	LinksRejected map[string]int64 `json:"links_rejected,omitempty"`
	// Waiting says what the crawl is waiting for, when the source knows.
	Waiting Waiting `json:"waiting,omitzero"`
	// Cluster describes the nodes and partitions of a crawl spread over
	// several machines, when the source is one; the page then shows them.
	Cluster *Cluster `json:"cluster,omitempty"`
}

// Cluster is a distributed crawl's nodes and partitions.
type Cluster struct {
	// Lag is the URLs handed out to partitions and not finished yet.
	Lag        uint64             `json:"lag"`
	Nodes      []ClusterNode      `json:"nodes"`
	Partitions []ClusterPartition `json:"partitions"`
}

// ClusterNode is one node of a distributed crawl.
type ClusterNode struct {
	ID string `json:"id"`
	// Address is where the node serves its statistics.
	Address string `json:"address"`
	// Partitions is how many partitions it owns; Held the URLs it holds
	// unfinished.
	Partitions int `json:"partitions"`
	Held       int `json:"held"`
	// Fetched counts its fetches; Rate and Average are its pages per
	// second now and on average.
	Fetched int64   `json:"fetched"`
	Rate    float64 `json:"rate"`
	Average float64 `json:"average"`
	// Error says why the node did not answer, if it did not.
	Error string `json:"error,omitempty"`
}

// ClusterPartition is one partition of a distributed crawl.
type ClusterPartition struct {
	ID int `json:"id"`
	// Owner is the node consuming it (empty while it moves).
	Owner string `json:"owner"`
	// Pending counts its URLs not handed to a node yet, AckPending those
	// handed out and not finished; Lag is their sum. AckFloor and LastSeq
	// are the log positions below which all is finished and of its newest
	// URL.
	Pending    uint64 `json:"pending"`
	AckPending int    `json:"ack_pending"`
	Lag        uint64 `json:"lag"`
	AckFloor   uint64 `json:"ack_floor"`
	LastSeq    uint64 `json:"last_seq"`
	Error      string `json:"error,omitempty"`
}

// Waiting is what a crawl is waiting for at one moment.
type Waiting struct {
	// InFlight is the number of fetches under way.
	InFlight int64 `json:"in_flight"`
	// CrawlDelayHosts is the number of hosts with queued URLs that wait
	// for their politeness delay (Crawl-delay or the crawler's own), the
	// longest of which is LongestCrawlDelay.
	CrawlDelayHosts   int           `json:"crawl_delay_hosts,omitempty"`
	LongestCrawlDelay time.Duration `json:"longest_crawl_delay_ns,omitempty"`
	// RobotsRetryHosts is the number of hosts waiting for their
	// robots.txt to be fetched again (it was unreachable); the next
	// attempt is at NextRobotsRetry.
	RobotsRetryHosts int       `json:"robots_retry_hosts,omitempty"`
	NextRobotsRetry  time.Time `json:"next_robots_retry,omitzero"`
	// RetryAfterHosts is the number of hosts that asked the crawler to
	// wait (429 or 503 with Retry-After); the last of them may be fetched
	// again at RetryAfterUntil.
	RetryAfterHosts int       `json:"retry_after_hosts,omitempty"`
	RetryAfterUntil time.Time `json:"retry_after_until,omitzero"`
	// LoginHosts is the number of hosts whose login is under way; their
	// URLs wait for it.
	LoginHosts int `json:"login_hosts,omitempty"`
}

// URLCounts counts URLs by what happened to them. Its fields match
// crawlkit.URLStats, so one converts to the other.
type URLCounts struct {
	Discovered      int64 `json:"discovered"`
	Queued          int64 `json:"queued"`
	Fetched         int64 `json:"fetched"`
	Successful      int64 `json:"successful"`
	Failed          int64 `json:"failed"`
	Retried         int64 `json:"retried"`
	Duplicates      int64 `json:"duplicate_content"`
	BlockedByRobots int64 `json:"blocked_by_robots"`
	TrapRejected    int64 `json:"rejected_as_traps"`
	OutOfScope      int64 `json:"out_of_scope"`

	FetchedByRedirect int64 `json:"fetched_by_redirect"`
}

// Throughput is in pages per second. Its fields match crawlkit.Throughput.
type Throughput struct {
	Current float64 `json:"current"`
	Average float64 `json:"average"`
	Peak    float64 `json:"peak"`
}

// HostCounts counts hosts. Its fields match crawlkit.HostStats.
type HostCounts struct {
	Discovered int64 `json:"discovered"`
	Active     int64 `json:"active"`
	Blocked    int64 `json:"blocked"`
}

// WorkerCounts counts workers. Its fields match crawlkit.WorkerStats.
type WorkerCounts struct {
	Active int64 `json:"active"`
	Idle   int64 `json:"idle"`
	Parked int64 `json:"parked"`
}

// ErrorCounts counts failures by category.
type ErrorCounts struct {
	// Network: connection refused or reset, DNS, TLS and other transport
	// failures without an HTTP response.
	Network int64 `json:"network"`
	// Timeout: the fetch ran out of time.
	Timeout int64 `json:"timeout"`
	// Client and Server: responses with a 4xx or 5xx status.
	Client int64 `json:"http_4xx"`
	Server int64 `json:"http_5xx"`
	// Robots: URLs robots.txt does not allow (or whose robots.txt is
	// unreachable).
	Robots int64 `json:"robots"`
	// Trap: URLs rejected as spider traps.
	Trap int64 `json:"trap"`
}

// HostActivity is one line of the most-active-hosts table.
type HostActivity struct {
	Host string `json:"host"`
	// Recent counts fetches in the last one to two minutes; Fetched all
	// of them; Errors the failed ones.
	Recent    int64     `json:"recent"`
	Fetched   int64     `json:"fetched"`
	Errors    int64     `json:"errors"`
	LastFetch time.Time `json:"last_fetch"`
}

// BlockedHost is a host that may not be fetched now, and why.
type BlockedHost struct {
	Host   string    `json:"host"`
	Reason string    `json:"reason"`
	Until  time.Time `json:"until"`
}

// Worker describes one worker.
type Worker struct {
	ID string `json:"id"`
	// Leased is the number of URLs it holds now; Fetched the results it
	// has reported.
	Leased   int64     `json:"leased"`
	Fetched  int64     `json:"fetched"`
	LastSeen time.Time `json:"last_seen"`
	// Active reports whether it holds leases or was seen within the
	// source's idle threshold.
	Active bool `json:"active"`
}

// Point is one sample of the throughput chart.
type Point struct {
	Time       time.Time `json:"time"`
	Throughput float64   `json:"throughput"`
	Fetched    int64     `json:"fetched"`
	Queued     int64     `json:"queued"`
}

// Source returns the current numbers. It is called from one goroutine at a
// time, once per Config.Interval, and must not block for long.
type Source func() Snapshot

// Analyzer answers the URL and host analysis views. A returned error that
// wraps ErrNotFound answers 404; ErrBadRequest answers 400; any other error
// answers 500.
type Analyzer interface {
	AnalyzeURL(ctx context.Context, rawURL string) (URLReport, error)
	AnalyzeHost(ctx context.Context, host string) (HostReport, error)
}

// Errors an Analyzer may wrap to choose the HTTP status.
var (
	ErrNotFound   = errors.New("dashboard: not found")
	ErrBadRequest = errors.New("dashboard: bad request")
)

// Config configures a Dashboard.
type Config struct {
	// Source provides the numbers. Required.
	Source Source
	// Analyzer, if set, answers the URL and host views.
	Analyzer Analyzer
	// Title is shown in the page header. Empty means "crawlkit".
	Title string
	// Interval is the time between samples. Zero means one second;
	// a negative value takes no samples on its own (call SampleAt), which
	// is useful in tests.
	Interval time.Duration
	// Window is how much history the chart keeps. Zero means one hour;
	// a negative value is an error. The chart keeps at most 16384
	// points: when Window/Interval is more, only every few samples add a
	// point to it.
	Window time.Duration
	// Now is the clock of the sampler. Nil means time.Now.
	Now func() time.Time
	// WriteTimeout bounds how long one write to an event stream may
	// take: a client that does not read its stream for that long is
	// dropped (a browser reconnects by itself). Zero means ten seconds; a
	// negative value is an error. It takes a ResponseWriter that supports
	// http.ResponseController's SetWriteDeadline, as net/http's do; over
	// one that does not, a write waits for the client however long. Event
	// streams are not subject to the http.Server's WriteTimeout.
	WriteTimeout time.Duration
	// AllowedHosts are further names requests may carry in their Host and
	// Origin headers, besides the address they came in on (see Access in
	// the package documentation): a host name or IP address, which
	// matches with any port, or a host:port, which matches that port
	// only; "*" turns the check off. An invalid entry is an error.
	AllowedHosts []string
	// AnalysisToken, if set, is the bearer token the URL and host
	// analysis endpoints require.
	AnalysisToken string
}

// Dashboard is the dashboard's state and its http.Handler. Create it with
// New and stop it with Close.
type Dashboard struct {
	cfg   Config
	mux   *http.ServeMux
	hosts *hostcheck.Checker
	// tokenSum is the SHA-256 of Config.AnalysisToken.
	tokenSum [sha256.Size]byte

	// sampling serializes SampleAt, so that the Source is called from one
	// goroutine at a time and points join the chart in call order.
	sampling sync.Mutex

	mu     sync.Mutex
	points ring
	// every is how many samples make one chart point; samples counts them.
	every   int
	samples int
	last    Snapshot
	subs    map[*stream]struct{}
	closed  bool

	done chan struct{}
	wg   sync.WaitGroup
}

//go:embed static
var static embed.FS

// ErrNoSource is returned by New when Config.Source is nil.
var ErrNoSource = errors.New("dashboard: Config.Source is nil")

// maxPoints bounds the chart's history, whatever Window/Interval is.
const maxPoints = 1 << 14

// defaultWriteTimeout is Config.WriteTimeout's default.
const defaultWriteTimeout = 10 * time.Second

// New returns a Dashboard and, unless Config.Interval is negative, starts the
// goroutine that samples the Source; Close stops it.
func New(cfg Config) (*Dashboard, error) {
	if cfg.Source == nil {
		return nil, ErrNoSource
	}
	if cfg.Interval == 0 {
		cfg.Interval = time.Second
	}
	if cfg.Window < 0 {
		return nil, fmt.Errorf("dashboard: Config.Window %v is negative", cfg.Window)
	}
	if cfg.Window == 0 {
		cfg.Window = time.Hour
	}
	if cfg.WriteTimeout < 0 {
		return nil, fmt.Errorf("dashboard: Config.WriteTimeout %v is negative", cfg.WriteTimeout)
	}
	if cfg.WriteTimeout == 0 {
		cfg.WriteTimeout = defaultWriteTimeout
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Title == "" {
		cfg.Title = "crawlkit"
	}
	hosts, err := hostcheck.New(cfg.AllowedHosts)
	if err != nil {
		return nil, fmt.Errorf("dashboard: Config.AllowedHosts: %w", err)
	}
	step := cfg.Interval
	if step < 0 {
		step = time.Second
	}
	n := int64(cfg.Window / step)
	n = max(n, 2)
	// Past maxPoints, every-th sample makes a point, so the ring still
	// spans Window.
	every := (n + maxPoints - 1) / maxPoints
	n = (n + every - 1) / every
	d := &Dashboard{
		cfg:      cfg,
		hosts:    hosts,
		tokenSum: sha256.Sum256([]byte(cfg.AnalysisToken)),
		every:    int(every),
		points:   ring{buf: make([]Point, n)},
		subs:     map[*stream]struct{}{},
		done:     make(chan struct{}),
	}
	d.routes()
	if cfg.Interval > 0 {
		d.wg.Add(1)
		go d.loop()
	}
	return d, nil
}

// Close stops the sampler and ends every open event stream, cutting short
// a write to a client that is not reading. It waits for a SampleAt in
// progress, so the Source is not called once Close has returned; it does
// not wait for the streams' handlers to return. It is idempotent.
func (d *Dashboard) Close() error {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return nil
	}
	d.closed = true
	close(d.done)
	streams := make([]*stream, 0, len(d.subs))
	for s := range d.subs {
		close(s.ch)
		delete(d.subs, s)
		streams = append(streams, s)
	}
	d.mu.Unlock()
	for _, s := range streams {
		s.abort()
	}
	d.wg.Wait()
	// Wait for a SampleAt in progress.
	d.sampling.Lock()
	d.sampling.Unlock()
	return nil
}

func (d *Dashboard) loop() {
	defer d.wg.Done()
	t := time.NewTicker(d.cfg.Interval)
	defer t.Stop()
	d.SampleAt(d.cfg.Now())
	for {
		select {
		case <-d.done:
			return
		case <-t.C:
			d.SampleAt(d.cfg.Now())
		}
	}
}

// SampleAt takes a sample at now: it asks the Source for a Snapshot, adds a
// point to the chart's history (from every few samples only when
// Window/Interval exceeds the chart's bound) and sends both to every open
// event stream. Non-finite throughputs, which JSON cannot carry, become 0.
// The sampler calls it once per Interval; tests with a negative Interval call
// it themselves. Calls are serialized with each other and with the
// sampler's, so the Source is called from one goroutine at a time.
func (d *Dashboard) SampleAt(now time.Time) {
	d.sampling.Lock()
	defer d.sampling.Unlock()
	d.mu.Lock()
	closed := d.closed
	d.mu.Unlock()
	if closed {
		return
	}
	s := d.cfg.Source()
	if s.Time.IsZero() {
		s.Time = now
	}
	// JSON has no NaN or infinity: one would fail every encoding of the
	// snapshot, and the page would stop updating.
	s.Throughput.Current = finite(s.Throughput.Current)
	s.Throughput.Average = finite(s.Throughput.Average)
	s.Throughput.Peak = finite(s.Throughput.Peak)
	p := Point{Time: now, Throughput: s.Throughput.Current, Fetched: s.URLs.Fetched, Queued: s.URLs.Queued}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return
	}
	ev := event{Snapshot: &s}
	if d.samples%d.every == 0 {
		ev.Point = &p
		d.points.push(p)
	}
	d.samples++
	d.last = s
	msg, err := json.Marshal(ev)
	if err != nil {
		// A Snapshot holds only numbers, strings and times: this cannot
		// happen short of a time outside year 0–9999.
		return
	}
	for sub := range d.subs {
		select {
		case sub.ch <- msg:
		default:
			// A slow reader misses a sample rather than holding up the
			// others; the next one carries the full state again.
		}
	}
}

// Snapshot returns the latest sample's Snapshot and the chart's history,
// oldest first.
func (d *Dashboard) Snapshot() (Snapshot, []Point) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.last, d.points.list()
}

// event is the data of one "sample" event.
type event struct {
	Snapshot *Snapshot `json:"snapshot"`
	Point    *Point    `json:"point,omitempty"`
}

// snapshotResponse is the answer of /api/snapshot. The page shows the
// chart's history over WindowMS.
type snapshotResponse struct {
	Snapshot *Snapshot `json:"snapshot"`
	History  []Point   `json:"history"`
	WindowMS int64     `json:"window_ms"`
	// AnalysisToken tells the page that analysis needs a token.
	AnalysisToken bool `json:"analysis_token,omitempty"`
}

// ServeHTTP serves the page and its API.
func (d *Dashboard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// Every answer is of the type it declares: the API's JSON echoes
	// crawl data (URLs, host names) that a browser must never sniff
	// into HTML.
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if err := d.hosts.Check(r); err != nil {
		writeError(w, http.StatusForbidden, "dashboard: "+err.Error())
		return
	}
	d.mux.ServeHTTP(w, r)
}

// analysisAllowed reports whether r may use the analysis endpoints, and
// answers 401 when it may not. The token is compared in constant time,
// hashed first so that not even its length leaks.
func (d *Dashboard) analysisAllowed(w http.ResponseWriter, r *http.Request) bool {
	if d.cfg.AnalysisToken == "" {
		return true
	}
	h := r.Header.Get("Authorization")
	const prefix = "bearer "
	if len(h) > len(prefix) && strings.EqualFold(h[:len(prefix)], prefix) {
		got := sha256.Sum256([]byte(strings.TrimSpace(h[len(prefix):])))
		if subtle.ConstantTimeCompare(got[:], d.tokenSum[:]) == 1 {
			return true
		}
	}
	w.Header().Set("WWW-Authenticate", `Bearer realm="crawlkit dashboard"`)
	writeError(w, http.StatusUnauthorized, "analysis needs the API token")
	return false
}

func (d *Dashboard) routes() {
	sub, err := fs.Sub(static, "static")
	if err != nil {
		panic(err) // the embedded tree is fixed at compile time
	}
	files := http.FileServerFS(sub)
	d.mux = http.NewServeMux()
	d.mux.HandleFunc("GET /{$}", d.serveIndex)
	d.mux.Handle("GET /app.js", files)
	d.mux.Handle("GET /app.css", files)
	d.mux.HandleFunc("GET /api/snapshot", d.serveSnapshot)
	d.mux.HandleFunc("GET /api/events", d.serveEvents)
	d.mux.HandleFunc("GET /api/url", d.serveURL)
	d.mux.HandleFunc("GET /api/host", d.serveHost)
}

func (d *Dashboard) serveIndex(w http.ResponseWriter, r *http.Request) {
	page, err := static.ReadFile("static/index.html")
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	html := strings.Replace(string(page), "{{TITLE}}", htmlEscape(d.cfg.Title), 2)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Security-Policy", "default-src 'self'; style-src 'self' 'unsafe-inline'; script-src 'self'; img-src 'self' data:")
	_, _ = w.Write([]byte(html))
}

// finite returns f, or 0 if f is NaN or infinite.
func finite(f float64) float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0
	}
	return f
}

func htmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&#39;").Replace(s)
}

func (d *Dashboard) serveSnapshot(w http.ResponseWriter, r *http.Request) {
	s, hist := d.Snapshot()
	if hist == nil {
		hist = []Point{}
	}
	writeJSON(w, http.StatusOK, snapshotResponse{Snapshot: &s, History: hist, WindowMS: d.cfg.Window.Milliseconds(),
		AnalysisToken: d.cfg.AnalysisToken != ""})
}

// serveEvents streams samples as Server-Sent Events (HTML Living Standard,
// §9.2). Each event carries a whole Snapshot, so a reader that missed some
// is up to date with the next.
func (d *Dashboard) serveEvents(w http.ResponseWriter, r *http.Request) {
	s := &stream{ch: make(chan []byte, 4), rc: http.NewResponseController(w), timeout: d.cfg.WriteTimeout}
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		http.Error(w, "dashboard closed", http.StatusServiceUnavailable)
		return
	}
	d.subs[s] = struct{}{}
	d.mu.Unlock()
	defer d.unsubscribe(s)

	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Accel-Buffering", "no")
	// A retry hint, then a comment so the browser sees the stream open at
	// once.
	if !s.write(func() error {
		w.WriteHeader(http.StatusOK)
		if _, err := fmt.Fprint(w, "retry: 2000\n: open\n\n"); err != nil {
			return err
		}
		return s.rc.Flush()
	}) {
		return
	}
	for {
		select {
		case <-r.Context().Done():
			return
		case msg, ok := <-s.ch:
			if !ok {
				return
			}
			if !s.write(func() error {
				if _, err := fmt.Fprintf(w, "event: sample\ndata: %s\n\n", msg); err != nil {
					return err
				}
				return s.rc.Flush()
			}) {
				return
			}
		}
	}
}

func (d *Dashboard) unsubscribe(s *stream) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, ok := d.subs[s]; ok {
		delete(d.subs, s)
		close(s.ch)
	}
}

// stream is one open event stream. Its handler writes to the client under
// a write deadline, and Close moves the deadline to now to cut short a
// write that a client which does not read keeps waiting.
type stream struct {
	// ch carries the samples; Close or unsubscribe closes it, under
	// Dashboard.mu.
	ch      chan []byte
	rc      *http.ResponseController
	timeout time.Duration

	mu sync.Mutex
	// writing is set while the handler writes (rc may be used only
	// then, the handler may have returned otherwise); closing once Close
	// has ended the stream.
	writing, closing bool
}

// write runs f, which writes to the client, within the stream's write
// timeout, and reports whether it succeeded. It does not run f once the
// stream is closing.
func (s *stream) write(f func() error) bool {
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		return false
	}
	s.writing = true
	// Without deadline support (ErrNotSupported) the write waits for the
	// client.
	_ = s.rc.SetWriteDeadline(time.Now().Add(s.timeout))
	s.mu.Unlock()

	err := f()

	s.mu.Lock()
	defer s.mu.Unlock()
	s.writing = false
	if err != nil {
		return false
	}
	// No deadline while the stream waits for the next sample, nor for
	// the end of the response when it ends; that includes the deadline
	// of a Close that came as this write completed.
	_ = s.rc.SetWriteDeadline(time.Time{})
	return !s.closing
}

// abort ends the stream for Close: a write in progress fails at once.
func (s *stream) abort() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closing = true
	if s.writing {
		_ = s.rc.SetWriteDeadline(time.Now())
	}
}

func (d *Dashboard) serveURL(w http.ResponseWriter, r *http.Request) {
	u := r.URL.Query().Get("url")
	if d.cfg.Analyzer == nil {
		writeError(w, http.StatusNotFound, "no URL analysis in this dashboard")
		return
	}
	if !d.analysisAllowed(w, r) {
		return
	}
	if u == "" {
		writeError(w, http.StatusBadRequest, "missing url parameter")
		return
	}
	rep, err := d.cfg.Analyzer.AnalyzeURL(r.Context(), u)
	if err != nil {
		writeError(w, statusOf(err), err.Error())
		return
	}
	writeJSON(w, http.StatusOK, rep)
}

func (d *Dashboard) serveHost(w http.ResponseWriter, r *http.Request) {
	h := r.URL.Query().Get("host")
	if d.cfg.Analyzer == nil {
		writeError(w, http.StatusNotFound, "no host analysis in this dashboard")
		return
	}
	if !d.analysisAllowed(w, r) {
		return
	}
	if h == "" {
		writeError(w, http.StatusBadRequest, "missing host parameter")
		return
	}
	rep, err := d.cfg.Analyzer.AnalyzeHost(r.Context(), h)
	if err != nil {
		writeError(w, statusOf(err), err.Error())
		return
	}
	writeJSON(w, http.StatusOK, rep)
}

func statusOf(err error) int {
	switch {
	case errors.Is(err, ErrNotFound):
		return http.StatusNotFound
	case errors.Is(err, ErrBadRequest):
		return http.StatusBadRequest
	default:
		return http.StatusInternalServerError
	}
}

// writeJSON answers v with status, or a 500 error when v cannot be encoded
// (a NaN in an Analyzer's report, say).
func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		body, _ = json.Marshal(map[string]string{"error": "dashboard: encoding the answer: " + err.Error()})
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"error": msg})
}

// ring is a fixed-size circular buffer of points.
type ring struct {
	buf  []Point
	next int
	full bool
}

func (r *ring) push(p Point) {
	r.buf[r.next] = p
	r.next++
	if r.next == len(r.buf) {
		r.next = 0
		r.full = true
	}
}

func (r *ring) list() []Point {
	if !r.full {
		return append([]Point(nil), r.buf[:r.next]...)
	}
	out := make([]Point, 0, len(r.buf))
	out = append(out, r.buf[r.next:]...)
	return append(out, r.buf[:r.next]...)
}
