// Package structured reads the structured data a page carries about itself:
// JSON-LD blocks (https://www.w3.org/TR/json-ld11/), HTML microdata
// (https://html.spec.whatwg.org/multipage/microdata.html), Open Graph
// properties (https://ogp.me/) and Twitter card tags — the schema.org
// products, articles, recipes and breadcrumbs search engines read.
//
// The page is parsed into a tree with golang.org/x/net/html, as a browser
// would, and the tree is walked once, without recursion, for the JSON-LD
// blocks, the meta tags and the microdata items; each item's properties
// are then gathered from its own subtree. Microdata needs the tree
// (itemref points anywhere in the document and values are the text of
// whole subtrees), and FromNode walks a tree the caller already has (such
// as a goquery document's), so a page parsed for CSS selection is not
// parsed again. goquery itself would add selector matching, which the walk
// does not use.
//
// JSON-LD is read leniently, because pages carry broken blocks: trailing
// commas, JavaScript comments, HTML comment or CDATA wrappers, raw control
// characters in strings, several values one after another, blocks cut
// short. What can be read is kept; each block reports what was wrong with
// it (Block.Err) without failing the page. No remote @context is ever
// fetched: property names and types are kept as written, and Item.Is and
// the property helpers compare local names ("Product" matches
// "https://schema.org/Product").
//
// Everything is bounded by Config: the bytes read, the blocks, items,
// property values, the nesting depth of JSON and of microdata items, the
// length of strings, and the work spent on microdata's text values. Hostile
// input cannot make a parse panic, recurse without bound or allocate more
// than the limits allow; what a limit cut is reported with ErrLimit.
package structured

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/crawlkit/crawlkit/urlnorm"
)

// Default limits, used where an Config field is zero.
const (
	DefaultMaxInputBytes  = 16 << 20 // HTML read by Parse
	DefaultMaxBlocks      = 64       // JSON-LD blocks per page
	DefaultMaxBlockBytes  = 1 << 20  // bytes of one JSON-LD block
	DefaultMaxItems       = 4096     // items per page, nested ones included
	DefaultMaxProperties  = 1 << 15  // property values per page
	DefaultMaxDepth       = 32       // JSON nesting, microdata item nesting
	DefaultMaxStringBytes = 64 << 10 // one string value (an articleBody)
	DefaultMaxMeta        = 1024     // Open Graph and Twitter properties
)

// Sentinel errors, matchable with errors.Is.
var (
	// ErrMalformed reports a JSON-LD block that is not valid JSON as
	// written. Block.Raw holds what could be recovered, if anything.
	ErrMalformed = errors.New("structured: malformed JSON-LD")
	// ErrLimit reports that a limit of Config cut something short.
	ErrLimit = errors.New("structured: limit reached")
)

// Config bounds a parse. The zero value uses the defaults.
type Config struct {
	// MaxInputBytes bounds the HTML Parse and ParseBytes read; the rest
	// of a longer page is ignored.
	MaxInputBytes int
	// MaxBlocks bounds the JSON-LD blocks read; MaxBlockBytes the bytes
	// of each (a longer block is read up to the limit, leniently).
	MaxBlocks, MaxBlockBytes int
	// MaxItems bounds the items of a page, nested ones included, JSON-LD
	// and microdata together; MaxProperties their property values.
	MaxItems, MaxProperties int
	// MaxDepth bounds the nesting of JSON values (objects and arrays)
	// and of microdata items; deeper ones are left out.
	MaxDepth int
	// MaxStringBytes bounds each string: a JSON string, a microdata text
	// value, a meta property; longer ones are cut.
	MaxStringBytes int
	// MaxMeta bounds the Open Graph and Twitter properties read.
	MaxMeta int
}

func (o *Config) withDefaults() Config {
	var r Config
	if o != nil {
		r = *o
	}
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&r.MaxInputBytes, DefaultMaxInputBytes)
	def(&r.MaxBlocks, DefaultMaxBlocks)
	def(&r.MaxBlockBytes, DefaultMaxBlockBytes)
	def(&r.MaxItems, DefaultMaxItems)
	def(&r.MaxProperties, DefaultMaxProperties)
	def(&r.MaxDepth, DefaultMaxDepth)
	def(&r.MaxStringBytes, DefaultMaxStringBytes)
	def(&r.MaxMeta, DefaultMaxMeta)
	return r
}

// Data is the structured data of one page.
type Data struct {
	// JSONLD holds each <script type="application/ld+json"> block in
	// document order.
	JSONLD []Block
	// Microdata holds the page's top-level microdata items (elements with
	// itemscope and no itemprop) in document order.
	Microdata []*Item
	// OpenGraph holds the og:, article:, product:, book:, profile:,
	// music:, video: and fb: properties of <meta property> tags.
	OpenGraph OpenGraph
	// Twitter holds the twitter: properties of <meta name> tags.
	Twitter Meta
	// Errors reports the limits the page reached (ErrLimit); a block's
	// own problems are in its Block.Err.
	Errors []error
}

