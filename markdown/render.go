package markdown

import (
	"net/url"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/crawlkit/crawlkit/urlnorm"
)

// renderer writes an HTML tree as CommonMark. Blocks are written to out
// as they end; the inline text of the block being built collects in para,
// with white space collapsed as a browser collapses it.
type renderer struct {
	base *url.URL
	out  strings.Builder
	para []byte

	space bool // white space is pending before the next text
	lead  bool // the text being captured began with white space

	prefix   []prefix // enclosing block quotes and list items, outermost first
	lists    []int    // enclosing lists: the next number, or -1 for bullets
	lastItem bool     // the last block written was inside a list item
	inline   int      // inside a link, heading or table cell: blocks are spaces

	refs  map[string]int
	links []string
	full  bool
}

// prefix is what one enclosing container puts before each line: first
// before its first line, rest before the others.
type prefix struct {
	first, rest string
	used, item  bool
}

func newRenderer(base *url.URL) *renderer {
	return &renderer{base: base, refs: map[string]int{}}
}

// skipped are elements with no text a reader sees.
var skipped = map[atom.Atom]bool{
	atom.Script: true, atom.Style: true, atom.Noscript: true, atom.Template: true,
	atom.Svg: true, atom.Math: true, atom.Canvas: true, atom.Iframe: true,
	atom.Object: true, atom.Embed: true, atom.Img: true, atom.Picture: true,
	atom.Video: true, atom.Audio: true, atom.Source: true, atom.Head: true,
	atom.Button: true, atom.Input: true, atom.Select: true, atom.Textarea: true,
}

// blocks are elements that start and end a block of text.
var blocks = map[atom.Atom]bool{
	atom.P: true, atom.Div: true, atom.Section: true, atom.Article: true,
	atom.Main: true, atom.Header: true, atom.Footer: true, atom.Aside: true,
	atom.Nav: true, atom.Figure: true, atom.Figcaption: true, atom.Address: true,
	atom.Details: true, atom.Summary: true, atom.Center: true, atom.Dl: true,
	atom.Dt: true, atom.Dd: true, atom.Form: true, atom.Fieldset: true,
	atom.Caption: true, atom.Body: true, atom.Html: true,
}

var headings = map[atom.Atom]int{
	atom.H1: 1, atom.H2: 2, atom.H3: 3, atom.H4: 4, atom.H5: 5, atom.H6: 6,
}

func (r *renderer) children(n *html.Node, depth int) {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		r.block(c, depth+1)
	}
}

// block renders n and its subtree. Recursion is bounded: Convert prunes
// the tree at MaxDepth.
func (r *renderer) block(n *html.Node, depth int) {
	switch n.Type {
	case html.TextNode:
		r.text(n.Data)
		return
	case html.DocumentNode:
		r.children(n, depth)
		return
	case html.ElementNode:
	default:
		return
	}
	a := tag(n)
	switch {
	case skipped[a]:
	case a == atom.Br:
		if r.inline > 0 {
			r.space = true
		} else {
			r.para = append(r.para, '\n')
			r.space = false
		}
	case a == atom.A:
		r.link(n, depth)
	case a == atom.B || a == atom.Strong:
		r.wrap(n, depth, "**")
	case a == atom.I || a == atom.Em:
		r.wrap(n, depth, "*")
	case a == atom.Code || a == atom.Kbd || a == atom.Samp || a == atom.Tt:
		r.code(textContent(n))
	case r.inline > 0 && (blocks[a] || headings[a] > 0 || a == atom.Ul || a == atom.Ol ||
		a == atom.Li || a == atom.Blockquote || a == atom.Pre || a == atom.Table || a == atom.Hr):
		r.space = true
		r.children(n, depth)
		r.space = true
	case blocks[a]:
		r.flush()
		r.children(n, depth)
		r.flush()
	case headings[a] > 0:
		r.flush()
		r.inline++
		r.children(n, depth)
		r.inline--
		if t := r.takePara(); t != "" {
			r.emit(strings.Repeat("#", headings[a]) + " " + t)
		}
	case a == atom.Ul || a == atom.Ol:
		if linkList(n) {
			return
		}
		r.flush()
		next := -1
		if a == atom.Ol {
			next = 1
			if s, err := strconv.Atoi(attr(n, "start")); err == nil && s >= 0 && s < 1e9 {
				next = s
			}
		}
		r.lists = append(r.lists, next)
		r.children(n, depth)
		r.lists = r.lists[:len(r.lists)-1]
		r.flush()
	case a == atom.Li:
		r.flush()
		marker := "- "
		if k := len(r.lists) - 1; k >= 0 && r.lists[k] >= 0 {
			marker = strconv.Itoa(r.lists[k]) + ". "
			r.lists[k]++
		}
		r.push(prefix{first: marker, rest: strings.Repeat(" ", len(marker)), item: true})
		r.children(n, depth)
		r.flush()
		r.pop()
	case a == atom.Blockquote:
		r.flush()
		r.push(prefix{first: "> ", rest: "> "})
		r.children(n, depth)
		r.flush()
		r.pop()
	case a == atom.Pre:
		r.flush()
		r.fenced(textContent(n))
	case a == atom.Table:
		r.flush()
		r.table(n, depth)
	case a == atom.Hr:
		r.flush()
		r.emit("* * *")
	default:
		r.children(n, depth)
	}
}

