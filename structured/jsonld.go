package structured

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/net/html"
)

// Block is one JSON-LD script block.
type Block struct {
	// Raw is the block's JSON: as written when it was valid, otherwise
	// what could be recovered, re-encoded (several values written one
	// after another become one array). Nil when nothing was readable.
	Raw json.RawMessage
	// Items are the block's top-level node objects: the block itself,
	// the elements of a top-level array, the members of @graph.
	Items []*Item
	// Err says what was wrong with the block (ErrMalformed) or what a
	// limit cut (ErrLimit); nil for a clean block.
	Err error
}

// jsonLD reads the script element n as a JSON-LD block.
func (p *parser) jsonLD(n *html.Node) {
	idx := len(p.data.JSONLD)
	if idx >= p.opts.MaxBlocks {
		p.limit("MaxBlocks", p.opts.MaxBlocks)
		return
	}
	text := scriptText(n, p.opts.MaxBlockBytes+1)
	var b Block
	l := lexer{b: text, maxDepth: p.opts.MaxDepth, maxStr: p.opts.MaxStringBytes}
	if len(text) > p.opts.MaxBlockBytes {
		l.b = text[:p.opts.MaxBlockBytes]
		l.limit("MaxBlockBytes %d", p.opts.MaxBlockBytes)
	}
	vals, start, end, clean := l.values()
	switch {
	case len(vals) == 1 && clean && len(l.limited) == 0:
		b.Raw = json.RawMessage(text[start:end])
	case len(vals) == 1:
		b.Raw = encode(nil, &vals[0])
	case len(vals) > 1:
		all := jnode{kind: jArray, elems: vals}
		b.Raw = encode(nil, &all)
	default:
		l.problem("no JSON value")
	}
	for i := range vals {
		p.topLevel(&b, &vals[i])
	}
	var errs []error
	if len(l.problems) > 0 {
		errs = append(errs, fmt.Errorf("%w in block %d: %s", ErrMalformed, idx, strings.Join(l.problems, "; ")))
	}
	if len(l.limited) > 0 {
		errs = append(errs, fmt.Errorf("%w in JSON-LD block %d: %s", ErrLimit, idx, strings.Join(l.limited, "; ")))
	}
	b.Err = errors.Join(errs...)
	p.data.JSONLD = append(p.data.JSONLD, b)
}

// scriptText returns the text of a script element, at most max bytes (a
// parsed script holds one text node; a hand-built tree may hold more).
func scriptText(n *html.Node, max int) []byte {
	if c := n.FirstChild; c != nil && c.NextSibling == nil && c.Type == html.TextNode {
		return []byte(c.Data[:min(len(c.Data), max)])
	}
	var b []byte
	for c := n.FirstChild; c != nil && len(b) < max; c = c.NextSibling {
		if c.Type == html.TextNode {
			b = append(b, c.Data[:min(len(c.Data), max-len(b))]...)
		}
	}
	return b
}

// topLevel adds a value found at a block's top level, or in a @graph: an
// object is an item (unless it holds only @context and @graph), an array's
// elements are each top-level.
func (p *parser) topLevel(b *Block, v *jnode) {
	switch v.kind {
	case jArray:
		for i := range v.elems {
			p.topLevel(b, &v.elems[i])
		}
	case jObject:
		if g := v.member("@graph"); g != nil {
			p.topLevel(b, g)
		}
		for _, k := range v.keys {
			if k != "@context" && k != "@graph" {
				if it := p.item(b, v); it != nil {
					b.Items = append(b.Items, it)
				}
				return
			}
		}
	}
}

// item makes an item of a node object.
func (p *parser) item(b *Block, v *jnode) *Item {
	if !p.newItem() {
		return nil
	}
	it := &Item{}
	for i, k := range v.keys {
		e := &v.elems[i]
		switch k {
		case "@type":
			p.types(it, e)
		case "@id":
			if e.kind == jString {
				it.ID = p.str(p.resolveID(e.s))
			}
		case "@graph":
			// A named graph inside a node: its nodes are the block's.
			p.topLevel(b, e)
		default:
			if !strings.HasPrefix(k, "@") {
				p.values(b, it, k, e)
			}
		}
	}
	return it
}

func (p *parser) types(it *Item, e *jnode) {
	switch e.kind {
	case jString:
		it.Types = append(it.Types, e.s)
	case jArray:
		for i := range e.elems {
			if e.elems[i].kind == jString {
				it.Types = append(it.Types, e.elems[i].s)
			}
		}
	}
}

// resolveID resolves an @id against the base URL (JSON-LD 1.1 §4.1.2);
// blank node identifiers ("_:b0") are kept.
func (p *parser) resolveID(id string) string {
	if strings.HasPrefix(id, "_:") {
		return id
	}
	return p.resolve(id)
}

// values adds the values of property k: arrays, @list and @set are
// flattened, value objects give their @value, node objects nested items.
func (p *parser) values(b *Block, it *Item, k string, e *jnode) {
	switch e.kind {
	case jString:
		p.add(it, k, Value{Kind: KindString, Text: e.s})
	case jNumber:
		p.add(it, k, Value{Kind: KindNumber, Text: e.s})
	case jBool:
		p.add(it, k, Value{Kind: KindBool, Text: e.s})
	case jArray:
		for i := range e.elems {
			p.values(b, it, k, &e.elems[i])
		}
	case jObject:
		if v := e.member("@value"); v != nil {
			if v.kind != jArray && v.kind != jObject {
				p.values(b, it, k, v)
			}
			return
		}
		if v := e.member("@list"); v != nil {
			p.values(b, it, k, v)
			return
		}
		if v := e.member("@set"); v != nil {
			p.values(b, it, k, v)
			return
		}
		if sub := p.item(b, e); sub != nil {
			p.add(it, k, Value{Kind: KindItem, Item: sub})
		}
	}
}
