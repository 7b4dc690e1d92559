package crawltest

import (
	"encoding/base64"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// JSHost is the virtual host of the JavaScript site, served when
// Config.JSPages is positive. Its pages are built the ways single-page
// applications build theirs: some have links only after their scripts run
// (an empty <div id="root"> filled from a JSON API, a Vue or Angular shell, a
// Next.js shell filled from __NEXT_DATA__, a noscript page filled by a timer,
// a server-rendered article whose related links a script adds), others are
// complete without scripts (plain pages, a server-rendered Next.js page, a
// text-heavy page with many analytics scripts). JSTruth says which is which.
//
// Its robots.txt disallows /private-api/ for every agent, and one page (the
// JSLeakPath page) has a script that requests private and link-local
// addresses and a disallowed API URL. Those addresses are only written in
// the script: Web.DialContext refuses them, so nothing ever connects there.
const JSHost = "app.test"

// JSLeakPath is the path of the page whose script requests addresses a
// crawler's browser must refuse (see JSTruth.PrivateTargets and
// JSTruth.DisallowedTargets). If one of its requests succeeds, the page adds
// a link to /leaked-N, N being the request's index; otherwise a link to
// /p/1.
const JSLeakPath = "/leak"

// Kinds of JSHost page, as reported in JSPage.Kind.
const (
	JSKindHome      = "home"       // plain HTML linking the first pages
	JSKindStatic    = "static"     // plain HTML, no scripts
	JSKindReactRoot = "react-root" // empty #root, links from /api/links via XHR
	JSKindVueApp    = "vue-app"    // empty #app, links from an inline script
	JSKindNextShell = "next-shell" // empty #__next, links from __NEXT_DATA__
	JSKindNoscript  = "noscript"   // "enable JavaScript" noscript, links added by a timer
	JSKindNextSSR   = "next-ssr"   // server-rendered #__next: complete without scripts
	JSKindHybrid    = "hybrid"     // server-rendered article, related links added by a script
	JSKindAngular   = "angular"    // empty <app-root>, links from /static/main.js
	JSKindScripts   = "scripts"    // text-heavy page with many analytics scripts
	JSKindLeak      = "leak"       // the JSLeakPath page
)

// jsKinds deals kinds out to pages 1, 2, …
var jsKinds = [...]string{
	JSKindStatic, JSKindReactRoot, JSKindVueApp, JSKindNextShell, JSKindNoscript,
	JSKindNextSSR, JSKindHybrid, JSKindAngular, JSKindScripts,
}

// jsNeedsJS says which kinds have links only after scripts run.
func jsNeedsJS(kind string) bool {
	switch kind {
	case JSKindHome, JSKindStatic, JSKindNextSSR, JSKindScripts:
		return false
	}
	return true
}

// maxJSPages bounds Config.JSPages.
const maxJSPages = 100_000

// JSPage is the ground truth of one page of JSHost.
type JSPage struct {
	URL  string // canonical URL
	Kind string // one of the JSKind constants
	// NeedsJS reports that some of the page's links exist only after its
	// scripts run: a crawler must render it to find them.
	NeedsJS bool
	// Links are the canonical URLs of the page's links once its scripts
	// have run; StaticLinks those present in the HTML as served.
	Links, StaticLinks []string
}

// JSTruth is the ground truth of the JavaScript site.
type JSTruth struct {
	// Seed is the site's home page, "http://app.test/".
	Seed string
	// Pages holds every page by canonical URL.
	Pages map[string]JSPage
	// WithJS lists the pages reachable from Seed by a crawler that renders
	// pages (follows links present after scripts run); WithoutJS those
	// reachable from the HTML as served. Both sorted.
	WithJS, WithoutJS []string
	// PrivateTargets are the URLs the JSLeakPath page's script requests
	// that an address guard must refuse (private, link-local, unique-local
	// addresses).
	PrivateTargets []string
	// DisallowedTargets are the URLs it requests that robots.txt
	// disallows.
	DisallowedTargets []string
}

// NeedsJS reports whether the page at rawURL (any spelling) is a page of the
// JavaScript site whose links exist only after its scripts run.
func (t *JSTruth) NeedsJS(rawURL string) bool {
	c, err := Canonical(rawURL)
	if err != nil {
		return false
	}
	return t.Pages[c].NeedsJS
}

// jsPrivateTargets are requested by the leak page's script.
var jsPrivateTargets = []string{
	"http://10.0.0.1/admin",
	"http://169.254.169.254/latest/meta-data/",
	"http://192.168.1.1/",
	"http://[fd00::1]/",
}

const jsDisallowed = "/private-api/data"

// JSSeed returns the JavaScript site's home page URL, or "" when
// Config.JSPages is zero.
func (w *Web) JSSeed() string {
	if w.cfg.JSPages <= 0 {
		return ""
	}
	return "http://" + JSHost + "/"
}

// JSTruth returns the ground truth of the JavaScript site, or nil when
// Config.JSPages is zero.
func (w *Web) JSTruth() *JSTruth {
	n := w.cfg.JSPages
	if n <= 0 {
		return nil
	}
	t := &JSTruth{Seed: w.JSSeed(), Pages: make(map[string]JSPage, n+1)}
	for _, p := range jsAllPaths(n) {
		kind := jsKind(p)
		links, static := jsLinks(n, p)
		page := JSPage{URL: jsURL(p), Kind: kind, NeedsJS: jsNeedsJS(kind)}
		for _, l := range links {
			page.Links = append(page.Links, jsURL(l))
		}
		for _, l := range static {
			page.StaticLinks = append(page.StaticLinks, jsURL(l))
		}
		t.Pages[page.URL] = page
	}
	t.WithJS = jsReach(t, func(p JSPage) []string { return p.Links })
	t.WithoutJS = jsReach(t, func(p JSPage) []string { return p.StaticLinks })
	t.PrivateTargets = slices.Clone(jsPrivateTargets)
	t.DisallowedTargets = []string{jsURL(jsDisallowed)}
	return t
}

func jsReach(t *JSTruth, links func(JSPage) []string) []string {
	seen := map[string]bool{t.Seed: true}
	queue := []string{t.Seed}
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		for _, l := range links(t.Pages[u]) {
			if _, ok := t.Pages[l]; ok && !seen[l] {
				seen[l] = true
				queue = append(queue, l)
			}
		}
	}
	out := make([]string, 0, len(seen))
	for u := range seen {
		out = append(out, u)
	}
	slices.Sort(out)
	return out
}

