package crawlkit

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"github.com/crawlkit/crawlkit/frontier"
	"github.com/crawlkit/crawlkit/sitemap"
	"github.com/crawlkit/crawlkit/trap"
	"github.com/crawlkit/crawlkit/urlnorm"
)

// Stage 1 of the path of a URL: admit. Seeds, sitemap entries, links and
// redirect targets are normalized and judged (depth, scope, trap rules,
// the seen set); a new URL is queued, and every other one is rejected with
// a Reason.

// Meta byte values stored with frontier entries.
const (
	metaPage  = 0
	metaMedia = 1
)

// followLinks admits the page's links to the frontier. It returns an error
// only when the frontier could not queue them.
func (cr *Crawler) followLinks(l *frontier.Lease, p *Page) error {
	nofollowPage := p.Nofollow && !cr.cfg.FollowNofollow
	var entries []frontier.Entry
	var keys []uint64
	for i := range p.Links {
		link := &p.Links[i]
		switch {
		case link.URL == "":
			cr.reject(link, ReasonInvalidURL, link.Rejected)
			continue
		case !isPageKind(link.Kind) && !isMediaKind(link.Kind):
			cr.reject(link, ReasonNotPageLink, "")
			continue
		case nofollowPage || (link.Nofollow && !cr.cfg.FollowNofollow):
			cr.reject(link, ReasonNofollow, "")
			continue
		case isMediaKind(link.Kind) && len(cr.cfg.MediaTypes) == 0:
			cr.reject(link, ReasonMedia, "")
			continue
		case link.Skip:
			cr.reject(link, ReasonSkipped, "")
			continue
		}
		e, key, ok := cr.admitURL(link.URL, l.URL, l.Depth+1, link)
		if !ok {
			continue
		}
		if isMediaKind(link.Kind) {
			e.Meta = []byte{metaMedia}
		}
		e.Priority = linkPriority(link.Priority)
		entries = append(entries, e)
		keys = append(keys, key)
	}
	return cr.enqueue(entries, keys)
}

// admitURL runs a URL through scope, depth, trap and seen checks. ok means
// it is new and should be queued; link.Followed and link.Rejected are set.
func (cr *Crawler) admitURL(raw, source string, depth int, link *Link) (frontier.Entry, uint64, bool) {
	if cr.cfg.MaxDepth > 0 && depth > cr.cfg.MaxDepth {
		cr.reject(link, ReasonDepth, "")
		return frontier.Entry{}, 0, false
	}
	// Most links of a crawl point to pages already seen: answer those
	// before parsing. Only URLs that passed the checks below are ever
	// recorded, so a seen URL is one that passed them.
	key := urlnorm.Key(raw)
	if seen, _ := cr.seen.ContainsKey(key); seen {
		link.Followed = true
		return frontier.Entry{}, 0, false
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		cr.reject(link, ReasonInvalidURL, "not an http or https URL")
		return frontier.Entry{}, 0, false
	}
	if !cr.scope.allows(u) {
		cr.reject(link, ReasonScope, "")
		return frontier.Entry{}, 0, false
	}
	if why := cr.filter.refuses(raw); why != "" {
		cr.filtered(raw, why)
		cr.reject(link, ReasonFilter, why)
		return frontier.Entry{}, 0, false
	}
	if v := cr.traps.JudgeAt(cr.cfg.Now(), trap.Candidate{URL: raw, Source: source, Depth: depth}); v.Rejected() {
		cr.trapStopped(raw, v)
		cr.reject(link, ReasonTrap, v.Reason)
		return frontier.Entry{}, 0, false
	}
	seen, err := cr.seen.TestAndAddKey(key)
	if err != nil {
		// Undecided: queue it. A URL queued twice is fetched twice; one
		// not queued would be lost without a word.
		cr.cfg.Logger.Warn("seen set lookup failed; queueing the URL, which may be fetched twice", "url", raw, "err", err)
	} else if seen {
		link.Followed = true
		return frontier.Entry{}, 0, false
	}
	link.Followed = true
	host := urlnorm.Host(u)
	cr.stats.hostSeen(host)
	cr.stats.discovered.Add(1)
	return frontier.Entry{URL: raw, Host: cr.politeKey(u), Depth: depth}, key, true
}

