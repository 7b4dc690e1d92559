package structured

import (
	"strings"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// MicrodataVisitsPerNode bounds the work of reading microdata: elements
// visited for properties and text values, per node of the document (plus a
// fixed allowance). A well-formed page needs one or two; itemref lets a
// page make every item crawl the same large subtree, and nested itemprop
// text makes text values overlap, so the work is capped, and what the cap
// cuts is reported with ErrLimit.
const MicrodataVisitsPerNode = 8

// microdata reads the top-level items (HTML §5.2 "Microdata", "top-level
// microdata items"). refs reports that some element has an itemref, which
// needs the document's IDs.
func (p *parser) microdata(doc *html.Node, tops []*html.Node, nodes int, refs bool) {
	m := &micro{p: p, budget: MicrodataVisitsPerNode*nodes + 1<<16}
	if refs {
		m.ids = map[string]*html.Node{}
		for n := doc; n != nil; {
			descend := true
			if n.Type == html.ElementNode {
				descend = n.DataAtom != atom.Template
				if id, ok := attr(n, "id"); ok && id != "" {
					if _, dup := m.ids[id]; !dup {
						m.ids[id] = n
					}
				}
			}
			n = next(n, doc, descend)
		}
	}
	for _, n := range tops {
		if it := m.item(n, nil); it != nil {
			p.data.Microdata = append(p.data.Microdata, it)
		}
	}
}

// micro reads a page's microdata items.
type micro struct {
	p      *parser
	ids    map[string]*html.Node // first element of each ID, when itemref is used
	budget int                   // element visits left
	spent  bool
}

// visit spends one unit of work; false when none is left.
func (m *micro) visit() bool {
	if m.budget <= 0 {
		if !m.spent {
			m.spent = true
			m.p.limit("MicrodataVisitsPerNode", MicrodataVisitsPerNode)
		}
		return false
	}
	m.budget--
	return true
}

// item reads the item of the itemscope element root; chain holds the
// items being read around it, to stop itemref cycles.
func (m *micro) item(root *html.Node, chain []*html.Node) *Item {
	p := m.p
	if len(chain) >= p.opts.MaxDepth {
		p.limit("MaxDepth", p.opts.MaxDepth)
		return nil
	}
	if !p.newItem() {
		return nil
	}
	it := &Item{}
	if t, ok := attr(root, "itemtype"); ok {
		for _, f := range strings.Fields(t) {
			it.Types = append(it.Types, p.str(f))
		}
	}
	if id, ok := attr(root, "itemid"); ok {
		it.ID = p.str(p.resolve(id))
	}
	chain = append(chain, root)
	for _, el := range m.properties(root) {
		names, _ := attr(el, "itemprop")
		fields := strings.Fields(names)
		if len(fields) == 0 {
			continue
		}
		v, ok := m.value(el, chain)
		if !ok {
			continue
		}
		for i, name := range fields {
			if !contains(fields[:i], name) {
				p.add(it, p.str(name), v)
			}
		}
	}
	return it
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// properties returns the elements holding root's properties (HTML §5.2.5
// "the properties of an item"): the descendants with itemprop, not looking
// inside nested items, then those of the elements root's itemref names.
// They are in tree order within each subtree; the spec sorts them all in
// tree order, which differs only when an itemref'd element precedes or
// interleaves with the item's own.
func (m *micro) properties(root *html.Node) []*html.Node {
	var out, stack []*html.Node
	var memory map[*html.Node]bool
	if ref, ok := attr(root, "itemref"); ok && m.ids != nil {
		memory = map[*html.Node]bool{root: true}
		fields := strings.Fields(ref)
		for i := len(fields) - 1; i >= 0; i-- {
			if el := m.ids[fields[i]]; el != nil {
				stack = append(stack, el)
			}
		}
	}
	stack = pushChildren(stack, root)
	for len(stack) > 0 {
		el := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if !m.visit() {
			break
		}
		if memory != nil {
			// An element reached twice (itemref to an ancestor, or to
			// an element already crawled) is a microdata error; skipped.
			if memory[el] {
				continue
			}
			memory[el] = true
		}
		if _, ok := attr(el, "itemprop"); ok {
			out = append(out, el)
		}
		if _, scope := attr(el, "itemscope"); !scope && el.DataAtom != atom.Template {
			stack = pushChildren(stack, el)
		}
	}
	return out
}

// pushChildren pushes n's child elements, last first, so that they pop in
// tree order.
func pushChildren(stack []*html.Node, n *html.Node) []*html.Node {
	for c := n.LastChild; c != nil; c = c.PrevSibling {
		if c.Type == html.ElementNode {
			stack = append(stack, c)
		}
	}
	return stack
}

// value returns the property value of el (HTML §5.2.4 "Values").
func (m *micro) value(el *html.Node, chain []*html.Node) (Value, bool) {
	p := m.p
	if _, ok := attr(el, "itemscope"); ok {
		for _, c := range chain {
			if c == el {
				// HTML §5.3.1: an item that contains itself is
				// written "ERROR".
				return Value{Kind: KindString, Text: "ERROR"}, true
			}
		}
		it := m.item(el, chain)
		return Value{Kind: KindItem, Item: it}, it != nil
	}
	urlAttr := func(key string) (Value, bool) {
		v, _ := attr(el, key)
		return Value{Kind: KindURL, Text: p.str(p.resolve(v))}, true
	}
	switch el.DataAtom {
	case atom.Meta:
		v, _ := attr(el, "content")
		return Value{Text: p.str(v)}, true
	case atom.Audio, atom.Embed, atom.Iframe, atom.Img, atom.Source, atom.Track, atom.Video:
		return urlAttr("src")
	case atom.A, atom.Area, atom.Link:
		return urlAttr("href")
	case atom.Object:
		return urlAttr("data")
	case atom.Data, atom.Meter:
		v, _ := attr(el, "value")
		return Value{Text: p.str(v)}, true
	case atom.Time:
		if v, ok := attr(el, "datetime"); ok {
			return Value{Text: p.str(v)}, true
		}
	}
	return Value{Text: m.text(el)}, true
}

// text returns the text content of el with white space collapsed and
// trimmed (HTML says textContent as is; schema.org's readers, like search
// engines', read it collapsed), bounded by MaxStringBytes.
func (m *micro) text(el *html.Node) string {
	max := m.p.opts.MaxStringBytes
	var b strings.Builder
	space := false
	for n := el.FirstChild; n != nil; {
		if !m.visit() {
			break
		}
		descend := true
		switch n.Type {
		case html.TextNode:
			for _, r := range n.Data {
				if r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '\f' {
					space = b.Len() > 0
					continue
				}
				n := utf8.RuneLen(r)
				if space {
					n++
				}
				if b.Len()+n > max {
					m.p.limit("MaxStringBytes", max)
					return b.String()
				}
				if space {
					b.WriteByte(' ')
					space = false
				}
				b.WriteRune(r)
			}
		case html.ElementNode:
			descend = n.DataAtom != atom.Template
		}
		n = next(n, el, descend)
	}
	return b.String()
}