func jsURL(path string) string { return "http://" + JSHost + path }

// jsAllPaths lists the paths of the pages: the home, /p/1 … /p/n-1 and
// the leak page.
func jsAllPaths(n int) []string {
	paths := []string{"/"}
	for i := 1; i < n; i++ {
		paths = append(paths, "/p/"+strconv.Itoa(i))
	}
	return append(paths, JSLeakPath)
}

// jsPageIndex parses "/p/N" (canonical spelling only).
func jsPageIndex(path string) (int, bool) {
	rest, ok := strings.CutPrefix(path, "/p/")
	if !ok {
		return 0, false
	}
	i, ok := parseIndex(rest)
	if !ok || strconv.Itoa(i) != rest || i < 1 {
		return 0, false
	}
	return i, true
}

func jsKind(path string) string {
	switch path {
	case "/":
		return JSKindHome
	case JSLeakPath:
		return JSKindLeak
	}
	i, _ := jsPageIndex(path)
	return jsKinds[(i-1)%len(jsKinds)]
}

// jsLinks returns the paths a page links to once its scripts ran, and those
// in its HTML as served.
func jsLinks(n int, path string) (all, static []string) {
	switch path {
	case "/":
		for i := 1; i < n && i <= 9; i++ {
			all = append(all, "/p/"+strconv.Itoa(i))
		}
		all = append(all, JSLeakPath)
		return all, all
	case JSLeakPath:
		return []string{"/p/1", "/p/2"}, nil
	}
	i, _ := jsPageIndex(path)
	add := func(j int) {
		if j >= 1 && j < n && j != i {
			p := "/p/" + strconv.Itoa(j)
			if !slices.Contains(all, p) {
				all = append(all, p)
			}
		}
	}
	add(i + 1)
	for k := 0; k < 3; k++ {
		add((3*i + 7*k + 1) % n)
	}
	all = append(all, "/")
	switch jsKind(path) {
	case JSKindStatic, JSKindNextSSR, JSKindScripts:
		static = all
	case JSKindHybrid:
		// The article's own navigation is HTML; the related links come
		// from the script.
		static = []string{"/"}
	}
	return all, static
}

// jsProse returns k sentences of the page's prose.
func (g *generator) jsProse(path string, k int) string {
	r := rng(g.hash(saltBody, 1<<40, uint64(len(path))<<32^uint64(pathHash(path))))
	var b strings.Builder
	for i := 0; i < k; i++ {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(g.sentences[r.intn(len(g.sentences))])
	}
	return b.String()
}

