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
	"strings"
	"syscall"
	"time"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/crawltest"
	"github.com/crawlkit/crawlkit/warc"
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
	workers := fs.Int("workers", 16, "pages fetched at once")
	delay := fs.Duration("delay", time.Second, "least time between requests to one host (synthetic web default: 100ms)")
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
		sink, err := crawlkit.NewWARCSink(warc.Options{Dir: dir, Software: "crawlkit quickstart"})
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
		ln, err := net.Listen("tcp", *statsAddr)
		if err != nil {
			return fmt.Errorf("-stats-addr: %w", err)
		}
		dash, err := c.NewDashboard()
		if err != nil {
			return err
		}
		defer dash.Close()
		mux := http.NewServeMux()
		mux.Handle("/stats", c.StatsHandler())
		mux.Handle("/metrics", c.MetricsHandler())
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
	fmt.Fprintln(stdout, "\nFinal stats:")
	out, _ := json.MarshalIndent(s, "", "  ")
	fmt.Fprintln(stdout, string(out))
	if sink, ok := cfg.Sink.(*crawlkit.WARCSink); ok {
		records, revisits := sink.Writer().Stats()
		fmt.Fprintf(stdout, "WARC: %d records (%d revisits)\n", records, revisits)
	}
	return err
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
		line := fmt.Sprintf("pages %d  %.1f pages/s  queue %d  errors %d  robots-blocked %d  traps %d  hosts %d",
			s.URLs.Fetched, s.Throughput.Current, s.URLs.Queued, s.URLs.Failed, s.URLs.BlockedByRobots,
			s.URLs.TrapRejected, s.Hosts.Discovered)
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
