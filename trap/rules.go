package trap

import (
	"strconv"
	"strings"
	"time"
)

// parsedURL is the part of a URL the rules look at. Its strings share the
// judged URL's memory (except a host that had to be lower-cased).
type parsedURL struct {
	raw   string
	host  string   // lower case, no userinfo, no default port
	path  string   // as written, "/" when empty
	query string   // without '?', as written
	segs  []string // non-empty path segments; the caller sets them from its buffer after parse
	nsegs int
}

// segBuf is the stack buffer callers give parse for the path segments, so
// that short paths cost no allocation. (A buffer inside parsedURL would
// point into itself and force it onto the heap.)
type segBuf [24]string

// parse fills u from raw, or rejects raw for its length or form. It is a
// deliberately small splitter for absolute URLs (RFC 3986 §3): the detector
// needs the host, the path segments and the query pairs, and the input is
// expected to be normalized already.
// The segments go to buf when they fit (the caller then sets u.segs with
// buf[:u.nsegs]), else to a new slice in u.segs.
func (d *Detector) parse(u *parsedURL, raw string, buf *segBuf) Verdict {
	if max := d.cfg.maxURLLength; max > 0 && len(raw) > max {
		return reject(RuleURLLength, "MaxURLLength", itoa(len(raw))+" characters, limit "+itoa(max))
	}
	u.raw = raw
	i := strings.Index(raw, "://")
	if i < 0 {
		return reject(RuleInvalid, "", "not an absolute URL")
	}
	scheme := raw[:i]
	var defaultPort string
	switch {
	case equalFold(scheme, "http"):
		defaultPort = ":80"
	case equalFold(scheme, "https"):
		defaultPort = ":443"
	default:
		return reject(RuleInvalid, "", "scheme "+strconv.Quote(scheme)+" is not http or https")
	}
	rest := raw[i+3:]
	if h := strings.IndexByte(rest, '#'); h >= 0 {
		rest = rest[:h]
	}
	end := strings.IndexAny(rest, "/?")
	if end < 0 {
		end = len(rest)
	}
	auth := rest[:end]
	rest = rest[end:]
	if at := strings.LastIndexByte(auth, '@'); at >= 0 {
		auth = auth[at+1:]
	}
	auth = strings.TrimSuffix(auth, defaultPort)
	auth = strings.TrimSuffix(auth, ":")
	if auth == "" {
		return reject(RuleInvalid, "", "no host")
	}
	lower := true
	for j := 0; j < len(auth); j++ {
		c := auth[j]
		switch {
		case c >= 'A' && c <= 'Z':
			lower = false
		case c <= ' ' || c == 0x7f || c == '\\' || c == '<' || c == '>' || c == '"' || c == '`':
			return reject(RuleInvalid, "", "host contains "+strconv.QuoteRune(rune(c)))
		}
	}
	if !lower {
		auth = strings.ToLower(auth)
	}
	u.host = auth
	u.path, u.query = rest, ""
	if q := strings.IndexByte(rest, '?'); q >= 0 {
		u.path, u.query = rest[:q], rest[q+1:]
	}
	if u.path == "" {
		u.path = "/"
	}
	u.segs, u.nsegs = nil, 0
	p := u.path
	n := 0
	for len(p) > 0 {
		j := strings.IndexByte(p, '/')
		var seg string
		if j < 0 {
			seg, p = p, ""
		} else {
			seg, p = p[:j], p[j+1:]
		}
		if seg == "" {
			continue
		}
		n++
		if max := d.cfg.maxPathDepth; max > 0 && n > max {
			continue // only counted, to report the depth
		}
		switch {
		case u.segs != nil:
			u.segs = append(u.segs, seg)
		case u.nsegs < len(buf):
			buf[u.nsegs] = seg
		default:
			u.segs = append(make([]string, 0, 2*len(buf)), buf[:]...)
			u.segs = append(u.segs, seg)
		}
		u.nsegs++
	}
	if max := d.cfg.maxPathDepth; max > 0 && n > max {
		return reject(RulePathDepth, "MaxPathDepth", itoa(n)+" segments, limit "+itoa(max))
	}
	return Verdict{}
}

