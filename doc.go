// Package crawlkit is a toolkit for building web crawlers in Go.
//
// crawlkit is a set of small packages that each solve one hard part of
// crawling, and that plug together through small interfaces. Use one of them
// in a crawler you already have, or all of them through this package's
// Crawler, which wires them into a crawler for one node.
//
// # The path of a URL
//
// Every URL a crawler meets, from a seed, a sitemap or a page, takes the same
// path:
//
//  1. urlnorm normalizes it, so that different spellings of one page fold
//     into one string, and computes its host and hash keys.
//  2. The crawl's scope (Config.Scope or ScopeFunc, and MaxDepth) and trap
//     judge it: URLs outside the scope are dropped, and URLs of spider
//     traps (endless calendars, repeating path segments, session ids) are
//     rejected with a reason.
//  3. The seen set (bloom) drops URLs that were already discovered.
//  4. frontier queues it by priority in a per-host queue and hands it out as
//     a lease when its host's politeness clock allows.
//  5. robots decides whether the host's robots.txt allows it (RFC 9309),
//     fetching and caching robots.txt once per host.
//  6. fetch retrieves it politely and safely: bounded sizes and timeouts,
//     no private addresses, redirects checked hop by hop. A redirect
//     target counts as discovered, so it is not queued again, and one that
//     was queued already is not requested again when its turn comes
//     (Stats.URLs.FetchedByRedirect).
//  7. extract pulls links, text and metadata out of the page; simhash
//     fingerprints its text and flags near-duplicates.
//  8. The page goes to the user's handler, its links go back to step 1, and
//     the lease is settled with the outcome, which sets the host's next
//     contact time, a retry, or a recrawl.
//
// # The Crawler
//
// Crawler wires the packages for one node. Its Config has safe, polite
// defaults (robots.txt on, one request per second and one connection per
// host, private addresses refused, bodies limited); only UserAgent and Seeds
// are required:
//
//	c, err := crawlkit.New(crawlkit.Config{
//		UserAgent: "mybot/1.0 (+https://example.com/bot)",
//		Seeds:     []string{"https://example.com/"},
//		DataDir:   "crawl-data",
//		Handler: func(ctx context.Context, p *crawlkit.Page) error {
//			fmt.Println(p.StatusCode, p.URL, p.Title)
//			return nil
//		},
//	})
//	if err != nil {
//		// the Config was unusable; the error says which field
//	}
//	err = c.Run(ctx)
//
// Run returns when the frontier is drained, MaxPages is reached or ctx ends.
// With a DataDir the crawl's state lives in an embedded Pebble store: a crash
// loses no queued URL, a new Crawler on the same DataDir resumes, and the
// Crawler's memory does not grow with the pages fetched (the frontier, the
// near-duplicate index and the names of indexed pages are on disk). Stats,
// StatsHandler (JSON) and MetricsHandler (Prometheus) report progress, and a
// Sink such as WARCSink archives every fetch. Config.Queue replaces the
// frontier with a shared one so that several processes work on one crawl.
//
// crawltest serves a deterministic synthetic web with ground truth and
// server-side accounting, so crawlers built with crawlkit (or anything else)
// can be tested for coverage, politeness and robots compliance without the
// network.
package crawlkit
