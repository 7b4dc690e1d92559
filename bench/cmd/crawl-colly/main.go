// Command crawl-colly crawls a benchweb synthetic web with
// github.com/gocolly/colly/v2 and prints one JSON line of results
// (harness.Result).
//
// colly runs asynchronously with robots.txt obeyed, following every a[href],
// as its documentation shows. By default one LimitRule for all domains sets
// the parallelism (colly has no per-host connection limit); with -per-host it
// gets one rule per virtual host instead (parallelism 1 and -delay between
// requests), which is how colly is made polite per host.
package main

import (
	"context"
	"flag"
	"os"
	"sync/atomic"

	"github.com/crawlkit/crawlkit/bench/internal/harness"
	"github.com/gocolly/colly/v2"
)

func main() {
	fs := flag.NewFlagSet("crawl-colly", flag.ExitOnError)
	perHost := fs.Bool("per-host", false, "one LimitRule per host (parallelism 1, -delay) instead of one global rule")
	harness.Main("colly", fs, os.Args[1:], func(ctx context.Context, p harness.Params) (int64, error) {
		ctl := harness.NewControl(p.Control)
		seeds, err := ctl.Seeds()
		if err != nil {
			return 0, err
		}
		c := colly.NewCollector(
			colly.Async(true),
			colly.UserAgent(p.UserAgent()),
			// colly counts the seeds as depth 1.
			colly.MaxDepth(p.MaxDepth+1),
		)
		c.IgnoreRobotsTxt = false
		tr, err := harness.TransportFor(p)
		if err != nil {
			return 0, err
		}
		c.WithTransport(tr)
		if *perHost {
			rules := make([]*colly.LimitRule, 0, len(seeds))
			for _, s := range seeds {
				rules = append(rules, &colly.LimitRule{DomainGlob: harness.HostOf(s), Parallelism: 1, Delay: p.Delay})
			}
			if err := c.Limits(rules); err != nil {
				return 0, err
			}
		} else if err := c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: p.Workers, Delay: 0}); err != nil {
			return 0, err
		}

		var started, handled atomic.Int64
		c.OnRequest(func(r *colly.Request) {
			if ctx.Err() != nil || (p.MaxPages > 0 && started.Add(1) > int64(p.MaxPages)) {
				r.Abort()
			}
		})
		c.OnResponse(func(r *colly.Response) { handled.Add(1) })
		c.OnError(func(r *colly.Response, err error) {
			if r != nil && r.StatusCode != 0 {
				handled.Add(1)
			}
		})
		c.OnHTML("a[href]", func(e *colly.HTMLElement) {
			_ = e.Request.Visit(e.Attr("href"))
		})
		for _, s := range seeds {
			// Errors here are colly's refusals (robots.txt, already
			// visited through a link); they are not failures of the run.
			_ = c.Visit(s)
		}
		// Requests already waiting in a LimitRule still run (and sleep
		// their Delay) after OnRequest would abort them, so a crawl cut
		// by the timeout would go on for minutes: stop measuring at the
		// deadline instead. The process exits right after printing the
		// result, which ends the goroutines colly still has.
		done := make(chan struct{})
		go func() {
			c.Wait()
			close(done)
		}()
		select {
		case <-done:
		case <-ctx.Done():
		}
		return handled.Load(), ctx.Err()
	})
}
