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
// Input, elements, output and links are bounded (see the constants), and
// nesting by the HTML parser (ErrTooDeep), so a hostile page costs at most
// a few times a large real one.
package markdown

import (
	"bytes"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	readability "codeberg.org/readeck/go-readability/v2"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/crawlkit/crawlkit/urlnorm"
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
	// ErrTooDeep reports a page nesting elements deeper than the HTML
	// parser (golang.org/x/net/html) holds: 512 open elements.
	ErrTooDeep = errors.New("markdown: page nests elements too deeply")
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
		// The parser's one error on a byte slice: too deep a nesting.
		return nil, fmt.Errorf("%w: %v", ErrTooDeep, err)
	}
	if countElements(root) > MaxElements {
		return nil, ErrTooManyElements
	}
	base = documentBase(root, base)
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

// countElements counts the elements under root, without recursion.
func countElements(root *html.Node) int {
	n := 0
	stack := []*html.Node{root}
	for len(stack) > 0 {
		m := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if m.Type == html.ElementNode {
			n++
		}
		for c := m.FirstChild; c != nil; c = c.NextSibling {
			stack = append(stack, c)
		}
	}
	return n
}

// documentBase returns the document's base URL: the first <base> element
// with an href, resolved against the page URL, else the page URL (HTML,
// "document base URL"). Templates hold no <base> the document uses.
func documentBase(root *html.Node, page *url.URL) *url.URL {
	stack := []*html.Node{root}
	for len(stack) > 0 {
		m := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if m.Type == html.ElementNode && m.DataAtom == atom.Template {
			continue
		}
		if m.Type == html.ElementNode && m.DataAtom == atom.Base {
			for _, a := range m.Attr {
				if a.Namespace == "" && a.Key == "href" {
					u, err := urlnorm.Resolve(page, strings.TrimSpace(a.Val))
					if err != nil || u.Scheme != "http" && u.Scheme != "https" {
						return page
					}
					return u
				}
			}
		}
		for c := m.LastChild; c != nil; c = c.PrevSibling {
			stack = append(stack, c)
		}
	}
	return page
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