func pathHash(s string) uint32 {
	h := uint32(2166136261)
	for i := 0; i < len(s); i++ {
		h = (h ^ uint32(s[i])) * 16777619
	}
	return h
}

// jsAnchors writes links as HTML anchors.
func jsAnchors(links []string) string {
	var b strings.Builder
	b.WriteString("<ul>\n")
	for _, l := range links {
		b.WriteString(`<li><a href="` + l + `">` + jsLinkText(l) + "</a></li>\n")
	}
	b.WriteString("</ul>\n")
	return b.String()
}

func jsLinkText(l string) string {
	if l == "/" {
		return "Home"
	}
	return "Page " + strings.TrimPrefix(l, "/p/")
}

// jsQuote writes links as a JavaScript array of strings, each reversed so
// that no URL appears in the HTML.
func jsQuote(links []string) string {
	parts := make([]string, len(links))
	for i, l := range links {
		r := []byte(l)
		slices.Reverse(r)
		parts[i] = strconv.Quote(string(r))
	}
	return "[" + strings.Join(parts, ",") + "]"
}

// jsAddLinks is the inline function the shells use to add links.
const jsAddLinks = `function addLinks(el, links) {
  const ul = document.createElement("ul");
  for (const l of links) {
    const li = document.createElement("li"), a = document.createElement("a");
    a.href = l; a.textContent = l === "/" ? "Home" : "Page " + l.slice(3);
    li.appendChild(a); ul.appendChild(li);
  }
  el.appendChild(ul);
}
`

// jsPage renders the HTML of a page.
func (g *generator) jsPage(n int, path string) string {
	kind := jsKind(path)
	all, _ := jsLinks(n, path)
	title := "App " + strings.Trim(strings.ReplaceAll(path, "/", " "), " ")
	if path == "/" {
		title = "App home"
	}
	head := "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>" + title + "</title>\n"
	switch kind {
	case JSKindHome, JSKindStatic:
		return head + "</head>\n<body>\n<h1>" + title + "</h1>\n<p>" + g.jsProse(path, 12) + "</p>\n" + jsAnchors(all) + "</body>\n</html>\n"
	case JSKindReactRoot:
		i, _ := jsPageIndex(path)
		return head + `<script src="/static/vendor.js" defer></script>
<script src="/static/app.js" defer></script>
</head>
<body>
<div id="root" data-page="` + strconv.Itoa(i) + `"></div>
</body>
</html>
`
	case JSKindVueApp:
		return head + "</head>\n<body>\n<div id=\"app\"></div>\n<script>\n" + jsAddLinks +
			"document.addEventListener(\"DOMContentLoaded\", () => addLinks(document.getElementById(\"app\"), " + jsQuote(all) +
			".map(s => s.split(\"\").reverse().join(\"\"))));\n</script>\n<script src=\"/static/vendor.js\"></script>\n</body>\n</html>\n"
	case JSKindNextShell:
		rev := jsQuote(all)
		return head + "</head>\n<body>\n<div id=\"__next\"></div>\n<script id=\"__NEXT_DATA__\" type=\"application/json\">{\"props\":{\"pageProps\":{\"links\":" +
			rev + "}},\"page\":\"/p/[id]\",\"buildId\":\"crawltest\"}</script>\n<script src=\"/static/vendor.js\" defer></script>\n<script src=\"/static/next.js\" defer></script>\n</body>\n</html>\n"
	case JSKindNoscript:
		enc := base64.StdEncoding.EncodeToString([]byte(strings.Join(all, "\n")))
		return head + "</head>\n<body>\n<noscript>You need to enable JavaScript to run this app.</noscript>\n<main id=\"main\"></main>\n<script>\n" + jsAddLinks +
			"setTimeout(() => addLinks(document.getElementById(\"main\"), atob(\"" + enc + "\").split(\"\\n\")), 50);\n</script>\n</body>\n</html>\n"
	case JSKindNextSSR:
		return head + "</head>\n<body>\n<div id=\"__next\"><article><h1>" + title + "</h1>\n<p>" + g.jsProse(path, 14) + "</p>\n" + jsAnchors(all) +
			"</article></div>\n<script id=\"__NEXT_DATA__\" type=\"application/json\">{\"props\":{\"pageProps\":{}},\"page\":\"/p/[id]\",\"buildId\":\"crawltest\"}</script>\n" +
			"<script src=\"/static/vendor.js\" defer></script>\n<script src=\"/static/next.js\" defer></script>\n<script src=\"/static/analytics.js\" async></script>\n</body>\n</html>\n"
	case JSKindHybrid:
		return head + "</head>\n<body>\n<nav><a href=\"/\">Home</a></nav>\n<article><h1>" + title + "</h1>\n<p>" + g.jsProse(path, 16) +
			"</p>\n<h2>Related</h2>\n<div class=\"related\"></div>\n</article>\n<script>\n" + jsAddLinks +
			"addLinks(document.querySelector(\".related\"), " + jsQuote(all[:len(all)-1]) + ".map(s => s.split(\"\").reverse().join(\"\")));\n</script>\n</body>\n</html>\n"
	case JSKindAngular:
		i, _ := jsPageIndex(path)
		return head + "<base href=\"/\">\n</head>\n<body>\n<app-root data-page=\"" + strconv.Itoa(i) + "\"></app-root>\n" +
			"<script src=\"/static/vendor.js\" type=\"module\"></script>\n<script src=\"/static/main.js\" type=\"module\"></script>\n</body>\n</html>\n"
	case JSKindScripts:
		var scripts strings.Builder
		for k := 0; k < 6; k++ {
			scripts.WriteString("<script src=\"/static/analytics.js?v=" + strconv.Itoa(k) + "\" async></script>\n")
		}
		return head + scripts.String() + "</head>\n<body>\n<h1>" + title + "</h1>\n<p>" + g.jsProse(path, 14) + "</p>\n" + jsAnchors(all) +
			"<script>window.dataLayer = window.dataLayer || []; dataLayer.push({event: \"view\"});</script>\n</body>\n</html>\n"
	case JSKindLeak:
		var targets []string
		targets = append(targets, jsPrivateTargets...)
		targets = append(targets, jsDisallowed)
		quoted := make([]string, len(targets))
		for i, t := range targets {
			quoted[i] = strconv.Quote(t)
		}
		return head + "</head>\n<body>\n<div id=\"app\"></div>\n<script>\n" + jsAddLinks +
			"const targets = [" + strings.Join(quoted, ", ") + "];\n" +
			"Promise.allSettled(targets.map(u => fetch(u, {mode: \"no-cors\"}))).then(rs => {\n" +
			"  const links = rs.map((r, i) => r.status === \"fulfilled\" ? \"/leaked-\" + i : \"/p/1\");\n" +
			"  links.push(\"/p/2\");\n" +
			"  addLinks(document.getElementById(\"app\"), [...new Set(links)]);\n});\n</script>\n</body>\n</html>\n"
	}
	return head + "</head><body></body></html>\n"
}