func (r *renderer) push(p prefix) { r.prefix = append(r.prefix, p) }
func (r *renderer) pop()          { r.prefix = r.prefix[:len(r.prefix)-1] }

// text appends a text node's text, collapsing white space and escaping
// the characters CommonMark would read as markup (§2.4).
func (r *renderer) text(s string) {
	if len(r.para) > MaxMarkdownBytes {
		r.full = true
		return
	}
	prev := rune(' ')
	for i, c := range s {
		if unicode.IsSpace(c) {
			if len(r.para) == 0 {
				r.lead = true
			}
			r.space = true
			prev = ' '
			continue
		}
		r.pendingSpace()
		switch c {
		case '\\', '*', '`', '[', ']', '<':
			r.para = append(r.para, '\\')
		case '_':
			next, _ := utf8.DecodeRuneInString(s[i+1:])
			if !isWord(prev) || !isWord(next) {
				r.para = append(r.para, '\\')
			}
		}
		r.para = utf8.AppendRune(r.para, c)
		prev = c
	}
}

func isWord(c rune) bool { return unicode.IsLetter(c) || unicode.IsDigit(c) }

// pendingSpace writes a pending space, unless the line is empty.
func (r *renderer) pendingSpace() {
	if r.space && len(r.para) > 0 && r.para[len(r.para)-1] != '\n' {
		r.para = append(r.para, ' ')
	}
	r.space = false
}

// raw appends already escaped Markdown.
func (r *renderer) raw(s string) {
	r.pendingSpace()
	r.para = append(r.para, s...)
}

// capture renders n's children into a string of their own, reporting
// whether white space preceded and followed it.
func (r *renderer) capture(n *html.Node, depth int) (s string, lead, trail bool) {
	para, space, lead0 := r.para, r.space, r.lead
	r.para, r.space, r.lead = nil, false, false
	r.inline++
	r.children(n, depth)
	r.inline--
	s, lead, trail = strings.TrimSpace(string(r.para)), r.lead, r.space
	r.para, r.space, r.lead = para, space || lead, lead0
	return s, lead, trail
}

// wrap renders n's children between emphasis delimiters (§6.2), which
// must touch the text they enclose.
func (r *renderer) wrap(n *html.Node, depth int, delim string) {
	s, _, trail := r.capture(n, depth)
	if s != "" {
		r.raw(delim + s + delim)
	}
	r.space = r.space || trail
}

// link renders an <a href> as a numbered reference link (§4.7, §6.3).
func (r *renderer) link(n *html.Node, depth int) {
	nested := r.inline > 0 && r.inLink(n)
	s, _, trail := r.capture(n, depth)
	if s != "" {
		if i := r.ref(attr(n, "href")); i > 0 && !nested {
			r.raw("[" + s + "][" + strconv.Itoa(i) + "]")
		} else {
			r.raw(s)
		}
	}
	r.space = r.space || trail
}

// inLink reports whether n is inside another link, which cannot hold it.
func (r *renderer) inLink(n *html.Node) bool {
	for p := n.Parent; p != nil; p = p.Parent {
		if p.Type == html.ElementNode && tag(p) == atom.A {
			return true
		}
	}
	return false
}

