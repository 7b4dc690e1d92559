// Command frontierd runs a crawl frontier as an HTTP service (package
// service/frontierapi) on a durable Pebble store, with the live dashboard
// (package dashboard) on a second, loopback address.
//
//	export CRAWLKIT_TOKEN=$(head -c 24 /dev/urandom | base64)
//	go run ./examples/frontierd -data ./frontier-data
//
// Workers in any language then submit URLs, lease them and report results:
//
//	curl -H "Authorization: Bearer $CRAWLKIT_TOKEN" -d '{"urls":[{"url":"https://example.com/"}]}' \
//	    http://127.0.0.1:8080/api/v1/frontier/urls
//	curl -H "Authorization: Bearer $CRAWLKIT_TOKEN" \
//	    'http://127.0.0.1:8080/api/v1/frontier/next?worker_id=w1&batch_size=10&timeout_ms=30000'
//
// and the dashboard is at http://127.0.0.1:8081/. See the frontierapi package
// documentation for the API.
//
// The token comes from -token, else the file named by -token-file, else the
// CRAWLKIT_TOKEN environment variable; frontierd refuses to start without
// one. Prefer the file or the environment: a flag shows in the process list.
//
// The dashboard's numbers need no token (a browser's EventSource cannot send
// an Authorization header), so it listens on 127.0.0.1 unless told
// otherwise; reach it through an SSH tunnel or an authenticating proxy. Its
// URL and host analysis, which makes the service fetch robots.txt, needs
// the API token, which the page asks for.
//
// Both listeners answer only requests whose Host (and Origin, when there is
// one) names the address they came in on, localhost with the port on a
// loopback address, or a name given with -allowed-host; others get 403, so
// that no web page can reach them by DNS rebinding. Workers that reach the
// API by a name, and a tunnel or proxy that forwards to the dashboard under
// another host or port, need -allowed-host (name for any port, name:port
// for one).
//
// robots.txt files are fetched by the service itself, over a client that
// refuses loopback, private, link-local and other non-public addresses at
// dial time (fetch.Guard); -allow admits address ranges for an intranet
// crawl.
//
// Everything acknowledged is on disk: kill frontierd at any moment and start
// it again on the same -data directory; URLs leased but not settled are
// queued again.
package main

import (
	"context"
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
	"strings"
	"syscall"
	"time"

	"github.com/crawlkit/crawlkit/bloom"
	"github.com/crawlkit/crawlkit/fetch"
	"github.com/crawlkit/crawlkit/frontier"
	"github.com/crawlkit/crawlkit/internal/hostcheck"
	"github.com/crawlkit/crawlkit/robots"
	"github.com/crawlkit/crawlkit/service/dashboard"
	"github.com/crawlkit/crawlkit/service/frontierapi"
	"github.com/crawlkit/crawlkit/storage/pebble"
	"github.com/crawlkit/crawlkit/trap"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "frontierd:", err)
		os.Exit(1)
	}
}

// prefixList is a repeatable netip.Prefix flag.
type prefixList []netip.Prefix

// hostList is a repeatable flag of allowed Host names.
type hostList []string

func (l *hostList) String() string { return strings.Join(*l, ",") }

func (l *hostList) Set(v string) error {
	if _, err := hostcheck.New([]string{v}); err != nil {
		return err
	}
	*l = append(*l, v)
	return nil
}

func (p *prefixList) String() string {
	s := make([]string, len(*p))
	for i, x := range *p {
		s[i] = x.String()
	}
	return strings.Join(s, ",")
}

func (p *prefixList) Set(v string) error {
	x, err := netip.ParsePrefix(v)
	if err != nil {
		return err
	}
	*p = append(*p, x)
	return nil
}

// errNoToken is returned when no token was configured.
var errNoToken = errors.New("no API token: set -token, -token-file or CRAWLKIT_TOKEN")

