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
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	_ "github.com/crawlkit/crawlkit/storage/datadir" // Config.DataDir on Pebble

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/frontier"
)

// stringList is a repeatable string flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

// RunCommand is the crawl node command (cmd/crawlnode): it parses args,
// serves the node's statistics if -http is given (printing "http ADDR" on
// stdout once listening) and publishes their address for crawlstats (see
// advertiseAddr), runs the node until the crawl is finished or ctx ends,
// and prints the final Stats as one JSON line prefixed "stats ".
// It lives in this package so that tests can run the very same node in a
// child process.
func RunCommand(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("crawlnode", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var conn NATSFlags
	conn.Register(fs)
	id := fs.String("id", "", "node id, unique among the crawl's nodes (default: host name and pid)")
	crawlID := fs.String("crawl", "default", "crawl id: names the stream, consumers and buckets")
	partitions := fs.Int("partitions", DefaultPartitions, "number of partitions (fixed when the crawl is created)")
	replicas := fs.Int("replicas", 0, "stream and bucket replicas (0: 3 if the cluster has 3 or more servers, else 1)")
	var seeds stringList
	fs.Var(&seeds, "seed", "seed URL (repeatable)")
	seedsFile := fs.String("seeds-file", "", "file of seed URLs, one a line")
	userAgent := fs.String("user-agent", "crawlkit-distributed/0.1 (+https://github.com/crawlkit/crawlkit)", "User-Agent; starts with the robots.txt product token")
	workers := fs.Int("workers", crawlkit.DefaultWorkers, "pages fetched at once on this node")
	delay := fs.Duration("delay", crawlkit.DefaultDelay, "least time between requests to one host")
	maxCrawlDelay := fs.Duration("max-crawl-delay", crawlkit.DefaultMaxCrawlDelay, "cap on robots.txt Crawl-delay")
	maxDepth := fs.Int("max-depth", 0, "follow links at most this deep (0: no limit)")
	scope := fs.String("scope", "host", "links to follow: host, domain or any")
	politeness := fs.String("politeness", "host", "what one politeness clock and one partition cover: host, domain (a registrable domain's hosts) or ip (the hosts on one address)")
	dataDir := fs.String("data-dir", "", "directory for this node's robots.txt and fingerprint stores (empty: memory)")
	httpAddr := fs.String("http", "", "serve /stats, /metrics and /queue on this address, e.g. 127.0.0.1:9090 or :9090")
	advertise := fs.String("advertise", "", "host:port other machines reach -http at, published for crawlstats (default: the -http address; this machine's host name and the port if -http listens on all interfaces)")
	memberTTL := fs.Duration("member-ttl", DefaultMemberTTL, "membership heartbeat TTL")
	ackWait := fs.Duration("ack-wait", DefaultAckWait, "redelivery time of an unacknowledged URL")
	balanceEvery := fs.Duration("balance-every", 0, "how often the partitions' backlogs are compared and partitions moved to even them (default 2 × -member-ttl; negative: never)")
	hold := fs.Duration("handover-hold", 0, "wait before fetching from a partition taken over (default: -max-crawl-delay)")
	held := fs.Int("max-held", DefaultMaxHeldPerPartition, "most unacknowledged messages held per partition")
	retryBase := fs.Duration("retry-base", DefaultRetryBase, "first retry delay, doubling per attempt")
	maxAttempts := fs.Int("max-attempts", DefaultMaxAttempts, "most attempts of a URL")
	robotsRetries := fs.Int("robots-retries", crawlkit.DefaultRobotsRetries, "retries of a URL whose robots.txt is unreachable (negative: none)")
	dupWindow := fs.Duration("dup-window", DefaultDuplicateWindow, "how long the server drops repeated publishes of a URL (fixed at stream creation)")
	recrawl := fs.Duration("recrawl", 0, "fetch every page again this long after each fetch (0: never); the crawl then runs until stopped")
	snapshotEvery := fs.Int("snapshot-every", DefaultSnapshotEvery, "messages of a partition judged between two snapshots of its seen set, below which settled messages are purged (negative: never; the stream keeps every message)")
	expected := fs.Uint64("expected-urls", crawlkit.DefaultExpectedURLs, "URLs the whole crawl expects (sizes the seen sets)")
	var allow stringList
	fs.Var(&allow, "allow-private", "CIDR the address guard lets through (repeatable)")
	routeTLD := fs.String("route-tld", "", "testing only: TLD=ADDR sends every host under TLD to ADDR (e.g. test=127.0.0.1:8080 for a crawltest web)")
	results := fs.Bool("results", false, "publish every handled page's record to the crawl's results stream (written by crawlresults)")
	logLevel := fs.String("log-level", "warn", "debug, info, warn or error")
	if err := fs.Parse(args); err != nil {
		return err
	}
	// Check the values that NewNode and the Crawler would otherwise
	// replace by a default in silence (an explicit -partitions 0 ran with
	// 64 partitions, -delay 0 with 1 s), before anything is opened.
	positive := []struct {
		name string
		ok   bool
	}{
		{"-partitions", *partitions >= 1}, {"-replicas", *replicas >= 0}, {"-workers", *workers >= 1},
		{"-delay", *delay > 0}, {"-max-crawl-delay", *maxCrawlDelay > 0}, {"-member-ttl", *memberTTL > 0},
		{"-ack-wait", *ackWait > 0}, {"-max-held", *held >= 1}, {"-retry-base", *retryBase > 0},
		{"-max-attempts", *maxAttempts >= 1}, {"-dup-window", *dupWindow > 0}, {"-expected-urls", *expected > 0},
	}
	for _, f := range positive {
		if !f.ok {
			return fmt.Errorf("%s %s: must be positive", f.name, fs.Lookup(strings.TrimPrefix(f.name, "-")).Value)
		}
	}
	switch {
	case *maxDepth < 0:
		return fmt.Errorf("-max-depth %d: must not be negative (0: no limit)", *maxDepth)
	case *recrawl < 0:
		return fmt.Errorf("-recrawl %v: must not be negative (0: no recrawl)", *recrawl)
	case *snapshotEvery == 0:
		return errors.New("-snapshot-every 0: want a number of messages, or a negative number for no snapshots")
	case *hold < 0:
		return fmt.Errorf("-handover-hold %v: must not be negative (0: -max-crawl-delay)", *hold)
	case fs.NArg() > 0:
		return fmt.Errorf("unexpected argument %q (seeds are given with -seed or -seeds-file)", fs.Arg(0))
	}
	natsOpts, err := conn.Options()
	if err != nil {
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

	politeKey, err := politenessKeyFlag(*politeness, dial, *routeTLD)
	if err != nil {
		return err
	}

	// The stats server listens before the node is made, so that a bad
	// -http or -advertise stops the command before it connects.
	var ln net.Listener
	var advertised string
	if *httpAddr != "" {
		if ln, err = net.Listen("tcp", *httpAddr); err != nil {
			return err
		}
		defer ln.Close()
		if advertised, err = advertiseAddr(ln.Addr().String(), *advertise, os.Hostname); err != nil {
			return err
		}
	} else if *advertise != "" {
		return errors.New("-advertise needs -http")
	}

	var schedule frontier.Schedule
	if *recrawl > 0 {
		schedule = frontier.FixedInterval(*recrawl)
	}
	node, err := NewNode(Config{
		NATSURL: conn.URL, NATSOptions: natsOpts, NodeID: *id, CrawlID: *crawlID, Partitions: *partitions, Replicas: *replicas,
		MemberTTL: *memberTTL, AckWait: *ackWait, HandoverHold: *hold, MaxHeldPerPartition: *held, BalanceEvery: *balanceEvery,
		RetryBase: *retryBase, MaxAttempts: *maxAttempts, ExpectedURLs: *expected, DuplicateWindow: *dupWindow, Logger: logger,
		Results: *results, SnapshotEvery: *snapshotEvery,
		Crawler: crawlkit.Config{
			UserAgent: *userAgent, Seeds: seeds, Scope: sc, MaxDepth: *maxDepth, Workers: *workers,
			Delay: *delay, MaxCrawlDelay: *maxCrawlDelay, RobotsRetries: *robotsRetries,
			RetryBackoff: *retryBase, MaxAttempts: *maxAttempts, DataDir: *dataDir,
			AllowPrivate: prefixes, DialContext: dial, Logger: logger, Recrawl: schedule, PolitenessKey: politeKey,
		},
	})
	if err != nil {
		return err
	}
	if ln != nil {
		srv := &http.Server{Handler: node.Handler(), ReadHeaderTimeout: 5 * time.Second}
		go func() { _ = srv.Serve(ln) }()
		defer srv.Close()
		node.SetHTTPAddr(advertised)
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

// advertiseAddr returns the address a node publishes in the membership
// bucket for crawlstats to reach its stats server, which listens at listen
// (the listener's address, port resolved): advertise if given; else listen,
// if it names a host; else, for a listener on all interfaces (0.0.0.0, ::
// or no host), the machine's host name with listen's port. It never
// returns an address that names no machine: dialled from anywhere, such an
// address reaches the dialler's own machine.
func advertiseAddr(listen, advertise string, hostname func() (string, error)) (string, error) {
	if advertise != "" {
		host, port, err := net.SplitHostPort(advertise)
		if err != nil {
			return "", fmt.Errorf("-advertise: %w", err)
		}
		if n, err := strconv.ParseUint(port, 10, 16); err != nil || n == 0 || unspecifiedHost(host) {
			return "", fmt.Errorf("-advertise %s: want the host:port other machines reach -http at", advertise)
		}
		return advertise, nil
	}
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return "", err
	}
	if !unspecifiedHost(host) {
		return listen, nil
	}
	h, err := hostname()
	if err == nil && (h == "" || isLocalName(h)) {
		err = fmt.Errorf("the host name is %q", h)
	}
	if err != nil {
		return "", fmt.Errorf("-http %s listens on all interfaces, and this machine's host name cannot be published for it (%v): give -advertise host:port", listen, err)
	}
	return net.JoinHostPort(h, port), nil
}

// isLocalName reports whether host names the local machine wherever it is
// resolved: localhost or a loopback address.
func isLocalName(host string) bool {
	h := strings.ToLower(strings.TrimSuffix(host, "."))
	if h == "localhost" || strings.HasPrefix(h, "localhost.") || strings.HasSuffix(h, ".localhost") {
		return true
	}
	a, err := netip.ParseAddr(h)
	return err == nil && a.Unmap().IsLoopback()
}

// politenessKeyFlag is the Crawler's PolitenessKey for -politeness. For
// ip, hosts under -route-tld resolve to its target's address, the one
// they are dialled at.
func politenessKeyFlag(name string, routed func(ctx context.Context, network, addr string) (net.Conn, error), routeTLD string) (func(*url.URL) string, error) {
	switch name {
	case "host", "":
		return nil, nil
	case "domain":
		return crawlkit.PolitenessByDomain, nil
	case "ip":
		if routed == nil {
			return crawlkit.PolitenessByAddress(nil), nil
		}
		tld, target, _ := strings.Cut(routeTLD, "=")
		suffix := "." + strings.Trim(strings.ToLower(tld), ".")
		host, _, err := net.SplitHostPort(target)
		if err != nil {
			return nil, fmt.Errorf("-route-tld: %w", err)
		}
		addrs, err := net.DefaultResolver.LookupNetIP(context.Background(), "ip", host)
		if err != nil {
			return nil, fmt.Errorf("-route-tld: %w", err)
		}
		return crawlkit.PolitenessByAddress(func(ctx context.Context, h string) ([]netip.Addr, error) {
			if strings.HasSuffix(strings.TrimSuffix(strings.ToLower(h), "."), suffix) {
				return addrs, nil
			}
			return nil, fmt.Errorf("distributed: -route-tld: %s is not under %s", h, suffix)
		}), nil
	}
	return nil, fmt.Errorf("-politeness %q: want host, domain or ip", name)
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
