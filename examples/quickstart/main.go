// Command quickstart crawls with crawlkit's defaults: robots.txt obeyed,
// polite per-host delays, private addresses refused, state kept in an
// embedded Pebble store so an interrupted crawl resumes, and every page
// archived as WARC.
//
// With no -seed it starts crawlkit's synthetic web (package crawltest) in
// the process and crawls that, so it runs on a machine without a network:
//
//	go run ./examples/quickstart
//
// To crawl a real site, give -seed and a -user-agent that names you and a
// contact (it is required with -seed: the default names crawlkit's project
// page, which cannot answer for your crawl):
//
//	go run ./examples/quickstart -seed https://example.com/ -max-pages 100 \
//	    -user-agent "mybot/1.0 (+https://example.com/bot)"
//
// Progress is shown while it runs (in place on a terminal, a line every few
// seconds otherwise) and the final statistics are printed at the end.
// Interrupt it with Ctrl-C and run it again with the same -data-dir to
// resume.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/crawlkit/crawlkit/service/dashboard/live"

	_ "github.com/crawlkit/crawlkit/storage/datadir" // Config.DataDir on Pebble

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/archive/warc"
	"github.com/crawlkit/crawlkit/crawltest"
	"github.com/crawlkit/crawlkit/metrics/prometheus"
)

