package distributed_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/crawltest"
	"github.com/crawlkit/crawlkit/distributed"
	"github.com/crawlkit/crawlkit/distributed/internal/natsd"
)

// A node crawls a small synthetic web through a NATS server embedded in the
// process. More nodes would share the crawl by running the same Config with
// other NodeIDs, in any number of processes.
func ExampleNode() {
	dir, _ := os.MkdirTemp("", "example-nats-")
	defer os.RemoveAll(dir)
	srv, err := natsd.Start(natsd.Config{Name: "example", Port: -1, StoreDir: dir})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Shutdown()
	web, err := crawltest.NewWeb(crawltest.Config{Hosts: 5, PagesPerHost: 5, Agent: testToken, CrawlDelay: 50 * time.Millisecond})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer web.Close()

	node, err := distributed.NewNode(distributed.Config{
		NATSURL: srv.ClientURL(), NodeID: "node-a", CrawlID: "example", Partitions: 4,
		MemberTTL: 2 * time.Second, AckWait: 5 * time.Second,
		Crawler: crawlkit.Config{
			UserAgent: testAgent, Seeds: web.Seeds(), Delay: 10 * time.Millisecond,
			DialContext: web.DialContext, AllowPrivate: loopback, RobotsRetries: -1,
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := node.Run(context.Background()); err != nil {
		fmt.Println(err)
		return
	}
	truth := web.TruthFor(testToken, 0)
	fmt.Println("pages missed:", len(truth.Missing(fetchedPages(web.Report()))))
	qs := node.QueueStats()
	fmt.Println("partitions acquired:", qs.Acquired, "handed back:", qs.Released)
	// Output:
	// pages missed: 0
	// partitions acquired: 4 handed back: 4
}
