package crawltest

import (
	"bytes"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// What a request names.
const (
	resNotFound = iota
	resRobots
	resPage
	resTrap
)

// resolution is what a request to a virtual host names.
type resolution struct {
	kind      uint8
	spelling  string // the URL as requested: "http://" + Host + request target
	canonical string // its canonical URL on the host
	target    string // the canonical request target (path and query)
	nd        node   // the page, for resPage
	trap      TrapKind
	// sent is the request target as sent, with percent-encoded
	// unreserved characters decoded: what robots.txt rules are matched
	// against (RFC 9309 §2.2.2).
	sent string
}

// resolve maps a request to host h onto the web.
func (g *generator) resolve(h int, r *http.Request) resolution {
	res := resolution{spelling: r.RequestURI}
	if strings.HasPrefix(r.RequestURI, "/") {
		res.spelling = "http://" + r.Host + r.RequestURI
	}
	c, err := Canonical(res.spelling)
	if err != nil {
		return res
	}
	rest := c[strings.Index(c, "://")+3:]
	res.target = rest[strings.IndexByte(rest, '/'):]
	res.canonical = "http://" + HostName(h) + res.target
	res.sent = sentTarget(r.RequestURI)
	if res.target == "/robots.txt" {
		res.kind = resRobots
		return res
	}
	if k := g.trap(h); k != NoTrap && inTrap(k, res.target) {
		res.kind, res.trap = resTrap, k
		return res
	}
	if nd, ok := g.parseTarget(h, res.target); ok {
		res.kind, res.nd = resPage, nd
	}
	return res
}

// sentTarget returns the path and query of a request target (origin or
// absolute form) as sent, with percent-encoded unreserved characters
// decoded, which RFC 9309 §2.2.2 requires before matching robots.txt rules.
// Unlike Canonical it keeps dot segments, tracking and empty parameters, an
// empty query and the order of parameters.
func sentTarget(requestURI string) string {
	t := requestURI
	if !strings.HasPrefix(t, "/") {
		_, rest, _ := strings.Cut(t, "://")
		i := strings.IndexAny(rest, "/?")
		if i < 0 {
			return "/"
		}
		t = rest[i:]
		if t[0] == '?' {
			t = "/" + t
		}
	}
	t, _, _ = strings.Cut(t, "#")
	path, query, hasQuery := strings.Cut(t, "?")
	t = normalizeEscapes(path)
	if hasQuery {
		t += "?" + normalizeEscapes(query)
	}
	return t
}

// lastModified is the Last-Modified date of every page: fixed, so that
// conditional requests behave the same in every run.
var lastModified = time.Date(2026, time.January, 2, 3, 4, 5, 0, time.UTC)

// write answers a request that resolve mapped to res.
func (g *generator) write(rw http.ResponseWriter, r *http.Request, h int, res resolution) {
	switch res.kind {
	case resRobots:
		g.serveRobots(rw, h)
	case resTrap:
		g.serveTrap(rw, h, res.trap, res.target)
	case resPage:
		bp := g.getBuf()
		*bp = g.renderPage(*bp, h, res.nd)
		hdr := rw.Header()
		hdr.Set("Content-Type", "text/html; charset=utf-8")
		// Exact duplicates have the same bytes and so the same ETag.
		hdr.Set("ETag", `"`+sessionID(g.hash(saltDate, uint64(h), uint64(res.nd.n)^1<<40))+`"`)
		// ServeContent answers conditional and range requests.
		http.ServeContent(rw, r, "", lastModified, bytes.NewReader(*bp))
		g.putBuf(bp)
	default:
		g.serveNotFound(rw, h)
	}
}

// serveRobots answers /robots.txt of host h according to its variant.
func (g *generator) serveRobots(rw http.ResponseWriter, h int) {
	switch v := g.robots(h); v {
	case RobotsMissing:
		g.serveNotFound(rw, h)
	case RobotsUnavailable:
		rw.Header().Set("Content-Type", "text/plain; charset=utf-8")
		rw.Header().Set("Retry-After", "3600")
		rw.WriteHeader(http.StatusServiceUnavailable)
		_, _ = rw.Write([]byte("Service temporarily unavailable.\n"))
	default:
		body := robotsText(v, g.agent, g.delay, HostName(h))
		rw.Header().Set("Content-Type", "text/plain; charset=utf-8")
		rw.Header().Set("Content-Length", strconv.Itoa(len(body)))
		_, _ = rw.Write([]byte(body))
	}
}

func (g *generator) serveNotFound(rw http.ResponseWriter, h int) {
	body := "<!DOCTYPE html>\n<html><head><title>Not found</title></head><body><h1>Not found</h1><p>" +
		HostName(h) + " has no such page. <a href=\"/\">Home</a></p></body></html>\n"
	rw.Header().Set("Content-Type", "text/html; charset=utf-8")
	rw.Header().Set("Content-Length", strconv.Itoa(len(body)))
	rw.WriteHeader(http.StatusNotFound)
	_, _ = rw.Write([]byte(body))
}
