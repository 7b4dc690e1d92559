package urlnorm

import (
	"bytes"
	"slices"
	"strconv"
	"strings"
)

// engine holds what one Normalize or Resolve call needs to know about its
// options, derived once per call. Both share the same parser and writers:
// Resolve is the engine in whatwg mode, which serializes exactly as the URL
// Standard does and never changes what the standard keeps.
type engine struct {
	o      *Config
	whatwg bool
	maxLen int

	user, path, query, frag escaper

	dots       bool // resolve dot segments
	perParam   bool // the query needs splitting into parameters
	dropParams bool

	// Runs of slashes in the path are collapsed per segment as it is
	// written (dropEmpty) or in one pass once dot segments are resolved
	// (collapseSlashes).
	dropEmpty, collapseSlashes bool
}

// whatwgOptions is the (empty) option set of the Resolve engine; every
// behaviour of that mode is keyed on engine.whatwg.
var whatwgOptions = Config{}

// init prepares e for the options o.
func (e *engine) init(o *Config) {
	e.o = o
	e.whatwg = false
	e.maxLen = o.MaxLength
	if e.maxLen == 0 {
		e.maxLen = DefaultMaxLength
	}
	set := uint16(0)
	if o.EncodeInvalidChars {
		set = cInvalid
	}
	e.path.init(set, o.UppercaseEscapes, o.DecodeUnreservedEscapes, o.EscapeStrayPercent, o.LowercasePath)
	e.user.init(set|cAt, o.UppercaseEscapes, o.DecodeUnreservedEscapes, o.EscapeStrayPercent, false)
	qUpper := o.UppercaseEscapes && o.QueryEscapes
	qDecode := o.DecodeUnreservedEscapes && o.QueryEscapes
	qset := set
	if o.EncodeQueryApostrophe {
		qset |= cApos
	}
	e.query.init(qset, qUpper, qDecode, o.EscapeStrayPercent, false)
	if set != 0 {
		// A second '#' cannot stand in a fragment (RFC 3986 §3.5).
		set |= cHash
	}
	e.frag.init(set, qUpper, qDecode, o.EscapeStrayPercent, false)
	e.dots = o.RemoveDotSegments
	// Empty segments must stay until dot segments are resolved, so that
	// ".." removes them as RFC 3986 §5.2.4 does ("/a//../b" is "/a/b").
	// Safe Browsing's reference implementation (Go's path.Clean)
	// collapses first ("/b"), and its profile does the same.
	if o.RemoveDuplicateSlashes {
		if e.dots && !o.RepeatedUnescape {
			e.collapseSlashes = true
		} else {
			e.dropEmpty = true
		}
	}
	e.dropParams = len(o.DropParams) > 0
	e.perParam = o.SortQuery || o.RemoveEmptyParams || o.RemoveEmptyParamValue || e.dropParams
}

// initWhatwg prepares e for Resolve.
func (e *engine) initWhatwg() {
	*e = engine{o: &whatwgOptions, whatwg: true, maxLen: DefaultMaxLength, dots: true}
	e.user.init(cWUserinfo, false, false, false, false)
	e.path.init(cWPath, false, false, false, false)
	e.query.init(cWQuery, false, false, false, false)
	e.frag.init(cWFragment, false, false, false, false)
}

// escaper rewrites one URL component's characters: it percent-encodes the
// octets of set, and optionally upper-cases or decodes existing escapes,
// escapes stray '%' and lower-cases letters.
type escaper struct {
	set    uint16
	stop   uint16 // classes that leave the copy loop
	upper  bool
	decode bool
	stray  bool
	lower  bool
}

func (e *escaper) init(set uint16, upper, decode, stray, lower bool) {
	*e = escaper{set: set, stop: set | cPercent, upper: upper, decode: decode, stray: stray, lower: lower}
	if lower {
		e.stop |= cUpper
	}
}