// stringList is a repeatable string flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("quickstart", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var seeds stringList
	fs.Var(&seeds, "seed", "URL to start from (repeatable); none: crawl the built-in synthetic web")
	maxPages := fs.Int("max-pages", 0, "stop after this many pages (0: no limit)")
	maxDepth := fs.Int("max-depth", 0, "follow links at most this deep from a seed (0: no limit)")
	scope := fs.String("scope", "host", "which links to follow: host (the seeds' hosts), domain (their registrable domains) or any")
	userAgent := fs.String("user-agent", "crawlkit-quickstart/0.1 (+https://github.com/crawlkit/crawlkit)", "User-Agent; starts with the robots.txt product token (required with -seed: name yourself and a contact)")
	dataDir := fs.String("data-dir", "crawl-data", "directory of the crawl's durable state; reuse it to resume")
	warcDir := fs.String("warc-dir", "", "directory for WARC files (default <data-dir>/warc; \"off\" disables)")
	waczOut := fs.String("wacz", "", "after the crawl, package the WARC files and their indexes as this WACZ file, for replay in ReplayWeb.page")
	workers := fs.Int("workers", crawlkit.DefaultWorkers, "pages fetched at once")
	delay := fs.Duration("delay", time.Second, "least time between requests to one host; 0 for none, only on sites you run (synthetic web default: 100ms)")
	var allow stringList
	fs.Var(&allow, "allow-private", "CIDR the address guard lets through, e.g. 10.0.0.0/8 for an intranet (repeatable)")
	statsAddr := fs.String("stats-addr", "", "serve the live dashboard at /, JSON stats at /stats and Prometheus metrics at /metrics on this address, e.g. 127.0.0.1:8080")
	webHosts := fs.Int("web-hosts", 40, "synthetic web: number of hosts")
	webPages := fs.Int("web-pages", 25, "synthetic web: pages per host")
	if err := fs.Parse(args); err != nil {
		return err
	}
	delaySet, userAgentSet := false, false
	fs.Visit(func(f *flag.Flag) {
		delaySet = delaySet || f.Name == "delay"
		userAgentSet = userAgentSet || f.Name == "user-agent"
	})
	// The default User-Agent names crawlkit's project page as the contact:
	// right for the synthetic web, wrong for a real site, whose operators
	// must be able to reach whoever runs the crawl.
	if len(seeds) > 0 && !userAgentSet {
		return errors.New(`-seed needs -user-agent naming you and a contact, e.g. "mybot/1.0 (+https://example.com/bot)"`)
	}

	sc, err := crawlkit.ParseScope(*scope)
	if err != nil {
		return err
	}
	if *delay < 0 {
		return errors.New("-delay must not be negative")
	}
	if *delay == 0 {
		*delay = crawlkit.NoDelay
	}
	cfg := crawlkit.Config{
		UserAgent: *userAgent,
		Seeds:     seeds,
		Scope:     sc,
		MaxDepth:  *maxDepth,
		MaxPages:  *maxPages,
		Workers:   *workers,
		Delay:     *delay,
		DataDir:   *dataDir,
		Logger:    slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelError})),
	}
	for _, c := range allow {
		p, err := netip.ParsePrefix(c)
		if err != nil {
			return fmt.Errorf("-allow-private %q: %w", c, err)
		}
		cfg.AllowPrivate = append(cfg.AllowPrivate, p)
	}

	if len(seeds) == 0 {
		web, err := crawltest.NewWeb(crawltest.Config{Hosts: *webHosts, PagesPerHost: *webPages, Seed: 1})
		if err != nil {
			return err
		}
		defer web.Close()
		fmt.Fprintf(stdout, "No -seed given: crawling the built-in synthetic web (%d hosts × %d pages, served on %s).\n",
			*webHosts, *webPages, web.Addr())
		cfg.Seeds = web.Seeds()
		cfg.Scope = crawlkit.ScopeAny
		cfg.DialContext = web.DialContext
		cfg.AllowPrivate = append(cfg.AllowPrivate, netip.MustParsePrefix("127.0.0.0/8"))
		// Some hosts of the synthetic web answer robots.txt with 5xx: do
		// not wait for them to recover.
		cfg.RobotsRetries = -1
		if !delaySet {
			cfg.Delay = 100 * time.Millisecond
		}
	}
	if *dataDir != "" {
		if _, err := os.Stat(*dataDir); err == nil {
			fmt.Fprintf(stdout, "Resuming the crawl in %s (delete the directory to start over).\n", *dataDir)
		}
	}

	if *warcDir != "off" {
		dir := *warcDir
		if dir == "" {
			dir = filepath.Join(*dataDir, "warc")
		}
		sink, err := crawlkit.NewWARCSink(warc.Config{Dir: dir, Software: "crawlkit quickstart", Index: true})
		if err != nil {
			return err
		}
		cfg.Sink = sink
		fmt.Fprintf(stdout, "Writing WARC files to %s.\n", dir)
	}

	c, err := crawlkit.New(cfg)
	if err != nil {
		return err
	}

	if *statsAddr != "" {
		if host, _, err := net.SplitHostPort(*statsAddr); err == nil && (host == "" || net.ParseIP(host) != nil && net.ParseIP(host).IsUnspecified()) {
			fmt.Fprintf(stderr, "warning: -stats-addr %s listens on every interface: anyone who can reach this machine can read the crawl's stats and metrics; use 127.0.0.1:PORT for this machine only\n", *statsAddr)
		}
		ln, err := net.Listen("tcp", *statsAddr)
		if err != nil {
			return fmt.Errorf("-stats-addr: %w", err)
		}
		dash, err := live.New(c)
		if err != nil {
			return err
		}
		defer dash.Close()
		mux := http.NewServeMux()
		mux.Handle("/stats", c.StatsHandler())
		mux.Handle("/metrics", prometheus.Handler(c))
		mux.Handle("/", dash)
		srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
		go srv.Serve(ln)
		defer srv.Close()
		fmt.Fprintf(stdout, "Dashboard at http://%s/, stats at /stats, metrics at /metrics\n", ln.Addr())
	}

	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()

	done := make(chan struct{})
	progressDone := make(chan struct{})
	go func() {
		defer close(progressDone)
		showProgress(c, stdout, done)
	}()
	err = c.Run(ctx)
	close(done)
	<-progressDone
	if errors.Is(err, context.Canceled) {
		fmt.Fprintln(stdout, "\nInterrupted; run again with the same -data-dir to resume.")
		err = nil
	}

	s := c.Stats()
	warcDirUsed := ""
	if cfg.Sink != nil {
		warcDirUsed = *warcDir
		if warcDirUsed == "" {
			warcDirUsed = filepath.Join(*dataDir, "warc")
		}
	}
	printSummary(stdout, s, *dataDir, warcDirUsed)
	if sink, ok := cfg.Sink.(*crawlkit.WARCSink); ok && s.URLs.Fetched > 0 {
		records, revisits := sink.Writer().Stats()
		fmt.Fprintf(stdout, "  WARC: %d records (%d revisits) in %s; list them with any WARC reader, e.g. `warcio index FILE`.\n", records, revisits, warcDirUsed)
	}
	if *waczOut != "" && warcDirUsed != "" {
		if werr := warc.PackWACZ(warcDirUsed, *waczOut); werr != nil {
			return werr
		}
		fmt.Fprintf(stdout, "  WACZ: %s.\n", *waczOut)
	}
	if statsJSON := os.Getenv("QUICKSTART_STATS_JSON"); statsJSON != "" {
		out, _ := json.MarshalIndent(s, "", "  ")
		if werr := os.WriteFile(statsJSON, out, 0o644); werr != nil {
			return werr
		}
	}
	return err
}

