package crawlkit

import (
	"context"
	"errors"
	"net/url"
	"sync"
	"sync/atomic"

	"github.com/crawlkit/crawlkit/extract"
	"github.com/crawlkit/crawlkit/fetch"
	"github.com/crawlkit/crawlkit/render"
	"github.com/crawlkit/crawlkit/urlnorm"
)

// DefaultRenderConcurrency is RenderConfig.Concurrency's default.
const DefaultRenderConcurrency = 2

// RenderConfig turns on JavaScript rendering for the pages that need it.
// After a page is fetched and extracted, Route decides from its HTML whether
// its links probably exist only after its scripts run (see
// render.Heuristic); only those pages go to the Renderer, at most
// Concurrency at once, and the rendered DOM's links, text, title and robots
// directives replace the ones extracted from the plain HTML. Page.Body stays
// the HTML as fetched.
//
// Every request the browser makes goes through a fetcher the crawl sets up
// for that render: the address guard (Config.AllowPrivate), robots.txt
// (unless Config.DangerouslyIgnoreRobotsTxt) and the crawl's per-host
// politeness apply to it, so a page's scripts and API calls count against
// its host's budget like any fetch. The crawl's scope does not apply to
// subresources: a page may load its scripts from another host that
// robots.txt allows. Refused requests are logged (the address guard's as
// warnings) and reported to OnRender.
//
// A RenderConfig may be shared by several Crawlers; they then share its
// concurrency limit and its Stats.
type RenderConfig struct {
	// Renderer renders the routed pages; required. A *chromium.Browser (package render/chromium) is
	// the usual one: give it the same AllowCIDRs as Config.AllowPrivate.
	// The caller closes it after Run (like Config.Queue), so one browser
	// can serve several crawls.
	Renderer render.Renderer
	// Route decides which pages are rendered; nil uses render.Heuristic's
	// defaults.
	Route *render.Heuristic
	// Concurrency is the most pages rendered at once, apart from
	// Config.Workers: a worker whose page is routed waits for a slot
	// (default DefaultRenderConcurrency).
	Concurrency int
	// IgnoreNavigations drops the URLs a page's scripts tried to navigate
	// to (location.href = …); by default they are followed like links.
	IgnoreNavigations bool
	// OnRender, if set, is called after every render with the page (its
	// links already replaced) and the result, or the error that left the
	// page as fetched. It runs on the worker's goroutine.
	OnRender func(p *Page, res *render.Result, err error)

	once  sync.Once
	slots chan struct{}
	stats renderCounters
}

// RenderStats counts what the rendering did.
type RenderStats struct {
	// Routed counts pages the heuristic sent to the renderer; Rendered
	// those rendered, Failed those whose render failed (they keep the
	// links of their HTML).
	Routed, Rendered, Failed int64
	// Requests counts the browser's subresource requests; Blocked the
	// requests refused (guard, robots.txt, politeness, caps, methods,
	// navigations), BlockedAddress those the address guard refused.
	Requests, Blocked, BlockedAddress int64
}

type renderCounters struct {
	routed, rendered, failed          atomic.Int64
	requests, blocked, blockedAddress atomic.Int64
}

// Stats returns what the rendering did so far.
func (rc *RenderConfig) Stats() RenderStats {
	return RenderStats{
		Routed: rc.stats.routed.Load(), Rendered: rc.stats.rendered.Load(), Failed: rc.stats.failed.Load(),
		Requests: rc.stats.requests.Load(), Blocked: rc.stats.blocked.Load(), BlockedAddress: rc.stats.blockedAddress.Load(),
	}
}

