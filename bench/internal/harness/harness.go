// Package harness holds what the end-to-end benchmark commands share: the
// wire format between the synthetic-web server process (cmd/benchweb) and the
// crawler commands, the dialer that sends every virtual host to that server,
// the crawler's own resource usage, and the one JSON line each crawler command
// prints.
//
// The server and the crawler run in separate processes so that the crawler's
// CPU time and peak RSS are its own. Everything the benchmark judges a crawler
// by (robots violations, politeness violations, duplicate fetches, trap
// fetches, coverage of the ground truth) comes from the server's accounting,
// never from what the crawler reports about itself.
package harness

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"runtime/metrics"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// ErrNotVirtualHost is returned by the dialer for any address that is not a
// virtual host of the synthetic web (a name under the .test TLD).
var ErrNotVirtualHost = errors.New("harness: not a virtual host of the synthetic web")

// Dialer returns a dial function that connects every "*.test" host, whatever
// its port, to webAddr (the server's real loopback address) and refuses every
// other address before dialing, so a crawler under benchmark can never reach
// the network.
func Dialer(webAddr string) func(ctx context.Context, network, addr string) (net.Conn, error) {
	var d net.Dialer
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, fmt.Errorf("%w: %q: %v", ErrNotVirtualHost, addr, err)
		}
		if !IsVirtualHost(host) {
			return nil, fmt.Errorf("%w: %q", ErrNotVirtualHost, addr)
		}
		return d.DialContext(ctx, "tcp", webAddr)
	}
}

// IsVirtualHost reports whether host (without port) lies under the reserved
// .test top-level domain (RFC 6761 §6.2), where the synthetic web lives.
func IsVirtualHost(host string) bool {
	h := strings.TrimSuffix(strings.ToLower(host), ".")
	return strings.HasSuffix(h, ".test") && len(h) > len(".test")
}

// Transport returns an HTTP transport that reaches the synthetic web at
// webAddr through Dialer, with enough idle connections per host that a
// crawler with many hosts in flight does not redial for every request.
func Transport(webAddr string) *http.Transport {
	return &http.Transport{
		DialContext:         Dialer(webAddr),
		MaxIdleConns:        4096,
		MaxIdleConnsPerHost: 4,
		IdleConnTimeout:     30 * time.Second,
		ForceAttemptHTTP2:   false,
	}
}

// Usage is a process's resource usage.
type Usage struct {
	CPU    time.Duration // user + system time
	MaxRSS int64         // peak resident set size in bytes
}

// SelfUsage returns the calling process's CPU time and peak RSS
// (getrusage(RUSAGE_SELF); Linux reports ru_maxrss in KiB).
func SelfUsage() (Usage, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return Usage{}, fmt.Errorf("harness: getrusage: %w", err)
	}
	return Usage{
		CPU:    time.Duration(ru.Utime.Nano() + ru.Stime.Nano()),
		MaxRSS: ru.Maxrss * 1024,
	}, nil
}

// ServerReport is the server's accounting of one crawl, as served by the
// control endpoint's /report. Every count excludes requests for /robots.txt
// unless its name says otherwise.
type ServerReport struct {
	// Pages counts page requests (all requests but /robots.txt).
	Pages         int `json:"pages"`
	RobotsFetches int `json:"robots_fetches"`
	NotFound      int `json:"not_found"`

	RobotsViolations int `json:"robots_violations"`
	// RobotsViolationURLs holds the first few URLs fetched against
	// robots.txt.
	RobotsViolationURLs   []string `json:"robots_violation_urls,omitempty"`
	BeforeRobots          int      `json:"before_robots"`
	SpacingViolations     int      `json:"spacing_violations"`
	ConcurrencyViolations int      `json:"concurrency_violations"`
	ExactRepeats          int      `json:"exact_repeats"`
	SpellingRepeats       int      `json:"spelling_repeats"`
	ContentRepeats        int      `json:"content_repeats"`
	TrapFetches           int      `json:"trap_fetches"`

	// TruthUnique is the number of unique pages of the ground truth for
	// the agent and depth bound; Covered how many of them the crawl
	// fetched under any URL. Coverage is Covered / TruthUnique.
	TruthUnique int     `json:"truth_unique"`
	Covered     int     `json:"covered"`
	Coverage    float64 `json:"coverage"`
	// MaxDepth is the depth bound the truth was computed for.
	MaxDepth int `json:"max_depth"`

	// ServerCPU is the server process's CPU time since the last reset.
	ServerCPUSeconds float64 `json:"server_cpu_s"`

	// The fields below are filled by cmd/realisticweb only.

	// WireBytes is the body bytes sent (compressed where the response
	// was); DecodedBytes the same bodies decoded, for page requests.
	WireBytes    int64 `json:"wire_bytes,omitempty"`
	DecodedBytes int64 `json:"decoded_bytes,omitempty"`
	// Encodings counts page responses by Content-Encoding ("identity"
	// for none); Protocols all requests by protocol ("HTTP/2.0", …).
	Encodings map[string]int `json:"encodings,omitempty"`
	Protocols map[string]int `json:"protocols,omitempty"`
	// TLSHandshakes counts completed TLS handshakes.
	TLSHandshakes int `json:"tls_handshakes,omitempty"`
	// OffWeb counts requests for hosts or paths the web does not have
	// (never linked from a page as a page).
	OffWeb int `json:"off_web,omitempty"`
	// NotFoundURLs holds the first few page requests answered 404.
	NotFoundURLs []string `json:"not_found_urls,omitempty"`
}

