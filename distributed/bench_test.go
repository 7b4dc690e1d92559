package distributed_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/crawltest"
)

// benchWeb is the web of the scaling benchmarks: 500 hosts, so that even
// four nodes have plenty of hosts each.
func benchWeb(b *testing.B) *crawltest.Web {
	return newWeb(b, crawltest.Config{Hosts: 500, PagesPerHost: 16, Seed: 21, Agent: testToken,
		MinGap: 50 * time.Millisecond, CrawlDelay: 300 * time.Millisecond})
}

// BenchmarkCrawl measures pages fetched per second of wall time (from the
// start of the nodes to the exit of the last) with 1, 2 and 4 node
// processes on one embedded NATS server, against one plain crawlkit.Crawler
// with its own in-memory frontier (baseline) on the same web. Run with
// -benchtime=1x: every iteration is a whole crawl.
func BenchmarkCrawl(b *testing.B) {
	b.Run("baseline-local", func(b *testing.B) {
		for range b.N {
			web := benchWeb(b)
			c, err := crawlkit.New(crawlkit.Config{
				UserAgent: testAgent, Seeds: web.Seeds(), Workers: 16, Delay: 50 * time.Millisecond,
				MaxCrawlDelay: time.Second, DialContext: web.DialContext, AllowPrivate: loopback,
				RobotsRetries: -1, RetryBackoff: 200 * time.Millisecond,
			})
			if err != nil {
				b.Fatal(err)
			}
			start := time.Now()
			if err := c.Run(context.Background()); err != nil {
				b.Fatal(err)
			}
			reportPages(b, web, time.Since(start))
		}
	})
	for _, nodes := range []int{1, 2, 4} {
		b.Run(fmt.Sprintf("nodes-%d", nodes), func(b *testing.B) {
			for i := range b.N {
				web := benchWeb(b)
				url := embeddedNATS(b)
				crawlID := fmt.Sprintf("bench%d", i)
				start := time.Now()
				var cs []*child
				for n := range nodes {
					id := fmt.Sprintf("n%d", n+1)
					cs = append(cs, startChild(b, id, "node", nodeArgs(b, web, url, crawlID, id, 1)...))
				}
				for _, c := range cs {
					c.wait(b, 10*time.Minute)
				}
				elapsed := time.Since(start)
				reportPages(b, web, elapsed)
				var replayed []string
				for _, c := range cs {
					if s, ok := c.output("stats "); ok {
						if i := strings.Index(s, `"replayed":`); i >= 0 {
							replayed = append(replayed, s[i:i+min(len(s)-i, 50)])
						}
					}
				}
				b.Logf("%d nodes: %v; %v", nodes, elapsed.Round(time.Millisecond), replayed)
			}
		})
	}
}

func reportPages(b *testing.B, web *crawltest.Web, elapsed time.Duration) {
	rep := web.Report()
	n := 0
	for _, c := range rep.PerPage {
		n += c
	}
	b.ReportMetric(float64(n)/elapsed.Seconds(), "pages/s")
	b.ReportMetric(float64(rep.DuplicateFetches()), "dup-fetches")
	b.ReportMetric(float64(rep.PolitenessViolations()), "politeness-violations")
}