// renderRouted renders p if Config.Render routes it and replaces its links,
// text and metadata with the rendered DOM's. Failures leave p as fetched.
func (cr *Crawler) renderRouted(ctx context.Context, p *Page) {
	rc := cr.cfg.Render
	if rc == nil || rc.Renderer == nil || p.Media {
		return
	}
	if d := rc.Route.Decide(p.Body); !d.Render {
		return
	}
	rc.once.Do(func() {
		n := rc.Concurrency
		if n <= 0 {
			n = DefaultRenderConcurrency
		}
		rc.slots = make(chan struct{}, n)
	})
	rc.stats.routed.Add(1)
	select {
	case rc.slots <- struct{}{}:
	case <-ctx.Done():
		return
	}
	defer func() { <-rc.slots }()

	// The render's requests get a fetcher of their own, made and closed
	// here so that nothing outlives the render: it shares the crawl's
	// DNS cache and politeness, and checks robots.txt but not the crawl's
	// scope.
	f, err := fetch.New(fetch.Config{
		UserAgent:    cr.cfg.UserAgent,
		DialContext:  cr.cfg.DialContext,
		DNS:          cr.dns,
		AllowCIDRs:   cr.cfg.AllowPrivate,
		Politeness:   cr.fetcher.Politeness(),
		HostKey:      cr.politeKey,
		MaxBodyBytes: cr.cfg.MaxBodyBytes,
		Header:       cr.cfg.Header.Clone(),
		Check:        cr.renderCheck,
		MaxRetries:   -1,
		Proxy:        cr.cfg.Proxy,
		RootCAs:      cr.cfg.RootCAs,
	})
	if err != nil {
		cr.renderFailed(p, rc, err)
		return
	}
	defer f.Close()
	target := p.FinalURL
	if target == "" {
		target = p.URL
	}
	res, err := rc.Renderer.Render(ctx, &render.Request{URL: target, Body: p.Body, Header: p.Header, StatusCode: p.StatusCode, Fetcher: f})
	if err != nil || res == nil || res.Document == nil {
		if err == nil {
			err = errors.New("crawlkit: renderer returned no document")
		}
		cr.renderFailed(p, rc, err)
		return
	}
	rc.stats.rendered.Add(1)
	rc.stats.requests.Add(int64(res.Requests))
	rc.stats.blocked.Add(int64(res.BlockedTotal))
	for _, b := range res.Blocked {
		if b.Reason == render.ReasonAddress {
			rc.stats.blockedAddress.Add(1)
			cr.cfg.Logger.Warn("render: address guard refused a request of the page", "page", target, "url", b.URL, "err", b.Err)
		} else if b.Reason != render.ReasonNavigation {
			cr.cfg.Logger.Info("render: request refused", "page", target, "url", b.URL, "reason", string(b.Reason))
		}
	}
	cr.applyRendered(p, res, !rc.IgnoreNavigations)
	if rc.OnRender != nil {
		rc.OnRender(p, res, nil)
	}
}

func (cr *Crawler) renderFailed(p *Page, rc *RenderConfig, err error) {
	rc.stats.failed.Add(1)
	cr.cfg.Logger.Warn("render failed; the page keeps the links of its HTML", "url", p.URL, "err", err)
	if rc.OnRender != nil {
		rc.OnRender(p, nil, err)
	}
}

// renderCheck is the render fetcher's Check: robots.txt for every request
// of the browser (the crawl's scope is for pages, not subresources).
func (cr *Crawler) renderCheck(ctx context.Context, u *url.URL) error {
	if cr.cfg.DangerouslyIgnoreRobotsTxt {
		return nil
	}
	d, err := cr.robots.Allowed(ctx, cr.token, u.String())
	if err != nil {
		return err
	}
	if !d.Allowed {
		return errRobots
	}
	return nil
}

// applyRendered replaces p's extracted fields with the rendered DOM's, the
// way extractPage fills them from the HTML. A noindex or nofollow of the
// HTML as fetched stays in force.
func (cr *Crawler) applyRendered(p *Page, res *render.Result, navigations bool) {
	doc := res.Document
	if doc.Title != "" {
		p.Title = doc.Title
	}
	if doc.Description != "" {
		p.Description = doc.Description
	}
	if doc.Language != "" {
		p.Language = doc.Language
	}
	if doc.Canonical != "" {
		p.Canonical = doc.Canonical
	}
	p.Text = doc.Text
	p.Noindex = p.Noindex || doc.Robots.Noindex
	p.Nofollow = p.Nofollow || doc.Robots.Nofollow
	links := make([]Link, 0, len(doc.Links)+len(res.Navigations))
	for _, dl := range doc.Links {
		l := Link{Raw: dl.Raw, Kind: dl.Kind, Text: dl.Text, Rel: dl.Rel, Hreflang: dl.Hreflang,
			Nofollow: !dl.Follow && dl.Kind != extract.KindForm}
		if n, err := urlnorm.Normalize(dl.URL); err == nil {
			l.URL = n
		} else {
			l.Rejected = err.Error()
		}
		links = append(links, l)
	}
	if navigations {
		// A script's navigation is a redirect the page would have made:
		// followed like a meta refresh.
		for _, nav := range res.Navigations {
			l := Link{Raw: nav, Kind: extract.KindMetaRefresh}
			if n, err := urlnorm.Normalize(nav); err == nil {
				l.URL = n
			} else {
				l.Rejected = err.Error()
			}
			links = append(links, l)
		}
	}
	p.Links = links
}
