package sitemap

import (
	"fmt"
	"net/url"
	"strings"
)

// scope implements the sitemaps.org "Sitemap file location" rule: "all URLs
// listed in the Sitemap must use the same protocol ... and reside on the same
// host as the Sitemap", and a sitemap at /catalog/sitemap.xml may list URLs
// under /catalog/ only. Ports must match too ("http://example.com:100/" is a
// different location). The cross-submission clause extends the scope to a
// whole host when that host's robots.txt names the sitemap.
//
// Paths are compared after removing dot segments (RFC 3986 §5.2.4), with
// "%2E" taken for ".", as servers resolve them: "/dir/../secret" and
// "/dir/%2e%2e/secret" lie outside "/dir/". The listed URL itself is
// delivered as written.
type scope struct {
	origin string // "scheme://host[:port]", lower case, default port removed
	dir    string // escaped path without dot segments, up to and including the last '/'
	robots string // origin of the robots.txt that listed the sitemap, or ""
}

func newScope(src Source) (scope, error) {
	u, err := url.Parse(strings.TrimSpace(src.URL))
	if err != nil {
		return scope{}, fmt.Errorf("%w: %q: %w", ErrInvalidSource, src.URL, err)
	}
	o := originOf(u)
	if o == "" {
		return scope{}, fmt.Errorf("%w: %q is not an absolute http(s) URL", ErrInvalidSource, src.URL)
	}
	p := cleanPath(u.EscapedPath())
	s := scope{origin: o, dir: p[:strings.LastIndexByte(p, '/')+1]}
	if src.RobotsOrigin != "" {
		ru, err := url.Parse(strings.TrimSpace(src.RobotsOrigin))
		if err != nil || originOf(ru) == "" {
			return scope{}, fmt.Errorf("%w: robots origin %q is not an absolute http(s) URL", ErrInvalidSource, src.RobotsOrigin)
		}
		s.robots = originOf(ru)
	}
	return s, nil
}

// allows reports whether the scope admits u: a page must be on the sitemap's
// origin under its directory, a child sitemap anywhere on the sitemap's
// origin ("A Sitemap index file can only specify Sitemaps that are found on
// the same site"); either may be anywhere on the cross-submitting origin.
func (s *scope) allows(u *url.URL, k Kind) bool {
	o := originOf(u)
	if o == "" {
		return false
	}
	if s.robots != "" && o == s.robots {
		return true
	}
	if o != s.origin {
		return false
	}
	if k == KindSitemap {
		return true
	}
	return strings.HasPrefix(cleanPath(u.EscapedPath()), s.dir)
}

// cleanPath returns the escaped path p of an absolute URL with its dot
// segments removed (RFC 3986 §5.2.4), "%2E" and "%2e" counting as ".", and
// "/" for an empty path.
func cleanPath(p string) string {
	if p == "" || p[0] != '/' {
		p = "/" + p
	}
	if !strings.Contains(p, ".") && !strings.Contains(p, "%2") {
		return p
	}
	segs := strings.Split(p, "/")[1:]
	out := make([]string, 0, len(segs))
	for i, seg := range segs {
		last := i == len(segs)-1
		switch dots(seg) {
		case 1:
			if last {
				out = append(out, "")
			}
		case 2:
			if len(out) > 0 {
				out = out[:len(out)-1]
			}
			if last {
				out = append(out, "")
			}
		default:
			out = append(out, seg)
		}
	}
	return "/" + strings.Join(out, "/")
}

// dots returns 1 for a "." segment, 2 for "..", either spelled with "%2E"
// or "%2e", and 0 for any other segment.
func dots(seg string) int {
	n := 0
	for seg != "" {
		switch {
		case seg[0] == '.':
			seg = seg[1:]
		case len(seg) >= 3 && seg[0] == '%' && seg[1] == '2' && (seg[2] == 'e' || seg[2] == 'E'):
			seg = seg[3:]
		default:
			return 0
		}
		n++
	}
	if n > 2 {
		return 0
	}
	return n
}

// originOf returns "scheme://host[:port]" in lower case without a default
// port, or "" when u is not an absolute http(s) URL with a host.
func originOf(u *url.URL) string {
	scheme := strings.ToLower(u.Scheme)
	if (scheme != "http" && scheme != "https") || u.Host == "" {
		return ""
	}
	host := hostOf(u)
	port := u.Port()
	if (scheme == "http" && port == "80") || (scheme == "https" && port == "443") {
		port = ""
	}
	if strings.IndexByte(host, ':') >= 0 {
		host = "[" + host + "]"
	}
	if port != "" {
		host += ":" + port
	}
	return scheme + "://" + host
}

// hostOf returns u's host name in lower case, without brackets, port or a
// trailing dot.
func hostOf(u *url.URL) string {
	return strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
}
