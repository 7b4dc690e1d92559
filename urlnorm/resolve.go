package urlnorm

import (
	"net/url"
	"strconv"
	"strings"
)

// Resolve resolves the reference ref (an href as found in a page) against
// base, the URL of the page or its <base href>, as browsers do: the basic
// URL parser of the WHATWG URL Standard for http and https URLs. It differs
// from RFC 3986 §5 (and from url.URL.ResolveReference) where browsers do:
// leading and trailing C0 controls and spaces are trimmed, tabs and
// newlines removed, '\' counts as '/', "http:x" with an http base is
// relative, "///host/x" names a host, the host is lower-cased, converted to
// punycode and IPv4 forms canonicalized, the default port dropped, dot
// segments (also "%2e") resolved, and characters outside the standard's
// percent-encode sets escaped as UTF-8.
//
// base may be nil when ref is absolute; otherwise it must be an absolute
// http or https URL. A ref with another scheme ("mailto:x", "javascript:")
// is returned as parsed by url.Parse, unresolved and unnormalized; Normalize
// rejects it with ErrUnsupportedScheme.
//
// The result is always absolute. Two things the URL Standard keeps cannot
// be held by a url.URL: an empty fragment ("x#") is lost, and String()
// escapes a few characters the standard leaves alone (such as '\' in a
// fragment or a stray '%' in the path). ResolveString returns the exact
// serialization.
func Resolve(base *url.URL, ref string) (*url.URL, error) {
	var bs string
	if base != nil {
		bs = base.String()
	}
	s, special, err := resolve(bs, base != nil, ref)
	if err != nil {
		return nil, err
	}
	if !special {
		u, err := url.Parse(s)
		if err != nil {
			scheme, opaque, _ := strings.Cut(s, ":")
			u = &url.URL{Scheme: scheme, Opaque: opaque}
		}
		return u, nil
	}
	return toURL(s), nil
}

// ResolveString is Resolve for a base given as a string, returning the
// URL Standard serialization of the result. base must be an absolute http
// or https URL, or empty when ref is absolute.
func ResolveString(base, ref string) (string, error) {
	s, _, err := resolve(base, base != "", ref)
	return s, err
}

// basePart is a parsed base URL, each part in serialized form.
type basePart struct {
	scheme    string
	authority string
	path      string // starts with '/'
	query     string
	hasQuery  bool
}

// splitSerialized splits an http(s) URL serialized by the engine.
func splitSerialized(s string) basePart {
	var p basePart
	i := strings.IndexByte(s, ':')
	p.scheme, s = s[:i], s[i+3:]
	i = strings.IndexByte(s, '/')
	p.authority, s = s[:i], s[i:]
	if i = strings.IndexByte(s, '#'); i >= 0 {
		s = s[:i]
	}
	if i = strings.IndexByte(s, '?'); i >= 0 {
		p.query, p.hasQuery, s = s[i+1:], true, s[:i]
	}
	p.path = s
	return p
}

// resolve implements Resolve and ResolveString. special is false when the
// result is a URL of another scheme, returned unresolved.
func resolve(base string, hasBase bool, ref string) (string, bool, error) {
	var e engine
	e.initWhatwg()
	if len(ref) > e.maxLen {
		return "", false, newError(ErrTooLong, ref, "longer than "+strconv.Itoa(e.maxLen)+" bytes")
	}
	var bp basePart
	if hasBase {
		var arr [256]byte
		bb, special, err := e.resolveInto(arr[:0], nil, base)
		if err != nil {
			if ue, ok := err.(*Error); ok {
				ue.Reason = "base URL: " + ue.Reason
			}
			return "", false, err
		}
		if !special {
			return "", false, invalid(base, "base URL is not an http or https URL")
		}
		bp = splitSerialized(string(bb))
	}
	var arr [512]byte
	var bpp *basePart
	if hasBase {
		bpp = &bp
	}
	b, special, err := e.resolveInto(arr[:0], bpp, ref)
	if err != nil {
		return "", false, err
	}
	if len(b) > e.maxLen {
		return "", false, newError(ErrTooLong, ref, "resolved URL longer than "+strconv.Itoa(e.maxLen)+" bytes")
	}
	return string(b), special, nil
}