// stateless applies the rules that need nothing but the URL and now.
// It fills ds with the dates of u for the calendar walk rule.
func (d *Detector) stateless(u *parsedURL, ds *dateScan, now time.Time, depth int) Verdict {
	if max := d.cfg.maxHops; max >= 0 && depth > max {
		return reject(RuleHopDepth, "MaxHops", itoa(depth)+" hops from a seed, limit "+itoa(max))
	}
	if v := d.repeated(u.segs); v.Rejected() {
		return v
	}
	if v := d.sessionID(u); v.Rejected() {
		return v
	}
	if d.cfg.yearsAhead >= 0 || d.cfg.yearsBehind >= 0 || d.cfg.maxCalendarSteps >= 0 {
		sp := d.rangeSpan(now)
		scanDates(u, ds, sp.bare())
		if v := dateRange(ds, sp, ds.far); v.Rejected() {
			return v
		}
	}
	return Verdict{}
}

// repeated implements the repeated-segments rule. A relative link resolved
// against the wrong base nests a path into itself (/a/b/ → /a/b/a/b/ → …);
// Heritrix's PathologicalPathDecideRule rejects the third consecutive
// repetition of any sequence of segments, and we do the same, plus a cap on
// how often one segment may occur anywhere (/x/a/y/a/z/a/…).
func (d *Detector) repeated(segs []string) Verdict {
	n := len(segs)
	if r := d.cfg.maxRepetitions; r > 0 {
		// A sequence of length L repeated r+1 times in a row means
		// segs[j] == segs[j+L] for r*L consecutive j.
		for l := 1; (r+1)*l <= n; l++ {
			run := 0
			for j := 0; j+l < n; j++ {
				if segs[j] != segs[j+l] {
					run = 0
					continue
				}
				run++
				if run >= r*l {
					// Extend to the full run to report the real count.
					for j+1+l < n && segs[j+1] == segs[j+1+l] {
						j++
						run++
					}
					start := j - run + 1
					times := run/l + 1
					return reject(RuleRepeatedSegments, "MaxRepetitions", strconv.Quote(strings.Join(segs[start:start+l], "/"))+
						" repeated "+itoa(times)+" times in a row, limit "+itoa(r))
				}
			}
		}
	}
	if m := d.cfg.maxOccurrences; m > 0 && n > m {
		for i := 0; i < n; i++ {
			c := 1
			for j := i + 1; j < n; j++ {
				if segs[j] == segs[i] {
					c++
				}
			}
			if c > m {
				return reject(RuleRepeatedSegments, "MaxSegmentOccurrences", strconv.Quote(segs[i])+" occurs "+itoa(c)+" times, limit "+itoa(m))
			}
		}
	}
	return Verdict{}
}

// strongSessionParams are parameter names that only ever carry a session:
// the servlet spec's jsessionid, PHP's PHPSESSID, classic ASP's
// ASPSESSIONIDxxxx (matched as a prefix), ColdFusion's CFID/CFTOKEN, Zen
// Cart's zenid and osCommerce's osCsid, and the generic spellings.
var strongSessionParams = []string{
	"jsessionid", "phpsessid", "sessionid", "session_id", "sessid", "sess_id",
	"cfid", "cftoken", "zenid", "oscsid",
}

// weakSessionParams are names that carry a session on some sites and
// something else on others (a story id, a search); they count only when the
// value looks random.
var weakSessionParams = []string{"sid", "session", "sess", "s"}

// sessionID implements the session-id rule on matrix parameters (;name=v in
// a path segment), ASP.NET cookieless session segments and query parameters.
func (d *Detector) sessionID(u *parsedURL) Verdict {
	for _, seg := range u.segs {
		if len(seg) > 3 && seg[0] == '(' && seg[2] == '(' && seg[len(seg)-1] == ')' {
			// ASP.NET cookieless state: /(S(lit3py55t21z5v55vlm25s55))/page.aspx
			return reject(RuleSessionID, "SessionParams", "path segment "+strconv.Quote(seg)+" is an ASP.NET session")
		}
		if i := strings.IndexByte(seg, ';'); i >= 0 {
			if v := d.sessionParams(seg[i+1:], ';'); v.Rejected() {
				return v
			}
		}
	}
	return d.sessionParams(u.query, '&')
}

// sessionParams checks the name=value pairs of list, separated by sep.
func (d *Detector) sessionParams(list string, sep byte) Verdict {
	it := params{rest: list, sep: sep}
	for it.next() {
		name, value := it.name, it.value
		if isSessionName(name, strongSessionParams) || hasPrefixFold(name, "aspsessionid") ||
			isSessionName(name, d.cfg.sessionParams) {
			if value != "" {
				return reject(RuleSessionID, "SessionParams", "parameter "+strconv.Quote(name))
			}
			continue
		}
		if isSessionName(name, weakSessionParams) && len(value) >= 8 && isVolatile(value) {
			return reject(RuleSessionID, "SessionParams", "parameter "+strconv.Quote(name))
		}
		if min := d.cfg.minTokenLength; min > 0 && len(value) >= min && isToken(value) {
			return reject(RuleSessionID, "MinTokenLength", "parameter "+strconv.Quote(name)+" holds a "+itoa(len(value))+"-character token")
		}
	}
	return Verdict{}
}

