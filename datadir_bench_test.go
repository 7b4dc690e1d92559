package crawlkit_test

import (
	"testing"

	"github.com/crawlkit/crawlkit"
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