// ref returns the reference number of href resolved against the page, 0
// for a URL that is no link to follow (another scheme, this very page,
// too long) or when MaxLinks are taken.
func (r *renderer) ref(href string) int {
	href = strings.TrimSpace(href)
	if href == "" || strings.HasPrefix(href, "#") {
		return 0
	}
	u, err := urlnorm.Resolve(r.base, href)
	if err != nil || u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return 0
	}
	s := u.String()
	if len(s) > MaxURLBytes {
		return 0
	}
	if i, ok := r.refs[s]; ok {
		return i
	}
	if len(r.links) >= MaxLinks {
		return 0
	}
	r.links = append(r.links, s)
	r.refs[s] = len(r.links)
	return len(r.links)
}

// code writes a code span (§6.1), its delimiters longer than any run of
// backticks inside.
func (r *renderer) code(s string) {
	s = strings.Join(strings.Fields(s), " ")
	if s == "" {
		return
	}
	fence := strings.Repeat("`", longestRun(s, '`')+1)
	if s[0] == '`' || s[len(s)-1] == '`' {
		s = " " + s + " "
	}
	r.raw(fence + s + fence)
}

// fenced writes a fenced code block (§4.5).
func (r *renderer) fenced(s string) {
	s = strings.Trim(s, "\n")
	if strings.TrimSpace(s) == "" {
		return
	}
	fence := strings.Repeat("`", max(3, longestRun(s, '`')+1))
	r.emit(fence + "\n" + s + "\n" + fence)
}

func longestRun(s string, c byte) int {
	best, n := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			n++
			best = max(best, n)
		} else {
			n = 0
		}
	}
	return best
}

// table writes a table of text as a pipe table (a GitHub Flavored Markdown
// extension, which CommonMark readers show as text). A table holding
// blocks is a layout table: its cells are written as blocks.
func (r *renderer) table(t *html.Node, depth int) {
	var rows [][]*html.Node
	layout := false
	eachRow(t, func(tr *html.Node) {
		var cells []*html.Node
		for c := tr.FirstChild; c != nil; c = c.NextSibling {
			if c.Type == html.ElementNode && (tag(c) == atom.Td || tag(c) == atom.Th) {
				cells = append(cells, c)
				layout = layout || hasBlock(c)
			}
		}
		if len(cells) > 0 {
			rows = append(rows, cells)
		}
	})
	if layout || len(rows) == 0 {
		r.children(t, depth)
		r.flush()
		return
	}
	cols := 0
	for _, row := range rows {
		cols = max(cols, len(row))
	}
	var b strings.Builder
	for i, row := range rows {
		b.WriteString("|")
		for j := range cols {
			s := ""
			if j < len(row) {
				s, _, _ = r.capture(row[j], depth)
				s = strings.ReplaceAll(strings.ReplaceAll(s, "|", `\|`), "\n", " ")
			}
			b.WriteString(" " + s + " |")
		}
		b.WriteString("\n")
		if i == 0 {
			b.WriteString("|" + strings.Repeat(" --- |", cols) + "\n")
		}
	}
	r.emit(strings.TrimSuffix(b.String(), "\n"))
}

// linkList reports whether list n is navigation: three or more items,
// each nothing but a link. The extractor weighs link density only in
// the blocks it scores, and menus inside the article's container pass.
func linkList(n *html.Node) bool {
	items := 0
	for li := n.FirstChild; li != nil; li = li.NextSibling {
		if li.Type == html.TextNode && strings.TrimSpace(li.Data) != "" {
			return false
		}
		if li.Type != html.ElementNode {
			continue
		}
		items++
		all, linked := textLen(li, false)
		if all == 0 || linked < all {
			return false
		}
	}
	return items >= 3
}

// textLen returns the length of n's text, and of the part inside links.
func textLen(n *html.Node, inLink bool) (all, linked int) {
	if n.Type == html.TextNode {
		l := len(strings.TrimSpace(n.Data))
		if inLink {
			return l, l
		}
		return l, 0
	}
	inLink = inLink || n.Type == html.ElementNode && tag(n) == atom.A
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		a, l := textLen(c, inLink)
		all, linked = all+a, linked+l
	}
	return all, linked
}

// eachRow calls fn for the rows of table t, not those of tables inside it.
func eachRow(t *html.Node, fn func(*html.Node)) {
	for c := t.FirstChild; c != nil; c = c.NextSibling {
		if c.Type != html.ElementNode {
			continue
		}
		switch tag(c) {
		case atom.Tr:
			fn(c)
		case atom.Thead, atom.Tbody, atom.Tfoot:
			eachRow(c, fn)
		}
	}
}

