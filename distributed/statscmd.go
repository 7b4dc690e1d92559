package distributed

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/service/dashboard"
)

// RunStatsCommand is the stats command (cmd/crawlstats). Given /stats URLs
// as arguments, it prints each node's counts and their sum (SumStats).
// Otherwise it reads the crawl's ClusterStatus over NATS (the -nats flags
// of NATSFlags) and prints it as text, or as JSON with -json; with -http it
// serves instead, until ctx ends, the dashboard with the cluster's panel at
// / and the ClusterStatus as JSON at /cluster, printing "http ADDR" once
// listening. It lives in this package so that tests can run it.
func RunStatsCommand(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("crawlstats", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var conn NATSFlags
	conn.Register(fs)
	crawlID := fs.String("crawl", "default", "crawl id")
	asJSON := fs.Bool("json", false, "print the cluster's status as JSON")
	httpAddr := fs.String("http", "", "serve the dashboard and /cluster on this address (e.g. 127.0.0.1:8090) instead of printing once")
	interval := fs.Duration("interval", 2*time.Second, "with -http: how often the cluster is read")
	timeout := fs.Duration("timeout", 30*time.Second, "bound on one reading of the cluster")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *interval <= 0 || *timeout <= 0 {
		return fmt.Errorf("-interval %v, -timeout %v: must be positive", *interval, *timeout)
	}
	client := &http.Client{Timeout: 10 * time.Second}
	if fs.NArg() > 0 {
		if *httpAddr != "" || *asJSON {
			return errors.New("-http and -json read the cluster over NATS: give no /stats URLs with them")
		}
		return sumNodes(ctx, client, fs.Args(), stdout, stderr)
	}
	opts, err := conn.Options()
	if err != nil {
		return err
	}
	nc, err := connectNATS(conn.URL, "crawlkit-stats", opts)
	if err != nil {
		return err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	read := func(ctx context.Context) (ClusterStatus, error) {
		ctx, cancel := context.WithTimeout(ctx, *timeout)
		defer cancel()
		return ReadCluster(ctx, js, *crawlID, client)
	}
	if *httpAddr == "" {
		cs, err := read(ctx)
		if err != nil {
			return err
		}
		if *asJSON {
			enc := json.NewEncoder(stdout)
			enc.SetIndent("", "  ")
			return enc.Encode(cs)
		}
		return cs.WriteText(stdout)
	}
	return serveCluster(ctx, *httpAddr, *interval, read, stdout, stderr)
}

// serveCluster reads the cluster every interval and serves the newest
// reading: the dashboard at / and the ClusterStatus at /cluster.
func serveCluster(ctx context.Context, addr string, interval time.Duration, read func(context.Context) (ClusterStatus, error), stdout, stderr io.Writer) error {
	var mu sync.Mutex
	var last ClusterStatus
	var lastErr error
	refresh := func() {
		cs, err := read(ctx)
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			lastErr = err
			fmt.Fprintf(stderr, "crawlstats: %v\n", err)
			return
		}
		last, lastErr = cs, nil
	}
	refresh()
	dash, err := dashboard.New(dashboard.Config{
		Title:    "crawlkit cluster",
		Interval: interval,
		Source: func() dashboard.Snapshot {
			mu.Lock()
			defer mu.Unlock()
			return last.Snapshot()
		},
	})
	if err != nil {
		return err
	}
	defer dash.Close()
	mux := http.NewServeMux()
	mux.Handle("/", dash)
	mux.HandleFunc("/cluster", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		cs, err := last, lastErr
		mu.Unlock()
		if err != nil && cs.Time.IsZero() {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(cs)
	})
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	fmt.Fprintf(stdout, "http %s\n", ln.Addr())
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			refresh()
		}
	}
}

// sumNodes prints the Stats of the nodes at urls and their sum.
func sumNodes(ctx context.Context, client *http.Client, urls []string, stdout, stderr io.Writer) error {
	var all []crawlkit.Stats
	for _, u := range urls {
		s, err := FetchStats(ctx, client, u)
		if err != nil {
			fmt.Fprintf(stderr, "crawlstats: %v\n", err)
			continue
		}
		all = append(all, s)
		fmt.Fprintf(stdout, "%s fetched=%d successful=%d failed=%d pages/s=%.1f\n",
			u, s.URLs.Fetched, s.URLs.Successful, s.URLs.Failed, s.Throughput.Current)
	}
	if len(all) == 0 {
		return errors.New("no node answered")
	}
	b, err := json.MarshalIndent(SumStats(all...), "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "sum of %d nodes: %s\n", len(all), b)
	return err
}
