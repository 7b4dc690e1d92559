package main

import (
	"bytes"
	"net/url"
	"strings"

	"golang.org/x/net/html"
)

// recordLinks sets page id's links to the distinct pages of the web its
// <a href> elements name (fragment-only hrefs aside), in document order, as an HTML5 parser (the one
// goquery, and so colly and gocrawl, use) reads doc; the ground truth is
// computed from them.
func (s *site) recordLinks(id int, doc []byte) {
	p := &s.pages[id]
	p.links = p.links[:0]
	root, err := html.Parse(bytes.NewReader(doc))
	if err != nil {
		return
	}
	base, _ := url.Parse("https://" + s.hosts[p.host].name + p.path)
	seen := map[int]bool{}
	for n := range root.Descendants() {
		if n.Type != html.ElementNode || n.Data != "a" {
			continue
		}
		for _, a := range n.Attr {
			if a.Key != "href" || strings.HasPrefix(strings.TrimSpace(a.Val), "#") {
				continue
			}
			u, err := base.Parse(a.Val)
			if err != nil || u.Scheme != "https" {
				continue
			}
			if t := s.lookup(u.String()); t >= 0 && !seen[t] {
				seen[t] = true
				p.links = append(p.links, int32(t))
			}
		}
	}
}