// enqueue queues admitted URLs durably, then records them in the seen
// store. The order matters for crash safety: a URL is claimed in the
// in-memory filter first, so two workers never queue it twice; it is
// recorded as seen on disk only after it is durably queued, so a crash in
// between can queue it again (a bounded duplicate) but never lose it.
//
// When the frontier refuses the batch, the URLs are already claimed in the
// filter, so a retry of their page would not offer them again: they wait in
// a pending list that every later enqueue, and the monitor, tries first,
// and the crawl does not end while it holds anything. The error is
// returned so the page is fetched again if the process dies meanwhile.
func (cr *Crawler) enqueue(entries []frontier.Entry, keys []uint64) error {
	cr.pendingMu.Lock()
	if len(cr.pending) > 0 {
		entries = append(cr.pending, entries...)
		keys = append(cr.pendingKeys, keys...)
		cr.pending, cr.pendingKeys = nil, nil
	}
	cr.pendingMu.Unlock()
	if len(entries) == 0 {
		return nil
	}
	if err := cr.front.Add(entries...); err != nil {
		cr.pendingMu.Lock()
		cr.pending = append(cr.pending, entries...)
		cr.pendingKeys = append(cr.pendingKeys, keys...)
		cr.pendingMu.Unlock()
		return err
	}
	// The seen keys are written without a sync of their own: the URLs are
	// durably queued already, and the next synced write to the DB makes
	// the keys durable too (for a page's links, its settlement a moment
	// later; for seeds and sitemap URLs, the next settlement of any page,
	// and a restart queues them again anyway). A crash before that can
	// queue a URL again (a duplicate fetch), never lose one.
	if cr.claims != nil {
		if err := cr.claims.durable(keys, true); err != nil {
			// The URLs are queued; a rediscovery after a restart may
			// queue them again, which costs a duplicate, not a loss.
			cr.cfg.Logger.Warn("seen store", "err", err)
		}
	}
	return nil
}

// hasPending reports whether admitted URLs wait for the frontier to take
// them.
func (cr *Crawler) hasPending() bool {
	cr.pendingMu.Lock()
	defer cr.pendingMu.Unlock()
	return len(cr.pending) > 0
}

// addSeeds queues the seeds (and, with SitemapSeeds, the pages their
// robots.txt sitemaps list, normalized like links).
func (cr *Crawler) addSeeds(ctx context.Context) error {
	var entries []frontier.Entry
	var keys []uint64
	for _, u := range cr.seeds {
		e, key, ok := cr.admitURL(u.String(), "", 0, &Link{})
		if ok {
			entries = append(entries, e)
			keys = append(keys, key)
		}
	}
	if err := cr.enqueue(entries, keys); err != nil {
		return err
	}
	if cr.cfg.LLMsTxtSeeds {
		if err := cr.addLLMsTxtSeeds(ctx); err != nil {
			return err
		}
	}
	if !cr.cfg.SitemapSeeds {
		return nil
	}
	return cr.addSitemapSeeds(ctx)
}

func (cr *Crawler) addSitemapSeeds(ctx context.Context) error {
	var sources []sitemap.Source
	for _, u := range cr.seeds {
		pol, err := cr.robots.Policy(ctx, u.String())
		if err != nil {
			continue
		}
		robotsURL := (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: "/robots.txt"}).String()
		sources = append(sources, sitemap.FromRobots(robotsURL, pol.Sitemaps())...)
	}
	if len(sources) == 0 {
		return nil
	}
	w := sitemap.Walker{
		Fetch: cr.fetchSitemap,
		// A sitemap's fetch may wait for its host's politeness delay,
		// up to MaxCrawlDelay, on top of the transfer.
		DocumentTimeout: sitemap.DefaultDocumentTimeout + 2*cr.cfg.MaxCrawlDelay,
		OnError: func(sitemapURL string, err error) {
			cr.cfg.Logger.Warn("sitemap skipped", "url", sitemapURL, "err", err)
		},
	}
	var entries []frontier.Entry
	var keys []uint64
	_, err := w.Walk(ctx, sources, func(_ string, e sitemap.Entry) error {
		// Sitemap URLs are not normalized: normalize them as links are,
		// so that the seen set and the frontier see one spelling. One
		// that does not normalize is dropped, as such a link is.
		n, err := urlnorm.Normalize(e.URL)
		if err != nil {
			cr.reject(&Link{Raw: e.URL}, ReasonInvalidURL, err.Error())
			return nil
		}
		fe, key, ok := cr.admitURL(n, "", 0, &Link{URL: n, Raw: e.URL})
		if ok {
			entries = append(entries, fe)
			keys = append(keys, key)
		}
		if len(entries) >= 1000 {
			if err := cr.enqueue(entries, keys); err != nil {
				return err
			}
			entries, keys = entries[:0], keys[:0]
		}
		return nil
	})
	if err != nil && ctx.Err() == nil {
		return fmt.Errorf("crawlkit: sitemap seeds: %w", err)
	}
	return cr.enqueue(entries, keys)
}

func (cr *Crawler) fetchSitemap(ctx context.Context, rawURL string) (io.ReadCloser, error) {
	resp, err := cr.sitemapFetcher.Fetch(ctx, rawURL)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, &sitemap.StatusError{URL: rawURL, StatusCode: resp.StatusCode}
	}
	if resp.Truncated {
		// Cut at MaxMediaBytes: the parser would read a clean end in the
		// middle of an entry, and a text sitemap's last URL would be a
		// prefix of the real one.
		return nil, fmt.Errorf("%w: %s is over MaxMediaBytes (%d)", sitemap.ErrTooLarge, rawURL, cr.cfg.MaxMediaBytes)
	}
	return io.NopCloser(bytes.NewReader(resp.Body)), nil
}
