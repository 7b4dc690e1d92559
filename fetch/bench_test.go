package fetch

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"
)

// smallPage is a typical small HTML page (about 2 KiB).
var smallPage = "<!DOCTYPE html><html><head><title>bench</title></head><body>" +
	strings.Repeat(`<p><a href="/next">a link</a> and some text to read.</p>`, 36) + "</body></html>"

func benchServer(b *testing.B) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, smallPage)
	}))
	b.Cleanup(srv.Close)
	return srv
}

// BenchmarkSmallPages compares fetches/s of a small page through the
// Fetcher (guard, DNS cache, politeness bookkeeping with no delay, httptrace
// timing, body limits, sniffing) against a bare net/http client that reads
// the same body, in the same run. The ratio of the two ns/op figures is the
// Fetcher's overhead.
func BenchmarkSmallPages(b *testing.B) {
	srv := benchServer(b)
	url := srv.URL + "/page"
	b.Run("bare-net-http", func(b *testing.B) {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		defer tr.CloseIdleConnections()
		c := &http.Client{Transport: tr}
		b.ReportAllocs()
		for b.Loop() {
			req, _ := http.NewRequest(http.MethodGet, url, nil)
			req.Header.Set("User-Agent", "bench")
			resp, err := c.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil || len(body) != len(smallPage) {
				b.Fatal(err)
			}
		}
	})
	b.Run("fetcher", func(b *testing.B) {
		f, err := New(Config{
			UserAgent:        "bench",
			AllowCIDRs:       loopback,
			PolitenessConfig: PolitenessConfig{Delay: -1, DelayFactor: -1},
		})
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		ctx := context.Background()
		b.ReportAllocs()
		for b.Loop() {
			resp, err := f.Fetch(ctx, url)
			if err != nil || len(resp.Body) != len(smallPage) {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkSmallPagesInterleaved alternates the bare client and the Fetcher
// request by request, so that both see the same machine load (the shared
// 2-core test machines are noisy), and reports each one's median time per
// fetch and the Fetcher's overhead in percent of the bare median. Medians
// keep bursts of outside load from dominating. The bare client sends the
// same request headers as the Fetcher and reads the whole body.
//
// Two variants: with context.Background, and with a cancellable context as
// a crawler's requests carry (for shutdown). net/http does more work per
// request under a cancellable context, for both clients alike.
func BenchmarkSmallPagesInterleaved(b *testing.B) {
	srv := benchServer(b)
	url := srv.URL + "/page"
	for _, variant := range []string{"background", "cancellable"} {
		b.Run("ctx="+variant, func(b *testing.B) {
			ctx := context.Background()
			if variant == "cancellable" {
				var cancel context.CancelFunc
				ctx, cancel = context.WithCancel(ctx)
				defer cancel()
			}
			tr := http.DefaultTransport.(*http.Transport).Clone()
			defer tr.CloseIdleConnections()
			c := &http.Client{Transport: tr}
			f, err := New(Config{
				UserAgent:        "bench",
				AllowCIDRs:       loopback,
				PolitenessConfig: PolitenessConfig{Delay: -1, DelayFactor: -1},
			})
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			var bare, fetcher []time.Duration
			for b.Loop() {
				t0 := time.Now()
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
				req.Header.Set("User-Agent", "bench")
				req.Header.Set("Accept", defaultAccept)
				req.Header.Set("Accept-Encoding", acceptEncoding)
				resp, err := c.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				body, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil || len(body) != len(smallPage) {
					b.Fatal(err)
				}
				t1 := time.Now()
				fr, err := f.Fetch(ctx, url)
				if err != nil || len(fr.Body) != len(smallPage) {
					b.Fatal(err)
				}
				t2 := time.Now()
				bare = append(bare, t1.Sub(t0))
				fetcher = append(fetcher, t2.Sub(t1))
			}
			mb, mf := median(bare), median(fetcher)
			b.ReportMetric(float64(mb.Nanoseconds()), "bare-ns/fetch")
			b.ReportMetric(float64(mf.Nanoseconds()), "fetcher-ns/fetch")
			b.ReportMetric(100*(float64(mf)/float64(mb)-1), "overhead-%")
		})
	}
}

func median(d []time.Duration) time.Duration {
	slices.Sort(d)
	return d[len(d)/2]
}
