package crawltest_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/crawlkit/crawlkit/crawltest"
)

// BenchmarkServe measures pages served per second to a concurrent client
// over loopback, from a 1 000 × 100 web generated on demand (every host
// needs its own connections), from a single-host web of 10 000 pages, and
// from a baseline server that returns one fixed 20 KB page.
func BenchmarkServe(b *testing.B) {
	web, err := crawltest.NewWeb(crawltest.Config{Hosts: 1000, PagesPerHost: 100})
	if err != nil {
		b.Fatal(err)
	}
	defer web.Close()
	urls := web.TruthFor("crawlkit", 2).URLs()
	b.Run("crawltest", func(b *testing.B) {
		benchGet(b, web.Client(), urls)
	})

	// The same generator behind a single host, so that every request can
	// reuse a connection as in the baseline.
	one, err := crawltest.NewWeb(crawltest.Config{Hosts: 1, PagesPerHost: 10000})
	if err != nil {
		b.Fatal(err)
	}
	defer one.Close()
	oneURLs := one.TruthFor("crawlkit", 0).URLs()
	b.Run("crawltest-1host", func(b *testing.B) {
		benchGet(b, one.Client(), oneURLs)
	})

	page := []byte(strings.Repeat("<p>static baseline page</p>\n", 20<<10/28))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write(page)
	}))
	defer srv.Close()
	tr := srv.Client().Transport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 64
	b.Run("static-baseline", func(b *testing.B) {
		benchGet(b, &http.Client{Transport: tr}, []string{srv.URL + "/"})
	})
}

func benchGet(b *testing.B, client *http.Client, urls []string) {
	var i, bytes atomic.Int64
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			resp, err := client.Get(urls[int(i.Add(1))%len(urls)])
			if err != nil {
				b.Error(err)
				return
			}
			n, _ := io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			bytes.Add(n)
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "pages/s")
	b.ReportMetric(float64(bytes.Load())/float64(b.N), "B/page")
}

// BenchmarkTruth measures computing the ground truth of a 1 000 × 100 web.
func BenchmarkTruth(b *testing.B) {
	web, err := crawltest.NewWeb(crawltest.Config{Hosts: 1000, PagesPerHost: 100})
	if err != nil {
		b.Fatal(err)
	}
	defer web.Close()
	for b.Loop() {
		t := web.Truth()
		b.ReportMetric(float64(len(t.Pages)), "pages")
	}
}
