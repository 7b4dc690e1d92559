package warc_test

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/archive/warc"
)

// benchPages returns n distinct HTML pages of 10 to 100 KB, text that
// compresses as real pages do (about 4:1).
func benchPages(n int) [][]byte {
	r := rand.New(rand.NewPCG(7, 11))
	words := strings.Fields("the archive crawl page link record payload digest header body response request " +
		"server client protocol window frame table index offset length status content encoding transfer chunk " +
		"replay capture collection seed scope depth host politeness robots sitemap frontier queue lease worker")
	pages := make([][]byte, n)
	for i := range pages {
		size := 10<<10 + r.IntN(90<<10)
		var b strings.Builder
		fmt.Fprintf(&b, "<!doctype html><html><head><title>Page %d</title></head><body>\n", i)
		for b.Len() < size {
			b.WriteString("<p>")
			for range 12 + r.IntN(20) {
				b.WriteString(words[r.IntN(len(words))])
				b.WriteByte(' ')
			}
			fmt.Fprintf(&b, "<a href=\"/p/%d\">%d</a></p>\n", r.IntN(100000), r.Uint32())
		}
		b.WriteString("</body></html>\n")
		pages[i] = []byte(b.String())
	}
	return pages
}

// BenchmarkWriteExchange writes distinct 10-100 KB pages, a response and
// a request record each, as a crawl does.
func BenchmarkWriteExchange(b *testing.B) {
	pages := benchPages(64)
	dir := b.TempDir()
	w, err := warc.New(warc.Config{Dir: dir, MaxFileSize: 256 << 20, CompressionLevel: benchLevel})
	if err != nil {
		b.Fatal(err)
	}
	reqHeader := http.Header{"User-Agent": {"crawlkit-bench/1.0"}, "Accept": {"text/html"}, "Accept-Encoding": {"gzip, br"}}
	date := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var total int64
	for _, p := range pages {
		total += int64(len(p))
	}
	b.SetBytes(total / int64(len(pages)))
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuTime()
	for i := range b.N {
		body := pages[i%len(pages)]
		// Each write a distinct payload: no revisit records.
		copy(body[len(body)-8:], fmt.Sprintf("%08x", i))
		_, err := w.WriteExchange(&warc.Exchange{
			URL:           fmt.Sprintf("http://bench.test/p/%d", i),
			Date:          date,
			IP:            "127.0.0.1",
			RequestHeader: reqHeader,
			StatusCode:    200,
			Header:        http.Header{"Content-Type": {"text/html; charset=utf-8"}, "Date": {"Fri, 02 Jan 2026 03:04:05 GMT"}},
			Body:          body,
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	// CPU time, user and system, of the process per write: on a shared
	// machine it varies much less than the wall time.
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
	b.StopTimer()
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.warc.gz"))
	var size int64
	for _, f := range files {
		if fi, err := os.Stat(f); err == nil {
			size += fi.Size()
		}
	}
	// The archive's size per page, against the page's own (B/page).
	b.ReportMetric(float64(size)/float64(b.N), "gzB/page")
}

// cpuTime is the CPU time the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

var benchLevel = func() int {
	l, _ := strconv.Atoi(os.Getenv("WARC_BENCH_LEVEL"))
	return l
}()
