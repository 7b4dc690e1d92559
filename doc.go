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
// path, and this package's files follow it, one stage each:
//
//  1. admit.go: urlnorm normalizes the URL; depth, scope (Config.Scope or
//     ScopeFunc), the trap detector and the seen set judge it; a new URL is
//     queued in the frontier, which hands it out as a lease when its host's
//     politeness clock allows (run.go holds the lease loop).
//  2. gate.go: robots.txt (RFC 9309), fetched and cached once per host,
//     decides once per lease whether the URL may be fetched, and sets the
//     host's Crawl-delay; the address guard's refusal of the host, and an
//     unreachable robots.txt, are decided here too. Redirect targets and
//     sitemaps pass the same gate. A page that must then wait for its host
//     waits without its worker (park.go).
//  3. fetchpage.go: fetch retrieves the URL politely and safely (bounded
//     sizes and timeouts, no private addresses, redirects checked hop by
//     hop); a redirect target counts as discovered, and one that was
//     queued already is not requested again (Stats.URLs.FetchedByRedirect).
//  4. analyze.go: extract pulls links, text and metadata out of the page;
//     simhash fingerprints it and flags near-duplicates; the trap detector
//     learns what the page served.
//  5. handle.go: the page goes to the Handler and the Sink; a panic in
//     either is recovered.
//  6. settle.go: one pure function classifies what the stages learned into
//     the frontier outcome and a Reason; the Queue settles the lease and
//     reports what it did (finished, retrying at, given up, recrawl at),
//     and that is counted, once.
//
// Every URL that leaves the path early leaves with a Reason (reason.go):
// counted in Stats (LinksRejected, URLs.NotFetched, URLs.Deferred), set on
// Link.Rejected, and logged at Debug; a rule that stops a whole host or URL
// pattern is logged once at Info, naming the Config field that changes it
// (explain.go). Stats.Waiting says what a crawl waits for.
//
// Around the path: state.go keeps the crawl state beyond the queue (host
// politeness clocks and blocks, the trap detector's learning) in the
// DataDir, and sharedstate.go shares the trap learning through a
// StateStore; userqueue.go calls a user's Queue with its panics recovered.
// For the Handler: pagehtml.go (CSS selection), enqueue.go (URLs it
// adds), hooks.go (per-host headers, BeforeRequest, OnError), filter.go
// (allow and deny patterns, the global rate cap), jsonlsink.go and
// csvwriter.go (outputs).
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
//		DataDir:   "crawl-data", // with package storage/datadir imported
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
// Run returns when the frontier is drained, MaxPages is reached, ctx ends,
// or what is left waits longer than MaxRetryWait. With a DataDir the
// crawl's state lives in an embedded Pebble store: a crash loses no queued
// URL, a new Crawler on the same DataDir resumes as politely as if it had
// not stopped (politeness clocks and Retry-After blocks persist), and the
// Crawler's memory does not grow with the pages fetched (the frontier, the
// near-duplicate index and the names of indexed pages are on disk). Stats,
// StatsHandler (JSON) and prometheus.Handler (package metrics/prometheus) report progress, and a
// Sink such as WARCSink archives every fetch. Config.Queue replaces the
// frontier with a shared one so that several processes work on one crawl.
//
// crawltest serves a deterministic synthetic web with ground truth and
// server-side accounting, so crawlers built with crawlkit (or anything else)
// can be tested for coverage, politeness and robots compliance without the
// network.
package crawlkit
