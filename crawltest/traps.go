package crawltest

import (
	"net/http"
	"strconv"
	"strings"
)

// TrapKind is a kind of spider trap: a region of a host that mints new
// URLs without end.
type TrapKind int

// The spider traps. Every third host (h0001, h0004, h0007, …) has one, the
// kinds taking turns; pages whose number is a multiple of five link to the
// trap's entry. A crawler that follows every link never finishes such a
// host.
const (
	// NoTrap marks a host without a trap.
	NoTrap TrapKind = iota
	// TrapCalendar is an infinite calendar under /calendar/YYYY/MM/:
	// every month links to the previous and the next one.
	TrapCalendar
	// TrapRepeatingPath is a directory under /loop/ whose pages link to
	// the relative references "a/" and "b/", so the path grows by a
	// repeated segment on every hop (/loop/a/b/a/…).
	TrapRepeatingPath
	// TrapSessionID is an account area under /account/ whose links carry
	// a fresh sessionid query parameter on every response, so the same
	// three pages appear under ever new URLs. A crawler that strips the
	// session parameter sees just three pages.
	TrapSessionID
	// TrapGrowingQuery is a search page under /search whose results link
	// to refinements that append a word to the q parameter.
	TrapGrowingQuery
)

var trapNames = [...]string{"none", "calendar", "repeating-path", "session-id", "growing-query"}

var trapLinkText = [...]string{"", "Event calendar", "Browse the archive", "Your account", "Search this site"}

// String returns the trap kind's name, such as "calendar".
func (k TrapKind) String() string {
	if k < 0 || int(k) >= len(trapNames) {
		return "TrapKind(" + strconv.Itoa(int(k)) + ")"
	}
	return trapNames[k]
}

// trap returns the trap kind of host h.
func (g *generator) trap(h int) TrapKind {
	if g.noTraps || h%3 != 1 {
		return NoTrap
	}
	return TrapKind(h/3%4) + TrapCalendar
}

// trapEntry returns the canonical request target that host h's pages link
// to for its trap.
func (g *generator) trapEntry(k TrapKind, h int) string {
	switch k {
	case TrapCalendar:
		return "/calendar/2026/06/"
	case TrapRepeatingPath:
		return "/loop/"
	case TrapSessionID:
		return "/account/?sessionid=" + sessionID(g.hash(saltTrap, uint64(h), 0))
	case TrapGrowingQuery:
		return "/search?q=" + words[g.hash(saltTrap, uint64(h), 1)%uint64(len(words))]
	}
	return ""
}

func sessionID(x uint64) string {
	const digits = "0123456789abcdef"
	var b [16]byte
	for i := range b {
		b[i] = digits[x>>(4*i)&15]
	}
	return string(b[:])
}

// inTrap reports whether a canonical request target lies in a trap's
// region.
func inTrap(k TrapKind, target string) bool {
	path, _, _ := strings.Cut(target, "?")
	switch k {
	case TrapCalendar:
		return strings.HasPrefix(path, "/calendar/")
	case TrapRepeatingPath:
		return strings.HasPrefix(path, "/loop/")
	case TrapSessionID:
		return strings.HasPrefix(path, "/account/")
	case TrapGrowingQuery:
		return path == "/search"
	}
	return false
}

