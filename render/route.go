package render

import (
	"bytes"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// Signal is one reason a page may need rendering; a Decision holds a set
// of them.
type Signal uint8

// Signals found by Heuristic.Decide.
const (
	// SignalEmptyRoot: an application root element (<div id="root">,
	// <app-root>, an element with ng-app, …) with nothing in it.
	SignalEmptyRoot Signal = 1 << iota
	// SignalNoscript: a <noscript> asking the reader to enable JavaScript,
	// on a page with little text.
	SignalNoscript
	// SignalLittleText: little visible text under many scripts.
	SignalLittleText
	// SignalFramework: a client-side framework's marker on a page with
	// few links.
	SignalFramework
)

var signalNames = [...]string{"empty-root", "noscript", "little-text", "framework"}

// String lists the signals, separated by '+' ("empty-root+little-text"),
// or "none".
func (s Signal) String() string {
	if s == 0 {
		return "none"
	}
	var parts []string
	for i, name := range signalNames {
		if s&(1<<i) != 0 {
			parts = append(parts, name)
		}
	}
	return strings.Join(parts, "+")
}

// The defaults of Heuristic. They are functions returning a new slice on
// every call, so that no importer can change what another's zero
// Heuristic detects; the Heuristic reads the unexported lists.

// DefaultAppRoots returns the id values of the mount points of common
// client-side frameworks (React, Vue, Next.js, Nuxt, Gatsby, Svelte,
// Remix, Ember, Preact).
func DefaultAppRoots() []string { return slices.Clone(defaultAppRoots) }

// DefaultRootElements returns the element names used as mount points
// (Angular's <app-root>).
func DefaultRootElements() []string { return slices.Clone(defaultRootElements) }

// DefaultNoscriptPhrases returns the phrases matched, case-insensitively,
// against the text of <noscript> elements.
func DefaultNoscriptPhrases() []string { return slices.Clone(defaultNoscriptPhrases) }

// DefaultMarkers returns the strings matched, case-insensitively, against
// attribute names, id values and script sources: the fingerprints of
// client-side frameworks.
func DefaultMarkers() []string { return slices.Clone(defaultMarkers) }

// The default lists, never modified nor handed out.
var (
	defaultAppRoots        = []string{"root", "app", "__next", "__nuxt", "___gatsby", "svelte", "remix", "ember-app", "main-app", "react-root", "app-root", "application"}
	defaultRootElements    = []string{"app-root"}
	defaultNoscriptPhrases = []string{"enable javascript", "javascript is required", "requires javascript", "javascript enabled",
		"turn on javascript", "javascript is disabled", "activate javascript", "need javascript", "javascript to run", "without javascript"}
	defaultMarkers = []string{"data-reactroot", "ng-version", "ng-app", "data-v-app", "data-server-rendered", "__next_data__",
		"/_next/static/", "/_nuxt/", "data-svelte", "data-sveltekit", "ember-view", "data-turbo", "x-data"}
)

// Heuristic decides from the plain fetch of an HTML page whether it needs
// rendering to be crawled: whether its links (probably) exist only after
// its scripts run. Its zero value uses the defaults. A page is routed when
//
//   - it has an empty application root element (SignalEmptyRoot);
//   - a <noscript> asks for JavaScript and the page has less than
//     NoscriptText bytes of visible text (SignalNoscript);
//   - it has less than MinText bytes of visible text and at least
//     MinScripts scripts (SignalLittleText);
//   - it carries a framework marker and fewer than MinLinks links
//     (SignalFramework).
//
// Pages that are complete without scripts but add some links with them (a
// server-rendered article whose "related" box a script fills) look like any
// other page and are not routed; the package's tests measure how often that
// happens on crawltest's JavaScript site.
type Heuristic struct {
	// MinText is the visible text, in bytes of non-space characters,
	// below which a page with MinScripts scripts is routed (default 200).
	MinText int
	// MinScripts is the number of scripts (external or inline code, not
	// JSON data blocks) that counts as many (default 1).
	MinScripts int
	// NoscriptText is the visible text below which a noscript message
	// routes a page (default 2000).
	NoscriptText int
	// MinLinks is the number of <a href> links below which a framework
	// marker routes a page (default 3).
	MinLinks int
	// AppRoots, RootElements, NoscriptPhrases and Markers replace the
	// defaults when non-nil.
	AppRoots, RootElements, NoscriptPhrases, Markers []string
	// MaxBytes bounds the bytes of the body inspected (default 2 MiB).
	MaxBytes int
}

// Decision is the outcome of Heuristic.Decide.
type Decision struct {
	// Render reports that the page should be rendered; Signals says why.
	Render  bool
	Signals Signal
	// Text is the page's visible text in bytes of non-space characters,
	// Scripts its scripts, Links its <a href> links.
	Text, Scripts, Links int
}

// String describes the decision ("render: empty-root (text 0, scripts 2,
// links 0)").
func (d Decision) String() string {
	verdict := "no render"
	if d.Render {
		verdict = "render"
	}
	return verdict + ": " + d.Signals.String() + " (text " + strconv.Itoa(d.Text) + ", scripts " + strconv.Itoa(d.Scripts) + ", links " + strconv.Itoa(d.Links) + ")"
}

func (h *Heuristic) withDefaults() Heuristic {
	d := Heuristic{}
	if h != nil {
		d = *h
	}
	if d.MinText <= 0 {
		d.MinText = 200
	}
	if d.MinScripts <= 0 {
		d.MinScripts = 1
	}
	if d.NoscriptText <= 0 {
		d.NoscriptText = 2000
	}
	if d.MinLinks <= 0 {
		d.MinLinks = 3
	}
	if d.AppRoots == nil {
		d.AppRoots = defaultAppRoots
	}
	if d.RootElements == nil {
		d.RootElements = defaultRootElements
	}
	if d.NoscriptPhrases == nil {
		d.NoscriptPhrases = defaultNoscriptPhrases
	}
	if d.Markers == nil {
		d.Markers = defaultMarkers
	}
	if d.MaxBytes <= 0 {
		d.MaxBytes = 2 << 20
	}
	return d
}

// maxTokenBytes bounds one token of the inspected page.
const maxTokenBytes = 256 << 10

// Decide inspects an HTML body (as fetched, any encoding that is ASCII
// compatible) and decides whether it needs rendering. It reads at most
// MaxBytes of it in one streaming pass and never fails: malformed HTML is
// read the way browsers tokenize it.
func (h *Heuristic) Decide(body []byte) Decision {
	cfg := h.withDefaults()
	if len(body) > cfg.MaxBytes {
		body = body[:cfg.MaxBytes]
	}
	var d Decision
	var (
		noscriptMsg bool
		framework   bool
		emptyRoot   bool
		hidden      int    // depth inside template/svg, whose text is not visible
		inHead      bool   // inside <head>, which ends as the HTML parser ends it (see headElement)
		headDone    bool   // the head has ended or body content has begun: a later <head> is ignored
		rootName    string // the root element being checked for content, or ""
		rootDepth   int    // nesting of rootName inside itself
		rootFilled  bool
	)
	z := html.NewTokenizer(bytes.NewReader(body))
	z.SetMaxBuf(maxTokenBytes)
	var rawTag string // script/style/noscript/… whose raw text comes next
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			break
		}
		switch tt {
		case html.TextToken:
			text := z.Text()
			switch rawTag {
			case "script", "style", "title", "textarea", "xmp", "iframe", "noembed", "noframes":
				if rootName != "" && rawTag != "script" && rawTag != "style" && len(bytes.TrimSpace(text)) > 0 {
					rootFilled = true
				}
			case "noscript":
				if containsAnyFold(text, cfg.NoscriptPhrases) {
					noscriptMsg = true
				}
			default:
				n := nonSpace(text)
				if n > 0 && hidden == 0 {
					// Text that is not white space cannot be in
					// the head: it ends it, and is body text.
					inHead, headDone = false, true
				}
				if hidden == 0 && !inHead {
					d.Text += n
				}
				if rootName != "" && n > 0 {
					rootFilled = true
				}
			}
			rawTag = ""
		case html.StartTagToken, html.SelfClosingTagToken:
			name, hasAttr := z.TagName()
			tag := atom.Lookup(name)
			rawTag = ""
			var id, src, typ string
			isRoot, href := false, false
			for hasAttr {
				var k, v []byte
				k, v, hasAttr = z.TagAttr()
				key := string(k)
				switch key {
				case "id":
					id = string(v)
				case "src":
					src = string(v)
				case "type":
					typ = strings.ToLower(strings.TrimSpace(string(v)))
				case "href":
					href = true
				case "ng-app", "data-ng-app":
					isRoot = true
				}
				if containsAnyFold(k, cfg.Markers) {
					framework = true
				}
			}
			if id != "" && containsAnyFold([]byte(id), cfg.Markers) {
				framework = true
			}
			if src != "" && containsAnyFold([]byte(src), cfg.Markers) {
				framework = true
			}
			if !isRoot && id != "" {
				for _, r := range cfg.AppRoots {
					if strings.EqualFold(id, r) {
						isRoot = true
						break
					}
				}
			}
			if !isRoot {
				for _, r := range cfg.RootElements {
					if string(name) == r {
						isRoot = true
						break
					}
				}
			}
			nameStr := string(name)
			if hidden == 0 && !headElement(tag) {
				// <body>, or an element that cannot be in the head,
				// ends it (tags inside a template in the head do not).
				inHead, headDone = false, true
			}
			if rootName != "" {
				switch {
				case nameStr == rootName && tt == html.StartTagToken:
					rootDepth++
					rootFilled = true
				case tag == atom.Noscript, tag == atom.Script, tag == atom.Style, tag == atom.Template, tag == atom.Link, tag == atom.Meta:
					// Not content.
				default:
					rootFilled = true
				}
			}
			switch tag {
			case atom.Script:
				if typ == "" || strings.Contains(typ, "javascript") || typ == "module" || typ == "text/babel" {
					d.Scripts++
				}
				rawTag = "script"
			case atom.Style, atom.Title, atom.Textarea, atom.Xmp, atom.Iframe, atom.Noembed, atom.Noframes, atom.Noscript:
				rawTag = nameStr
			case atom.A:
				if href {
					d.Links++
				}
			case atom.Head:
				if !headDone {
					inHead = true
				}
			case atom.Template, atom.Svg:
				if tt == html.StartTagToken {
					hidden++
				}
			}
			if isRoot && rootName == "" && tt == html.StartTagToken {
				rootName, rootDepth, rootFilled = nameStr, 0, false
			} else if isRoot && tt == html.SelfClosingTagToken && rootName == "" {
				emptyRoot = true
			}
		case html.EndTagToken:
			name, _ := z.TagName()
			rawTag = ""
			switch atom.Lookup(name) {
			case atom.Head:
				if inHead && hidden == 0 {
					inHead, headDone = false, true
				}
			case atom.Template, atom.Svg:
				if hidden > 0 {
					hidden--
				}
			}
			if rootName != "" && string(name) == rootName {
				if rootDepth > 0 {
					rootDepth--
				} else {
					if !rootFilled {
						emptyRoot = true
					}
					rootName = ""
				}
			}
		}
	}
	if rootName != "" && !rootFilled {
		// The root was never closed and nothing followed it.
		emptyRoot = true
	}
	if emptyRoot {
		d.Signals |= SignalEmptyRoot
	}
	if noscriptMsg && d.Text < cfg.NoscriptText {
		d.Signals |= SignalNoscript
	}
	if d.Text < cfg.MinText && d.Scripts >= cfg.MinScripts {
		d.Signals |= SignalLittleText
	}
	if framework && d.Links < cfg.MinLinks {
		d.Signals |= SignalFramework
	}
	d.Render = d.Signals != 0
	return d
}

// headElement reports whether a start tag may appear in the head without
// ending it. The HTML parser ends the head at </head>, at <body>, at text
// that is not white space, and at the start tag of any element other than
// these; <html> and <head> themselves are ignored there. A page that omits
// </head> (HTML allows it) thus has its body text seen as such.
func headElement(tag atom.Atom) bool {
	switch tag {
	case atom.Html, atom.Head, atom.Base, atom.Basefont, atom.Bgsound, atom.Link, atom.Meta, atom.Title,
		atom.Noscript, atom.Script, atom.Style, atom.Template:
		return true
	}
	return false
}

// nonSpace counts the bytes of text that are not ASCII white space.
func nonSpace(b []byte) int {
	n := 0
	for _, c := range b {
		switch c {
		case ' ', '\t', '\n', '\r', '\f':
		default:
			n++
		}
	}
	return n
}

// containsAnyFold reports whether b contains one of the phrases, compared
// case-insensitively (ASCII).
func containsAnyFold(b []byte, phrases []string) bool {
	if len(b) == 0 {
		return false
	}
	lower := bytes.ToLower(b)
	for _, p := range phrases {
		if p != "" && bytes.Contains(lower, []byte(strings.ToLower(p))) {
			return true
		}
	}
	return false
}
