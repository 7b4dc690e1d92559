package crawlkit

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"time"

	"github.com/crawlkit/crawlkit/fetch"
	"github.com/crawlkit/crawlkit/httpcache"
)

// The development cache (Config.Cache): a page request is answered from
// the cache when its entry is fresh, without a request; otherwise it is
// sent conditional on the entry's validators, and a 304 serves the stored
// body. Either way the page then goes on as if fetched: the gate (robots.txt)
// judged its URL before, and the Handler and Sink see it after.

// doFetch sends req through f, or answers it from Config.Cache.
func (cr *Crawler) doFetch(ctx context.Context, f *fetch.Fetcher, req *fetch.Request) (*fetch.Response, error) {
	c := cr.cfg.Cache
	if c == nil || req.Method != "" || !req.Validators.IsZero() {
		return f.Do(ctx, req)
	}
	e, ok := c.Get(req.URL)
	if ok && c.Fresh(e) {
		cr.stats.cacheHits.Add(1)
		return cachedResponse(e, nil), nil
	}
	if ok {
		v := e.Validators()
		req.Validators = fetch.Validators{ETag: v.ETag, LastModified: v.LastModified}
	}
	resp, err := f.Do(ctx, req)
	switch {
	case ok && errors.Is(err, fetch.ErrNotModified) && resp != nil:
		e.Revalidated(resp.Header, cr.cfg.Now())
		cr.cachePut(e)
		cr.stats.cacheHits.Add(1)
		return cachedResponse(e, resp), nil
	case err == nil && !resp.Truncated:
		cr.cachePut(cacheEntry(req.URL, resp, cr.cfg.Now()))
	}
	return resp, err
}

// cachePut stores e, logging a failure.
func (cr *Crawler) cachePut(e *httpcache.Entry) {
	if _, err := cr.cfg.Cache.Put(e); err != nil {
		cr.cfg.Logger.Warn("storing a response in Config.Cache", "url", e.URL, "err", err)
	}
}

// cacheEntry is resp, an answer to a request for u, as a cache entry.
func cacheEntry(u string, resp *fetch.Response, now time.Time) *httpcache.Entry {
	e := &httpcache.Entry{URL: u, FinalURL: resp.FinalURL.String(), StatusCode: resp.StatusCode, Header: resp.Header,
		Body: resp.Body, Stored: now}
	for _, h := range resp.Redirects {
		e.Redirects = append(e.Redirects, httpcache.Hop{URL: h.URL.String(), Status: h.Status, Header: h.Header})
	}
	return e
}

// cachedResponse is e as the fetcher's Response. A revalidation's 304,
// rev, lends it its request's timing, address and header; a fresh hit has
// none (no request was sent).
func cachedResponse(e *httpcache.Entry, rev *fetch.Response) *fetch.Response {
	r := &fetch.Response{StatusCode: e.StatusCode, Header: e.Header.Clone(), Body: e.Body}
	r.URL, _ = url.Parse(e.URL)
	r.FinalURL = r.URL
	if fu, err := url.Parse(e.FinalURL); err == nil && e.FinalURL != "" {
		r.FinalURL = fu
	}
	for _, h := range e.Redirects {
		hu, err := url.Parse(h.URL)
		if err != nil {
			continue
		}
		r.Redirects = append(r.Redirects, fetch.Hop{URL: hu, Status: h.Status, Header: h.Header})
	}
	declared, _, _ := fetch.ParseContentType(e.Header.Get("Content-Type"))
	r.DeclaredType = declared
	r.ContentType, r.Charset, r.Sniffed = fetch.SniffContentType(e.Header.Get("Content-Type"), e.Body)
	if rev != nil {
		r.Proto, r.Timing, r.RemoteAddr, r.RequestHeader, r.WireBytes = rev.Proto, rev.Timing, rev.RemoteAddr, rev.RequestHeader, rev.WireBytes
	}
	if r.Header == nil {
		r.Header = http.Header{}
	}
	return r
}
