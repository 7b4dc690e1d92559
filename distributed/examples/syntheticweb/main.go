// Command syntheticweb serves crawlkit's synthetic web (package crawltest)
// on a fixed address, for trying a distributed crawl without touching the
// real web: start the crawl nodes with -route-tld test=ADDR (every *.test
// host is dialled at ADDR) and -allow-private 127.0.0.0/8, and seed them
// with the -seeds-file it writes.
//
//	syntheticweb -addr 127.0.0.1:8080 -control 127.0.0.1:8081 -seeds-file seeds.txt
//
// Its control address answers:
//
//	GET /seeds   the seed URLs, one a line
//	GET /report  the server's own accounting against the ground truth, as JSON
//	GET /check   200 "complete" when every reachable page was fetched with no
//	             robots or politeness violation, 412 and what is wrong otherwise
//
// The accounting is the server's: a request to a host sooner than
// -min-gap (or the host's Crawl-delay) after the previous one ended is a
// politeness violation, whichever node sent it.
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
	"syscall"
	"time"

	"github.com/crawlkit/crawlkit/crawltest"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "syntheticweb:", err)
		os.Exit(1)
	}
}

// report is the answer of /report.
type report struct {
	Requests              int      `json:"requests"`
	TruthPages            int      `json:"truth_pages"`
	Missing               int      `json:"missing"`
	MissingExamples       []string `json:"missing_examples,omitempty"`
	PageFetches           int      `json:"page_fetches"`
	DuplicateFetches      int      `json:"duplicate_fetches"`
	RobotsViolations      int      `json:"robots_violations"`
	BeforeRobots          int      `json:"before_robots"`
	SpacingViolations     int      `json:"spacing_violations"`
	ConcurrencyViolations int      `json:"concurrency_violations"`
}

func run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("syntheticweb", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:8080", "address the crawl nodes dial for every *.test host")
	control := fs.String("control", "127.0.0.1:8081", "address of /seeds, /report and /check")
	hosts := fs.Int("hosts", 100, "virtual hosts")
	pages := fs.Int("pages", 10, "pages per host")
	seed := fs.Int64("seed", 1, "selects the web")
	agent := fs.String("agent", "crawlkit-distributed", "the crawlers' robots.txt product token")
	crawlDelay := fs.Duration("crawl-delay", 200*time.Millisecond, "Crawl-delay of the hosts that ask for one")
	minGap := fs.Duration("min-gap", 50*time.Millisecond, "least gap between requests to one host before a request is a violation")
	seedsFile := fs.String("seeds-file", "", "write the seed URLs to this file, one a line")
	if err := fs.Parse(args); err != nil {
		return err
	}
	web, err := crawltest.NewWeb(crawltest.Config{Hosts: *hosts, PagesPerHost: *pages, Seed: *seed, Agent: *agent,
		CrawlDelay: *crawlDelay, MinGap: *minGap})
	if err != nil {
		return err
	}
	defer web.Close()
	if *seedsFile != "" {
		if err := os.WriteFile(*seedsFile, []byte(strings.Join(web.Seeds(), "\n")+"\n"), 0o644); err != nil {
			return err
		}
	}
	truth := web.TruthFor(*agent, 0)

	// The web listens on a loopback port of its own choosing; this
	// address passes connections through to it, so the server's
	// accounting sees every request as it came.
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	defer ln.Close()
	go forward(ln, web.Addr())

	read := func() report {
		rep := web.Report()
		var fetched []string
		total := 0
		for u, n := range rep.PerPage {
			if n > 0 {
				fetched = append(fetched, u)
			}
			total += n
		}
		missing := truth.Missing(fetched)
		return report{Requests: rep.Requests, TruthPages: len(truth.Unique()), Missing: len(missing),
			MissingExamples: missing[:min(5, len(missing))], PageFetches: total, DuplicateFetches: rep.DuplicateFetches(),
			RobotsViolations: rep.RobotsViolations, BeforeRobots: rep.BeforeRobots,
			SpacingViolations: rep.SpacingViolations, ConcurrencyViolations: rep.ConcurrencyViolations}
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /seeds", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, strings.Join(web.Seeds(), "\n"))
	})
	mux.HandleFunc("GET /report", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(read())
	})
	mux.HandleFunc("GET /check", func(w http.ResponseWriter, r *http.Request) {
		rep := read()
		b, _ := json.Marshal(rep)
		if rep.Missing > 0 || rep.RobotsViolations > 0 || rep.BeforeRobots > 0 || rep.SpacingViolations > 0 || rep.ConcurrencyViolations > 0 {
			w.WriteHeader(http.StatusPreconditionFailed)
			fmt.Fprintf(w, "incomplete: %s\n", b)
			return
		}
		fmt.Fprintf(w, "complete: %s\n", b)
	})
	cln, err := net.Listen("tcp", *control)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(cln) }()
	defer srv.Close()
	fmt.Printf("web %s control %s hosts %d truth_pages %d\n", ln.Addr(), cln.Addr(), *hosts, len(truth.Unique()))
	<-ctx.Done()
	return nil
}

// forward passes every connection accepted on ln through to target.
func forward(ln net.Listener, target string) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			t, err := net.Dial("tcp", target)
			if err != nil {
				return
			}
			defer t.Close()
			done := make(chan struct{})
			go func() {
				_, _ = io.Copy(t, c)
				if tc, ok := t.(*net.TCPConn); ok {
					_ = tc.CloseWrite()
				}
				close(done)
			}()
			_, _ = io.Copy(c, t)
			if cc, ok := c.(*net.TCPConn); ok {
				_ = cc.CloseWrite()
			}
			<-done
		}()
	}
}