// printSummary writes what the crawl did in words: pages, time, what was
// not fetched and why, and where the results are.
func printSummary(w io.Writer, s crawlkit.Stats, dataDir, warcDir string) {
	fmt.Fprintln(w)
	switch {
	case s.Ended == "complete" && s.URLs.Fetched == 0 && s.Totals != nil && s.Totals.Runs > 1:
		t := s.Totals
		fmt.Fprintf(w, "The crawl in %s is complete: nothing was left to fetch.\n", dataDir)
		fmt.Fprintf(w, "  Over its %d runs since %s: %d pages fetched (%d ok, %d failed), %s.\n",
			t.Runs, t.First.Format(time.DateTime), t.Fetched, t.Successful, t.Failed, bytesString(t.Bytes))
		printReasons(w, "  Not fetched", t.NotFetched)
		fmt.Fprintf(w, "  Delete %s to crawl again from the start.\n", dataDir)
		return
	case s.Ended == "complete":
		fmt.Fprintf(w, "Crawl complete in %s.\n", s.Elapsed.Round(100*time.Millisecond))
	case s.Ended == "max-pages":
		fmt.Fprintf(w, "Stopped at -max-pages after %s; %d URLs are still queued for the next run.\n", s.Elapsed.Round(100*time.Millisecond), s.URLs.Queued)
	default:
		fmt.Fprintf(w, "Stopped after %s; %d URLs are still queued for the next run.\n", s.Elapsed.Round(100*time.Millisecond), s.URLs.Queued)
	}
	fmt.Fprintf(w, "  Pages: %d fetched (%d ok, %d failed), %s, %.1f pages/s on average.\n",
		s.URLs.Fetched, s.URLs.Successful, s.URLs.Failed, bytesString(s.Bytes), s.Throughput.Average)
	if e := s.Errors; e.Network+e.Timeout+e.HTTP4xx+e.HTTP5xx > 0 {
		fmt.Fprintf(w, "  Failed fetches by cause: %d HTTP 4xx, %d HTTP 5xx, %d network, %d timeouts.\n", e.HTTP4xx, e.HTTP5xx, e.Network, e.Timeout)
	}
	if s.URLs.Duplicates > 0 {
		fmt.Fprintf(w, "  Near-duplicate pages: %d.\n", s.URLs.Duplicates)
	}
	printReasons(w, "  Not fetched", s.URLs.NotFetched)
	printReasons(w, "  Put off and tried again", s.URLs.Deferred)
	printReasons(w, "  Links not followed", s.LinksRejected)
	if t := s.Totals; t != nil && t.Runs > 1 {
		fmt.Fprintf(w, "  The crawl so far, over %d runs: %d pages fetched (%d ok, %d failed).\n", t.Runs, t.Fetched, t.Successful, t.Failed)
	}
	if dataDir != "" {
		fmt.Fprintf(w, "  Crawl state: %s (run again with the same -data-dir to resume).\n", dataDir)
	}
	fmt.Fprintln(w, "  Every number, by reason: the JSON at /stats with -stats-addr, or QUICKSTART_STATS_JSON=FILE.")
}

// printReasons writes counts by reason, largest first, on one line.
func printReasons(w io.Writer, label string, m map[crawlkit.Reason]int64) {
	if len(m) == 0 {
		return
	}
	type rc struct {
		r crawlkit.Reason
		n int64
	}
	var list []rc
	for r, n := range m {
		list = append(list, rc{r, n})
	}
	sort.Slice(list, func(i, j int) bool {
		if list[i].n != list[j].n {
			return list[i].n > list[j].n
		}
		return list[i].r < list[j].r
	})
	parts := make([]string, len(list))
	for i, x := range list {
		parts[i] = fmt.Sprintf("%s %d", x.r, x.n)
	}
	fmt.Fprintf(w, "%s: %s.\n", label, strings.Join(parts, ", "))
}

// bytesString formats n bytes for people.
func bytesString(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// waitingString says what the crawl waits for, or "" when nothing.
func waitingString(s crawlkit.Stats) string {
	w := s.Waiting
	var parts []string
	if w.CrawlDelayHosts > 0 {
		parts = append(parts, fmt.Sprintf("%d hosts on Crawl-delay (longest %s)", w.CrawlDelayHosts, w.LongestCrawlDelay))
	}
	if w.RobotsRetryHosts > 0 {
		parts = append(parts, fmt.Sprintf("%d unreachable robots.txt (next try in %s)", w.RobotsRetryHosts, time.Until(w.NextRobotsRetry).Round(time.Second)))
	}
	if w.RetryAfterHosts > 0 {
		parts = append(parts, fmt.Sprintf("%d hosts asked to come back later (until %s)", w.RetryAfterHosts, w.RetryAfterUntil.Format(time.TimeOnly)))
	}
	if w.LoginHosts > 0 {
		parts = append(parts, fmt.Sprintf("login of %d hosts", w.LoginHosts))
	}
	if len(parts) == 0 {
		return ""
	}
	return "  waiting: " + strings.Join(parts, ", ")
}

// showProgress prints the crawl's progress until done is closed: in place on
// a terminal, a line every five seconds otherwise.
func showProgress(c *crawlkit.Crawler, w io.Writer, done <-chan struct{}) {
	terminal := isTerminal(w)
	every := 5 * time.Second
	if terminal {
		every = 250 * time.Millisecond
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-done:
			if terminal {
				fmt.Fprintln(w)
			}
			return
		case <-t.C:
		}
		s := c.Stats()
		line := fmt.Sprintf("pages %d  %.1f pages/s  queue %d (%d in flight)  failed %d  robots-blocked %d  traps %d  hosts %d%s",
			s.URLs.Fetched, s.Throughput.Current, s.URLs.Queued, s.Waiting.InFlight, s.URLs.Failed, s.URLs.BlockedByRobots,
			s.URLs.TrapRejected, s.Hosts.Discovered, waitingString(s))
		if terminal {
			fmt.Fprintf(w, "\r\033[K%s", line)
		} else {
			fmt.Fprintln(w, line)
		}
	}
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
