package crawlkit

import (
	"sync"

	"github.com/crawlkit/crawlkit/markdown"
)

// A page's main content as Markdown (package markdown: the article found
// by Readability's algorithm, links as numbered references). It is built
// on the first call of Page.Markdown, once; a crawl that never asks pays
// nothing. Asking costs about ten times the Crawler's own extraction pass
// (BenchmarkMarkdown beside BenchmarkExtract in package markdown; some
// 9 ms of CPU for a typical news page).

// pageMD holds a Page's Markdown once built.
type pageMD struct {
	once sync.Once
	doc  *markdown.Document
	err  error
}

// Markdown returns the page's main content as Markdown, with its title,
// byline, date and a token estimate, building it on the first call.
// Several Handlers' goroutines may call it at once and share the result,
// which they must not modify. It returns ErrNotHTML for a page that is not
// HTML or XHTML, and markdown's errors for pages past its limits.
func (p *Page) Markdown() (*markdown.Document, error) {
	if p.md == nil {
		// A Page the caller built: convert each time.
		return convertMarkdown(p)
	}
	p.md.once.Do(func() { p.md.doc, p.md.err = convertMarkdown(p) })
	return p.md.doc, p.md.err
}

func convertMarkdown(p *Page) (*markdown.Document, error) {
	body, err := htmlUTF8(p)
	if err != nil {
		return nil, err
	}
	return markdown.Convert(body, p.baseURL())
}
