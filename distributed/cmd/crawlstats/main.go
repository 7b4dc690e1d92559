// Command crawlstats sums the statistics of the nodes of a distributed
// crawl. It reads the nodes' /stats URLs given as arguments, or finds the
// nodes in the crawl's membership bucket:
//
//	crawlstats -nats nats://127.0.0.1:4222 -crawl news
//	crawlstats http://10.0.0.5:9090/stats http://10.0.0.6:9090/stats
//
// It prints one line per node and the sum as JSON. A node publishes the
// address given by its -advertise flag, or its -http address (with its host
// name if -http listens on all interfaces); members that published an
// address naming no machine, such as [::]:9090, are skipped with a warning.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/distributed"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "crawlstats:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("crawlstats", flag.ContinueOnError)
	fs.SetOutput(stderr)
	natsURL := fs.String("nats", "", "find the nodes in the membership bucket on this NATS server")
	crawlID := fs.String("crawl", "default", "crawl id (with -nats)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	urls := fs.Args()
	if *natsURL != "" {
		members, err := distributed.Members(ctx, *natsURL, *crawlID)
		if err != nil {
			return err
		}
		for _, m := range members {
			if m.HTTP == "" {
				continue
			}
			// A node that published an address naming no machine
			// (0.0.0.0 or ::) is skipped: dialled here, it would
			// reach this machine, not that node.
			u, err := m.StatsURL()
			if err != nil {
				fmt.Fprintf(stderr, "crawlstats: skipped: %v\n", err)
				continue
			}
			urls = append(urls, u)
		}
	}
	if len(urls) == 0 {
		return fmt.Errorf("no nodes: give /stats URLs or -nats")
	}
	client := &http.Client{Timeout: 10 * time.Second}
	var all []crawlkit.Stats
	for _, u := range urls {
		s, err := distributed.FetchStats(ctx, client, u)
		if err != nil {
			fmt.Fprintf(stderr, "crawlstats: %v\n", err)
			continue
		}
		all = append(all, s)
		fmt.Fprintf(stdout, "%s fetched=%d successful=%d failed=%d pages/s=%.1f\n",
			u, s.URLs.Fetched, s.URLs.Successful, s.URLs.Failed, s.Throughput.Current)
	}
	if len(all) == 0 {
		return fmt.Errorf("no node answered")
	}
	b, err := json.MarshalIndent(distributed.SumStats(all...), "", "  ")
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "sum of %d nodes: %s\n", len(all), b)
	return nil
}
