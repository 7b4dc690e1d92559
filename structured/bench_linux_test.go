package structured

import (
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/internal/cputime"

	"golang.org/x/net/html"

	"github.com/crawlkit/crawlkit/extract"
)

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
		t0 := cputime.Thread(b)
		if _, err := extract.ExtractBytes(page, pageURL, nil); err != nil {
			b.Fatal(err)
		}
		t1 := cputime.Thread(b)
		ParseBytes(page, pageURL)
		t2 := cputime.Thread(b)
		FromNode(doc, pageURL)
		t3 := cputime.Thread(b)
		tEx, tParse, tWalk = tEx+t1-t0, tParse+t2-t1, tWalk+t3-t2
		n++
	}
	b.ReportMetric(float64(tEx.Microseconds())/float64(n), "cpu-µs-extract")
	b.ReportMetric(float64(tParse.Microseconds())/float64(n), "cpu-µs-structured")
	b.ReportMetric(float64(tWalk.Microseconds())/float64(n), "cpu-µs-walk")
	b.ReportMetric(float64(tParse)/float64(tEx), "x-extract")
	b.ReportMetric(float64(tWalk)/float64(tEx), "walk-x-extract")
}
