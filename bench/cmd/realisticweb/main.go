// Command realisticweb serves a realistic synthetic web for the end-to-end
// benchmark (bench/run.sh -runs realistic), in a process of its own:
//
//   - HTTPS only, with a CA made at start whose certificate is written to a
//     PEM file (-ca-file, named in the info line) that each crawler loads
//     into its root pool; HTTP/2 for clients that offer it (Go's server
//     negotiates h2 over TLS by default), HTTP/1.1 otherwise;
//   - hosts hNNNN.test, each with its own certificate signed by the CA,
//     which crawlers reach through a dialer that sends every *.test host to
//     this server, each with 10–20 pages (-min-pages, -max-pages) and a
//     robots.txt: Disallow /private/ (60 %), the same with Crawl-delay
//     0.25 s (15 %), none (404, 15 %), an empty Disallow (10 %);
//   - pages built from real news pages (-corpus, gzip'd HTML): the head of
//     one, then body HTML of the corpus from a point each page chooses,
//     until a size drawn log-normal with median 100 KB (σ 0.9, 8 KB–1 MB);
//     every <a href> of the originals is rewritten into a link of the
//     synthetic web (same host mostly, one in twelve to another host, a few
//     with a fragment or tracking parameters), other URLs point at a host
//     that answers 404, and <link>, <base> and meta robots/refresh tags are
//     dropped;
//   - each page compressed at start with gzip (level 6) and brotli (quality
//     5) and sent as Accept-Encoding asks (brotli preferred);
//   - every response delayed 20–300 ms (log-normal, median 60 ms).
//
// Like cmd/benchweb it prints one JSON line (harness.WebInfo) once it
// serves, answers the same control endpoint (/info, /seeds, /count,
// /report, /reset), and accounts every request (judge.go).
//
//	go run ./cmd/realisticweb -hosts 500
package main

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/crawlkit/crawlkit/bench/internal/harness"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "realisticweb:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("realisticweb", flag.ContinueOnError)
	hosts := fs.Int("hosts", 1000, "virtual hosts")
	minPages := fs.Int("min-pages", 10, "fewest pages per host")
	maxPages := fs.Int("max-pages", 20, "most pages per host")
	seed := fs.Uint64("seed", 1, "web seed")
	corpusDir := fs.String("corpus", "/work/shared/datasets/article-extraction/html", "directory of *.html.gz pages to build from")
	caFile := fs.String("ca-file", "", "file to write the test CA's PEM certificate to (default: in a temporary directory)")
	agent := fs.String("agent", "benchbot", "robots.txt product token (informational: every group is for *)")
	maxDepth := fs.Int("max-depth", 5, "depth bound of the ground truth (0: none)")
	cacheDir := fs.String("cache-dir", defaultCacheDir(), "directory to keep built webs in, keyed by the flags and corpus (empty: no cache)")
	watchStdin := fs.Bool("stdin", true, "exit when standard input is closed")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *hosts < 1 || *minPages < 1 || *maxPages < *minPages {
		return fmt.Errorf("need -hosts ≥ 1 and 1 ≤ -min-pages ≤ -max-pages")
	}
	if *caFile == "" {
		dir, err := os.MkdirTemp("", "realisticweb-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		*caFile = filepath.Join(dir, "ca.pem")
	}

	began := time.Now()
	s := newSite(*seed, *hosts, *minPages, *maxPages)
	key, err := cacheKey(*seed, *hosts, *minPages, *maxPages, *corpusDir)
	if err != nil {
		return err
	}
	bodies, cached, err := loadOrBuild(s, *corpusDir, *cacheDir, key)
	if err != nil {
		return err
	}
	truth := s.truth(*maxDepth)
	j := newJudge(s, truth)
	w := &web{s: s, bodies: bodies, j: j, hostIdx: map[string]int{}, latency: drawLatency}
	for i, h := range s.hosts {
		w.hostIdx[h.name] = i
	}
	certs, err := newIssuer(*caFile, w.knows)
	if err != nil {
		return err
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler:           w,
		ReadHeaderTimeout: 30 * time.Second,
		TLSConfig: &tls.Config{
			GetCertificate: certs.GetCertificate,
			MinVersion:     tls.VersionTLS12,
			VerifyConnection: func(tls.ConnectionState) error {
				j.handshake()
				return nil
			},
		},
		ErrorLog: nil,
	}
	errc := make(chan error, 2)
	go func() { errc <- srv.ServeTLS(ln, "", "") }()
	defer srv.Close()

	info := harness.WebInfo{Web: ln.Addr().String(), Hosts: *hosts, Pages: (*minPages + *maxPages) / 2,
		Agent: *agent, MaxDepth: *maxDepth, TruthUnique: len(truth), CAFile: *caFile}
	crawlable := map[int]bool{}
	for id := range truth {
		crawlable[s.pages[id].host] = true
	}
	info.CrawlableHosts = len(crawlable)
	sizes, links := make([]float64, len(s.pages)), make([]int, len(s.pages))
	var sum float64
	for i, p := range s.pages {
		sizes[i] = float64(p.size) / 1000
		links[i] = p.nLinks
		sum += sizes[i]
	}
	slices.Sort(sizes)
	slices.Sort(links)
	info.MedianPageKB, info.MeanPageKB, info.MaxPageKB = sizes[len(sizes)/2], sum/float64(len(sizes)), sizes[len(sizes)-1]
	info.MedianLinks = links[len(links)/2]

	var seeds []string
	for _, h := range s.hosts {
		seeds = append(seeds, "https://"+h.name+"/")
	}
	ctl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	info.Control = ctl.Addr().String()
	var cpuMu sync.Mutex
	baseCPU := selfCPU()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /info", func(rw http.ResponseWriter, r *http.Request) { writeJSON(rw, info) })
	mux.HandleFunc("GET /seeds", func(rw http.ResponseWriter, r *http.Request) { writeJSON(rw, seeds) })
	mux.HandleFunc("GET /count", func(rw http.ResponseWriter, r *http.Request) { writeJSON(rw, w.count.Load()) })
	mux.HandleFunc("GET /report", func(rw http.ResponseWriter, r *http.Request) {
		cpuMu.Lock()
		cpu := selfCPU() - baseCPU
		cpuMu.Unlock()
		writeJSON(rw, toHarness(j.report(), len(truth), *maxDepth, cpu))
	})
	mux.HandleFunc("POST /reset", func(rw http.ResponseWriter, r *http.Request) {
		j.reset()
		w.count.Store(0)
		cpuMu.Lock()
		baseCPU = selfCPU()
		cpuMu.Unlock()
		writeJSON(rw, true)
	})
	csrv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { errc <- csrv.Serve(ctl) }()
	defer csrv.Close()

	fmt.Fprintf(os.Stderr, "realisticweb: %d hosts, %d pages (median %.0f KB, mean %.0f KB, max %.0f KB, median %d links), truth %d pages, %s in %s\n",
		*hosts, len(s.pages), info.MedianPageKB, info.MeanPageKB, info.MaxPageKB, info.MedianLinks, len(truth), map[bool]string{true: "loaded from cache", false: "built"}[cached], time.Since(began).Round(time.Millisecond))
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

func defaultCacheDir() string {
	d, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(d, "crawlkit-bench")
}

func selfCPU() time.Duration {
	u, err := harness.SelfUsage()
	if err != nil {
		return 0
	}
	return u.CPU
}

func toHarness(r report, truthUnique, maxDepth int, cpu time.Duration) harness.ServerReport {
	out := harness.ServerReport{
		Pages: r.Pages, RobotsFetches: r.RobotsFetches, NotFound: r.NotFound,
		RobotsViolations: r.RobotsViolations, RobotsViolationURLs: r.RobotsViolationURLs, BeforeRobots: r.BeforeRobots,
		SpacingViolations: r.SpacingViolations, ConcurrencyViolations: r.ConcurrencyViolations,
		ExactRepeats: r.ExactRepeats, SpellingRepeats: r.SpellingRepeats,
		TruthUnique: truthUnique, Covered: r.Covered, MaxDepth: maxDepth, ServerCPUSeconds: cpu.Seconds(),
		WireBytes: r.WireBytes, DecodedBytes: r.DecodedBytes, Encodings: r.Encodings, Protocols: r.Protocols,
		TLSHandshakes: r.TLSHandshakes, OffWeb: r.OffWeb, NotFoundURLs: r.NotFoundURLs,
	}
	if truthUnique > 0 {
		out.Coverage = float64(r.Covered) / float64(truthUnique)
	}
	return out
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}