func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("frontierd", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:8080", "API listen address")
	dashAddr := fs.String("dashboard", "127.0.0.1:8081", `dashboard listen address ("" for none)`)
	dataDir := fs.String("data", "frontierd-data", "Pebble data directory")
	tokenFlag := fs.String("token", "", "API bearer token (prefer -token-file or CRAWLKIT_TOKEN)")
	tokenFile := fs.String("token-file", "", "file holding the API bearer token")
	agent := fs.String("agent", frontierapi.DefaultAgent, "robots.txt product token")
	userAgent := fs.String("user-agent", "crawlkit/1.0 (+https://github.com/crawlkit/crawlkit)", "User-Agent of robots.txt fetches")
	noRobots := fs.Bool("no-robots", false, "do not check robots.txt (workers must)")
	noTraps := fs.Bool("no-traps", false, "do not filter spider traps")
	delay := fs.Duration("delay", frontier.DefaultDelay, "least time between two fetches of one host")
	leaseTTL := fs.Duration("lease-ttl", 5*time.Minute, "how long a lease lasts")
	bands := fs.Int("bands", 4, "priority bands (1-16)")
	maxBody := fs.Int64("max-body", frontierapi.DefaultMaxBodyBytes, "largest request body, in bytes")
	resolve := fs.Bool("resolve", false, "resolve hosts and report their address with each lease")
	var allow prefixList
	fs.Var(&allow, "allow", "address range robots.txt fetches may reach despite being non-public (repeatable)")
	var hosts hostList
	fs.Var(&hosts, "allowed-host", `further name clients may use in the Host header of the API and dashboard: name (any port) or name:port (repeatable; "*" for any)`)
	if err := fs.Parse(args); err != nil {
		return err
	}
	// Check the values the libraries would otherwise replace by a default
	// in silence (or, for a negative -bands, panic over).
	switch {
	case *bands < 1 || *bands > 16:
		return fmt.Errorf("-bands %d: must be 1 to 16", *bands)
	case *leaseTTL <= 0:
		return fmt.Errorf("-lease-ttl %v: must be positive", *leaseTTL)
	case *maxBody <= 0:
		return fmt.Errorf("-max-body %d: must be positive", *maxBody)
	}
	tok, err := loadToken(*tokenFlag, *tokenFile, getenv)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))

	db, err := pebble.Open(*dataDir, pebble.Config{})
	if err != nil {
		return err
	}
	defer db.Close()
	seen, err := bloom.New(bloom.Config{Store: db.SeenStore()})
	if err != nil {
		return err
	}
	cfg := frontierapi.Config{
		Token:        tok,
		Frontier:     frontier.Config{Store: db.Frontier(), Bands: *bands, LeaseTTL: *leaseTTL},
		Delay:        *delay,
		Seen:         seen,
		Agent:        *agent,
		MaxBodyBytes: *maxBody,
		Logger:       log,
		AllowedHosts: hosts,
	}
	if *delay == 0 {
		cfg.Delay = -1
	}
	if !*noTraps {
		cfg.Traps = trap.New(trap.Config{})
	}
	if !*noRobots {
		cfg.Robots = robots.NewCache(robots.Config{
			Client:    guardedClient(fetch.NewGuard(allow...)),
			UserAgent: *userAgent,
			Store:     db.RobotsStore(),
		})
	}
	if *resolve {
		cfg.Resolve = func(ctx context.Context, host string) (string, error) {
			addrs, err := net.DefaultResolver.LookupHost(ctx, host)
			if err != nil || len(addrs) == 0 {
				return "", fmt.Errorf("resolve %s: %w", host, err)
			}
			return addrs[0], nil
		}
	}
	svc, err := frontierapi.New(cfg)
	if err != nil {
		return err
	}
	defer svc.Close()

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	api := &http.Server{
		Handler:           svc,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       time.Minute,
		WriteTimeout:      frontierapi.DefaultMaxWait + time.Minute, // long polls
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
	}
	servers := []*http.Server{api}
	errc := make(chan error, 2)
	go func() { errc <- api.Serve(ln) }()
	fmt.Fprintf(stdout, "frontierd: API on http://%s/api/v1/ (data in %s)\n", ln.Addr(), *dataDir)

	var dash *dashboard.Dashboard
	if *dashAddr != "" {
		dash, err = dashboard.New(dashboard.Config{Source: svc.Snapshot, Analyzer: svc, Title: "frontierd",
			AnalysisToken: tok, AllowedHosts: hosts})
		if err != nil {
			return err
		}
		defer dash.Close()
		dln, err := net.Listen("tcp", *dashAddr)
		if err != nil {
			_ = api.Close()
			return err
		}
		ds := &http.Server{Handler: dash, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
		servers = append(servers, ds)
		go func() { errc <- ds.Serve(dln) }()
		fmt.Fprintf(stdout, "frontierd: dashboard on http://%s/\n", dln.Addr())
	}

	select {
	case <-ctx.Done():
	case err := <-errc:
		for _, s := range servers {
			_ = s.Close()
		}
		return err
	}
	// End the long polls and the event streams, stop taking requests and
	// let answers in flight be written; the deferred closes then release
	// the frontier and the store.
	_ = svc.Close()
	if dash != nil {
		_ = dash.Close()
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, s := range servers {
		_ = s.Shutdown(shutdown)
	}
	fmt.Fprintln(stdout, "frontierd: stopped")
	return nil
}

// loadToken picks the token from the flag, the file or the environment.
func loadToken(flagValue, file string, getenv func(string) string) (string, error) {
	if t := strings.TrimSpace(flagValue); t != "" {
		return t, nil
	}
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return "", fmt.Errorf("token file: %w", err)
		}
		if t := strings.TrimSpace(string(b)); t != "" {
			return t, nil
		}
		return "", fmt.Errorf("token file %s is empty", file)
	}
	if t := strings.TrimSpace(getenv("CRAWLKIT_TOKEN")); t != "" {
		return t, nil
	}
	return "", errNoToken
}

// guardedClient returns an HTTP client whose connections are checked against
// guard at dial time, after name resolution, so neither a robots.txt URL nor
// a redirect can reach an internal address.
func guardedClient(guard *fetch.Guard) *http.Client {
	d := &net.Dialer{
		Timeout: 10 * time.Second,
		Control: func(_, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return err
			}
			return guard.Check(address, ap.Addr().Unmap())
		},
	}
	return &http.Client{Transport: &http.Transport{
		DialContext:           d.DialContext,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: 20 * time.Second,
		MaxIdleConnsPerHost:   2,
		IdleConnTimeout:       time.Minute,
	}}
}
