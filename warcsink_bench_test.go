package crawlkit_test

import (
	"context"
	"net/netip"
	"syscall"
	"testing"
	"time"

	crawlkit "github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/archive/warc"
	"github.com/crawlkit/crawlkit/crawltest"
)

// BenchmarkCrawlWARC crawls a synthetic web of 1 000 pages per iteration,
// without and with a WARCSink (indexed), and reports the CPU time of the
// process per page: the difference is what archiving costs the crawl. The
// synthetic web's server runs in the process, so its CPU is in both.
func BenchmarkCrawlWARC(b *testing.B) {
	web := benchWeb(b)
	b.Run("off", func(b *testing.B) { benchCrawl(b, web, nil) })
	b.Run("warc", func(b *testing.B) {
		benchCrawl(b, web, func(cfg *crawlkit.Config) {
			sink, err := crawlkit.NewWARCSink(warc.Config{Dir: b.TempDir(), Index: true})
			if err != nil {
				b.Fatal(err)
			}
			cfg.Sink = sink
		})
	})
}

// benchWeb is the end-to-end benchmarks' synthetic web: 20 hosts of 50
// pages, no traps.
func benchWeb(b *testing.B) *crawltest.Web {
	web, err := crawltest.NewWeb(crawltest.Config{Hosts: 20, PagesPerHost: 50, Seed: 1, NoTraps: true, CrawlDelay: time.Millisecond})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(web.Close)
	return web
}

// benchCrawl crawls web once per iteration, with the Config changed by
// mutate (if set), and reports the process's CPU time per page fetched.
func benchCrawl(b *testing.B, web *crawltest.Web, mutate func(*crawlkit.Config)) {
	var pages int64
	cpu0 := processCPU()
	for range b.N {
		cfg := crawlkit.Config{
			UserAgent: testAgent, Seeds: web.Seeds(), Scope: crawlkit.ScopeAny, Workers: 16,
			Delay: crawlkit.NoDelay, DialContext: web.DialContext, RobotsRetries: -1,
			AllowPrivate: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
		}
		if mutate != nil {
			mutate(&cfg)
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
}

// processCPU is the CPU time, user and system, the process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