// jsStatic holds the site's scripts.
var jsStatic = map[string]string{
	"/static/vendor.js":    "/* a stand-in for a framework bundle */\nwindow.__vendor = {version: \"1.0.0\"};\n",
	"/static/analytics.js": "/* page-view analytics */\nwindow.dataLayer = window.dataLayer || [];\n",
	"/static/app.js": jsAddLinks + `const root = document.getElementById("root");
fetch("/api/links?page=" + root.dataset.page)
  .then(r => r.json())
  .then(links => addLinks(root, links));
`,
	"/static/next.js": jsAddLinks + `const data = JSON.parse(document.getElementById("__NEXT_DATA__").textContent);
const root = document.getElementById("__next");
if (data.props.pageProps.links && root.children.length === 0) {
  addLinks(root, data.props.pageProps.links.map(s => s.split("").reverse().join("")));
}
`,
	"/static/main.js": jsAddLinks + `const root = document.querySelector("app-root");
root.setAttribute("ng-version", "17.0.0");
fetch("/api/links?page=" + root.dataset.page)
  .then(r => r.json())
  .then(links => addLinks(root, links));
`,
}

// jsRobots is the site's robots.txt.
const jsRobots = "User-agent: *\nDisallow: /private-api/\n"

// JSReport is the server's accounting of requests to JSHost.
type JSReport struct {
	// Requests counts them all; PerPath counts them by request target.
	Requests int
	PerPath  map[string]int
	// RobotsViolations counts requests for paths robots.txt disallows.
	RobotsViolations int
	// MaxInFlight is the most requests in flight at once (other than for
	// robots.txt); Gaps counts the measured gaps between one request's
	// end and the next one's start, and MinGap is the shortest.
	MaxInFlight int
	Gaps        int
	MinGap      time.Duration
}