// appendTo writes s to b, rewritten.
func (e *escaper) appendTo(b []byte, s string) []byte {
	stop := e.stop
	for i := 0; i < len(s); {
		j := i
		for j < len(s) && charClass[s[j]]&stop == 0 {
			j++
		}
		b = append(b, s[i:j]...)
		if j == len(s) {
			break
		}
		c := s[j]
		i = j + 1
		switch {
		case c == '%':
			if j+2 < len(s) && isHex(s[j+1]) && isHex(s[j+2]) {
				v := unhex(s[j+1])<<4 | unhex(s[j+2])
				switch {
				case e.decode && charClass[v]&cUnreserved != 0:
					if e.lower && charClass[v]&cUpper != 0 {
						v += 'a' - 'A'
					}
					b = append(b, v)
				case e.upper:
					b = append(b, '%', upperHex[v>>4], upperHex[v&15])
				default:
					b = append(b, s[j:j+3]...)
				}
				i = j + 3
			} else if e.stray {
				b = append(b, "%25"...)
			} else {
				b = append(b, '%')
			}
		case charClass[c]&e.set != 0:
			b = append(b, '%', upperHex[c>>4], upperHex[c&15])
		default: // an upper-case letter, lowered
			b = append(b, c+'a'-'A')
		}
	}
	return b
}

// cleanInput trims leading and trailing C0 controls and spaces and removes
// tabs and newlines (URL Standard, basic URL parser steps 1–3).
func cleanInput(s string) string {
	i, j := 0, len(s)
	for i < j && isLeadTrim(s[i]) {
		i++
	}
	for j > i && isLeadTrim(s[j-1]) {
		j--
	}
	s = s[i:j]
	for k := 0; k < len(s); k++ {
		if charClass[s[k]]&cTabNL != 0 {
			b := append(make([]byte, 0, len(s)), s[:k]...)
			for ; k < len(s); k++ {
				if charClass[s[k]]&cTabNL == 0 {
					b = append(b, s[k])
				}
			}
			return string(b)
		}
	}
	return s
}

// splitScheme splits "scheme:rest" when s starts with a syntactically
// valid scheme (RFC 3986 §3.1).
func splitScheme(s string) (scheme, rest string, ok bool) {
	if s == "" || charClass[s[0]]&cScheme == 0 || isDigit(s[0]) || s[0] == '+' || s[0] == '-' || s[0] == '.' {
		return "", s, false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if c == ':' {
			return s[:i], s[i+1:], true
		}
		if charClass[c]&cScheme == 0 {
			break
		}
	}
	return "", s, false
}

func equalFold(a, lower string) bool {
	if len(a) != len(lower) {
		return false
	}
	for i := 0; i < len(a); i++ {
		if a[i]|0x20 != lower[i] {
			return false
		}
	}
	return true
}

// looksLikeHostPort reports whether "scheme:rest" is really a host and a
// port without a scheme ("example.com:8080/x", "localhost:3000").
func looksLikeHostPort(scheme, rest string) bool {
	if strings.IndexByte(scheme, '.') < 0 && !equalFold(scheme, "localhost") {
		return false
	}
	n := 0
	for n < len(rest) && isDigit(rest[n]) {
		n++
	}
	return n == len(rest) || rest[n] == '/' || rest[n] == '?' || rest[n] == '#'
}

func defaultPort(scheme string) int {
	switch scheme {
	case "http", "ws":
		return 80
	case "https", "wss":
		return 443
	case "ftp":
		return 21
	}
	return -1
}

