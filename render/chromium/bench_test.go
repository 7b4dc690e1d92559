package chromium_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/crawltest"
	"github.com/crawlkit/crawlkit/extract"
	"github.com/crawlkit/crawlkit/fetch"
	"github.com/crawlkit/crawlkit/render"
	"github.com/crawlkit/crawlkit/render/chromium"
)

// benchWeb is a JavaScript site and a fetcher whose politeness is
// negligible, so that the benchmarks measure the browser.
func benchWeb(b *testing.B) (*crawltest.Web, *fetch.Fetcher) {
	web, err := crawltest.NewWeb(crawltest.Config{Hosts: 1, PagesPerHost: 3, JSPages: 40, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(web.Close)
	f, err := fetch.New(fetch.Config{
		UserAgent:   "benchbot/1.0",
		DialContext: web.DialContext,
		AllowCIDRs:  loopback,
		PolitenessConfig: fetch.PolitenessConfig{Delay: time.Microsecond, MaxConcurrent: 64,
			DelayFactor: 1e-9, MaxAdaptiveDelay: time.Microsecond},
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { f.Close() })
	return web, f
}

// benchPages are pages of the JavaScript site a crawler would render: a
// React shell (two scripts and an API call), a Vue shell (one script), a
// Next.js shell (two scripts) and a noscript page (a timer).
var benchPages = []string{"http://app.test/p/2", "http://app.test/p/3", "http://app.test/p/4", "http://app.test/p/5"}

// BenchmarkPlainFetch is the baseline: fetching and extracting the same
// pages without a browser (their links are then missing).
func BenchmarkPlainFetch(b *testing.B) {
	_, f := benchWeb(b)
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		resp, err := f.Fetch(ctx, benchPages[i%len(benchPages)])
		if err != nil {
			b.Fatal(err)
		}
		if _, err := extract.ExtractBytes(resp.Body, resp.FinalURL.String(), resp.Header); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "pages/s")
}

// BenchmarkRender renders the pages with 1 and 2 tabs; the page itself is
// handed over as fetched (as the crawler does), its subresources fetched.
func BenchmarkRender(b *testing.B) {
	needBrowser(b)
	for _, bc := range []struct {
		tabs   int
		settle time.Duration
	}{{1, 100 * time.Millisecond}, {2, 100 * time.Millisecond}, {1, 0}} {
		tabs := bc.tabs
		name := fmt.Sprintf("tabs=%d", tabs)
		if bc.settle == 0 {
			name += "/settle=default"
		}
		b.Run(name, func(b *testing.B) {
			_, f := benchWeb(b)
			c, err := chromium.New(chromium.Config{Fetcher: f, AllowCIDRs: loopback, Tabs: tabs, Settle: bc.settle})
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			ctx := context.Background()
			bodies := map[string]*fetch.Response{}
			for _, u := range benchPages {
				resp, err := f.Fetch(ctx, u)
				if err != nil {
					b.Fatal(err)
				}
				bodies[u] = resp
				// Warm the tabs.
				if _, err := c.Render(ctx, &render.Request{URL: u, Body: resp.Body, Header: resp.Header}); err != nil {
					b.Fatal(err)
				}
			}
			var next sync.Mutex
			i := 0
			b.ResetTimer()
			var wg sync.WaitGroup
			for w := 0; w < tabs; w++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						next.Lock()
						if i >= b.N {
							next.Unlock()
							return
						}
						u := benchPages[i%len(benchPages)]
						i++
						next.Unlock()
						resp := bodies[u]
						res, err := c.Render(ctx, &render.Request{URL: u, Body: resp.Body, Header: resp.Header})
						if err != nil {
							b.Error(err)
							return
						}
						if len(res.Document.Links) < 2 {
							b.Errorf("%s: %d links", u, len(res.Document.Links))
						}
					}
				}()
			}
			wg.Wait()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "renders/s")
		})
	}
}

// BenchmarkMemoryPerTab measures the proportional set size (PSS) of the
// browser's process tree with no page open and with 1 and 4 tabs that
// each rendered a page, and reports the difference per tab.
func BenchmarkMemoryPerTab(b *testing.B) {
	needBrowser(b)
	if _, err := os.Stat("/proc/self/smaps_rollup"); err != nil {
		b.Skip("needs Linux /proc/*/smaps_rollup")
	}
	for _, tabs := range []int{1, 4} {
		b.Run(fmt.Sprintf("tabs=%d", tabs), func(b *testing.B) {
			_, f := benchWeb(b)
			var perTab float64
			for n := 0; n < b.N; n++ {
				c, err := chromium.New(chromium.Config{Fetcher: f, AllowCIDRs: loopback, Tabs: tabs})
				if err != nil {
					b.Fatal(err)
				}
				time.Sleep(time.Second) // let the browser finish starting
				base := treePSS(b, c.PID())
				var wg sync.WaitGroup
				for k := 0; k < tabs; k++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						if _, err := c.Render(context.Background(), &render.Request{URL: benchPages[k%len(benchPages)]}); err != nil {
							b.Error(err)
						}
					}()
				}
				wg.Wait()
				loaded := treePSS(b, c.PID())
				perTab = float64(loaded-base) / float64(tabs) / (1 << 20)
				b.ReportMetric(float64(base)/(1<<20), "MiB-browser")
				if err := c.Close(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(perTab, "MiB/tab")
		})
	}
}

// treePSS sums the PSS of pid and its descendants, in bytes.
func treePSS(b *testing.B, pid int) int64 {
	children := map[int][]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// The command name is in parentheses and may contain spaces.
		s := string(stat)
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(fields) > 1 {
			if ppid, err := strconv.Atoi(fields[1]); err == nil {
				children[ppid] = append(children[ppid], p)
			}
		}
	}
	var total int64
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		queue = append(queue, children[p]...)
		fh, err := os.Open(filepath.Join("/proc", strconv.Itoa(p), "smaps_rollup"))
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(fh)
		for sc.Scan() {
			if rest, ok := strings.CutPrefix(sc.Text(), "Pss:"); ok {
				kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
				total += kb << 10
				break
			}
		}
		fh.Close()
	}
	if total == 0 {
		b.Fatalf("no memory found for the browser process %d", pid)
	}
	return total
}
