package crawlkit_test

import (
	"context"
	"net/netip"
	"syscall"
	"testing"
	"time"

	crawlkit "github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/crawltest"
	"github.com/crawlkit/crawlkit/warc"
)

// BenchmarkCrawlWARC crawls a synthetic web of 1 000 pages per iteration,
// without and with a WARCSink (indexed), and reports the CPU time of the
// process per page: the difference is what archiving costs the crawl. The
// synthetic web's server runs in the process, so its CPU is in both.
func BenchmarkCrawlWARC(b *testing.B) {
	web, err := crawltest.NewWeb(crawltest.Config{Hosts: 20, PagesPerHost: 50, Seed: 1, NoTraps: true, CrawlDelay: time.Millisecond})
	if err != nil {
		b.Fatal(err)
	}
	defer web.Close()
	for _, archive := range []bool{false, true} {
		name := "off"
		if archive {
			name = "warc"
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
				if archive {
					sink, err := crawlkit.NewWARCSink(warc.Config{Dir: b.TempDir(), Index: true})
					if err != nil {
						b.Fatal(err)
					}
					cfg.Sink = sink
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

// processCPU is the CPU time, user and system, the process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
