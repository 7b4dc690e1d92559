// Command multiworker is one worker of a crawl shared by several processes
// through PostgreSQL (storage/postgres), or Redis (storage/redis) with
// -redis. Start as many as you like, on one
// machine or several, with the same -db and -schema: they take URLs from one
// queue, never fetch a URL twice (except one whose worker died mid-fetch),
// never contact a host twice at once, and keep each host's politeness delay
// between them. A worker that is killed loses nothing: its leases expire
// after -lease-ttl and the others fetch those URLs. A live worker extends
// the lease of a URL it is still working on, so -lease-ttl need not cover
// the slowest fetch.
//
//	go run ./examples/multiworker -db postgres://postgres@127.0.0.1/test \
//	    -schema mycrawl -seed https://example.com/ \
//	    -user-agent "mybot/1.0 (+https://example.com/bot)"
//
// Every worker may be given the seeds (the queue drops URLs it already
// holds). A worker returns when nothing is queued or leased by any worker.
// It prints one line per fetched page, "FETCHED <url>", on stdout.
//
// With -test-web host:port, every *.test host is dialled at that address and
// loopback addresses are allowed: that is how the multi-worker test runs
// workers against a crawltest web served by the test process.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/fetch"
	"github.com/crawlkit/crawlkit/storage/postgres"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// seedList collects repeated -seed flags.
type seedList []string

func (s *seedList) String() string     { return strings.Join(*s, ",") }
func (s *seedList) Set(v string) error { *s = append(*s, v); return nil }

// run is the worker: it parses args, crawls, and returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("multiworker", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var seeds seedList
	fs.Var(&seeds, "seed", "a seed URL (repeatable)")
	dbURL := fs.String("db", envOr("CRAWLKIT_POSTGRES_URL", "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"), "PostgreSQL connection string")
	schema := fs.String("schema", postgres.DefaultSchema, "schema holding the shared crawl (with -redis: the crawl's name)")
	redisAddr := fs.String("redis", "", "share the crawl through the Redis server at this address instead of PostgreSQL")
	agent := fs.String("user-agent", "crawlkit-multiworker/1.0", "User-Agent (its product token is matched against robots.txt)")
	workers := fs.Int("workers", 4, "pages fetched at once by this process")
	delay := fs.Duration("delay", time.Second, "least time between two requests to one host, across all workers")
	leaseTTL := fs.Duration("lease-ttl", time.Minute, "how long a lease lasts, unless its worker extends it, before its URL goes to another worker")
	testWeb := fs.String("test-web", "", "dial every *.test host at this host:port and allow loopback (for crawltest)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if len(seeds) == 0 {
		fmt.Fprintln(stderr, "multiworker: at least one -seed is required")
		return 2
	}
	// Check the values the libraries would otherwise replace by a default
	// in silence (a -workers 0 ran crawlkit's default workers on a pool sized
	// for 2, a non-positive -lease-ttl ran with 5 minutes).
	var usage string
	switch {
	case fs.NArg() > 0:
		usage = fmt.Sprintf("unexpected argument %q (seeds are given with -seed)", fs.Arg(0))
	case *workers < 1:
		usage = fmt.Sprintf("-workers %d: must be at least 1", *workers)
	case *delay <= 0:
		usage = fmt.Sprintf("-delay %v: must be positive", *delay)
	case *leaseTTL <= 0:
		usage = fmt.Sprintf("-lease-ttl %v: must be positive", *leaseTTL)
	}
	if usage != "" {
		fmt.Fprintln(stderr, "multiworker:", usage)
		return 2
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))

	// One politeness model serves this process's fetcher (which records
	// every fetch into it) and the shared queue (which turns it into the
	// host's next contact time in the database when a lease settles).
	polite := fetch.NewPoliteness(fetch.PolitenessConfig{Delay: *delay})
	var sh shared
	var err error
	if *redisAddr != "" {
		sh, err = openRedis(ctx, *redisAddr, *schema, *workers, polite, *leaseTTL, log)
	} else {
		sh, err = openPostgres(ctx, *dbURL, *schema, *workers, polite, *leaseTTL, log)
	}
	if err != nil {
		fmt.Fprintln(stderr, "multiworker:", err)
		return 1
	}
	defer sh.close()

	var outMu sync.Mutex
	cfg := crawlkit.Config{
		UserAgent:  *agent,
		Seeds:      seeds,
		Scope:      crawlkit.ScopeAny,
		Workers:    *workers,
		Delay:      *delay,
		Queue:      sh.queue,
		Politeness: polite,
		Logger:     log,
		// The processes share one copy of each robots.txt and see each
		// other's pages as near-duplicates, instead of each fetching
		// every robots.txt and fingerprinting alone.
		RobotsStore:      sh.robots,
		FingerprintStore: sh.fingerprints,
		// They share what the spider-trap detector learned, so a trap
		// one worker found is a trap for all, and a worker started again
		// after a crash does not learn its traps anew.
		StateStore: sh.state,
		// Drop a host whose robots.txt is unreachable at once instead of
		// retrying it (for a test web, where that is final).
		RobotsRetries: -1,
		Handler: func(_ context.Context, p *crawlkit.Page) error {
			outMu.Lock()
			defer outMu.Unlock()
			_, err := fmt.Fprintln(stdout, "FETCHED", p.URL)
			return err
		},
	}
	if *testWeb != "" {
		cfg.DialContext = testDialer(*testWeb)
		cfg.AllowPrivate = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}
	}
	c, err := crawlkit.New(cfg)
	if err != nil {
		fmt.Fprintln(stderr, "multiworker:", err)
		return 1
	}
	if err := c.Run(ctx); err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintln(stderr, "multiworker:", err)
		return 1
	}
	return 0
}

// testDialer dials every *.test host at addr, and refuses anything else.
func testDialer(addr string) fetch.DialFunc {
	var d net.Dialer
	return func(ctx context.Context, network, hostport string) (net.Conn, error) {
		host, _, err := net.SplitHostPort(hostport)
		if err != nil {
			return nil, err
		}
		if !strings.HasSuffix(strings.ToLower(host), ".test") {
			return nil, fmt.Errorf("multiworker: %s is not a host of the test web", host)
		}
		return d.DialContext(ctx, network, addr)
	}
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
