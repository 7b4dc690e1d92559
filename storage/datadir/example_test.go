package datadir_test

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"time"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/crawltest"
	_ "github.com/crawlkit/crawlkit/storage/datadir"
)

// A crawl with a DataDir resumes where it stopped: the second Run on the
// same directory finds every page already fetched and fetches nothing.
func Example() {
	web, err := crawltest.NewWeb(crawltest.Config{Hosts: 2, PagesPerHost: 5, Seed: 1, Agent: "examplebot", NoTraps: true})
	if err != nil {
		panic(err)
	}
	defer web.Close()
	dir, err := os.MkdirTemp("", "crawl")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)

	var fetched []string
	for run := 1; run <= 2; run++ {
		c, err := crawlkit.New(crawlkit.Config{
			UserAgent:     "examplebot/1.0 (+https://example.com/bot)",
			Seeds:         web.Seeds(),
			DataDir:       dir,
			Delay:         time.Millisecond,
			AllowPrivate:  []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
			DialContext:   web.DialContext,
			RobotsRetries: -1,
			Handler: func(_ context.Context, p *crawlkit.Page) error {
				fetched = append(fetched, p.URL) // Workers is 1 here
				return nil
			},
			Workers: 1,
		})
		if err != nil {
			panic(err)
		}
		if err := c.Run(context.Background()); err != nil {
			panic(err)
		}
		fmt.Printf("run %d: %d fetched, %d of the web missing\n", run, c.Stats().URLs.Fetched, len(web.TruthFor("examplebot", 0).Missing(fetched)))
	}
	// Output:
	// run 1: 14 fetched, 0 of the web missing
	// run 2: 0 fetched, 0 of the web missing
}