func isSessionName(name string, list []string) bool {
	for _, s := range list {
		if equalFold(name, s) {
			return true
		}
	}
	return false
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && equalFold(s[:len(prefix)], prefix)
}

// equalFold reports whether s equals the lower-case ASCII string lower,
// ignoring ASCII case. Parameter names are ASCII in practice, and this is
// much cheaper than strings.EqualFold on the hot path.
func equalFold(s, lower string) bool {
	if len(s) != len(lower) {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

// charClasses describes the alphanumeric make-up of v: how many digits,
// lower-case and upper-case letters it has, and how often adjacent
// alphanumeric characters switch between those three classes. Generated
// tokens switch often (a81f9c0b2e: 8 times); words, codes and slugs rarely
// (SKU-12345-BLK, iphone15, S2_mountain: at most 2). ok is false when v
// holds a character outside letters, digits and - _ . ~ + / = %.
func charClasses(v string) (digits, lower, upper, switches int, ok bool) {
	prev := 0 // 0: none or separator, 1: digit, 2: lower, 3: upper
	for i := 0; i < len(v); i++ {
		c := v[i]
		cls := 0
		switch {
		case c >= '0' && c <= '9':
			digits++
			cls = 1
		case c >= 'a' && c <= 'z':
			lower++
			cls = 2
		case c >= 'A' && c <= 'Z':
			upper++
			cls = 3
		case c == '-' || c == '_' || c == '.' || c == '~' || c == '+' || c == '/' || c == '=' || c == '%':
		default:
			return 0, 0, 0, 0, false
		}
		if cls != 0 && prev != 0 && cls != prev {
			switches++
		}
		prev = cls
	}
	return digits, lower, upper, switches, true
}

// isToken reports whether v looks like an opaque random token (a session
// id, a signature): hex digits or base64 characters that switch between
// digits and letters (and, for base64, letter case) as randomly generated
// strings do, at least once per four characters.
func isToken(v string) bool {
	digits, lower, upper, switches, ok := charClasses(v)
	if !ok || digits == 0 || lower+upper == 0 || 4*switches < len(v) {
		return false
	}
	hex := true
	for i := 0; i < len(v) && hex; i++ {
		c := v[i]
		hex = isDigit(c) || (c|0x20 >= 'a' && c|0x20 <= 'f')
	}
	if hex && (lower == 0 || upper == 0) {
		return true
	}
	return lower > 0 && upper > 0
}

// isVolatile reports whether a parameter value looks generated rather than
// chosen: letters and digits that switch at least three times (a81f9c,
// x7Kp2Q), or a number of at least ten digits (a Unix time, a millisecond
// counter). Small numbers (pages, ids), words (colours, titles) and codes
// (SKU-12345-BLK) are not volatile.
func isVolatile(v string) bool {
	digits, lower, upper, switches, ok := charClasses(v)
	if !ok {
		return false
	}
	if lower+upper == 0 {
		return digits >= 10 && digits == len(v)
	}
	return digits > 0 && len(v) >= 6 && switches >= 3 && !looksLikeDate(v)
}

// looksLikeDate reports whether v starts with an ISO 8601 date, which the
// calendar rule handles instead.
func looksLikeDate(v string) bool {
	_, _, _, ok := compactDate(v)
	return ok
}

// params iterates over name=value pairs separated by sep. Names and values
// stay percent-encoded as written.
type params struct {
	rest        string
	sep         byte
	name, value string
}

func (p *params) next() bool {
	for p.rest != "" {
		var pair string
		if i := strings.IndexByte(p.rest, p.sep); i >= 0 {
			pair, p.rest = p.rest[:i], p.rest[i+1:]
		} else {
			pair, p.rest = p.rest, ""
		}
		if pair == "" {
			continue
		}
		p.name, p.value = pair, ""
		if i := strings.IndexByte(pair, '='); i >= 0 {
			p.name, p.value = pair[:i], pair[i+1:]
		}
		return true
	}
	return false
}
