package crawlkit_test

import (
	"context"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/crawltest"
	"github.com/crawlkit/crawlkit/render"
	"github.com/crawlkit/crawlkit/render/chromium"
)

// renderCrawl crawls crawltest's JavaScript site from its home page, with
// rc (nil: no rendering), and returns the canonical URLs of the pages
// handed to the Handler.
func renderCrawl(t *testing.T, web *crawltest.Web, rc *crawlkit.RenderConfig) []string {
	t.Helper()
	var mu sync.Mutex
	var got []string
	cr, err := crawlkit.New(crawlkit.Config{
		UserAgent:     testAgent,
		Seeds:         []string{web.JSSeed()},
		Workers:       4,
		Delay:         20 * time.Millisecond,
		DialContext:   web.DialContext,
		AllowPrivate:  loopback,
		RobotsRetries: -1,
		Render:        rc,
		Handler: func(_ context.Context, p *crawlkit.Page) error {
			if p.StatusCode != 200 {
				return nil
			}
			c, err := crawltest.Canonical(p.URL)
			if err != nil {
				t.Error(err)
				return nil
			}
			mu.Lock()
			got = append(got, c)
			mu.Unlock()
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := cr.Run(ctx); err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	return slices.Compact(got)
}

// TestCrawlRendersJSPages crawls the JavaScript site twice: without
// rendering it finds exactly the pages reachable through the HTML as
// served; with a renderer it finds every page, renders only the routed
// ones, and the guard refuses the leak page's private requests before
// anything connects.
func TestCrawlRendersJSPages(t *testing.T) {
	if chromium.FindBrowser() == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("Chromium is required under CI=true (apt-get install chromium)")
		}
		t.Skip("no Chromium on this machine")
	}
	if testing.Short() {
		t.Skip("starts a browser")
	}
	web, err := crawltest.NewWeb(crawltest.Config{Hosts: 1, PagesPerHost: 3, JSPages: 24, Seed: 11})
	if err != nil {
		t.Fatal(err)
	}
	defer web.Close()
	truth := web.JSTruth()

	plain := renderCrawl(t, web, nil)
	if !slices.Equal(plain, truth.WithoutJS) {
		t.Errorf("without rendering: crawled %v, want %v", plain, truth.WithoutJS)
	}
	for _, u := range plain {
		if !slices.Contains(truth.WithoutJS, u) {
			t.Errorf("without rendering, %s was found", u)
		}
	}

	browser, err := chromium.New(chromium.Config{UserAgent: testAgent, AllowCIDRs: loopback, Tabs: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer browser.Close()
	web.ResetReport()
	before := web.JSReport()
	var mu sync.Mutex
	rendered := map[string]bool{}
	rc := &crawlkit.RenderConfig{
		Renderer:    browser,
		Concurrency: 2,
		OnRender: func(p *crawlkit.Page, res *render.Result, err error) {
			if err != nil {
				t.Errorf("render of %s failed: %v", p.URL, err)
				return
			}
			mu.Lock()
			rendered[p.URL] = true
			mu.Unlock()
		},
	}
	all := renderCrawl(t, web, rc)
	if !slices.Equal(all, truth.WithJS) {
		t.Errorf("with rendering: crawled %d pages, want %d; missing %v", len(all), len(truth.WithJS), renderMissing(truth.WithJS, all))
	}
	// Only routed pages were rendered; every shell-style page was.
	for u, p := range truth.Pages {
		if rendered[u] && !p.NeedsJS {
			t.Errorf("%s (%s) was rendered but needs no JavaScript", u, p.Kind)
		}
		if p.NeedsJS && !rendered[u] && p.Kind != crawltest.JSKindHybrid {
			t.Errorf("%s (%s) needs JavaScript and was not rendered", u, p.Kind)
		}
	}
	st := rc.Stats()
	if st.Rendered != int64(len(rendered)) || st.Failed != 0 || st.Routed != st.Rendered {
		t.Errorf("stats %+v, %d pages rendered", st, len(rendered))
	}
	if st.BlockedAddress != int64(len(truth.PrivateTargets)) {
		t.Errorf("the guard refused %d requests, want the leak page's %d", st.BlockedAddress, len(truth.PrivateTargets))
	}
	for _, u := range all {
		if strings.Contains(u, "/leaked-") {
			t.Errorf("a private request succeeded in the browser: %s", u)
		}
	}
	rep := web.JSReport()
	if rep.RobotsViolations != before.RobotsViolations {
		t.Errorf("%d robots violations", rep.RobotsViolations-before.RobotsViolations)
	}
	// The browser's requests share the host's politeness with the
	// crawler's fetches: never two at once.
	if rep.MaxInFlight != 1 {
		t.Errorf("%d requests in flight to %s at once", rep.MaxInFlight, crawltest.JSHost)
	}
	if n := rep.PerPath["/api/links?page=2"]; n == 0 {
		t.Error("the React pages' API was never called")
	}
	// That no page request escapes the browser's interception is checked
	// by render's own tests (TestRenderJSSite, TestRenderGuard), which can
	// see the sink.
	t.Logf("rendered %d of %d pages; stats %+v; requests to %s: %d, min gap %v", len(rendered), len(all), st, crawltest.JSHost, rep.Requests, rep.MinGap)
}

func renderMissing(want, got []string) []string {
	var out []string
	for _, u := range want {
		if !slices.Contains(got, u) {
			out = append(out, u)
		}
	}
	return out
}