// hasBlock reports whether n holds a block other than a bare <div>.
func hasBlock(n *html.Node) bool {
	stack := []*html.Node{n}
	for len(stack) > 0 {
		m := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for c := m.FirstChild; c != nil; c = c.NextSibling {
			if c.Type != html.ElementNode {
				continue
			}
			switch tag(c) {
			case atom.P, atom.Ul, atom.Ol, atom.Table, atom.Blockquote, atom.Pre,
				atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6:
				return true
			}
			stack = append(stack, c)
		}
	}
	return false
}

// takePara returns the inline text built so far, emptied.
func (r *renderer) takePara() string {
	s := strings.TrimSpace(string(r.para))
	r.para, r.space, r.lead = r.para[:0], false, false
	return s
}

// flush ends the paragraph being built.
func (r *renderer) flush() {
	if r.inline > 0 {
		r.space = true
		return
	}
	s := r.takePara()
	if s == "" {
		return
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = escapeLineStart(strings.TrimSpace(l))
	}
	r.emit(strings.Join(lines, "\n"))
}

// escapeLineStart escapes what would start a heading, a block quote, a
// list item or a thematic break at the start of a line of text (§4, §5).
func escapeLineStart(l string) string {
	if l == "" {
		return l
	}
	switch l[0] {
	case '#', '>', '+', '-', '=', '|', '~':
		return `\` + l
	}
	i := 0
	for i < len(l) && i < 9 && l[i] >= '0' && l[i] <= '9' {
		i++
	}
	if i > 0 && i < len(l) && (l[i] == '.' || l[i] == ')') {
		return l[:i] + `\` + l[i:]
	}
	return l
}

// emit writes a finished block under the enclosing containers' prefixes.
// A list item's first block follows the previous item with no blank line
// between (a tight list, §5.3).
func (r *renderer) emit(s string) {
	if r.full {
		return
	}
	if r.out.Len()+len(s) > MaxMarkdownBytes {
		r.full = true
		return
	}
	startsItem := len(r.prefix) > 0 && r.prefix[len(r.prefix)-1].item && !r.prefix[len(r.prefix)-1].used
	if r.out.Len() > 0 {
		r.out.WriteByte('\n')
		if !(startsItem && r.lastItem) {
			var sep strings.Builder
			for _, p := range r.prefix {
				sep.WriteString(p.rest)
			}
			r.out.WriteString(strings.TrimRight(sep.String(), " "))
			r.out.WriteByte('\n')
		}
	}
	for i, line := range strings.Split(s, "\n") {
		if i > 0 {
			r.out.WriteByte('\n')
		}
		var pre strings.Builder
		for k := range r.prefix {
			p := &r.prefix[k]
			if p.used {
				pre.WriteString(p.rest)
			} else {
				pre.WriteString(p.first)
				p.used = true
			}
		}
		if line == "" {
			r.out.WriteString(strings.TrimRight(pre.String(), " "))
		} else {
			r.out.WriteString(pre.String() + line)
		}
	}
	r.lastItem = false
	for _, p := range r.prefix {
		r.lastItem = r.lastItem || p.item
	}
}

// finish returns the Markdown with its reference list, and the links.
func (r *renderer) finish() (string, []string) {
	r.flush()
	if r.out.Len() == 0 {
		return "", nil
	}
	if len(r.links) > 0 {
		r.out.WriteString("\n")
		for i, l := range r.links {
			r.out.WriteString("\n[" + strconv.Itoa(i+1) + "]: " + l)
		}
	}
	r.out.WriteString("\n")
	return r.out.String(), r.links
}

// tag returns an element's name as an atom. The extractor renames
// elements (a <div> of text becomes a <p>) without updating DataAtom.
func tag(n *html.Node) atom.Atom {
	if n.DataAtom != 0 && n.DataAtom.String() == n.Data {
		return n.DataAtom
	}
	return atom.Lookup([]byte(n.Data))
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Namespace == "" && a.Key == key {
			return a.Val
		}
	}
	return ""
}

// textContent returns the text of n's subtree as written.
func textContent(n *html.Node) string {
	var b strings.Builder
	stack := []*html.Node{n}
	for len(stack) > 0 && b.Len() <= MaxMarkdownBytes {
		m := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if m.Type == html.TextNode {
			b.WriteString(m.Data)
			continue
		}
		if m.Type == html.ElementNode && tag(m) == atom.Br {
			b.WriteByte('\n')
		}
		for c := m.LastChild; c != nil; c = c.PrevSibling {
			stack = append(stack, c)
		}
	}
	return b.String()
}
