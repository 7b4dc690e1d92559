package crawlkit

import (
	"context"
	"net/http"
	"net/url"

	"github.com/crawlkit/crawlkit/frontier"
	"github.com/crawlkit/crawlkit/llmstxt"
	"github.com/crawlkit/crawlkit/urlnorm"
)

// addLLMsTxtSeeds queues the links of each seed origin's /llms.txt
// (https://llmstxt.org), as addSitemapSeeds queues sitemaps' pages: a site
// lists there the pages it wants language models to read, often Markdown
// versions beside the HTML. The file is fetched like a sitemap, after
// robots.txt allows it; a missing one is normal and said at Debug.
func (cr *Crawler) addLLMsTxtSeeds(ctx context.Context) error {
	done := map[string]bool{}
	var entries []frontier.Entry
	var keys []uint64
	for _, s := range cr.seeds {
		origin := (&url.URL{Scheme: s.Scheme, Host: s.Host}).String()
		if done[origin] {
			continue
		}
		done[origin] = true
		fileURL := origin + "/llms.txt"
		if why, _ := cr.robotsVerdict(ctx, fileURL, urlnorm.Host(s)); why != reasonNone {
			cr.cfg.Logger.Info("llms.txt not fetched", "url", fileURL, "reason", why.String())
			continue
		}
		resp, err := cr.sitemapFetcher.Fetch(ctx, fileURL)
		if err != nil {
			cr.cfg.Logger.Warn("llms.txt skipped", "url", fileURL, "err", err)
			continue
		}
		if resp.StatusCode != http.StatusOK {
			cr.cfg.Logger.Debug("no llms.txt", "url", fileURL, "status", resp.StatusCode)
			continue
		}
		if resp.Truncated {
			cr.cfg.Logger.Warn("llms.txt cut at Config.MaxMediaBytes; the links after the cut are not queued", "url", fileURL, "bytes", len(resp.Body))
		}
		base, _ := url.Parse(fileURL)
		for _, l := range llmstxt.Parse(resp.Body).Links {
			link := Link{Raw: l.URL, Text: l.Title}
			ref, err := url.Parse(l.URL)
			if err == nil {
				link.URL, err = urlnorm.Normalize(base.ResolveReference(ref).String())
			}
			if err != nil {
				cr.reject(&link, ReasonInvalidURL, err.Error())
				continue
			}
			if e, key, ok := cr.admitURL(link.URL, fileURL, 0, &link); ok {
				entries = append(entries, e)
				keys = append(keys, key)
			}
		}
	}
	return cr.enqueue(entries, keys)
}