// normalize writes the normalized form of raw to b.
func (e *engine) normalize(b []byte, raw string) ([]byte, error) {
	o := e.o
	if e.maxLen > 0 && len(raw) > e.maxLen {
		return b, newError(ErrTooLong, raw, "longer than "+strconv.Itoa(e.maxLen)+" bytes")
	}
	s := raw
	var sbFrag string
	hasSBFrag := false
	if o.RepeatedUnescape {
		s, sbFrag, hasSBFrag = safeBrowsingEscape(s)
	}
	s = cleanInput(s)

	scheme, rest, special, err := e.splitInput(raw, s)
	if err != nil {
		return b, err
	}
	start := len(b)
	if o.ForceHTTP && scheme == "https" {
		b = append(b, "http://"...)
	} else {
		b = append(b, scheme...)
		b = append(b, "://"...)
	}
	b, err = e.appendAfterScheme(b, scheme, special, rest, raw)
	if err != nil {
		return b, err
	}
	if hasSBFrag && !o.RemoveFragment {
		b = append(b, '#')
		b = append(b, sbFrag...)
	}
	if e.maxLen > 0 && len(b)-start > e.maxLen {
		return b, newError(ErrTooLong, raw, "longer than "+strconv.Itoa(e.maxLen)+" bytes once normalized")
	}
	return b, nil
}

// splitInput finds the scheme of the cleaned input s (raw is the original,
// for errors) and returns it lower-cased with the rest of the URL from the
// authority on.
func (e *engine) splitInput(raw, s string) (scheme, rest string, special bool, err error) {
	o := e.o
	scheme, rest, ok := splitScheme(s)
	special = true
	switch {
	case ok && equalFold(scheme, "http"):
		scheme = "http"
	case ok && equalFold(scheme, "https"):
		scheme = "https"
	case ok && o.AddDefaultScheme && looksLikeHostPort(scheme, rest):
		scheme, rest = "http", s
	case ok && o.OtherSchemes && strings.HasPrefix(rest, "//"):
		return strings.ToLower(scheme), rest[2:], false, nil
	case ok:
		return "", "", false, newError(ErrUnsupportedScheme, raw, "unsupported scheme "+strconv.Quote(scheme))
	case o.AddDefaultScheme:
		if s == "" {
			return "", "", false, invalid(raw, "empty URL")
		}
		if isSlash(s[0]) && !(len(s) > 1 && isSlash(s[1])) {
			return "", "", false, invalid(raw, "relative URL without a host")
		}
		scheme, rest = "http", s
	default:
		return "", "", false, invalid(raw, "missing scheme")
	}
	// The URL Standard skips any run of slashes and backslashes after
	// an http(s) scheme ("http:/x", "http:\\x" and "http:x" all name host x).
	for len(rest) > 0 && isSlash(rest[0]) {
		rest = rest[1:]
	}
	return scheme, rest, true, nil
}

// appendAfterScheme parses and writes the authority, path, query and
// fragment in rest, which starts at the authority.
func (e *engine) appendAfterScheme(b []byte, scheme string, special bool, rest, input string) ([]byte, error) {
	end := len(rest)
	for i := 0; i < len(rest); i++ {
		if c := rest[i]; c == '/' || c == '?' || c == '#' || (special && c == '\\') {
			end = i
			break
		}
	}
	b, err := e.appendAuthority(b, rest[:end], scheme, special, input)
	if err != nil {
		return b, err
	}
	rest = rest[end:]
	pathEnd := len(rest)
	for i := 0; i < len(rest); i++ {
		if c := rest[i]; c == '?' || c == '#' {
			pathEnd = i
			break
		}
	}
	path := rest[:pathEnd]
	if path != "" {
		path = path[1:] // the separator, '/' (or '\' in an http(s) URL)
	}
	b = e.appendPath(b, "", false, path, pathEnd > 0, special)
	return e.appendQueryFragment(b, rest[pathEnd:]), nil
}

// appendQueryFragment writes "?query#fragment" from rest, which is empty or
// starts with '?' or '#'.
func (e *engine) appendQueryFragment(b []byte, rest string) []byte {
	if len(rest) > 0 && rest[0] == '?' {
		q := rest[1:]
		rest = ""
		if i := strings.IndexByte(q, '#'); i >= 0 {
			q, rest = q[:i], q[i:]
		}
		b = e.appendQuery(b, q)
	}
	if len(rest) > 0 && !e.o.RemoveFragment {
		b = append(b, '#')
		b = e.frag.appendTo(b, rest[1:])
	}
	return b
}

