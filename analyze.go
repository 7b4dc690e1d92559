package crawlkit

import (
	"path"

	"github.com/crawlkit/crawlkit/extract"
	"github.com/crawlkit/crawlkit/simhash"
	"github.com/crawlkit/crawlkit/trap"
	"github.com/crawlkit/crawlkit/urlnorm"
)

// Stage 4 of the path of a URL: analyze. A fetched HTML page's links, text
// and metadata are extracted, its text fingerprinted and compared with the
// pages before it, and the trap detector told what it served.

// isPageKind reports links that lead to pages: the crawl follows them.
func isPageKind(k extract.Kind) bool {
	switch k {
	case extract.KindA, extract.KindArea, extract.KindIframe, extract.KindFrame, extract.KindMetaRefresh:
		return true
	}
	return false
}

// isMediaKind reports links to images, video, audio and embedded
// documents: fetched only for Config.MediaTypes.
func isMediaKind(k extract.Kind) bool {
	switch k {
	case extract.KindImg, extract.KindSource, extract.KindMedia:
		return true
	}
	return false
}

func isHTML(contentType string) bool {
	return contentType == "text/html" || contentType == "application/xhtml+xml"
}

// wantMedia reports whether a media body of type ct is one the user asked
// for.
func (cr *Crawler) wantMedia(ct string) bool {
	for _, pattern := range cr.cfg.MediaTypes {
		if ok, _ := path.Match(pattern, ct); ok {
			return true
		}
	}
	return false
}

// analyze extracts the page's links, text and metadata, fingerprints it and
// checks for near-duplicates. It returns why the page's links must not be
// followed, if they must not: the trap detector stopped its pattern or
// host (ReasonTrapStopped), or it is a near-duplicate and
// Config.SkipDuplicateLinks is set (ReasonNearDuplicate).
//
// A URL's content is indexed and reported to the trap detector once per
// Run, at its first fetch with text: the detector counts each report as
// another URL, so a page fetched again (Recrawl, a retry after a Handler
// error, a lease that ran out) would count as a repeat of itself. The
// analyzed set tells a refetch (up to its false-positive rate, 10^-4, which
// makes that share of first fetches go unindexed and unreported). A refetch's links are judged
// one by one, as every link is, but not stopped as a whole by a verdict on
// its own pattern. A refetch is still compared with the index, but never
// with its own entry, and adds none: the index keeps the URL's first
// fingerprint, so it does not grow with refetches.
func (cr *Crawler) analyze(p *Page) (stopLinks Reason) {
	cr.extractPage(p)
	if cr.index == nil || p.Text == "" {
		return reasonNone
	}
	p.Fingerprint = simhash.FingerprintPage(p.Title, p.Text)
	id := urlnorm.Key(p.URL)
	refetch, _ := cr.analyzed.TestAndAddKey(id)
	matches, err := cr.index.AppendNearErr(nil, p.Fingerprint)
	if err != nil {
		cr.cfg.Logger.Warn("fingerprint index", "url", p.URL, "err", err)
	}
	var best *simhash.Match
	indexed := false // the index holds this URL's content already
	for i, m := range matches {
		switch {
		case m.ID == id:
			indexed = true
		case best == nil || m.Distance < best.Distance:
			best = &matches[i]
		}
	}
	switch {
	case best != nil:
		p.DuplicateOf = cr.nameOf(best.ID)
		p.Distance = best.Distance
		cr.stats.duplicates.Add(1)
	case !refetch:
		// A first fetch whose own entry is in the index already (from an
		// earlier Run on this DataDir, or another process sharing the
		// FingerprintStore) keeps that entry.
		if !indexed {
			if err := cr.index.Add(p.Fingerprint, id); err != nil {
				cr.cfg.Logger.Warn("fingerprint index", "err", err)
			}
		}
		cr.rememberName(id, p.URL)
	}
	if !refetch {
		links := make([]string, 0, len(p.Links))
		for _, l := range p.Links {
			if l.URL != "" {
				links = append(links, l.URL)
			}
		}
		if v := cr.traps.ObservePage(trap.Page{URL: p.URL, Fingerprint: p.Fingerprint, Links: links}); v.Rejected() {
			cr.trapStopped(p.URL, v)
			return ReasonTrapStopped
		}
	}
	if p.DuplicateOf != "" && cr.cfg.SkipDuplicateLinks {
		return ReasonNearDuplicate
	}
	return reasonNone
}

// rememberName records the URL of the page indexed under id.
func (cr *Crawler) rememberName(id uint64, u string) {
	if cr.names != nil {
		if err := cr.names.Put(id, u); err != nil {
			cr.cfg.Logger.Warn("page name store", "err", err)
		}
		return
	}
	cr.dupMu.Lock()
	if len(cr.dupURLs) >= maxDuplicateURLs {
		for k := range cr.dupURLs { // drop an arbitrary entry
			delete(cr.dupURLs, k)
			break
		}
	}
	cr.dupURLs[id] = u
	cr.dupMu.Unlock()
}

// nameOf returns the URL of the page indexed under id, or "(forgotten)"
// when it is no longer known.
func (cr *Crawler) nameOf(id uint64) string {
	var name string
	if cr.names != nil {
		n, _, err := cr.names.Get(id)
		if err != nil {
			cr.cfg.Logger.Warn("page name store", "err", err)
		}
		name = n
	} else {
		cr.dupMu.Lock()
		name = cr.dupURLs[id]
		cr.dupMu.Unlock()
	}
	if name == "" {
		return "(forgotten)"
	}
	return name
}

// extractPage fills p's links, text and metadata from its HTML body. Links
// are normalized here; one that does not normalize keeps an empty URL and
// says why in Rejected.
func (cr *Crawler) extractPage(p *Page) {
	doc, err := cr.extractor.ExtractBytes(p.Body, p.FinalURL, p.Header)
	if doc == nil {
		cr.cfg.Logger.Warn("extracting links", "url", p.FinalURL, "err", err)
		return
	}
	if doc.LinksTruncated {
		cr.stats.linksTruncated.Add(1)
		cr.cfg.Logger.Info("page has more links than Config.MaxLinksPerPage; the rest are not followed", "url", p.FinalURL, "max", cr.cfg.MaxLinksPerPage)
	}
	// A token-size error still returns what was read before it.
	p.Title, p.Description, p.Language = doc.Title, doc.Description, doc.Language
	p.Canonical, p.Text = doc.Canonical, doc.Text
	p.Noindex, p.Nofollow = doc.Robots.Noindex, doc.Robots.Nofollow
	p.Links = make([]Link, len(doc.Links))
	for i, dl := range doc.Links {
		l := Link{Raw: dl.Raw, Kind: dl.Kind, Text: dl.Text, Rel: dl.Rel, Hreflang: dl.Hreflang,
			Nofollow: !dl.Follow && dl.Kind != extract.KindForm}
		if n, err := urlnorm.Normalize(dl.URL); err == nil {
			l.URL = n
		} else {
			l.Rejected = err.Error()
		}
		p.Links[i] = l
	}
}
