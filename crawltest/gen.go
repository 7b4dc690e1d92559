package crawltest

import (
	"strconv"
	"strings"
	"sync"
	"time"
)

// The generator derives every property of the web from the seed through a
// stateless hash, so any page can be generated on its own, on demand, in
// any order, by any goroutine.

const golden = 0x9e3779b97f4a7c15

// mix64 is the SplitMix64 finaliser (Steele, Lea and Flood, "Fast
// splittable pseudorandom number generators", OOPSLA 2014).
func mix64(x uint64) uint64 {
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// hash mixes a salt and two coordinates into one 64-bit value.
func (g *generator) hash(salt, a, b uint64) uint64 {
	return mix64(mix64(mix64(g.seed+salt*golden)^a+golden) ^ b + golden)
}

// rng is a SplitMix64 stream.
type rng uint64

func (r *rng) next() uint64 {
	*r += golden
	return mix64(uint64(*r))
}

func (r *rng) intn(n int) int { return int(r.next() % uint64(n)) }

// Salts that keep the generator's independent choices independent.
const (
	saltSlug = iota + 1
	saltTitle
	saltLinks
	saltBody
	saltSize
	saltHome
	saltBroken
	saltDate
	saltSentences
	saltTrap
)

// sections are the directories pages live in. Their names are chosen to
// exercise robots rules and percent-encoding ("~team" is linked as
// "%7Eteam" too).
var sections = [...]string{"docs", "blog", "news", "~team", "shop", "private", "tmp-notes", "guides"}

const shopSection = 4

// Page variants: the same content served under more than one URL.
const (
	variantPrimary = iota
	variantPrint   // ?print=1, on pages with hasPrint
	variantIndex   // /index.html, for page 0
)

// node names a page of a host: a page number and a variant.
type node struct {
	n       int
	variant uint8
}

type generator struct {
	seed      uint64
	hosts     int
	pages     int
	links     int
	agent     string
	variants  []RobotsVariant
	delay     time.Duration
	noTraps   bool
	sentences []string
	groups    [len(robotsNames)][]robotsGroup // robotsGroups of each variant
	bufs      sync.Pool
}

func newGenerator(cfg *Config) *generator {
	g := &generator{
		seed:     uint64(cfg.Seed),
		hosts:    cfg.Hosts,
		pages:    cfg.PagesPerHost,
		links:    cfg.LinksPerPage,
		agent:    cfg.Agent,
		variants: cfg.RobotsVariants,
		delay:    cfg.CrawlDelay,
		noTraps:  cfg.NoTraps,
	}
	for v := range g.groups {
		g.groups[v] = robotsGroups(RobotsVariant(v), g.agent)
	}
	g.bufs.New = func() any {
		b := make([]byte, 0, 32<<10)
		return &b
	}
	// A pool of sentences from which prose is assembled: a page picks a
	// few hundred of them, so two pages share only a small fraction of
	// their text.
	r := rng(g.hash(saltSentences, 0, 0))
	g.sentences = make([]string, 4096)
	var sb strings.Builder
	for i := range g.sentences {
		sb.Reset()
		n := 6 + r.intn(12)
		for j := 0; j < n; j++ {
			w := words[r.intn(len(words))]
			if j == 0 {
				sb.WriteByte(w[0] - 'a' + 'A')
				sb.WriteString(w[1:])
			} else {
				sb.WriteByte(' ')
				sb.WriteString(w)
			}
			if j > 2 && j < n-2 && r.intn(9) == 0 {
				sb.WriteByte(',')
			}
		}
		sb.WriteByte('.')
		g.sentences[i] = sb.String()
	}
	return g
}

// hostIndex parses a virtual host name ("h0042.test") into its index.
func (g *generator) hostIndex(host string) (int, bool) {
	if len(host) < len("h0000.test") || host[0] != 'h' || !strings.HasSuffix(host, ".test") {
		return 0, false
	}
	i, ok := parseIndex(host[1 : len(host)-len(".test")])
	if !ok || i >= g.hosts || HostName(i) != host {
		return 0, false
	}
	return i, true
}

// parseIndex parses a non-negative decimal of at most 9 digits.
func parseIndex(s string) (int, bool) {
	if s == "" || len(s) > 9 {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

func (g *generator) robots(h int) RobotsVariant { return g.variants[h%len(g.variants)] }

// allowed reports whether host h's robots.txt allows target to the token.
func (g *generator) allowed(h int, token, target string) bool {
	v := g.robots(h)
	return robotsAllowed(v, g.groups[v], token, target)
}

// crawlDelay returns the Crawl-delay host h asks of the product token.
func (g *generator) crawlDelay(h int, token string) time.Duration {
	if grp := selectGroup(g.groups[g.robots(h)], token); grp != nil && grp.delay {
		return g.delay
	}
	return 0
}

// clusterBase returns the first page of n's near-duplicate cluster, or n.
// Pages 8–10, 18–20, … form clusters: the same text with small
// differences.
func clusterBase(n int) int {
	if n >= 1 {
		if r := (n - 1) % 10; r >= 7 {
			return n - (r - 7)
		}
	}
	return n
}

// inCluster reports whether page n belongs to a near-duplicate cluster of
// at least two pages.
func (g *generator) inCluster(n int) bool {
	b := clusterBase(n)
	return n >= 1 && (n-1)%10 >= 7 && b+1 < g.pages
}

// hasPrint reports whether page n has a print version (an exact duplicate
// under the URL with print=1 added).
func hasPrint(n int) bool { return n >= 1 && (n-1)%10 == 2 }

func section(n int) int { return (clusterBase(n) - 1) % len(sections) }

func (g *generator) slugWord(h, n int, k uint64) string {
	return slugWords[g.hash(saltSlug+k<<8, uint64(h), uint64(n))%uint64(len(slugWords))]
}

// target returns the canonical request target (path and query) of a page.
func (g *generator) target(h int, nd node) string {
	n := nd.n
	if n == 0 {
		if nd.variant == variantIndex {
			return "/index.html"
		}
		return "/"
	}
	var t string
	if section(n) == shopSection {
		t = "/shop/item?cat=" + g.slugWord(h, n, 0) + "&id=" + strconv.Itoa(n)
		if nd.variant == variantPrint {
			t += "&print=1"
		}
		return t
	}
	t = "/" + sections[section(n)] + "/" + g.slugWord(h, n, 0) + "-" + g.slugWord(h, n, 1) + "-" + strconv.Itoa(n) + ".html"
	if nd.variant == variantPrint {
		t += "?print=1"
	}
	return t
}

// pageURL returns a page's canonical URL.
func (g *generator) pageURL(h int, nd node) string {
	return "http://" + HostName(h) + g.target(h, nd)
}

// parseTarget maps a canonical request target of host h to a page.
func (g *generator) parseTarget(h int, target string) (node, bool) {
	path, query, _ := strings.Cut(target, "?")
	switch path {
	case "/":
		return node{0, variantPrimary}, query == ""
	case "/index.html":
		return node{0, variantIndex}, query == ""
	case "/shop/item":
		params := strings.Split(query, "&")
		if len(params) < 2 || len(params) > 3 || !strings.HasPrefix(params[1], "id=") {
			return node{}, false
		}
		n, ok := parseIndex(params[1][len("id="):])
		if !ok || n < 1 || n >= g.pages || section(n) != shopSection || strconv.Itoa(n) != params[1][len("id="):] {
			return node{}, false
		}
		nd := node{n, variantPrimary}
		if len(params) == 3 {
			if params[2] != "print=1" || !hasPrint(n) {
				return node{}, false
			}
			nd.variant = variantPrint
		}
		return nd, g.target(h, nd) == target
	}
	if !strings.HasSuffix(path, ".html") {
		return node{}, false
	}
	dash := strings.LastIndexByte(path, '-')
	if dash < 0 {
		return node{}, false
	}
	n, ok := parseIndex(path[dash+1 : len(path)-len(".html")])
	if !ok || n < 1 || n >= g.pages {
		return node{}, false
	}
	nd := node{n, variantPrimary}
	if query == "print=1" && hasPrint(n) {
		nd.variant = variantPrint
	}
	return nd, g.target(h, nd) == target
}

// dir returns the directory of a page's URL path, against which its
// relative links resolve.
func dir(n int) string {
	if n == 0 {
		return "/"
	}
	return "/" + sections[section(n)] + "/"
}

// title returns a page's title, shared by a near-duplicate cluster.
func (g *generator) title(h, n int) string {
	if n == 0 {
		return "Welcome to " + HostName(h)
	}
	r := rng(g.hash(saltTitle, uint64(h), uint64(clusterBase(n))))
	k := 3 + r.intn(3)
	var b strings.Builder
	for i := 0; i < k; i++ {
		w := words[r.intn(len(words))]
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteByte(w[0] - 'a' + 'A')
		b.WriteString(w[1:])
	}
	return b.String()
}

// Link kinds.
const (
	linkPage   = iota // a page of the web (host, node)
	linkTrap          // the entry of a spider trap
	linkBroken        // a URL that answers 404
	linkJunk          // mailto:, javascript:, tel:
)

// Where a link appears on its page.
const (
	placeNav = iota
	placeInline
	placeList
	placeFooter
)

// link is one link of a page.
type link struct {
	kind  uint8
	place uint8
	host  int
	nd    node
	// target is the canonical request target of trap and broken links.
	target string
	href   string // as written in the page
	text   string
}

// Spellings of a link to a page, each folding to the same canonical URL.
const (
	spellRootRelative   = iota // /docs/a-b-7.html
	spellDocRelative           // a-b-7.html, ../docs/a-b-7.html
	spellAbsolute              // http://h0001.test/docs/a-b-7.html
	spellUpperHost             // http://H0001.TEST/docs/a-b-7.html
	spellDefaultPort           // http://h0001.test:80/docs/a-b-7.html
	spellSchemeRelative        // //h0001.test/docs/a-b-7.html
	spellFragment              // /docs/a-b-7.html#part-3
	spellTracking              // /docs/a-b-7.html?utm_source=…&utm_medium=…
	spellEscaped               // /%7Eteam/a%2Db-7.html
	spellEmptyQuery            // /docs/a-b-7.html? (or reordered parameters)
	spellDotSegments           // /docs/./../docs/a-b-7.html
	numSpellings
)

// spell writes the link from page (h, from) to target t (a canonical
// request target on host th) in the given spelling.
func spell(kind int, h, from, th int, t string, x uint64) string {
	cross := th != h
	if cross {
		// Relative spellings cannot reach another host.
		switch kind {
		case spellRootRelative, spellDocRelative, spellEscaped, spellDotSegments, spellEmptyQuery:
			kind = spellAbsolute
		case spellFragment, spellTracking:
			return spell(spellAbsolute, h, from, th, t, x) + spellSuffix(kind, t, x)
		}
	}
	host := HostName(th)
	switch kind {
	case spellDocRelative:
		return relative(dir(from), t)
	case spellAbsolute:
		return "http://" + host + t
	case spellUpperHost:
		return "http://" + strings.ToUpper(host) + t
	case spellDefaultPort:
		return "http://" + host + ":80" + t
	case spellSchemeRelative:
		return "//" + host + t
	case spellFragment, spellTracking:
		return t + spellSuffix(kind, t, x)
	case spellEscaped:
		return escapeOne(t)
	case spellEmptyQuery:
		if p, q, ok := strings.Cut(t, "?"); ok {
			// Reorder the parameters: last one first.
			params := strings.Split(q, "&")
			last := params[len(params)-1]
			return p + "?" + last + "&" + strings.Join(params[:len(params)-1], "&")
		}
		return t + "?"
	case spellDotSegments:
		d := dir(from)
		return d + "./.." + t
	}
	return t
}

// spellSuffix returns the fragment or tracking parameters appended by
// spellFragment and spellTracking.
func spellSuffix(kind int, t string, x uint64) string {
	if kind == spellFragment {
		return "#part-" + strconv.Itoa(int(x%7)+1)
	}
	sep := "?"
	if strings.Contains(t, "?") {
		sep = "&"
	}
	src := [...]string{"newsletter", "feed", "twitter", "partner"}[x%4]
	return sep + "utm_source=" + src + "&utm_medium=referral&utm_campaign=spring"
}

// relative writes target t (a root-relative path with optional query) as a
// reference relative to directory d.
func relative(d, t string) string {
	if strings.HasPrefix(t, d) && len(t) > len(d) {
		rest := t[len(d):]
		if strings.HasPrefix(rest, "?") || strings.HasPrefix(rest, "//") {
			return "./" + rest
		}
		return rest
	}
	if d == "/" {
		return t
	}
	// Every page directory is one level deep.
	if t == "/" {
		return "../"
	}
	return ".." + t
}

// escapeOne percent-encodes one unreserved character of t's last path
// segment, preferring '~' and '-', which encoders disagree on.
func escapeOne(t string) string {
	path, query, hasQuery := strings.Cut(t, "?")
	i := strings.IndexByte(path, '~')
	if i < 0 {
		i = strings.LastIndexByte(path, '-')
	}
	if i < 0 {
		i = strings.LastIndexByte(path, '/') + 1
		if i >= len(path) {
			return t
		}
	}
	const hexUpper = "0123456789ABCDEF"
	c := path[i]
	path = path[:i] + "%" + string(hexUpper[c>>4]) + string(hexUpper[c&15]) + path[i+1:]
	if hasQuery {
		return path + "?" + query
	}
	return path
}

// pageLinks returns the links of page (h, n) in page order. Near-duplicate
// pages share their nav, body and junk links (all derived from the
// cluster's first page) and differ only in the "next page" link. With
// hrefs false the href and text fields are left empty, which is enough for
// computing reachability.
func (g *generator) pageLinks(h, n int, hrefs bool) []link {
	b := clusterBase(n)
	links := make([]link, 0, g.links+16)
	add := func(l link, kind int, x uint64) {
		if hrefs {
			var t string
			if l.kind == linkPage {
				t = g.target(l.host, l.nd)
			} else {
				t = l.target
			}
			if l.kind == linkJunk {
				l.href = t
			} else {
				l.href = spell(kind, h, n, l.host, t, x)
			}
			if l.text == "" && l.kind == linkPage {
				l.text = g.title(l.host, l.nd.n)
			}
		}
		links = append(links, l)
	}
	// Navigation: home and the first page of each section.
	home := node{0, variantPrimary}
	if g.hash(saltHome, uint64(h), uint64(b))%4 == 0 {
		home.variant = variantIndex
	}
	add(link{kind: linkPage, place: placeNav, host: h, nd: home, text: "Home"}, spellRootRelative, 0)
	for s := 1; s <= len(sections) && s < g.pages; s++ {
		add(link{kind: linkPage, place: placeNav, host: h, nd: node{s, variantPrimary}, text: navTitles[s-1]}, spellRootRelative, 0)
	}
	// Body links: half inline in the prose, the rest in a list.
	r := rng(g.hash(saltLinks, uint64(h), uint64(b)))
	for j := 0; j < g.links; j++ {
		x := r.next()
		th := h
		if g.hosts > 1 && x%8 == 0 {
			th = (h + 1 + int(x>>8%uint64(g.hosts-1))) % g.hosts
		}
		place := uint8(placeInline)
		if j >= (g.links+1)/2 {
			place = placeList
		}
		tn := int(x >> 32 % uint64(g.pages))
		add(link{kind: linkPage, place: place, host: th, nd: node{tn, variantPrimary}}, int(x>>16%numSpellings), x>>40)
	}
	// Footer: next page, print version, trap entry, a broken link, junk.
	if g.pages > 1 {
		add(link{kind: linkPage, place: placeFooter, host: h, nd: node{(n + 1) % g.pages, variantPrimary}, text: "Next page"}, spellDocRelative, 0)
	}
	if hasPrint(n) {
		add(link{kind: linkPage, place: placeFooter, host: h, nd: node{n, variantPrint}, text: "Print this page"}, spellRootRelative, 0)
	}
	if k := g.trap(h); k != NoTrap && b%5 == 0 {
		add(link{kind: linkTrap, place: placeFooter, host: h, target: g.trapEntry(k, h), text: trapLinkText[k]}, spellRootRelative, 0)
	}
	if x := g.hash(saltBroken, uint64(h), uint64(b)); x%6 == 0 && n > 0 {
		t := dir(n) + "missing-" + strconv.Itoa(g.pages+int(x>>8%1000)) + ".html"
		add(link{kind: linkBroken, place: placeFooter, host: h, target: t, text: "Archived version"}, spellRootRelative, 0)
	}
	if hrefs {
		links = append(links,
			link{kind: linkJunk, place: placeFooter, href: "mailto:editor@" + HostName(h) + "?subject=Feedback", text: "Contact the editor"},
			link{kind: linkJunk, place: placeFooter, href: "javascript:void(0)", text: "Share"},
			link{kind: linkJunk, place: placeFooter, href: "tel:+15555550100", text: "Call us"},
		)
	}
	return links
}

// navTitles are the navigation's names of the sections.
var navTitles = [len(sections)]string{"Docs", "Blog", "News", "Team", "Shop", "Private", "Notes", "Guides"}

// getBuf and putBuf recycle page buffers.
func (g *generator) getBuf() *[]byte { return g.bufs.Get().(*[]byte) }

func (g *generator) putBuf(b *[]byte) {
	if cap(*b) <= 64<<10 {
		*b = (*b)[:0]
		g.bufs.Put(b)
	}
}

// Page sizes: the whole page aims at [pageMin, pageMax), leaving room
// below 30 KB for the last block of prose to overshoot.
const (
	pageMin = 10<<10 + 256
	pageMax = 30<<10 - 1600
)

// renderPage appends the HTML of page (h, nd) to buf. The print and index
// variants render exactly the bytes of their primary page, so they are
// exact duplicates under another URL; pages of a near-duplicate cluster
// differ only in their date line, edition number, canonical link and next
// link.
func (g *generator) renderPage(buf []byte, h int, nd node) []byte {
	n := nd.n
	b := clusterBase(n)
	links := g.pageLinks(h, n, true)
	r := rng(g.hash(saltBody, uint64(h), uint64(b)))
	start := len(buf)
	buf = g.appendHead(buf, h, n, links, &r)
	tailAt := len(buf)
	buf = appendTail(buf, h, links)
	tail := string(buf[tailAt:])
	buf = buf[:tailAt]

	// The prose fills the page up to its size target. The target and the
	// room taken by head and tail are those of the cluster's first page,
	// so that every member of a cluster gets the same prose.
	overhead := len(tail) + tailAt - start
	if b != n {
		bl := g.pageLinks(h, b, true)
		br := rng(g.hash(saltBody, uint64(h), uint64(b)))
		scratch := g.appendHead(nil, h, b, bl, &br)
		overhead = len(appendTail(scratch, h, bl))
	}
	want := pageMin + int(g.hash(saltSize, uint64(h), uint64(b))%(pageMax-pageMin)) - overhead
	buf = g.appendProse(buf, h, links, &r, want)
	return append(buf, tail...)
}

// appendHead appends everything before the prose.
func (g *generator) appendHead(buf []byte, h, n int, links []link, r *rng) []byte {
	title := g.title(h, n)
	buf = append(buf, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>"...)
	buf = append(buf, title...)
	buf = append(buf, "</title>\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<meta name=\"description\" content=\""...)
	buf = append(buf, g.sentences[r.intn(len(g.sentences))]...)
	buf = append(buf, "\">\n<link rel=\"canonical\" href=\""...)
	buf = append(buf, g.pageURL(h, node{n, variantPrimary})...)
	buf = append(buf, "\">\n<link rel=\"stylesheet\" href=\"/static/site.css\">\n</head>\n<body>\n<header>\n<p class=\"site-name\">"...)
	buf = append(buf, HostName(h)...)
	buf = append(buf, "</p>\n<nav>\n<ul>\n"...)
	for _, l := range links {
		if l.place == placeNav {
			buf = append(buf, "<li>"...)
			buf = appendAnchor(buf, l)
			buf = append(buf, "</li>\n"...)
		}
	}
	buf = append(buf, "</ul>\n</nav>\n</header>\n<main>\n<article>\n<h1>"...)
	buf = append(buf, title...)
	buf = append(buf, "</h1>\n<p class=\"byline\">Updated on "...)
	d := g.hash(saltDate, uint64(h), uint64(n))
	buf = append(buf, "2026-"...)
	buf = appendTwo(buf, int(d%12)+1)
	buf = append(buf, '-')
	buf = appendTwo(buf, int(d>>8%28)+1)
	buf = append(buf, " · edition "...)
	buf = strconv.AppendInt(buf, int64(n-clusterBase(n)+1), 10)
	return append(buf, "</p>\n"...)
}

// appendProse appends paragraphs, headings and lists until size bytes are
// written and every inline link has been placed.
func (g *generator) appendProse(buf []byte, h int, links []link, r *rng, size int) []byte {
	start := len(buf)
	li := 0
	for len(buf)-start < size || li < len(links) && hasPlace(links[li:], placeInline) {
		switch k := r.intn(10); {
		case k < 1:
			buf = append(buf, "<h2>"...)
			buf = append(buf, g.title(h, int(r.next()%1000)+1)...)
			buf = append(buf, "</h2>\n"...)
		case k < 3:
			buf = append(buf, "<ul>\n"...)
			for i, m := 0, 3+r.intn(4); i < m; i++ {
				buf = append(buf, "<li>"...)
				buf = append(buf, g.sentences[r.intn(len(g.sentences))]...)
				buf = append(buf, "</li>\n"...)
			}
			buf = append(buf, "</ul>\n"...)
		default:
			buf = append(buf, "<p>"...)
			m := 3 + r.intn(5)
			at := r.intn(m)
			for i := 0; i < m; i++ {
				if i > 0 {
					buf = append(buf, ' ')
				}
				buf = append(buf, g.sentences[r.intn(len(g.sentences))]...)
				if i == at {
					for li < len(links) && links[li].place != placeInline {
						li++
					}
					if li < len(links) {
						buf = append(buf, " See "...)
						buf = appendAnchor(buf, links[li])
						buf = append(buf, '.')
						li++
					}
				}
			}
			buf = append(buf, "</p>\n"...)
		}
	}
	return buf
}

// appendTail appends everything after the prose.
func appendTail(buf []byte, h int, links []link) []byte {
	buf = append(buf, "<h2>Related reading</h2>\n<ul class=\"related\">\n"...)
	for _, l := range links {
		if l.place == placeList {
			buf = append(buf, "<li>"...)
			buf = appendAnchor(buf, l)
			buf = append(buf, "</li>\n"...)
		}
	}
	buf = append(buf, "</ul>\n</article>\n</main>\n<footer>\n<ul class=\"footer-links\">\n"...)
	for _, l := range links {
		if l.place == placeFooter {
			buf = append(buf, "<li>"...)
			buf = appendAnchor(buf, l)
			buf = append(buf, "</li>\n"...)
		}
	}
	buf = append(buf, "</ul>\n<p class=\"copyright\">© 2026 "...)
	buf = append(buf, HostName(h)...)
	return append(buf, ". All rights reserved.</p>\n</footer>\n</body>\n</html>\n"...)
}

func hasPlace(links []link, place uint8) bool {
	for _, l := range links {
		if l.place == place {
			return true
		}
	}
	return false
}

func appendTwo(buf []byte, v int) []byte {
	return append(buf, byte('0'+v/10), byte('0'+v%10))
}

// appendAnchor appends <a href="…">text</a>, escaping '&' in the href as
// HTML requires.
func appendAnchor(buf []byte, l link) []byte {
	buf = append(buf, "<a href=\""...)
	for i := 0; i < len(l.href); i++ {
		if l.href[i] == '&' {
			buf = append(buf, "&amp;"...)
		} else {
			buf = append(buf, l.href[i])
		}
	}
	buf = append(buf, "\">"...)
	buf = append(buf, l.text...)
	return append(buf, "</a>"...)
}
