package distributed

import (
	"bufio"
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
	"strings"
	"time"

	"github.com/crawlkit/crawlkit"
)

// stringList is a repeatable string flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

// RunCommand is the crawl node command (cmd/crawlnode): it parses args,
// serves the node's statistics if -http is given (printing "http ADDR" on
// stdout once listening), runs the node until the crawl is finished or ctx
// ends, and prints the final Stats as one JSON line prefixed "stats ".
// It lives in this package so that tests can run the very same node in a
// child process.
func RunCommand(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("crawlnode", flag.ContinueOnError)
	fs.SetOutput(stderr)
	natsURL := fs.String("nats", "nats://127.0.0.1:4222", "NATS server URLs, comma-separated")
	id := fs.String("id", "", "node id, unique among the crawl's nodes (default: host name and pid)")
	crawlID := fs.String("crawl", "default", "crawl id: names the stream, consumers and buckets")
	partitions := fs.Int("partitions", DefaultPartitions, "number of partitions (fixed when the crawl is created)")
	replicas := fs.Int("replicas", 1, "stream and bucket replicas (3 on a cluster)")
	var seeds stringList
	fs.Var(&seeds, "seed", "seed URL (repeatable)")
	seedsFile := fs.String("seeds-file", "", "file of seed URLs, one a line")
	userAgent := fs.String("user-agent", "crawlkit-distributed/0.1 (+https://github.com/crawlkit/crawlkit)", "User-Agent; starts with the robots.txt product token")
	workers := fs.Int("workers", crawlkit.DefaultWorkers, "pages fetched at once on this node")
	delay := fs.Duration("delay", crawlkit.DefaultDelay, "least time between requests to one host")
	maxCrawlDelay := fs.Duration("max-crawl-delay", crawlkit.DefaultMaxCrawlDelay, "cap on robots.txt Crawl-delay")
	maxDepth := fs.Int("max-depth", 0, "follow links at most this deep (0: no limit)")
	scope := fs.String("scope", "host", "links to follow: host, domain or any")
	dataDir := fs.String("data-dir", "", "directory for this node's robots.txt and fingerprint stores (empty: memory)")
	httpAddr := fs.String("http", "", "serve /stats, /metrics and /queue on this address, e.g. 127.0.0.1:9090")
	memberTTL := fs.Duration("member-ttl", DefaultMemberTTL, "membership heartbeat TTL")
	ackWait := fs.Duration("ack-wait", DefaultAckWait, "redelivery time of an unacknowledged URL")
	hold := fs.Duration("handover-hold", 0, "wait before fetching from a partition taken over (default: -max-crawl-delay)")
	held := fs.Int("max-held", DefaultMaxHeldPerPartition, "most unacknowledged messages held per partition")
	retryBase := fs.Duration("retry-base", DefaultRetryBase, "first retry delay, doubling per attempt")
	maxAttempts := fs.Int("max-attempts", DefaultMaxAttempts, "most attempts of a URL")
	robotsRetries := fs.Int("robots-retries", crawlkit.DefaultRobotsRetries, "retries of a URL whose robots.txt is unreachable (negative: none)")
	dupWindow := fs.Duration("dup-window", DefaultDuplicateWindow, "how long the server drops repeated publishes of a URL (fixed at stream creation)")
	expected := fs.Uint64("expected-urls", crawlkit.DefaultExpectedURLs, "URLs the whole crawl expects (sizes the seen sets)")
	var allow stringList
	fs.Var(&allow, "allow-private", "CIDR the address guard lets through (repeatable)")
	routeTLD := fs.String("route-tld", "", "testing only: TLD=ADDR sends every host under TLD to ADDR (e.g. test=127.0.0.1:8080 for a crawltest web)")
	logLevel := fs.String("log-level", "warn", "debug, info, warn or error")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *id == "" {
		h, _ := os.Hostname()
		*id = fmt.Sprintf("%s-%d", strings.NewReplacer(".", "-").Replace(h), os.Getpid())
	}
	if *seedsFile != "" {
		f, err := os.Open(*seedsFile)
		if err != nil {
			return err
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if s := strings.TrimSpace(sc.Text()); s != "" && !strings.HasPrefix(s, "#") {
				seeds = append(seeds, s)
			}
		}
		f.Close()
		if err := sc.Err(); err != nil {
			return err
		}
	}
	sc, err := crawlkit.ParseScope(*scope)
	if err != nil {
		return err
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level})).With("node", *id)
	var prefixes []netip.Prefix
	for _, a := range allow {
		p, err := netip.ParsePrefix(a)
		if err != nil {
			return fmt.Errorf("-allow-private: %w", err)
		}
		prefixes = append(prefixes, p)
	}
	var dial func(ctx context.Context, network, addr string) (net.Conn, error)
	if *routeTLD != "" {
		tld, target, ok := strings.Cut(*routeTLD, "=")
		if !ok || tld == "" || target == "" {
			return fmt.Errorf("-route-tld: want TLD=ADDR, got %q", *routeTLD)
		}
		dial = routeDialer("."+strings.Trim(strings.ToLower(tld), "."), target)
	}

	node, err := NewNode(Config{
		NATSURL: *natsURL, NodeID: *id, CrawlID: *crawlID, Partitions: *partitions, Replicas: *replicas,
		MemberTTL: *memberTTL, AckWait: *ackWait, HandoverHold: *hold, MaxHeldPerPartition: *held,
		RetryBase: *retryBase, MaxAttempts: *maxAttempts, ExpectedURLs: *expected, DuplicateWindow: *dupWindow, Logger: logger,
		Crawler: crawlkit.Config{
			UserAgent: *userAgent, Seeds: seeds, Scope: sc, MaxDepth: *maxDepth, Workers: *workers,
			Delay: *delay, MaxCrawlDelay: *maxCrawlDelay, RobotsRetries: *robotsRetries,
			RetryBackoff: *retryBase, MaxAttempts: *maxAttempts, DataDir: *dataDir,
			AllowPrivate: prefixes, DialContext: dial, Logger: logger,
		},
	})
	if err != nil {
		return err
	}
	if *httpAddr != "" {
		ln, err := net.Listen("tcp", *httpAddr)
		if err != nil {
			return err
		}
		srv := &http.Server{Handler: node.Handler(), ReadHeaderTimeout: 5 * time.Second}
		go func() { _ = srv.Serve(ln) }()
		defer srv.Close()
		node.SetHTTPAddr(ln.Addr().String())
		fmt.Fprintf(stdout, "http %s\n", ln.Addr())
	}
	runErr := node.Run(ctx)
	b, _ := json.Marshal(struct {
		Crawl crawlkit.Stats `json:"crawl"`
		Queue QueueStats     `json:"queue"`
	}{node.Crawler().Stats(), node.QueueStats()})
	fmt.Fprintf(stdout, "stats %s\n", b)
	if errors.Is(runErr, context.Canceled) {
		return nil
	}
	return runErr
}

// routeDialer dials every host under suffix at target and refuses any
// other address, so a test crawl can never reach a real host.
func routeDialer(suffix, target string) func(ctx context.Context, network, addr string) (net.Conn, error) {
	var d net.Dialer
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, _, err := net.SplitHostPort(addr)
		if err == nil && strings.HasSuffix(strings.TrimSuffix(strings.ToLower(host), "."), suffix) {
			return d.DialContext(ctx, network, target)
		}
		return nil, fmt.Errorf("distributed: -route-tld: refusing %s, which is not under %s", addr, suffix)
	}
}
