package crawlkit_test

import (
	"context"
	"fmt"
	"net/netip"
	"time"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/crawltest"
	"github.com/crawlkit/crawlkit/extract"
	"github.com/crawlkit/crawlkit/fetch"
	"github.com/crawlkit/crawlkit/frontier"
	"github.com/crawlkit/crawlkit/robots"
	"github.com/crawlkit/crawlkit/urlnorm"
)

// A crawl loop built from the packages without the Crawler: the frontier
// schedules, fetch fetches (guard and per-host politeness), robots.Cache
// reads robots.txt over the same fetcher (robots.FetchWith) and feeds
// Crawl-delay into politeness (robots.ApplyCrawlDelay), OutcomeOf settles
// each fetch, and NextAt's zero time says the crawl is over.
func Example_composeWithoutCrawler() {
	web, err := crawltest.NewWeb(crawltest.Config{Hosts: 2, PagesPerHost: 6, Seed: 3, Agent: "loopbot", NoTraps: true})
	if err != nil {
		panic(err)
	}
	defer web.Close()
	const agent = "loopbot/1.0 (+https://example.com/bot)"
	cfg := fetch.Config{
		UserAgent:        agent,
		DialContext:      web.DialContext,
		AllowCIDRs:       []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
		PolitenessConfig: fetch.PolitenessConfig{Delay: 5 * time.Millisecond},
	}
	pages, err := fetch.New(cfg)
	if err != nil {
		panic(err)
	}
	defer pages.Close()
	cfg.MaxRedirects, cfg.ShareConns = -1, pages // robots.txt: the Cache follows redirects itself
	robotsFetcher, err := fetch.New(cfg)
	if err != nil {
		panic(err)
	}
	defer robotsFetcher.Close()
	rules := robots.NewCache(robots.Config{UserAgent: agent, Fetch: robots.FetchWith(robotsFetcher)})
	front, err := frontier.New(frontier.Config{Politeness: pages.Politeness()})
	if err != nil {
		panic(err)
	}
	defer front.Close()

	ctx, seen, hosts, fetched := context.Background(), map[string]bool{}, map[string]bool{}, []string{}
	for _, s := range web.Seeds() {
		h, _ := urlnorm.HostOf(s)
		hosts[h] = true
	}
	add := func(raw string, depth int) {
		u, err := urlnorm.Normalize(raw)
		h, _ := urlnorm.HostOf(u)
		if err == nil && !seen[u] && hosts[h] { // the scope: the seeds' hosts
			seen[u] = true
			_ = front.Add(frontier.Entry{URL: u, Depth: depth})
		}
	}
	for _, s := range web.Seeds() {
		add(s, 0)
	}
	for {
		l, at, err := front.NextAt(time.Now())
		if err != nil {
			panic(err)
		}
		if l == nil {
			if at.IsZero() {
				break // nothing queued, leased or due: the crawl is over
			}
			time.Sleep(time.Until(at)) // the next host's politeness time
			continue
		}
		pol, err := rules.Policy(ctx, l.URL)
		if err != nil {
			_, _ = front.Done(l, frontier.Retry(0))
			continue
		}
		if d, _ := pol.Allowed("loopbot", l.URL); !d.Allowed {
			_, _ = front.Done(l, frontier.Failed())
			continue
		}
		_, _ = robots.ApplyCrawlDelay(pages.Politeness(), l.Host, "loopbot", pol)
		resp, err := pages.Fetch(ctx, l.URL)
		if err == nil && resp.StatusCode == 200 {
			fetched = append(fetched, l.URL)
			if doc, err := extract.ExtractBytes(resp.Body, resp.FinalURL.String(), resp.Header); err == nil {
				for _, link := range doc.Links {
					add(link.URL, l.Depth+1)
				}
			}
		}
		_, _ = front.Done(l, crawlkit.OutcomeOf(resp, err, time.Now()))
	}
	r := web.Report()
	fmt.Println("missed:", len(web.TruthFor("loopbot", 0).Missing(fetched)),
		"robots violations:", r.RobotsViolations, "too soon:", r.SpacingViolations)
	// Output: missed: 0 robots violations: 0 too soon: 0
}
