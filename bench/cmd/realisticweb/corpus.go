package main

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// A corpus is the material pages are built from: real HTML pages, cut into
// their heads (everything up to and including the <body> start tag) and one
// stream of body segments, the bodies of all pages one after the other.
// Each <a href> value of the originals is a slot, which a page fills with a
// link into the synthetic web; everything else is kept, except what would
// point a crawler back at the real web (see clean).
type corpus struct {
	heads [][]segment
	body  []segment
	// bodyStarts are the indexes in body where each original's body
	// begins; pages start their body at one of them or anywhere else.
	bodyStarts []int
	// bodyBytes is the length of body's literals.
	bodyBytes int
}

// A segment is literal HTML, or a link slot (lit empty, slot true).
type segment struct {
	lit  string
	slot bool
}

// loadCorpus reads every *.html.gz file of dir.
func loadCorpus(dir string) (*corpus, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.html.gz"))
	if err != nil {
		return nil, err
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("no *.html.gz in %s", dir)
	}
	sort.Strings(names)
	c := &corpus{}
	for _, name := range names {
		raw, err := readGzip(name)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		head, body, ok := splitPage(clean(raw))
		if !ok {
			continue // no <body>: not a page to build from
		}
		c.heads = append(c.heads, segments(head))
		c.bodyStarts = append(c.bodyStarts, len(c.body))
		for _, s := range segments(body) {
			c.body = append(c.body, s)
			c.bodyBytes += len(s.lit)
		}
	}
	if len(c.heads) == 0 {
		return nil, fmt.Errorf("no page with a <body> in %s", dir)
	}
	return c, nil
}

func readGzip(name string) (string, error) {
	f, err := os.Open(name)
	if err != nil {
		return "", err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return "", err
	}
	var b bytes.Buffer
	if _, err := io.Copy(&b, zr); err != nil {
		return "", err
	}
	return b.String(), nil
}

var (
	// Tags that could send a crawler elsewhere than the page's links, or
	// stop it from following them: a base URL, canonical and alternate
	// links, refreshes, meta robots.
	dropTag = regexp.MustCompile(`(?is)<base\b[^>]*>|<link\b[^>]*>|<meta\b[^>]*(http-equiv\s*=\s*["']?refresh|name\s*=\s*["']?robots)[^>]*>`)
	// Absolute and scheme-relative URLs left in attributes and scripts
	// (images, scripts, JSON) are pointed at a host of the synthetic web
	// that only serves 404s.
	absURL = regexp.MustCompile(`(?i)https?:(\\?/){2}[^\s"'<>\\)]+`)
	relURL = regexp.MustCompile(`(?i)(["'(=])//[a-z0-9-]+(\.[a-z0-9-]+)+`)
	// rel=nofollow on links is removed, so that every crawler under test
	// reads the same links (the peers follow nofollow links, crawlkit does
	// not by default).
	relAttr = regexp.MustCompile(`(?is)\srel\s*=\s*("[^"]*"|'[^']*'|[^\s>]+)`)
	aTag    = regexp.MustCompile(`(?is)<a\s[^>]*>`)
	hrefVal = regexp.MustCompile(`(?is)\shref\s*=\s*("[^"]*"|'[^']*'|[^\s>]+)`)
	bodyTag = regexp.MustCompile(`(?is)<body\b[^>]*>`)
	bodyEnd = regexp.MustCompile(`(?is)</body\s*>`)
)

// assetHost is where the URLs of images, scripts and other non-page
// references point; it answers 404.
const assetHost = "cdn-static.test"

// clean removes what would lead a crawler out of the synthetic web.
func clean(page string) string {
	page = dropTag.ReplaceAllString(page, "")
	page = aTag.ReplaceAllStringFunc(page, func(tag string) string {
		return relAttr.ReplaceAllString(tag, "")
	})
	return page
}

// splitPage splits a page into its head (through the <body> tag) and its
// body (up to </body>).
func splitPage(page string) (head, body string, ok bool) {
	loc := bodyTag.FindStringIndex(page)
	if loc == nil {
		return "", "", false
	}
	head, body = page[:loc[1]], page[loc[1]:]
	if end := bodyEnd.FindStringIndex(body); end != nil {
		body = body[:end[0]]
	}
	return head, body, true
}

// segments cuts html at the href values of its <a> tags that name another
// document (not "#…", javascript:, mailto:, tel:), which become slots, and
// neutralizes the other URLs in the literals.
func segments(html string) []segment {
	var out []segment
	lit := func(s string) {
		if s != "" {
			out = append(out, segment{lit: neutralize(s)})
		}
	}
	last := 0
	for _, t := range aTag.FindAllStringIndex(html, -1) {
		tag := html[t[0]:t[1]]
		h := hrefVal.FindStringSubmatchIndex(tag)
		if h == nil {
			continue
		}
		vs, ve := h[2], h[3]
		v := tag[vs:ve]
		quote := ""
		if v != "" && (v[0] == '"' || v[0] == '\'') {
			quote = v[:1]
			v = v[1 : len(v)-1]
		}
		lv := strings.ToLower(strings.TrimSpace(v))
		if lv == "" || strings.HasPrefix(lv, "#") || strings.HasPrefix(lv, "javascript:") ||
			strings.HasPrefix(lv, "mailto:") || strings.HasPrefix(lv, "tel:") {
			continue
		}
		// The slot replaces the value, quotes included; the filler
		// writes it double-quoted.
		_ = quote
		lit(html[last : t[0]+vs])
		out = append(out, segment{slot: true})
		last = t[0] + ve
	}
	lit(html[last:])
	return out
}

func neutralize(s string) string {
	s = absURL.ReplaceAllString(s, "https://"+assetHost+"/a")
	return relURL.ReplaceAllString(s, "${1}//"+assetHost)
}