// WebInfo is the line cmd/benchweb prints on standard output once it serves:
// where the synthetic web and the control endpoint listen, and what the web
// is.
type WebInfo struct {
	Web      string `json:"web"`     // host:port of the synthetic web
	Control  string `json:"control"` // host:port of the control endpoint
	Hosts    int    `json:"hosts"`
	Pages    int    `json:"pages_per_host"`
	Agent    string `json:"agent"`
	MaxDepth int    `json:"max_depth"`
	// CrawlableHosts is the number of hosts whose robots.txt lets the
	// agent fetch something; the politeness ceiling is this many
	// requests per gap.
	CrawlableHosts int `json:"crawlable_hosts"`
	// TruthUnique is the size of the ground truth (unique pages).
	TruthUnique int `json:"truth_unique"`
	// CAFile, if set, is the PEM file of the test CA that signed the
	// web's HTTPS certificate; crawlers load it into their root pool.
	CAFile string `json:"ca_file,omitempty"`
	// MedianPageKB, MeanPageKB and MaxPageKB describe the decoded page
	// sizes of the web (cmd/realisticweb).
	MedianPageKB float64 `json:"median_page_kb,omitempty"`
	MeanPageKB   float64 `json:"mean_page_kb,omitempty"`
	MaxPageKB    float64 `json:"max_page_kb,omitempty"`
	// MedianLinks is the median number of <a href> links per page.
	MedianLinks int `json:"median_links,omitempty"`
}

// Control is a client of the benchmark server's control endpoint.
type Control struct {
	base   string
	client *http.Client
}

// NewControl returns a client for the control endpoint at addr (host:port).
func NewControl(addr string) *Control {
	return &Control{base: "http://" + addr, client: &http.Client{Timeout: 5 * time.Minute}}
}

