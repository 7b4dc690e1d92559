// Command crawl-gocrawl crawls a benchweb synthetic web with
// github.com/PuerkitoBio/gocrawl and prints one JSON line of results
// (harness.Result).
//
// gocrawl runs one worker per host, obeys robots.txt (including
// Crawl-delay) and waits Options.CrawlDelay (-delay) between requests to a
// host. It has no depth limit; the extender tracks each URL's depth from
// its source so the crawl stops at the same depth as the other crawlers.
//
// Page cap: gocrawl's own Options.MaxVisits stops the crawler's collecting
// loop while workers are still busy sending it results, and the crawl then
// never returns (the workers block on the unbuffered result channel that
// nobody reads any more). The cap is therefore applied in the extender
// instead: once the cap is reached, Filter queues nothing new and Fetch
// answers queued URLs with an error without touching the network, so the
// workers drain their queues quickly and the crawl ends by itself.
package main

import (
	"context"
	"errors"
	"flag"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/PuerkitoBio/gocrawl"
	"github.com/PuerkitoBio/goquery"
	"github.com/PuerkitoBio/purell"
	"github.com/crawlkit/crawlkit/bench/internal/harness"
)

// errCapped is what Fetch returns for URLs left over after the cap or
// timeout.
var errCapped = errors.New("crawl-gocrawl: page cap or timeout reached")

func main() {
	fs := flag.NewFlagSet("crawl-gocrawl", flag.ExitOnError)
	harness.Main("gocrawl", fs, os.Args[1:], func(ctx context.Context, p harness.Params) (int64, error) {
		seeds, err := harness.NewControl(p.Control).Seeds()
		if err != nil {
			return 0, err
		}
		tr, err := harness.TransportFor(p)
		if err != nil {
			return 0, err
		}
		client := &http.Client{
			Transport:     tr,
			CheckRedirect: gocrawl.HttpClient.CheckRedirect,
		}
		ext := &extender{ctx: ctx, p: p, client: client, depth: make(map[string]int, 1<<16)}
		for _, s := range seeds {
			ext.depth[s] = 0
		}
		opts := gocrawl.NewOptions(ext)
		opts.UserAgent = p.UserAgent()
		opts.RobotUserAgent = p.UserAgent()
		opts.CrawlDelay = p.Delay
		opts.SameHostOnly = false
		opts.LogFlags = gocrawl.LogNone
		if p.CAFile != "" {
			// gocrawl's default normalization (purell.FlagsAllGreedy)
			// turns https:// into http://, and it asks for robots.txt at
			// the normalized URL: on an HTTPS-only web every robots.txt
			// request would fail and every host count as having none.
			opts.URLNormalizationFlags &^= purell.FlagForceHTTP
		}
		// A worker that dies of idleness can race with a URL being
		// stacked for it; the URL is lost, the crawler's count of
		// pending URLs never reaches zero and Run never returns (seen
		// here after a timed-out crawl). Workers therefore never idle
		// out; they all stop when the crawl ends.
		opts.WorkerIdleTTL = 24 * time.Hour
		c := gocrawl.NewCrawlerWithOptions(opts)
		done := make(chan error, 1)
		go func() { done <- c.Run(seeds) }()
		select {
		case err = <-done:
		case <-ctx.Done():
			// After the deadline queued URLs drain without requests;
			// give that a moment, then stop measuring (the process
			// exits right after printing the result).
			select {
			case err = <-done:
			case <-time.After(5 * time.Second):
			}
		}
		if errors.Is(err, gocrawl.ErrMaxVisits) {
			err = nil
		}
		if err == nil {
			err = ctx.Err()
		}
		return ext.handled.Load(), err
	})
}

// extender plugs the benchmark's transport, depth bound and page cap into
// gocrawl.
type extender struct {
	gocrawl.DefaultExtender
	ctx    context.Context
	p      harness.Params
	client *http.Client

	started, handled atomic.Int64

	mu    sync.Mutex
	depth map[string]int // URL (as gocrawl normalized it) → links from a seed
}

// Fetch makes the request through the benchmark's transport, unless the cap
// or the timeout has been reached.
func (e *extender) Fetch(ctx *gocrawl.URLContext, userAgent string, headRequest bool) (*http.Response, error) {
	if !ctx.IsRobotsURL() {
		if e.ctx.Err() != nil || (e.p.MaxPages > 0 && e.started.Add(1) > int64(e.p.MaxPages)) {
			return nil, errCapped
		}
	}
	method := http.MethodGet
	if headRequest {
		method = http.MethodHead
	}
	req, err := http.NewRequestWithContext(e.ctx, method, ctx.URL().String(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("User-Agent", userAgent)
	return e.client.Do(req)
}

// Filter enqueues unvisited URLs within the depth bound while the cap has
// not been reached. gocrawl calls it from its single collecting goroutine.
func (e *extender) Filter(ctx *gocrawl.URLContext, isVisited bool) bool {
	if isVisited || e.ctx.Err() != nil || (e.p.MaxPages > 0 && e.started.Load() >= int64(e.p.MaxPages)) {
		return false
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	key := ctx.NormalizedURL().String()
	if ctx.SourceURL() == nil {
		e.depth[key] = 0
		return true
	}
	d := e.depth[ctx.NormalizedSourceURL().String()] + 1
	if e.p.MaxDepth > 0 && d > e.p.MaxDepth {
		return false
	}
	if old, ok := e.depth[key]; !ok || d < old {
		e.depth[key] = d
	}
	return true
}

// Visit counts the page and lets gocrawl harvest its links.
func (e *extender) Visit(ctx *gocrawl.URLContext, res *http.Response, doc *goquery.Document) (any, bool) {
	e.handled.Add(1)
	return nil, true
}

// Error counts pages answered with an error status (gocrawl does not visit
// them).
func (e *extender) Error(err *gocrawl.CrawlError) {
	if err.Kind == gocrawl.CekHttpStatusCode {
		e.handled.Add(1)
	}
}
