// Command benchweb serves a crawltest synthetic web in a process of its own
// for the end-to-end benchmark, so that a crawler's CPU time and memory are
// measured apart from the server's.
//
// It prints one JSON line (harness.WebInfo) on standard output once it
// serves: the web's address, which crawlers reach through a dialer that
// sends every *.test host there, and the address of a control endpoint on
// loopback:
//
//	GET  /info    the web's description (harness.WebInfo)
//	GET  /seeds   the seed URLs, as a JSON array
//	GET  /count   page requests answered since the last reset (cheap)
//	GET  /report  the server's accounting since the last reset, with the
//	              coverage of the ground truth (harness.ServerReport)
//	POST /reset   clear the accounting before the next crawl
//
// It runs until it is interrupted or its standard input is closed.
//
//	go run ./cmd/benchweb -hosts 200 -pages 50
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/crawlkit/crawlkit/bench/internal/harness"
	"github.com/crawlkit/crawlkit/crawltest"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "benchweb:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("benchweb", flag.ContinueOnError)
	hosts := fs.Int("hosts", 200, "virtual hosts")
	pages := fs.Int("pages", 50, "pages per host")
	links := fs.Int("links", 10, "links per page")
	seed := fs.Int64("seed", 1, "web seed")
	agent := fs.String("agent", "benchbot", "robots.txt product token the ground truth is computed for")
	maxDepth := fs.Int("max-depth", 5, "depth bound of the ground truth (0: none)")
	crawlDelay := fs.Duration("crawl-delay", time.Second, "Crawl-delay written by the hosts that have one")
	minGap := fs.Duration("min-gap", 0, "least time between requests to one host before a request counts as a politeness violation")
	maxPerHost := fs.Int("max-per-host", 1, "requests in flight to one host before further ones count as violations")
	watchStdin := fs.Bool("stdin", true, "exit when standard input is closed")
	if err := fs.Parse(args); err != nil {
		return err
	}

	var pageCount atomic.Int64
	web, err := crawltest.NewWeb(crawltest.Config{
		Hosts: *hosts, PagesPerHost: *pages, LinksPerPage: *links, Seed: *seed,
		Agent: *agent, MaxDepth: *maxDepth, CrawlDelay: *crawlDelay,
		MinGap: *minGap, MaxPerHost: *maxPerHost,
		OnRequest: func(r *http.Request) {
			if r.URL.Path != "/robots.txt" {
				pageCount.Add(1)
			}
		},
	})
	if err != nil {
		return err
	}
	defer web.Close()

	truth := web.TruthFor(*agent, *maxDepth)
	unique := len(truth.Unique())
	crawlable := map[string]bool{}
	for _, p := range truth.Pages {
		crawlable[p.Host] = true
	}
	info := harness.WebInfo{
		Web: web.Addr(), Hosts: *hosts, Pages: *pages, Agent: *agent, MaxDepth: *maxDepth,
		CrawlableHosts: len(crawlable), TruthUnique: unique,
	}

	s := &server{web: web, truth: truth, unique: unique, maxDepth: *maxDepth, count: &pageCount}
	s.resetCPU()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	info.Control = ln.Addr().String()
	s.info = info
	mux := http.NewServeMux()
	mux.HandleFunc("GET /info", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, s.info) })
	mux.HandleFunc("GET /seeds", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, web.Seeds()) })
	mux.HandleFunc("GET /count", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, pageCount.Load()) })
	mux.HandleFunc("GET /report", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, s.report()) })
	mux.HandleFunc("POST /reset", func(w http.ResponseWriter, r *http.Request) {
		s.reset()
		writeJSON(w, true)
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	defer srv.Close()

	line, _ := json.Marshal(info)
	fmt.Println(string(line))

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if *watchStdin {
		go func() {
			_, _ = io.Copy(io.Discard, os.Stdin)
			stop()
		}()
	}
	select {
	case <-ctx.Done():
		return nil
	case err := <-errc:
		return err
	}
}

// server answers the control endpoint.
type server struct {
	web      *crawltest.Web
	truth    *crawltest.Truth
	unique   int
	maxDepth int
	info     harness.WebInfo
	count    *atomic.Int64

	mu      sync.Mutex
	baseCPU time.Duration // the process's CPU time at the last reset
}

func (s *server) resetCPU() {
	u, err := harness.SelfUsage()
	if err != nil {
		return
	}
	s.mu.Lock()
	s.baseCPU = u.CPU
	s.mu.Unlock()
}

func (s *server) reset() {
	s.web.ResetReport()
	s.count.Store(0)
	s.resetCPU()
}

func (s *server) report() harness.ServerReport {
	var cpu time.Duration
	if u, err := harness.SelfUsage(); err == nil {
		s.mu.Lock()
		cpu = u.CPU - s.baseCPU
		s.mu.Unlock()
	}
	rep := s.web.Report()
	robots := 0
	for _, n := range rep.RobotsFetches {
		robots += n
	}
	fetched := make([]string, 0, len(rep.PerURL))
	for u := range rep.PerURL {
		if !strings.HasSuffix(u, "/robots.txt") {
			fetched = append(fetched, u)
		}
	}
	missing := len(s.truth.Missing(fetched))
	out := harness.ServerReport{
		Pages:                 rep.Requests - robots,
		RobotsFetches:         robots,
		NotFound:              rep.NotFound,
		RobotsViolations:      rep.RobotsViolations,
		RobotsViolationURLs:   rep.RobotsViolationURLs[:min(10, len(rep.RobotsViolationURLs))],
		BeforeRobots:          rep.BeforeRobots,
		SpacingViolations:     rep.SpacingViolations,
		ConcurrencyViolations: rep.ConcurrencyViolations,
		ExactRepeats:          rep.ExactRepeats,
		SpellingRepeats:       rep.SpellingRepeats,
		ContentRepeats:        rep.ContentRepeats,
		TrapFetches:           rep.TrapFetches,
		TruthUnique:           s.unique,
		Covered:               s.unique - missing,
		MaxDepth:              s.maxDepth,
		ServerCPUSeconds:      cpu.Seconds(),
	}
	if s.unique > 0 {
		out.Coverage = float64(out.Covered) / float64(s.unique)
	}
	return out
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}