// appendAuthority writes "userinfo@host:port".
func (e *engine) appendAuthority(b []byte, auth, scheme string, special bool, input string) ([]byte, error) {
	o := e.o
	hostport := auth
	if at := strings.LastIndexByte(auth, '@'); at >= 0 {
		userinfo := auth[:at]
		hostport = auth[at+1:]
		if hostport == "" {
			return b, invalid(input, "missing host after userinfo")
		}
		switch {
		case e.whatwg:
			user, pass, _ := strings.Cut(userinfo, ":")
			if user != "" || pass != "" {
				b = e.user.appendTo(b, user)
				if pass != "" {
					b = append(b, ':')
					b = e.user.appendTo(b, pass)
				}
				b = append(b, '@')
			}
		case !o.RemoveUserinfo && userinfo != "":
			b = e.user.appendTo(b, userinfo)
			b = append(b, '@')
		}
	}
	host, port, hasPort := hostport, "", false
	if strings.HasPrefix(hostport, "[") {
		i := strings.IndexByte(hostport, ']')
		if i < 0 {
			return b, invalid(input, "unterminated IPv6 address")
		}
		host = hostport[:i+1]
		if r := hostport[i+1:]; r != "" {
			if r[0] != ':' {
				return b, invalid(input, "unexpected characters after IPv6 address")
			}
			port, hasPort = r[1:], true
		}
	} else if i := strings.IndexByte(hostport, ':'); i >= 0 {
		host, port, hasPort = hostport[:i], hostport[i+1:], true
	}
	b, err := e.appendHost(b, host, special, input)
	if err != nil {
		return b, err
	}
	if !hasPort {
		return b, nil
	}
	if port == "" {
		if !e.whatwg && !o.RemoveEmptyPort && !o.RemovePort {
			b = append(b, ':')
		}
		return b, nil
	}
	v := 0
	for i := 0; i < len(port); i++ {
		c := port[i]
		if !isDigit(c) {
			return b, invalid(input, "invalid port "+strconv.Quote(port))
		}
		v = v*10 + int(c-'0')
		if v > 65535 {
			return b, invalid(input, "port out of range")
		}
	}
	if o.RemovePort || ((e.whatwg || o.RemoveDefaultPort) && v == defaultPort(scheme)) {
		return b, nil
	}
	b = append(b, ':')
	return strconv.AppendInt(b, int64(v), 10), nil
}

// appendPath writes a path. dir holds the segments of a base URL's
// directory (used when resolving a path-relative reference; never the last
// segment), segs the segments of the path itself, both '/'-separated
// without the leading '/'. hasPath is false for an absent path.
func (e *engine) appendPath(b []byte, dir string, hasDir bool, segs string, hasPath, special bool) []byte {
	o := e.o
	pathStart := len(b)
	if hasDir {
		b = e.appendSegments(b, pathStart, dir, special, false)
	}
	if hasPath {
		b = e.appendSegments(b, pathStart, segs, special, true)
	}
	if e.collapseSlashes {
		b = collapseSlashes(b, pathStart)
	}
	if e.whatwg {
		if len(b) == pathStart {
			b = append(b, '/')
		}
		return b
	}
	if o.RemoveDirectoryIndex || o.RemoveTrailingSlash {
		for {
			changed := false
			if o.RemoveDirectoryIndex {
				if i := lastIndexByte(b[pathStart:], '/'); i >= 0 && isDirectoryIndex(b[pathStart+i+1:]) {
					b = b[:pathStart+i+1]
					changed = true
				}
			}
			if o.RemoveTrailingSlash && len(b)-pathStart > 1 && b[len(b)-1] == '/' {
				b = b[:len(b)-1]
				changed = true
			}
			if !changed || !(o.RemoveDirectoryIndex && o.RemoveTrailingSlash) {
				break
			}
		}
	}
	if o.AddTrailingSlash && !o.RemoveTrailingSlash && (len(b) == pathStart || b[len(b)-1] != '/') {
		b = append(b, '/')
	}
	if len(b) == pathStart && o.EmptyPathToSlash {
		b = append(b, '/')
	}
	return b
}