// Items returns the top-level items of every JSON-LD block, then the
// microdata items.
func (d *Data) Items() []*Item {
	var out []*Item
	for _, b := range d.JSONLD {
		out = append(out, b.Items...)
	}
	return append(out, d.Microdata...)
}

// Find returns the items of type t (compared by local name, see Item.Is),
// JSON-LD first, searching nested items too, in document order.
func (d *Data) Find(t string) []*Item {
	var out []*Item
	for _, it := range d.Items() {
		it.walk(0, func(x *Item) {
			if x.Is(t) {
				out = append(out, x)
			}
		})
	}
	return out
}

// ByID returns the first item, top-level or nested, whose @id or itemid
// is id (resolved like the items' own), to follow a reference such as a
// JSON-LD graph's {"@id": "…#organization"}; nil if none.
func (d *Data) ByID(id string) *Item {
	var found *Item
	for _, it := range d.Items() {
		it.walk(0, func(x *Item) {
			if found == nil && x.ID == id && len(x.Properties)+len(x.Types) > 0 {
				found = x
			}
		})
		if found != nil {
			return found
		}
	}
	return nil
}

// Empty reports whether the page carries no structured data.
func (d *Data) Empty() bool {
	return len(d.JSONLD) == 0 && len(d.Microdata) == 0 && len(d.OpenGraph.Meta) == 0 && len(d.Twitter) == 0
}

// MarshalJSON writes d as a JSONL record holds it: each JSON-LD block's
// JSON and error, the microdata items, the Open Graph and Twitter
// properties, and the limits reached.
func (d *Data) MarshalJSON() ([]byte, error) {
	type block struct {
		Raw   json.RawMessage `json:"raw,omitempty"`
		Error string          `json:"error,omitempty"`
	}
	var v struct {
		JSONLD    []block    `json:"jsonld,omitempty"`
		Microdata []*Item    `json:"microdata,omitempty"`
		OpenGraph *OpenGraph `json:"opengraph,omitempty"`
		Twitter   Meta       `json:"twitter,omitempty"`
		Errors    []string   `json:"errors,omitempty"`
	}
	for _, b := range d.JSONLD {
		x := block{Raw: b.Raw}
		if b.Err != nil {
			x.Error = b.Err.Error()
		}
		v.JSONLD = append(v.JSONLD, x)
	}
	v.Microdata = d.Microdata
	if len(d.OpenGraph.Meta) > 0 {
		v.OpenGraph = &d.OpenGraph
	}
	v.Twitter = d.Twitter
	for _, err := range d.Errors {
		v.Errors = append(v.Errors, err.Error())
	}
	return json.Marshal(v)
}

// Parse reads an HTML page in UTF-8 (see extract.UTF8 for other
// encodings) and returns its structured data. pageURL, when an absolute
// http(s) URL, is the base for relative URLs (with the page's <base>).
// The error is the reader's; what the page gets wrong is reported in Data.
func Parse(r io.Reader, pageURL string) (*Data, error) {
	return (*Config)(nil).Parse(r, pageURL)
}

// ParseBytes is Parse for a body in memory.
func ParseBytes(body []byte, pageURL string) *Data {
	return (*Config)(nil).ParseBytes(body, pageURL)
}

// FromNode reads the structured data of a parsed document (the node
// html.Parse returns, or a goquery Document's Nodes[0]).
func FromNode(doc *html.Node, pageURL string) *Data {
	return (*Config)(nil).FromNode(doc, pageURL)
}

// Parse is the package's Parse with o's limits.
func (o *Config) Parse(r io.Reader, pageURL string) (*Data, error) {
	opts := o.withDefaults()
	body, err := io.ReadAll(io.LimitReader(r, int64(opts.MaxInputBytes)+1))
	if err != nil {
		return nil, fmt.Errorf("structured: reading the page: %w", err)
	}
	return o.ParseBytes(body, pageURL), nil
}

// ParseBytes is the package's ParseBytes with o's limits.
func (o *Config) ParseBytes(body []byte, pageURL string) *Data {
	opts := o.withDefaults()
	var cut error
	if len(body) > opts.MaxInputBytes {
		body = body[:opts.MaxInputBytes]
		cut = fmt.Errorf("%w: page longer than %d bytes, read in part", ErrLimit, opts.MaxInputBytes)
	}
	// html.Parse fails only when its reader does.
	doc, _ := html.Parse(bytes.NewReader(body))
	d := o.FromNode(doc, pageURL)
	if cut != nil {
		d.Errors = append([]error{cut}, d.Errors...)
	}
	return d
}

