// Command local runs a distributed crawl on one machine: a NATS server
// embedded in the process, a synthetic web (crawltest), and two nodes that
// share the crawl's partitions. It prints what the crawl missed and how the
// work split. Real deployments run cmd/crawlnode on each machine instead.
package main

import (
	"context"
	"fmt"
	"log"
	"net/netip"
	"os"
	"sync"
	"time"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/crawltest"
	"github.com/crawlkit/crawlkit/distributed"
	"github.com/crawlkit/crawlkit/distributed/internal/natsd"
)

const agent = "localbot/1.0 (+https://example.com/bot)"

func main() {
	dir, err := os.MkdirTemp("", "crawlkit-local-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	srv, err := natsd.Start(natsd.Config{Name: "local", Port: -1, StoreDir: dir})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Shutdown()
	web, err := crawltest.NewWeb(crawltest.Config{Hosts: 20, PagesPerHost: 10, Agent: "localbot", CrawlDelay: 100 * time.Millisecond})
	if err != nil {
		log.Fatal(err)
	}
	defer web.Close()

	var wg sync.WaitGroup
	nodes := make([]*distributed.Node, 2)
	for i := range nodes {
		node, err := distributed.NewNode(distributed.Config{
			NATSURL: srv.ClientURL(), NodeID: fmt.Sprintf("node-%d", i), CrawlID: "local", Partitions: 8,
			Crawler: crawlkit.Config{
				UserAgent: agent, Seeds: web.Seeds(), Delay: 20 * time.Millisecond,
				DialContext: web.DialContext, AllowPrivate: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
				// The synthetic web answers some robots.txt with errors:
				// give those hosts up at once, retry the rest soon.
				RobotsRetries: -1, RetryBackoff: 200 * time.Millisecond,
			},
		})
		if err != nil {
			log.Fatal(err)
		}
		nodes[i] = node
		wg.Go(func() {
			if err := node.Run(context.Background()); err != nil {
				log.Print(err)
			}
		})
	}
	wg.Wait()

	var fetched []string
	for u, n := range web.Report().PerPage {
		if n > 0 {
			fetched = append(fetched, u)
		}
	}
	fmt.Println("pages missed:", len(web.TruthFor("localbot", 0).Missing(fetched)))
	for i, n := range nodes {
		fmt.Printf("node-%d fetched %d pages\n", i, n.Crawler().Stats().URLs.Fetched)
	}
}