// jsAccounting records requests to JSHost.
type jsAccounting struct {
	mu       sync.Mutex
	rep      JSReport
	inFlight int
	lastEnd  time.Time
	ended    bool
}

// begin and end read the clock under the lock, so that arrivals and ends
// are accounted in the order of their times.
func (a *jsAccounting) begin(r *http.Request, clock func() time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	now := clock()
	if a.rep.PerPath == nil {
		a.rep.PerPath = map[string]int{}
	}
	a.rep.Requests++
	a.rep.PerPath[r.URL.RequestURI()]++
	if strings.HasPrefix(r.URL.Path, "/private-api/") {
		a.rep.RobotsViolations++
	}
	if r.URL.Path == "/robots.txt" {
		return
	}
	if a.inFlight == 0 && a.ended {
		gap := now.Sub(a.lastEnd)
		if a.rep.Gaps == 0 || gap < a.rep.MinGap {
			a.rep.MinGap = gap
		}
		a.rep.Gaps++
	}
	a.inFlight++
	a.rep.MaxInFlight = max(a.rep.MaxInFlight, a.inFlight)
}

// reset clears the report. Requests in flight stay in flight (their end
// is still to come), and the next gap is measured from a later end.
func (a *jsAccounting) reset() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.rep = JSReport{MaxInFlight: a.inFlight}
	a.ended = false
}

func (a *jsAccounting) end(r *http.Request, clock func() time.Time) {
	if r.URL.Path == "/robots.txt" {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	now := clock()
	a.inFlight--
	a.lastEnd, a.ended = now, true
}

// JSReport returns the accounting of requests to JSHost.
func (w *Web) JSReport() JSReport {
	w.js.mu.Lock()
	defer w.js.mu.Unlock()
	rep := w.js.rep
	rep.PerPath = make(map[string]int, len(w.js.rep.PerPath))
	for k, v := range w.js.rep.PerPath {
		rep.PerPath[k] = v
	}
	return rep
}

// serveJS answers a request to JSHost.
func (w *Web) serveJS(rw http.ResponseWriter, r *http.Request) {
	w.js.begin(r, w.cfg.Now)
	ended := false
	end := func() {
		if !ended {
			ended = true
			w.js.end(r, w.cfg.Now)
		}
	}
	defer end()
	if w.cfg.OnRequest != nil {
		w.cfg.OnRequest(r)
	}
	if w.cfg.Latency > 0 {
		w.sleep(r.Context(), w.cfg.Latency)
	}
	end()
	hdr := rw.Header()
	path := r.URL.Path
	switch {
	case path == "/robots.txt":
		hdr.Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = rw.Write([]byte(jsRobots))
		return
	case jsStatic[path] != "":
		hdr.Set("Content-Type", "text/javascript; charset=utf-8")
		hdr.Set("Cache-Control", "max-age=3600")
		_, _ = rw.Write([]byte(jsStatic[path]))
		return
	case path == "/api/links":
		i, ok := parseIndex(r.URL.Query().Get("page"))
		if ok && i >= 1 && i < w.cfg.JSPages {
			all, _ := jsLinks(w.cfg.JSPages, "/p/"+strconv.Itoa(i))
			quoted := make([]string, len(all))
			for k, l := range all {
				quoted[k] = strconv.Quote(l)
			}
			hdr.Set("Content-Type", "application/json")
			_, _ = rw.Write([]byte("[" + strings.Join(quoted, ",") + "]"))
			return
		}
	case path == jsDisallowed:
		hdr.Set("Content-Type", "application/json")
		_, _ = rw.Write([]byte(`{"secret":true}`))
		return
	case r.URL.RawQuery == "" && (path == "/" || path == JSLeakPath):
		hdr.Set("Content-Type", "text/html; charset=utf-8")
		_, _ = rw.Write([]byte(w.gen.jsPage(w.cfg.JSPages, path)))
		return
	}
	if i, ok := jsPageIndex(path); ok && i < w.cfg.JSPages && r.URL.RawQuery == "" {
		hdr.Set("Content-Type", "text/html; charset=utf-8")
		_, _ = rw.Write([]byte(w.gen.jsPage(w.cfg.JSPages, path)))
		return
	}
	hdr.Set("Content-Type", "text/html; charset=utf-8")
	rw.WriteHeader(http.StatusNotFound)
	_, _ = rw.Write([]byte("<!DOCTYPE html>\n<html><head><title>Not found</title></head><body><h1>Not found</h1><a href=\"/\">Home</a></body></html>\n"))
}
