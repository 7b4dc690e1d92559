package crawltest

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// ErrNotHTTP is wrapped by Canonical's error for a URL that is not an
// absolute http or https URL.
var ErrNotHTTP = errors.New("crawltest: not an absolute http(s) URL")

// Canonical returns the canonical form of an absolute http(s) URL: the form
// in which the generator names its pages, so that any spelling a page links
// with maps back to the page's canonical URL. It
//
//   - lower-cases the scheme and host, drops a trailing dot from the host,
//     and drops an empty or default port (RFC 3986 §6.2.2.1, §6.2.3);
//   - drops the fragment and any userinfo;
//   - decodes percent-encoded unreserved characters and upper-cases the hex
//     digits of the remaining escapes (RFC 3986 §6.2.2.1–6.2.2.2); a '%'
//     that starts no escape becomes "%25";
//   - removes dot segments (RFC 3986 §5.2.4) and turns an empty path into
//     "/";
//   - drops tracking parameters (utm_*, gclid, fbclid, msclkid, mc_cid,
//     mc_eid), empty parameters and an empty query, and sorts the remaining
//     parameters.
//
// Session parameters are kept: they are what makes the session-id trap a
// trap. Canonical does not resolve references; resolve relative links
// against their page's URL first.
func Canonical(rawURL string) (string, error) {
	s := rawURL
	if i := strings.IndexByte(s, '#'); i >= 0 {
		s = s[:i]
	}
	scheme, rest, ok := strings.Cut(s, "://")
	scheme = strings.ToLower(scheme)
	if !ok || (scheme != "http" && scheme != "https") {
		return "", fmt.Errorf("%w: %q", ErrNotHTTP, rawURL)
	}
	end := strings.IndexAny(rest, "/?")
	if end < 0 {
		end = len(rest)
	}
	authority, target := rest[:end], rest[end:]
	if i := strings.LastIndexByte(authority, '@'); i >= 0 {
		authority = authority[i+1:]
	}
	host, port := authority, ""
	if strings.HasPrefix(authority, "[") {
		end := strings.IndexByte(authority, ']')
		if end < 0 || end+1 < len(authority) && authority[end+1] != ':' {
			return "", fmt.Errorf("%w: %q has a malformed IPv6 host", ErrNotHTTP, rawURL)
		}
		host = authority[:end+1]
		if end+1 < len(authority) {
			port = authority[end+2:]
		}
	} else if i := strings.IndexByte(authority, ':'); i >= 0 {
		host, port = authority[:i], authority[i+1:]
	}
	for i := 0; i < len(port); i++ {
		if port[i] < '0' || port[i] > '9' {
			return "", fmt.Errorf("%w: %q has a malformed port", ErrNotHTTP, rawURL)
		}
	}
	host = strings.TrimRight(strings.ToLower(host), ".")
	if host == "" {
		return "", fmt.Errorf("%w: %q has no host", ErrNotHTTP, rawURL)
	}
	if port == "80" && scheme == "http" || port == "443" && scheme == "https" {
		port = ""
	}
	path, query, _ := strings.Cut(target, "?")
	path = removeDotSegments(normalizeEscapes(path))
	if path == "" {
		path = "/"
	}
	var b strings.Builder
	b.Grow(len(scheme) + 3 + len(authority) + len(target))
	b.WriteString(scheme)
	b.WriteString("://")
	b.WriteString(host)
	if port != "" {
		b.WriteByte(':')
		b.WriteString(port)
	}
	b.WriteString(path)
	if q := canonicalQuery(query); q != "" {
		b.WriteByte('?')
		b.WriteString(q)
	}
	return b.String(), nil
}

// canonicalQuery drops tracking and empty parameters and sorts the rest.
func canonicalQuery(query string) string {
	if query == "" {
		return ""
	}
	params := strings.Split(query, "&")
	kept := params[:0]
	for _, p := range params {
		p = normalizeEscapes(p)
		if p == "" || isTrackingParam(p) {
			continue
		}
		kept = append(kept, p)
	}
	// The generator writes parameters in sorted order, so sorting folds
	// reordered spellings back to it. Sorting is stable for equal keys.
	slices.Sort(kept)
	return strings.Join(kept, "&")
}

// isTrackingParam reports whether the "key=value" pair is a tracking
// parameter that does not change the page.
func isTrackingParam(pair string) bool {
	key, _, _ := strings.Cut(pair, "=")
	key = strings.ToLower(key)
	if strings.HasPrefix(key, "utm_") {
		return true
	}
	switch key {
	case "gclid", "fbclid", "msclkid", "mc_cid", "mc_eid":
		return true
	}
	return false
}

// isUnreserved reports whether c is an unreserved character (RFC 3986 §2.3).
func isUnreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == '~'
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// normalizeEscapes decodes escapes of unreserved characters, upper-cases
// the hex digits of the others and escapes a '%' that starts no escape.
func normalizeEscapes(s string) string {
	if strings.IndexByte(s, '%') < 0 {
		return s
	}
	const hexUpper = "0123456789ABCDEF"
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) {
			hi, ok1 := unhex(s[i+1])
			lo, ok2 := unhex(s[i+2])
			if ok1 && ok2 {
				c := hi<<4 | lo
				if isUnreserved(c) {
					b = append(b, c)
				} else {
					b = append(b, '%', hexUpper[hi], hexUpper[lo])
				}
				i += 2
				continue
			}
		}
		if s[i] == '%' {
			// A stray '%' is written as "%25", so that a second pass
			// cannot read it as the start of an escape.
			b = append(b, "%25"...)
			continue
		}
		b = append(b, s[i])
	}
	return string(b)
}

// removeDotSegments implements RFC 3986 §5.2.4.
func removeDotSegments(path string) string {
	if !strings.Contains(path, ".") {
		return path
	}
	var out []string
	segs := strings.Split(path, "/")
	for i, seg := range segs {
		last := i == len(segs)-1
		switch seg {
		case ".":
			if last {
				out = append(out, "")
			}
		case "..":
			if len(out) > 1 {
				out = out[:len(out)-1]
			}
			if last {
				out = append(out, "")
			}
		default:
			out = append(out, seg)
		}
	}
	res := strings.Join(out, "/")
	if strings.HasPrefix(path, "/") && !strings.HasPrefix(res, "/") {
		res = "/" + res
	}
	return res
}