func (c *Control) get(path string, v any) error {
	resp, err := c.client.Get(c.base + path)
	if err != nil {
		return fmt.Errorf("harness: control %s: %w", path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
		return fmt.Errorf("harness: control %s: %s: %s", path, resp.Status, strings.TrimSpace(string(b)))
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		return fmt.Errorf("harness: control %s: decoding: %w", path, err)
	}
	return nil
}

// Info returns the web's description.
func (c *Control) Info() (WebInfo, error) {
	var wi WebInfo
	err := c.get("/info", &wi)
	return wi, err
}

// Seeds returns the web's seed URLs.
func (c *Control) Seeds() ([]string, error) {
	var s []string
	err := c.get("/seeds", &s)
	return s, err
}

// Count returns the number of page requests the server has answered since
// the last reset; it is cheap enough to poll during a crawl.
func (c *Control) Count() (int64, error) {
	var n int64
	err := c.get("/count", &n)
	return n, err
}

// Report returns the server's accounting since the last reset.
func (c *Control) Report() (ServerReport, error) {
	var r ServerReport
	err := c.get("/report", &r)
	return r, err
}

// Reset clears the server's accounting before a crawl.
func (c *Control) Reset() error {
	var ok bool
	resp, err := c.client.Post(c.base+"/reset", "text/plain", nil)
	if err != nil {
		return fmt.Errorf("harness: control /reset: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("harness: control /reset: %s", resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(&ok)
}

// Params are the settings every crawler command takes, so that the matrix
// runs each crawler with the same ones.
type Params struct {
	Web      string        // host:port of the synthetic web
	Control  string        // host:port of its control endpoint
	Agent    string        // robots.txt product token; the User-Agent is Agent + "/1.0"
	MaxDepth int           // links followed from a seed (0: none)
	MaxPages int           // stop after about this many page requests (0: none)
	Workers  int           // requests in flight at once, where the crawler has such a knob
	Delay    time.Duration // least time between requests to one host
	Timeout  time.Duration // the crawl is stopped after this long
	Window   time.Duration // if set, also report the server's page count at this time after the start
	Label    string        // name of the run, copied into the result
	// CPUProfile and MemProfile, if set, are files the crawl's CPU
	// profile and the heap profile at its end are written to (pprof).
	CPUProfile, MemProfile string
	// MaxRSS stops the crawl (like the timeout) once the process's
	// resident set passes this many bytes, so a crawler whose memory runs
	// away cannot take the machine down; 0 means no limit.
	MaxRSS int64
	// CAFile, if set, is a PEM file of CA certificates the crawler's
	// HTTPS client trusts (its RootCAs), for a web served with a test CA.
	CAFile string
	// SampleEvery, if set, records the resident set and the server's page
	// count at this interval (Result.Samples), to show how memory grows
	// with the pages fetched.
	SampleEvery time.Duration
}

// Sample is one point of a crawl's memory curve.
type Sample struct {
	ElapsedS float64 `json:"elapsed_s"`
	Pages    int64   `json:"pages"`  // the server's page count
	RSSMB    float64 `json:"rss_mb"` // resident set
	// LiveHeapMB is the heap the last garbage collection found live
	// (runtime/metrics /gc/heap/live:bytes).
	LiveHeapMB float64 `json:"live_heap_mb"`
	// GoMB is the memory the Go runtime holds from the OS and has not
	// released (/memory/classes/total:bytes minus
	// /memory/classes/heap/released:bytes): heap with its garbage and free
	// spans, stacks, runtime metadata. The resident set beyond it is
	// memory allocated outside the Go runtime (Pebble's block cache and
	// memtables) or mapped but untouched.
	GoMB float64 `json:"go_mb,omitempty"`
}

// UserAgent returns the User-Agent header the crawlers send.
func (p Params) UserAgent() string { return p.Agent + "/1.0 (+http://bench.test/)" }

// RegisterFlags defines p's flags on fs with the matrix's defaults.
func (p *Params) RegisterFlags(fs *flag.FlagSet) {
	fs.StringVar(&p.Web, "web", "", "host:port of the synthetic web (from benchweb)")
	fs.StringVar(&p.Control, "control", "", "host:port of benchweb's control endpoint")
	fs.StringVar(&p.Agent, "agent", "benchbot", "robots.txt product token")
	fs.IntVar(&p.MaxDepth, "max-depth", 5, "links followed from a seed (0: no bound)")
	fs.IntVar(&p.MaxPages, "max-pages", 0, "stop after about this many pages (0: no cap)")
	fs.IntVar(&p.Workers, "workers", 32, "requests in flight at once")
	fs.DurationVar(&p.Delay, "delay", time.Millisecond, "least time between two requests to one host")
	fs.DurationVar(&p.Timeout, "timeout", 10*time.Minute, "stop the crawl after this long")
	fs.DurationVar(&p.Window, "window", 0, "also report the pages served this long after the start (0: off)")
	fs.StringVar(&p.Label, "label", "", "name of the run, copied into the result")
	fs.StringVar(&p.CPUProfile, "cpuprofile", "", "write the crawl's CPU profile to this file")
	fs.StringVar(&p.MemProfile, "memprofile", "", "write a heap profile at the end of the crawl to this file")
	fs.Int64Var(&p.MaxRSS, "max-rss-mb", 4096, "stop the crawl once the resident set passes this many MiB (0: no limit)")
	fs.StringVar(&p.CAFile, "ca", "", "PEM file of the CA the web's certificate is signed by (the client's RootCAs)")
	fs.DurationVar(&p.SampleEvery, "sample-every", 0, "record the resident set and page count at this interval (0: off)")
}

// Check reports a missing required parameter.
func (p Params) Check() error {
	if p.Web == "" || p.Control == "" {
		return errors.New("harness: -web and -control are required")
	}
	if p.Agent == "" {
		return errors.New("harness: -agent must not be empty")
	}
	return nil
}

// Result is the JSON line a crawler command prints.
type Result struct {
	Crawler string `json:"crawler"`
	Label   string `json:"label,omitempty"`

	// Pages is the server's count of page requests; CrawlerPages the
	// crawler's own count of responses it handled.
	Pages        int     `json:"pages"`
	CrawlerPages int64   `json:"crawler_pages"`
	ElapsedS     float64 `json:"elapsed_s"`
	PagesPerS    float64 `json:"pages_per_s"`
	// WindowPages is the server's page count Window after the start (0
	// when no window was asked for or the crawl ended before it).
	WindowS       float64 `json:"window_s,omitempty"`
	WindowPages   int64   `json:"window_pages,omitempty"`
	CPUSeconds    float64 `json:"cpu_s"`
	CPUPer1000    float64 `json:"cpu_s_per_1000_pages"`
	PeakRSSMB     float64 `json:"peak_rss_mb"`
	Coverage      float64 `json:"coverage"`
	ExactDup      int     `json:"duplicate_fetches_exact"`
	SpellingDup   int     `json:"duplicate_fetches_spelling"`
	ContentDup    int     `json:"duplicate_content_fetches"`
	RobotsViol    int     `json:"robots_violations"`
	PolitenessVio int     `json:"politeness_violations"`
	TrapFetches   int     `json:"trap_fetches"`
	// Samples is the memory curve (with -sample-every).
	Samples []Sample `json:"samples,omitempty"`
	// Server is the server's full report.
	Server ServerReport `json:"server"`
	// Error is the crawl's error, if it ended with one.
	Error string `json:"error,omitempty"`
}

// Run measures one crawl: it resets the server's accounting, calls crawl
// with a context that ends after p.Timeout, and returns the result with the
// server's accounting and the process's resource usage. crawl returns the
// number of responses the crawler handled.
func Run(name string, p Params, crawl func(ctx context.Context) (int64, error)) (Result, error) {
	ctl := NewControl(p.Control)
	if err := ctl.Reset(); err != nil {
		return Result{}, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), p.Timeout)
	defer cancel()

	var overRSS atomic.Bool
	if p.MaxRSS > 0 {
		stop := make(chan struct{})
		defer close(stop)
		go watchRSS(p.MaxRSS<<20, &overRSS, cancel, stop)
	}

	res := Result{Crawler: name, Label: p.Label}
	windowDone := make(chan struct{})
	if p.Window > 0 {
		stop := make(chan struct{})
		defer func() { close(stop); <-windowDone }()
		go func() {
			defer close(windowDone)
			t := time.NewTimer(p.Window)
			defer t.Stop()
			select {
			case <-stop:
			case <-t.C:
				if n, err := ctl.Count(); err == nil {
					res.WindowS = p.Window.Seconds()
					res.WindowPages = n
				}
			}
		}()
	} else {
		close(windowDone)
	}

	if p.CPUProfile != "" {
		f, err := os.Create(p.CPUProfile)
		if err != nil {
			return Result{}, fmt.Errorf("harness: %w", err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return Result{}, fmt.Errorf("harness: %w", err)
		}
	}
	start := time.Now()
	samplesDone := make(chan []Sample, 1)
	stopSampling := make(chan struct{})
	go func() {
		var samples []Sample
		defer func() { samplesDone <- samples }()
		if p.SampleEvery <= 0 {
			return
		}
		t := time.NewTicker(p.SampleEvery)
		defer t.Stop()
		for {
			select {
			case <-stopSampling:
				return
			case <-t.C:
			}
			rss, err1 := currentRSS()
			pages, err2 := ctl.Count()
			if err1 != nil || err2 != nil {
				continue
			}
			ms := []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/memory/classes/total:bytes"},
				{Name: "/memory/classes/heap/released:bytes"}}
			metrics.Read(ms)
			mb := func(i int) float64 { return float64(ms[i].Value.Uint64()) / (1 << 20) }
			samples = append(samples, Sample{ElapsedS: time.Since(start).Seconds(), Pages: pages,
				RSSMB: float64(rss) / (1 << 20), LiveHeapMB: mb(0), GoMB: mb(1) - mb(2)})
		}
	}()
	n, crawlErr := crawl(ctx)
	elapsed := time.Since(start)
	close(stopSampling)
	res.Samples = <-samplesDone
	if p.CPUProfile != "" {
		pprof.StopCPUProfile()
	}
	if p.MemProfile != "" {
		if err := writeHeapProfile(p.MemProfile); err != nil {
			return Result{}, err
		}
	}
	use, err := SelfUsage()
	if err != nil {
		return Result{}, err
	}
	if p.Window > 0 {
		// The window's sample is only meaningful if the crawl outlived it.
		if elapsed < p.Window {
			res.WindowS, res.WindowPages = 0, 0
		}
	}
	rep, err := ctl.Report()
	if err != nil {
		return Result{}, err
	}
	res.Pages = rep.Pages
	res.CrawlerPages = n
	res.ElapsedS = elapsed.Seconds()
	if elapsed > 0 {
		res.PagesPerS = float64(rep.Pages) / elapsed.Seconds()
	}
	res.CPUSeconds = use.CPU.Seconds()
	if rep.Pages > 0 {
		res.CPUPer1000 = use.CPU.Seconds() / float64(rep.Pages) * 1000
	}
	res.PeakRSSMB = float64(use.MaxRSS) / (1 << 20)
	res.Coverage = rep.Coverage
	res.ExactDup = rep.ExactRepeats
	res.SpellingDup = rep.SpellingRepeats
	res.ContentDup = rep.ContentRepeats
	res.RobotsViol = rep.RobotsViolations
	res.PolitenessVio = rep.SpacingViolations + rep.ConcurrencyViolations
	res.TrapFetches = rep.TrapFetches
	res.Server = rep
	if crawlErr != nil {
		res.Error = crawlErr.Error()
	}
	if overRSS.Load() {
		res.Error = fmt.Sprintf("stopped: resident set over %d MiB", p.MaxRSS)
	}
	return res, nil
}

// watchRSS cancels the crawl once the process's resident set passes limit
// bytes, checking twice a second until stop is closed.
func watchRSS(limit int64, over *atomic.Bool, cancel context.CancelFunc, stop <-chan struct{}) {
	t := time.NewTicker(500 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		if rss, err := currentRSS(); err == nil && rss > limit {
			over.Store(true)
			cancel()
			return
		}
	}
}

// currentRSS reads the process's resident set from /proc/self/statm (Linux).
func currentRSS() (int64, error) {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0, err
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0, errors.New("harness: short /proc/self/statm")
	}
	pages, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		return 0, err
	}
	return pages * int64(os.Getpagesize()), nil
}

// Main is the body of a crawler command: it parses the flags, runs the crawl
// through Run and prints the result as one JSON line on standard output.
// Extra flags may be defined on fs before Main is called.
func Main(name string, fs *flag.FlagSet, args []string, crawl func(ctx context.Context, p Params) (int64, error)) {
	var p Params
	p.RegisterFlags(fs)
	if err := fs.Parse(args); err != nil {
		os.Exit(2)
	}
	if err := p.Check(); err != nil {
		fmt.Fprintln(os.Stderr, name+":", err)
		os.Exit(2)
	}
	res, err := Run(name, p, func(ctx context.Context) (int64, error) { return crawl(ctx, p) })
	if err != nil {
		fmt.Fprintln(os.Stderr, name+":", err)
		os.Exit(1)
	}
	out, err := json.Marshal(res)
	if err != nil {
		fmt.Fprintln(os.Stderr, name+":", err)
		os.Exit(1)
	}
	fmt.Println(string(out))
}

func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("harness: %w", err)
	}
	defer f.Close()
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		return fmt.Errorf("harness: heap profile: %w", err)
	}
	return nil
}

// HostOf returns the lower-case host name of rawURL without port, or "".
func HostOf(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return ""
	}
	return strings.ToLower(u.Hostname())
}
