// Package markdown turns a page into its main content as Markdown: the
// article without the navigation, advertising and boilerplate around it,
// with its title, byline and date, in the form a language model or a
// search index reads best.
//
// The main content is found by go-readability (codeberg.org/readeck/
// go-readability/v2), a port of Mozilla's Readability.js, the algorithm of
// Firefox's Reader View. It was chosen by measurement over go-trafilatura
// and html-to-markdown (BENCHMARKS.md, "Main content and Markdown"): its
// F1 on the article-extraction benchmark clears 0.95 at two thirds of
// go-trafilatura's CPU, and, unlike go-trafilatura, importing it costs
// nothing at program start. The Markdown is written by this package
// (CommonMark, https://spec.commonmark.org/0.31.2/) because links are
// numbered references ("[text][1]" and a list at the end), which keeps the
// prose readable and the URLs in one place.
//
// Input, nesting, output and links are bounded (see the constants), so a
// hostile page costs at most a few times a large real one.
package markdown

import (
	"bytes"
	"errors"
	"net/url"
	"time"
	"unicode/utf8"

	readability "codeberg.org/readeck/go-readability/v2"
	"golang.org/x/net/html"
)

// Limits. Input past MaxInputBytes is cut off before parsing, as a
// truncated download would be; HTML parses it all the same.
const (
	// MaxInputBytes bounds the HTML read. Real article pages are rarely
	// above 1.5 MB.
	MaxInputBytes = 4 << 20
	// MaxElements bounds the elements handed to the extractor, whose cost
	// grows faster than linearly in them; real pages have a few thousand.
	MaxElements = 100_000
	// MaxDepth bounds element nesting: deeper elements are dropped. 512 is
	// the depth at which Blink stops nesting elements too.
	MaxDepth = 512
	// MaxMarkdownBytes bounds Document.Markdown before the reference list;
	// the text stops at a block boundary past it.
	MaxMarkdownBytes = 1 << 20
	// MaxLinks bounds the reference list; further links are kept as text.
	MaxLinks = 1000
	// MaxURLBytes bounds a link's URL; a longer one is kept as text.
	MaxURLBytes = 2048
)

// Sentinel errors, matchable with errors.Is.
var (
	// ErrInvalidPageURL reports a page URL that is not an absolute http(s)
	// URL: links could not be resolved against it.
	ErrInvalidPageURL = errors.New("markdown: page URL is not an absolute http(s) URL")
	// ErrTooManyElements reports a page with more than MaxElements
	// elements.
	ErrTooManyElements = errors.New("markdown: page has too many elements")
)

// Document is a page's main content.
type Document struct {
	// Title is the article's title (from its metadata or headings).
	Title string
	// Byline names the author, when the page says.
	Byline string
	// Date is when the article was published, the zero Time if unknown.
	Date time.Time
	// Markdown is the main content as CommonMark. Links are numbered
	// references, "[text][1]", defined in a list at the end ("[1]: URL")
	// in the order of Links. Images are left out: their alt text is not
	// text a reader of the page sees.
	Markdown string
	// Links are the absolute URLs of the references, Links[i] being
	// reference i+1.
	Links []string
	// Tokens estimates the language-model tokens of Markdown as its
	// characters (runes) divided by four, rounded up: OpenAI's rule of
	// thumb for English text with its tokenizers. Prose in other
	// languages and code take more tokens per character.
	Tokens int
	// Truncated reports that the input or the Markdown reached its limit.
	Truncated bool
}

// Convert extracts the main content of a page, given as HTML already
// decoded to UTF-8 (extract.UTF8 does that), and returns it as Markdown.
// pageURL, the page's absolute http(s) URL, resolves relative links (the
// page's <base> is honoured). A page without recognisable main content
// gives a Document with an empty Markdown, not an error.
func Convert(body []byte, pageURL string) (*Document, error) {
	base, err := url.Parse(pageURL)
	if err != nil || base.Host == "" || base.Scheme != "http" && base.Scheme != "https" {
		return nil, ErrInvalidPageURL
	}
	d := &Document{}
	if len(body) > MaxInputBytes {
		body = cutRune(body[:MaxInputBytes])
		d.Truncated = true
	}
	root, err := html.Parse(bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	if countAndPrune(root) > MaxElements {
		return nil, ErrTooManyElements
	}
	p := readability.NewParser()
	art, err := p.ParseAndMutate(root, base)
	if err != nil {
		return nil, err
	}
	d.Title, d.Byline = art.Title(), art.Byline()
	if t, err := art.PublishedTime(); err == nil {
		d.Date = t
	}
	if art.Node != nil {
		r := newRenderer(base)
		r.block(art.Node, 0)
		d.Markdown, d.Links = r.finish()
		d.Truncated = d.Truncated || r.full
	}
	d.Tokens = (utf8.RuneCountInString(d.Markdown) + 3) / 4
	return d, nil
}

// countAndPrune drops the elements nested deeper than MaxDepth and counts
// the rest, without recursion.
func countAndPrune(root *html.Node) int {
	type item struct {
		n     *html.Node
		depth int
	}
	n := 0
	stack := []item{{root, 0}}
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if it.n.Type == html.ElementNode {
			n++
		}
		if it.depth >= MaxDepth {
			for c := it.n.FirstChild; c != nil; c = it.n.FirstChild {
				it.n.RemoveChild(c)
			}
			continue
		}
		for c := it.n.FirstChild; c != nil; c = c.NextSibling {
			stack = append(stack, item{c, it.depth + 1})
		}
	}
	return n
}

// cutRune drops a rune cut in two at the end of b.
func cutRune(b []byte) []byte {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return b[:i]
			}
			break
		}
	}
	return b
}