// FromNode is the package's FromNode with o's limits.
func (o *Config) FromNode(doc *html.Node, pageURL string) *Data {
	p := &parser{opts: o.withDefaults(), data: &Data{}}
	if isHTTPURL(pageURL) {
		p.base = pageURL
	}
	if doc != nil {
		p.walk(doc)
	}
	return p.data
}

// parser holds one page's parse: the limits, the counts against them, and
// the result.
type parser struct {
	opts Config
	base string // absolute http(s) base URL, or ""
	data *Data

	items, props, meta int
	limited            map[string]bool // limits reported, by name
	visits             int             // microdata work spent
}

// limit records, once per limit, that it cut something.
func (p *parser) limit(name string, n int) {
	if p.limited[name] {
		return
	}
	if p.limited == nil {
		p.limited = map[string]bool{}
	}
	p.limited[name] = true
	p.data.Errors = append(p.data.Errors, fmt.Errorf("%w: %s %d", ErrLimit, name, n))
}

// newItem counts an item against MaxItems; false when there is no room.
func (p *parser) newItem() bool {
	if p.items >= p.opts.MaxItems {
		p.limit("MaxItems", p.opts.MaxItems)
		return false
	}
	p.items++
	return true
}

// add appends a value to it, counted against MaxProperties.
func (p *parser) add(it *Item, name string, v Value) {
	if p.props >= p.opts.MaxProperties {
		p.limit("MaxProperties", p.opts.MaxProperties)
		return
	}
	p.props++
	if it.Properties == nil {
		it.Properties = map[string][]Value{}
	}
	it.Properties[name] = append(it.Properties[name], v)
}

// str bounds s to MaxStringBytes, cut at a rune boundary.
func (p *parser) str(s string) string {
	if len(s) <= p.opts.MaxStringBytes {
		return s
	}
	p.limit("MaxStringBytes", p.opts.MaxStringBytes)
	return truncUTF8(s, p.opts.MaxStringBytes)
}

// walk visits the document in tree order, iteratively: the JSON-LD
// blocks, the meta tags and <base> are read on the way, and the top-level
// microdata items are read once the base URL is known (a <base> applies to
// the whole document).
func (p *parser) walk(doc *html.Node) {
	var tops []*html.Node
	var refs bool
	baseSeen := false
	nodes := 0
	for n := doc; n != nil; {
		nodes++
		descend := true
		if n.Type == html.ElementNode {
			switch n.DataAtom {
			case atom.Template:
				// Template content is not part of the document.
				descend = false
			case atom.Base:
				if href, ok := attr(n, "href"); ok && !baseSeen {
					baseSeen = true
					if u, err := urlnorm.ResolveString(p.base, strings.TrimSpace(href)); err == nil && isHTTPURL(u) {
						p.base = u
					}
				}
			case atom.Script:
				if isJSONLD(n) {
					p.jsonLD(n)
				}
				descend = false
			case atom.Meta:
				p.metaTag(n)
			}
			if _, ok := attr(n, "itemscope"); ok {
				if _, prop := attr(n, "itemprop"); !prop {
					tops = append(tops, n)
				}
			}
			if _, ok := attr(n, "itemref"); ok {
				refs = true
			}
		}
		n = next(n, doc, descend)
	}
	if len(tops) > 0 {
		p.microdata(doc, tops, nodes, refs)
	}
	p.data.OpenGraph.group(p.resolve)
}

// next returns the node after n in tree order within root, skipping n's
// children unless descend.
func next(n, root *html.Node, descend bool) *html.Node {
	if descend && n.FirstChild != nil {
		return n.FirstChild
	}
	for n != root {
		if n.NextSibling != nil {
			return n.NextSibling
		}
		n = n.Parent
	}
	return nil
}

// attr returns the value of n's attribute key (lower case, no namespace).
func attr(n *html.Node, key string) (string, bool) {
	for _, a := range n.Attr {
		if a.Key == key && a.Namespace == "" {
			return a.Val, true
		}
	}
	return "", false
}

// isJSONLD reports whether a script element holds JSON-LD: its type is
// application/ld+json, in any case, parameters ignored.
func isJSONLD(n *html.Node) bool {
	t, _ := attr(n, "type")
	t, _, _ = strings.Cut(t, ";")
	return strings.EqualFold(strings.TrimSpace(t), "application/ld+json")
}

func isHTTPURL(s string) bool {
	return len(s) > 7 && (strings.EqualFold(s[:7], "http://") || len(s) > 8 && strings.EqualFold(s[:8], "https://"))
}

// resolve resolves ref against the base URL; ref is kept as written when
// there is no base or it cannot be resolved, so that nothing is lost.
func (p *parser) resolve(ref string) string {
	ref = strings.TrimSpace(ref)
	if ref == "" {
		return ""
	}
	if u, err := urlnorm.ResolveString(p.base, ref); err == nil {
		return u
	}
	return ref
}

// truncUTF8 cuts s to at most n bytes without splitting a rune.
func truncUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}