func isSlash(c byte) bool { return c == '/' || c == '\\' }

// resolveInto writes ref resolved against bp (nil for none) to b.
func (e *engine) resolveInto(b []byte, bp *basePart, ref string) ([]byte, bool, error) {
	s := cleanInput(ref)
	if scheme, rest, ok := splitScheme(s); ok {
		ls := scheme
		switch {
		case equalFold(scheme, "http"):
			ls = "http"
		case equalFold(scheme, "https"):
			ls = "https"
		default:
			return append(append(append(b, strings.ToLower(scheme)...), ':'), rest...), false, nil
		}
		if bp == nil || ls != bp.scheme {
			b = append(b, ls...)
			b = append(b, "://"...)
			for len(rest) > 0 && isSlash(rest[0]) {
				rest = rest[1:]
			}
			b, err := e.appendAfterScheme(b, ls, true, rest, ref)
			return b, true, err
		}
		// Same scheme as the base and no "//": a relative reference
		// (URL Standard, "special relative or authority state").
		s = rest
	}
	if bp == nil {
		return b, false, invalid(ref, "relative reference without a base URL")
	}
	b = append(b, bp.scheme...)
	b = append(b, "://"...)
	switch {
	case len(s) >= 2 && isSlash(s[0]) && isSlash(s[1]):
		for len(s) > 0 && isSlash(s[0]) {
			s = s[1:]
		}
		b, err := e.appendAfterScheme(b, bp.scheme, true, s, ref)
		return b, true, err
	case len(s) >= 1 && isSlash(s[0]):
		b = append(b, bp.authority...)
		path, rest := cutPath(s)
		b = e.appendPath(b, "", false, path[1:], true, true)
		return e.appendQueryFragment(b, rest), true, nil
	case s == "" || s[0] == '?' || s[0] == '#':
		b = append(b, bp.authority...)
		b = append(b, bp.path...)
		if s == "" || s[0] == '#' {
			if bp.hasQuery {
				b = append(b, '?')
				b = append(b, bp.query...)
			}
		}
		return e.appendQueryFragment(b, s), true, nil
	default:
		b = append(b, bp.authority...)
		path, rest := cutPath(s)
		last := strings.LastIndexByte(bp.path, '/')
		dir := ""
		if last > 0 {
			dir = bp.path[1:last]
		}
		b = e.appendPath(b, dir, last > 0, path, true, true)
		return e.appendQueryFragment(b, rest), true, nil
	}
}

// cutPath splits s before its first '?' or '#'.
func cutPath(s string) (path, rest string) {
	for i := 0; i < len(s); i++ {
		if s[i] == '?' || s[i] == '#' {
			return s[:i], s[i:]
		}
	}
	return s, ""
}

// toURL converts the engine's serialization of an http(s) URL to a
// url.URL.
func toURL(s string) *url.URL {
	u := new(url.URL)
	i := strings.IndexByte(s, ':')
	u.Scheme, s = s[:i], s[i+3:]
	i = strings.IndexByte(s, '/')
	auth := s[:i]
	s = s[i:]
	if at := strings.LastIndexByte(auth, '@'); at >= 0 {
		user, pass, hasPass := strings.Cut(auth[:at], ":")
		if hasPass {
			u.User = url.UserPassword(lenientUnescape(user), lenientUnescape(pass))
		} else {
			u.User = url.User(lenientUnescape(user))
		}
		auth = auth[at+1:]
	}
	u.Host = auth
	path, rest := cutPath(s)
	u.Path = lenientUnescape(path)
	if u.EscapedPath() != path {
		u.RawPath = path
	}
	if len(rest) > 0 && rest[0] == '?' {
		q := rest[1:]
		rest = ""
		if i := strings.IndexByte(q, '#'); i >= 0 {
			q, rest = q[:i], q[i:]
		}
		u.RawQuery = q
		u.ForceQuery = q == ""
	}
	if len(rest) > 0 {
		f := rest[1:]
		u.Fragment = lenientUnescape(f)
		if u.EscapedFragment() != f {
			u.RawFragment = f
		}
	}
	return u
}

// lenientUnescape decodes valid percent-escapes and keeps anything else.
func lenientUnescape(s string) string { return percentDecode(s) }
