package extract

import (
	"bytes"

	"github.com/crawlkit/crawlkit/internal/cputime"

	"runtime"
	"testing"
	"time"

	"golang.org/x/net/html"
)

// BenchmarkExtractVsTreeWalk interleaves Extract and the html.Parse + tree
// walk baseline over the same 30 KB pages, charging each with the CPU time
// of its own runs, and reports each one's throughput in MB of HTML per CPU
// second and their ratio ("x-treewalk": how many times faster Extract is).
// One op is one page through both.
func BenchmarkExtractVsTreeWalk(b *testing.B) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	pages := benchPages()
	const base = "https://www.example.com/news/2024/story"
	var tEx, tTree, tTok time.Duration
	var nbytes int64
	for i := 0; b.Loop(); i++ {
		p := pages[i%len(pages)]
		t0 := cputime.Thread(b)
		d, err := ExtractBytes(p, base, nil)
		t1 := cputime.Thread(b)
		links, _ := treeWalk(b, p, base)
		t2 := cputime.Thread(b)
		z := html.NewTokenizer(bytesReader(p))
		for z.Next() != html.ErrorToken {
		}
		t3 := cputime.Thread(b)
		tTok += t3 - t2
		if err != nil || len(d.Links) < 50 || links < 50 {
			b.Fatal(err, len(d.Links), links)
		}
		tEx += t1 - t0
		tTree += t2 - t1
		nbytes += int64(len(p))
	}
	b.ReportMetric(float64(nbytes)/tEx.Seconds()/1e6, "cpu-MB/s-extract")
	b.ReportMetric(float64(nbytes)/tTree.Seconds()/1e6, "cpu-MB/s-treewalk")
	b.ReportMetric(float64(nbytes)/tTok.Seconds()/1e6, "cpu-MB/s-tokenizer-only")
	b.ReportMetric(float64(tTree)/float64(tEx), "x-treewalk")
}

func bytesReader(p []byte) *bytes.Reader { return bytes.NewReader(p) }
