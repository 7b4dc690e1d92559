package crawlkit_test

import (
	"context"
	"fmt"
	"net/netip"
	"sync"
	"time"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/crawltest"
)

// A minimal crawler: it crawls a small synthetic web (crawltest) and
// collects the URLs of the pages it fetched. Against real sites, leave out
// DialContext and AllowPrivate, and keep the default one-second Delay.
func Example() {
	web, err := crawltest.NewWeb(crawltest.Config{Hosts: 3, PagesPerHost: 8, Seed: 1, Agent: "examplebot", NoTraps: true})
	if err != nil {
		panic(err)
	}
	defer web.Close()

	var mu sync.Mutex
	var fetched []string
	c, err := crawlkit.New(crawlkit.Config{
		UserAgent: "examplebot/1.0 (+https://example.com/bot)",
		Seeds:     web.Seeds(),
		Delay:     10 * time.Millisecond,
		Handler: func(_ context.Context, p *crawlkit.Page) error {
			if p.StatusCode == 200 {
				mu.Lock()
				fetched = append(fetched, p.URL)
				mu.Unlock()
			}
			return nil
		},
		// The synthetic web is served on loopback: let the address guard
		// through, and route its virtual hosts to the local server.
		AllowPrivate:  []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
		DialContext:   web.DialContext,
		RobotsRetries: -1,
	})
	if err != nil {
		panic(err)
	}
	if err := c.Run(context.Background()); err != nil {
		panic(err)
	}

	missing := web.TruthFor("examplebot", 0).Missing(fetched)
	rep := web.Report()
	fmt.Println("pages missed:", len(missing))
	fmt.Println("robots violations:", rep.RobotsViolations)
	fmt.Println("politeness violations:", rep.PolitenessViolations())
	// Output:
	// pages missed: 0
	// robots violations: 0
	// politeness violations: 0
}
