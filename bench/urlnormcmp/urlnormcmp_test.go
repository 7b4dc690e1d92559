package urlnormcmp

import (
	"net/url"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/PuerkitoBio/purell"
	"github.com/crawlkit/crawlkit/internal/urlcorpus"
	"github.com/crawlkit/crawlkit/urlnorm"
)

// corpus is the same corpus urlnorm's own benchmarks use (seed 1).
var corpus = urlcorpus.Generate(1, 10000)

func BenchmarkUrlnormCrawler(b *testing.B) {
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		_, _ = urlnorm.Normalize(corpus[i%len(corpus)])
	}
}

func BenchmarkPurellUsuallySafeGreedy(b *testing.B) {
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		_, _ = purell.NormalizeURLString(corpus[i%len(corpus)], purell.FlagsUsuallySafeGreedy)
	}
}

func BenchmarkNetURLRoundTrip(b *testing.B) {
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if u, err := url.Parse(corpus[i%len(corpus)]); err == nil {
			_ = u.String()
		}
	}
}

// threadCPU returns the CPU time of the calling OS thread (Linux), so a
// shared, loaded machine does not charge one side with other work.
func threadCPU(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	const rusageThread = 1 // RUSAGE_THREAD
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkUrlnormVsPurell interleaves urlnorm's Crawler profile, purell
// with FlagsUsuallySafeGreedy and a bare net/url round trip over the same
// batches of 256 URLs, charging each with its own CPU time. It reports the
// per-URL costs, "x-faster-than-purell" (purell time / urlnorm time) and
// "x-neturl" (urlnorm time / net/url time).
func BenchmarkUrlnormVsPurell(b *testing.B) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	const batch = 256
	var tNorm, tPurell, tURL time.Duration
	n := 0
	for i := 0; b.Loop(); i++ {
		start := (i * batch) % len(corpus)
		chunk := corpus[start:min(start+batch, len(corpus))]
		t0 := threadCPU(b)
		for _, s := range chunk {
			_, _ = urlnorm.Normalize(s)
		}
		t1 := threadCPU(b)
		for _, s := range chunk {
			_, _ = purell.NormalizeURLString(s, purell.FlagsUsuallySafeGreedy)
		}
		t2 := threadCPU(b)
		for _, s := range chunk {
			if u, err := url.Parse(s); err == nil {
				_ = u.String()
			}
		}
		t3 := threadCPU(b)
		tNorm += t1 - t0
		tPurell += t2 - t1
		tURL += t3 - t2
		n += len(chunk)
	}
	b.ReportMetric(float64(tNorm.Nanoseconds())/float64(n), "cpu-ns/url-urlnorm")
	b.ReportMetric(float64(tPurell.Nanoseconds())/float64(n), "cpu-ns/url-purell")
	b.ReportMetric(float64(tURL.Nanoseconds())/float64(n), "cpu-ns/url-neturl")
	b.ReportMetric(float64(tPurell)/float64(tNorm), "x-faster-than-purell")
	b.ReportMetric(float64(tNorm)/float64(tURL), "x-neturl")
}