// trapLinks returns the hrefs and texts of a trap page's onward links, or
// ok false if target is not a page of the trap (it then answers 404).
func (g *generator) trapLinks(k TrapKind, target string) (hrefs, texts []string, ok bool) {
	path, query, _ := strings.Cut(target, "?")
	switch k {
	case TrapCalendar:
		rest, found := strings.CutPrefix(path, "/calendar/")
		ys, rest, _ := strings.Cut(rest, "/")
		ms, _, _ := strings.Cut(rest, "/")
		y, ok1 := parseIndex(ys)
		m, ok2 := parseIndex(ms)
		if !found || !ok1 || !ok2 || y < 1 || m < 1 || m > 12 || calendarPath(y, m) != path {
			return nil, nil, false
		}
		py, pm, ny, nm := y, m-1, y, m+1
		if pm == 0 {
			py, pm = y-1, 12
		}
		if nm == 13 {
			ny, nm = y+1, 1
		}
		if py >= 1 {
			hrefs = append(hrefs, calendarPath(py, pm))
			texts = append(texts, "Previous month")
		}
		if ny < 1e9 {
			hrefs = append(hrefs, calendarPath(ny, nm))
			texts = append(texts, "Next month")
		}
		return hrefs, texts, true
	case TrapRepeatingPath:
		for _, seg := range strings.Split(strings.TrimSuffix(strings.TrimPrefix(path, "/loop/"), "/"), "/") {
			if seg != "" && seg != "a" && seg != "b" {
				return nil, nil, false
			}
		}
		if !strings.HasSuffix(path, "/") {
			return nil, nil, false
		}
		return []string{"a/", "b/"}, []string{"Section A", "Section B"}, true
	case TrapSessionID:
		var page string
		switch path {
		case "/account/", "/account/orders", "/account/settings":
			page = path
		default:
			return nil, nil, false
		}
		sid, _ := strings.CutPrefix(query, "sessionid=")
		x := mix64(g.seed ^ uint64(len(page)))
		for i := 0; i < len(sid); i++ {
			x = mix64(x ^ uint64(sid[i]))
		}
		for i, p := range [...]string{"./", "orders", "settings"} {
			hrefs = append(hrefs, p+"?sessionid="+sessionID(mix64(x+uint64(i))))
		}
		return hrefs, []string{"Account", "Orders", "Settings"}, true
	case TrapGrowingQuery:
		q, found := strings.CutPrefix(query, "q=")
		if path != "/search" || !found || q == "" || strings.Contains(q, "&") {
			return nil, nil, false
		}
		x := mix64(g.seed ^ uint64(len(q)))
		for _, w := range [...]uint64{0, 1} {
			next := words[mix64(x+w)%uint64(len(words))]
			hrefs = append(hrefs, "/search?q="+q+"+"+next)
			texts = append(texts, "Refine: "+next)
		}
		return hrefs, texts, true
	}
	return nil, nil, false
}

func calendarPath(y, m int) string {
	return "/calendar/" + strconv.Itoa(y) + "/" + string([]byte{byte('0' + m/10), byte('0' + m%10)}) + "/"
}

// serveTrap answers a request inside a trap's region with a small page of
// onward links (or 404 for targets that are not pages of the trap).
func (g *generator) serveTrap(rw http.ResponseWriter, h int, k TrapKind, target string) {
	hrefs, texts, ok := g.trapLinks(k, target)
	if !ok {
		g.serveNotFound(rw, h)
		return
	}
	bp := g.getBuf()
	defer g.putBuf(bp)
	buf := *bp
	r := rng(g.hash(saltTrap, uint64(h), uint64(len(target))))
	buf = append(buf, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>"...)
	buf = append(buf, trapLinkText[k]...)
	buf = append(buf, "</title>\n</head>\n<body>\n<nav><a href=\"/\">Home</a></nav>\n<main>\n<h1>"...)
	buf = append(buf, trapLinkText[k]...)
	buf = append(buf, "</h1>\n"...)
	for i := 0; i < 6; i++ {
		buf = append(buf, "<p>"...)
		for j := 0; j < 4; j++ {
			buf = append(buf, g.sentences[r.intn(len(g.sentences))]...)
			buf = append(buf, ' ')
		}
		buf = append(buf, "</p>\n"...)
	}
	buf = append(buf, "<ul>\n"...)
	for i, href := range hrefs {
		buf = append(buf, "<li>"...)
		buf = appendAnchor(buf, link{href: href, text: texts[i]})
		buf = append(buf, "</li>\n"...)
	}
	buf = append(buf, "</ul>\n</main>\n</body>\n</html>\n"...)
	*bp = buf
	hdr := rw.Header()
	hdr.Set("Content-Type", "text/html; charset=utf-8")
	hdr.Set("Content-Length", strconv.Itoa(len(buf)))
	_, _ = rw.Write(buf)
}
