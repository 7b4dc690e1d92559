package crawlkit

import (
	"bytes"
	"errors"
	"strings"
	"sync"

	"github.com/PuerkitoBio/goquery"

	"github.com/crawlkit/crawlkit/extract"
)

// A page's document for CSS selection (goquery, the Go ecosystem's jQuery-
// like API over golang.org/x/net/html). It is parsed on the first call of
// Page.HTML, Find or Each, once, from the body converted to UTF-8 by the
// charset the page declares; a Handler that never asks pays nothing (the
// Crawler's own link and text extraction does not build a tree). Asking
// costs about three times that extraction's CPU and 14 times its
// allocations on a 20 KB page (BenchmarkPageHTML).

// ErrNotHTML is returned by Page.HTML for a page that is not HTML or XHTML
// (a media resource, a PDF, JSON): there is no document to select in.
var ErrNotHTML = errors.New("crawlkit: the page is not HTML")

// pageDoc holds what the Crawler keeps with a Page for its Handler: the
// parsed document, and the URLs the Handler enqueued.
type pageDoc struct {
	once sync.Once
	doc  *goquery.Document
	err  error

	mu    sync.Mutex
	added []enqueued
}

// HTML returns the page's parsed document, parsing it on the first call.
// Several Handlers' goroutines may call it at once. The document is the
// page's own: selections may be kept, and modifying the tree affects
// later calls.
func (p *Page) HTML() (*goquery.Document, error) {
	if p.doc == nil {
		// A Page the caller built: parse each time.
		return parseHTML(p)
	}
	p.doc.once.Do(func() { p.doc.doc, p.doc.err = parseHTML(p) })
	return p.doc.doc, p.doc.err
}

// htmlUTF8 returns the body of an HTML page converted to UTF-8 by its
// declared charset, or ErrNotHTML; Page.HTML and Page.Markdown read it.
func htmlUTF8(p *Page) ([]byte, error) {
	if p.Media || p.ContentType != "" && p.ContentType != "text/html" && p.ContentType != "application/xhtml+xml" {
		return nil, ErrNotHTML
	}
	ct := p.ContentType
	if p.Header != nil && strings.Contains(p.Header.Get("Content-Type"), "charset") {
		ct = p.Header.Get("Content-Type")
	}
	body, _ := extract.UTF8(p.Body, ct)
	return body, nil
}

// baseURL is the URL relative references of the page resolve against:
// FinalURL, or URL for a Page built without one.
func (p *Page) baseURL() string {
	if p.FinalURL != "" {
		return p.FinalURL
	}
	return p.URL
}

func parseHTML(p *Page) (*goquery.Document, error) {
	body, err := htmlUTF8(p)
	if err != nil {
		return nil, err
	}
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	if u := p.finalURL; u != nil {
		doc.Url = u
	}
	return doc, nil
}

// Find returns the elements matching the CSS selector (an empty selection
// when the page is not HTML). It panics on an invalid selector, as
// goquery's Find does; check selectors with cascadia.Compile when they come
// from users.
func (p *Page) Find(selector string) *goquery.Selection {
	doc, err := p.HTML()
	if err != nil {
		return &goquery.Selection{}
	}
	return doc.Find(selector)
}

// Each calls fn for each element matching the CSS selector, in document
// order, the short form of colly's OnHTML: p.Each("div.product", func(_
// int, s *goquery.Selection) { name := s.Find("h2").Text() }).
func (p *Page) Each(selector string, fn func(i int, s *goquery.Selection)) {
	p.Find(selector).Each(fn)
}
