package crawlkit_test

import (
	"context"
	"net/netip"
	"testing"
	"time"

	crawlkit "github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/crawltest"
)

// BenchmarkCrawlDataDir crawls a synthetic web of 1 000 pages per
// iteration in memory and on a DataDir, and reports the process's CPU time
// per page: the difference is what durable crawl state costs. The web's
// server runs in the process, so its CPU is in both.
func BenchmarkCrawlDataDir(b *testing.B) {
	web, err := crawltest.NewWeb(crawltest.Config{Hosts: 20, PagesPerHost: 50, Seed: 1, NoTraps: true, CrawlDelay: time.Millisecond})
	if err != nil {
		b.Fatal(err)
	}
	defer web.Close()
	for _, durable := range []bool{false, true} {
		name := "memory"
		if durable {
			name = "datadir"
		}
		b.Run(name, func(b *testing.B) {
			var pages int64
			cpu0 := processCPU()
			for range b.N {
				cfg := crawlkit.Config{
					UserAgent: testAgent, Seeds: web.Seeds(), Scope: crawlkit.ScopeAny, Workers: 16,
					Delay: crawlkit.NoDelay, DialContext: web.DialContext, RobotsRetries: -1,
					AllowPrivate: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
				}
				if durable {
					cfg.DataDir = b.TempDir()
				}
				c, err := crawlkit.New(cfg)
				if err != nil {
					b.Fatal(err)
				}
				if err := c.Run(context.Background()); err != nil {
					b.Fatal(err)
				}
				pages += c.Stats().URLs.Fetched
			}
			b.ReportMetric(float64(processCPU()-cpu0)/float64(pages), "cpu-ns/page")
		})
	}
}
