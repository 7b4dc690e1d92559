package crawlkit_test

import (
	"testing"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/archive/warc"
)

// BenchmarkCrawlDataDir crawls a synthetic web of 1 000 pages per
// iteration in memory and on a DataDir, and reports the process's CPU time
// per page: the difference is what durable crawl state costs. The web's
// server runs in the process, so its CPU is in both.
func BenchmarkCrawlDataDir(b *testing.B) {
	web := benchWeb(b)
	b.Run("memory", func(b *testing.B) { benchCrawl(b, web, nil) })
	b.Run("datadir", func(b *testing.B) {
		benchCrawl(b, web, func(cfg *crawlkit.Config) { cfg.DataDir = b.TempDir() })
	})
}

// BenchmarkCrawlShipped crawls the same web as the quickstart is set up:
// state in a DataDir, every exchange archived in indexed WARC files, the
// default number of workers. Its CPU time per page is the figure a user
// of the quickstart pays.
func BenchmarkCrawlShipped(b *testing.B) {
	web := benchWeb(b)
	benchCrawl(b, web, func(cfg *crawlkit.Config) {
		cfg.DataDir = b.TempDir()
		cfg.Workers = crawlkit.DefaultWorkers
		sink, err := crawlkit.NewWARCSink(warc.Config{Dir: b.TempDir(), Index: true})
		if err != nil {
			b.Fatal(err)
		}
		cfg.Sink = sink
	})
}
