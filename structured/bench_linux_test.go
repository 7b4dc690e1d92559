package structured

import (
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/crawlkit/crawlkit/extract"
)

// threadCPU returns the CPU time the calling OS thread has used: the
// machine the figures come from is shared, and wall-clock time would
// charge one side of a comparison with whatever else ran meanwhile.
func threadCPU(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	const rusageThread = 1 // RUSAGE_THREAD, Linux
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkParseCPU is BenchmarkParse charged with CPU time: each op runs
// the extract pass (the baseline), ParseBytes, and FromNode on a tree
// parsed beforehand, interleaved on one thread, and reports each one's
// CPU time per page and the ratios to the baseline.
func BenchmarkParseCPU(b *testing.B) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	page := benchPage(b)
	const pageURL = "https://shop.northpeak.example/p/alpine-trail-30"
	doc, err := html.Parse(strings.NewReader(string(page)))
	if err != nil {
		b.Fatal(err)
	}
	var tEx, tParse, tWalk time.Duration
	n := 0
	for b.Loop() {
		t0 := threadCPU(b)
		if _, err := extract.ExtractBytes(page, pageURL, nil); err != nil {
			b.Fatal(err)
		}
		t1 := threadCPU(b)
		ParseBytes(page, pageURL)
		t2 := threadCPU(b)
		FromNode(doc, pageURL)
		t3 := threadCPU(b)
		tEx, tParse, tWalk = tEx+t1-t0, tParse+t2-t1, tWalk+t3-t2
		n++
	}
	b.ReportMetric(float64(tEx.Microseconds())/float64(n), "cpu-µs-extract")
	b.ReportMetric(float64(tParse.Microseconds())/float64(n), "cpu-µs-structured")
	b.ReportMetric(float64(tWalk.Microseconds())/float64(n), "cpu-µs-walk")
	b.ReportMetric(float64(tParse)/float64(tEx), "x-extract")
	b.ReportMetric(float64(tWalk)/float64(tEx), "walk-x-extract")
}
