package urlnorm

import (
	"net/url"
	"runtime"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/internal/cputime"
)

// BenchmarkCrawlerVsNetURL interleaves the Crawler profile and a bare
// net/url Parse+String round trip over the same batches of 256 corpus
// URLs, charging each with the CPU time of its own batches, and reports
// per-URL costs and their ratio ("x-neturl": Crawler time / net/url time).
// One op is one batch of both.
func BenchmarkCrawlerVsNetURL(b *testing.B) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	const batch = 256
	var tNorm, tURL time.Duration
	urls := 0
	for i := 0; b.Loop(); i++ {
		start := (i * batch) % len(benchCorpus)
		chunk := benchCorpus[start:min(start+batch, len(benchCorpus))]
		t0 := cputime.Thread(b)
		for _, s := range chunk {
			_, _ = Normalize(s)
		}
		t1 := cputime.Thread(b)
		for _, s := range chunk {
			if u, err := url.Parse(s); err == nil {
				_ = u.String()
			}
		}
		t2 := cputime.Thread(b)
		tNorm += t1 - t0
		tURL += t2 - t1
		urls += len(chunk)
	}
	b.ReportMetric(float64(tNorm.Nanoseconds())/float64(urls), "cpu-ns/url-crawler")
	b.ReportMetric(float64(tURL.Nanoseconds())/float64(urls), "cpu-ns/url-neturl")
	b.ReportMetric(float64(tNorm)/float64(tURL), "x-neturl")
}