// appendSegments writes the segments of s, each as "/" + segment. When
// lastIsLast, the final segment of s is the path's last.
func (e *engine) appendSegments(b []byte, pathStart int, s string, special, lastIsLast bool) []byte {
	// Backslashes are rare; only when one is present does the separator
	// search need to look for both. It then stops at the first of either:
	// searching for each on its own would scan the rest of s for the one
	// that is absent at every segment, quadratic in the path's length.
	backslash := special && strings.IndexByte(s, '\\') >= 0
	for {
		var end int
		if backslash {
			end = strings.IndexAny(s, `/\`)
		} else {
			end = strings.IndexByte(s, '/')
		}
		if end < 0 {
			end = len(s)
		}
		b = e.appendSegment(b, pathStart, s[:end], lastIsLast && end == len(s))
		if end == len(s) {
			return b
		}
		s = s[end+1:]
	}
}

// appendSegment writes "/" + seg and applies the segment rules: dot
// segments (RFC 3986 §5.2.4, URL Standard path state), empty segments and
// dropped path parameters.
func (e *engine) appendSegment(b []byte, pathStart int, seg string, last bool) []byte {
	segStart := len(b)
	b = append(b, '/')
	b = e.path.appendTo(b, seg)
	// Parameters go first, so that what is left is judged as it will be
	// read again: "..;jsessionid=1" becomes "..", a dot segment, as servers
	// that strip parameters also read it, and normalizing stays idempotent.
	if e.dropParams {
		b = e.dropPathParams(b, segStart)
	}
	w := b[segStart+1:]
	if e.dots {
		switch dotSegment(w, e.whatwg) {
		case 1: // "."
			b = b[:segStart]
			if last {
				b = append(b, '/')
			}
			return b
		case 2: // ".."
			b = b[:segStart]
			if i := lastIndexByte(b[pathStart:], '/'); i >= 0 {
				b = b[:pathStart+i]
			}
			if last {
				b = append(b, '/')
			}
			return b
		}
	}
	if len(w) == 0 && !last && e.dropEmpty {
		return b[:segStart]
	}
	return b
}

// collapseSlashes replaces each run of '/' in b[start:] by one, in place.
func collapseSlashes(b []byte, start int) []byte {
	w := start
	for r := start; r < len(b); r++ {
		if b[r] == '/' && w > start && b[w-1] == '/' {
			continue
		}
		b[w] = b[r]
		w++
	}
	return b[:w]
}

// dropPathParams removes the dropped ";name=value" parameters from the
// segment written at b[segStart:] ("/" + segment).
func (e *engine) dropPathParams(b []byte, segStart int) []byte {
	w := b[segStart+1:]
	k := bytes.IndexByte(w, ';')
	if k < 0 {
		return b
	}
	out := segStart + 1 + k
	for p := k; p < len(w); {
		q := p + 1
		for q < len(w) && w[q] != ';' {
			q++
		}
		name := w[p+1 : q]
		if eq := bytes.IndexByte(name, '='); eq >= 0 {
			name = name[:eq]
		}
		if !e.o.dropsParam(name) {
			out += copy(b[out:], w[p:q])
		}
		p = q
	}
	return b[:out]
}

// dotSegment reports whether w is "." (1) or ".." (2). In whatwg mode
// "%2e" counts as a dot, as the URL Standard's single- and double-dot
// path segments do.
func dotSegment(w []byte, pct bool) int {
	switch {
	case len(w) == 1 && w[0] == '.':
		return 1
	case len(w) == 2 && w[0] == '.' && w[1] == '.':
		return 2
	case !pct || len(w) < 3:
		return 0
	}
	dots := 0
	for i := 0; i < len(w); {
		switch {
		case w[i] == '.':
			i++
		case i+2 < len(w) && w[i] == '%' && w[i+1] == '2' && w[i+2]|0x20 == 'e':
			i += 3
		default:
			return 0
		}
		dots++
		if dots > 2 {
			return 0
		}
	}
	return dots
}

// isDirectoryIndex reports whether seg is "index.xxx" or "default.xxx"
// with an extension of one to four word characters.
func isDirectoryIndex(seg []byte) bool {
	var rest []byte
	switch {
	case hasPrefixFold(seg, "index."):
		rest = seg[6:]
	case hasPrefixFold(seg, "default."):
		rest = seg[8:]
	default:
		return false
	}
	if len(rest) < 1 || len(rest) > 4 {
		return false
	}
	for _, c := range rest {
		if charClass[c]&(cUnreserved) == 0 || c == '-' || c == '.' || c == '~' {
			return false
		}
	}
	return true
}

// dropsParam reports whether the query or path parameter name is listed
// in DropParams.
func (o *Config) dropsParam(name []byte) bool {
	if len(name) == 0 {
		return false
	}
	first := name[0] | 0x20
	for _, p := range o.DropParams {
		if len(p) == 0 || p[0]|0x20 != first {
			continue
		}
		if p[len(p)-1] == '*' {
			if hasPrefixFold(name, p[:len(p)-1]) {
				return true
			}
		} else if len(p) == len(name) && hasPrefixFold(name, p) {
			return true
		}
	}
	return false
}

// param is one query parameter written to the output: b[start:end], its
// name b[start:nameEnd].
type param struct{ start, nameEnd, end int }

// appendQuery writes "?" + the query.
func (e *engine) appendQuery(b []byte, q string) []byte {
	o := e.o
	b = append(b, '?')
	qStart := len(b)
	if !e.perParam {
		b = e.query.appendTo(b, q)
	} else {
		var paramsArr [16]param
		params := paramsArr[:0]
		for {
			amp := strings.IndexByte(q, '&')
			p := q
			if amp >= 0 {
				p = q[:amp]
			}
			start := len(b)
			b = e.query.appendTo(b, p)
			w := b[start:]
			nameEnd := bytes.IndexByte(w, '=')
			if nameEnd < 0 {
				nameEnd = len(w)
			}
			switch {
			case o.RemoveEmptyParams && nameEnd == 0:
				b = b[:start]
			case e.dropParams && o.dropsParam(w[:nameEnd]):
				b = b[:start]
			default:
				if o.RemoveEmptyParamValue && nameEnd == len(w)-1 {
					b = b[:len(b)-1]
				}
				params = append(params, param{start, start + nameEnd, len(b)})
				b = append(b, '&')
			}
			if amp < 0 {
				break
			}
			q = q[amp+1:]
		}
		if len(params) > 0 {
			b = b[:len(b)-1]
		}
		if o.SortQuery && len(params) > 1 {
			b = sortParams(b, qStart, params)
		}
	}
	if o.RemoveEmptyQuery && len(b) == qStart {
		b = b[:qStart-1]
	}
	return b
}

// sortParams reorders the parameters written at b[qStart:] by name, then
// value, keeping equal ones in order.
func sortParams(b []byte, qStart int, params []param) []byte {
	cmp := func(x, y param) int {
		if c := bytes.Compare(b[x.start:x.nameEnd], b[y.start:y.nameEnd]); c != 0 {
			return c
		}
		return bytes.Compare(b[x.nameEnd:x.end], b[y.nameEnd:y.end])
	}
	sorted := true
	for i := 1; i < len(params); i++ {
		if cmp(params[i-1], params[i]) > 0 {
			sorted = false
			break
		}
	}
	if sorted {
		return b
	}
	if len(params) <= 12 {
		for i := 1; i < len(params); i++ {
			for j := i; j > 0 && cmp(params[j-1], params[j]) > 0; j-- {
				params[j-1], params[j] = params[j], params[j-1]
			}
		}
	} else {
		slices.SortStableFunc(params, cmp)
	}
	var scratchArr [512]byte
	scratch := append(scratchArr[:0], b[qStart:]...)
	b = b[:qStart]
	for i, p := range params {
		if i > 0 {
			b = append(b, '&')
		}
		b = append(b, scratch[p.start-qStart:p.end-qStart]...)
	}
	return b
}
