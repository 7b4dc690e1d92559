package trap

import (
	"strconv"
	"strings"
)

// Hashing. The detector's keys are 64-bit FNV-1a hashes (finished with the
// SplitMix64 mixer where keys are summed, so that the query's parameter
// order does not matter). They never leave the process, so they need only
// be fast and well spread; a collision at worst merges two URLs' counts.
const (
	offset64 uint64 = 14695981039346656037
	prime64  uint64 = 1099511628211
)

func hashString(h uint64, s string) uint64 {
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= prime64
	}
	return h
}

func hashByte(h uint64, c byte) uint64 {
	h ^= uint64(c)
	return h * prime64
}

func hashUint(h, v uint64) uint64 {
	for i := 0; i < 8; i++ {
		h ^= v & 0xff
		h *= prime64
		v >>= 8
	}
	return h
}

// mix is the SplitMix64 finalizer.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// urlKey identifies a URL within its host: path and query as written.
func urlKey(u *parsedURL) uint64 {
	h := hashString(offset64, u.path)
	h = hashByte(h, '?')
	return mix(hashString(h, u.query))
}

// isHexID reports whether seg is an identifier such as a hexadecimal hash,
// an object id or a UUID: at least eight characters of hex digits and
// dashes, with both digits and letters.
func isHexID(seg string) bool {
	if len(seg) < 8 {
		return false
	}
	digit, letter := false, false
	for i := 0; i < len(seg); i++ {
		c := seg[i]
		switch {
		case c >= '0' && c <= '9':
			digit = true
		case c >= 'a' && c <= 'f', c >= 'A' && c <= 'F':
			letter = true
		case c == '-':
		default:
			return false
		}
	}
	return digit && letter
}

// foldHash hashes s with identifiers folded to {id} and digit runs to {n}.
func foldHash(h uint64, s string) uint64 {
	if isHexID(s) {
		return hashString(h, "{id}")
	}
	inDigits := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if isDigit(c) {
			if !inDigits {
				h = hashString(h, "{n}")
			}
			inDigits = true
			continue
		}
		inDigits = false
		h = hashByte(h, c)
	}
	return h
}

// foldString is foldHash's text, for reasons.
func foldString(b *strings.Builder, s string) {
	if isHexID(s) {
		b.WriteString("{id}")
		return
	}
	inDigits := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if isDigit(c) {
			if !inDigits {
				b.WriteString("{n}")
			}
			inDigits = true
			continue
		}
		inDigits = false
		b.WriteByte(c)
	}
}

// patternHash hashes the budget pattern of u: the path and the query values
// folded (digit runs to {n}, identifiers to {id}), parameters in any order.
func patternHash(u *parsedURL) uint64 {
	h := offset64
	for _, seg := range u.segs {
		h = hashByte(h, '/')
		h = foldHash(h, seg)
	}
	var q uint64
	it := params{rest: u.query, sep: '&'}
	for it.next() {
		ph := hashByte(hashString(offset64, it.name), '=')
		q += mix(foldHash(ph, it.value))
	}
	return mix(h ^ q)
}

// patternString is the budget pattern of u as text: /item/{n}?color=red.
func patternString(u *parsedURL) string {
	var b strings.Builder
	for _, seg := range u.segs {
		b.WriteByte('/')
		foldString(&b, seg)
	}
	if strings.HasSuffix(u.path, "/") || b.Len() == 0 {
		b.WriteByte('/')
	}
	it := params{rest: u.query, sep: '&'}
	for k := 0; it.next(); k++ {
		if k == 0 {
			b.WriteByte('?')
		} else {
			b.WriteByte('&')
		}
		b.WriteString(it.name)
		b.WriteByte('=')
		foldString(&b, it.value)
	}
	return b.String()
}

// contentPatternHash hashes the coarser pattern that content repetition is
// tracked by: the folded path with its last segment a wildcard and the
// query's parameter names. A soft-404 answers /missing/foo and /missing/bar
// alike, so their last segments must not keep them apart.
func contentPatternHash(u *parsedURL) uint64 {
	h := offset64
	for i, seg := range u.segs {
		h = hashByte(h, '/')
		if i == len(u.segs)-1 {
			h = hashString(h, "{*}")
			break
		}
		h = foldHash(h, seg)
	}
	var q uint64
	it := params{rest: u.query, sep: '&'}
	for it.next() {
		q += mix(hashString(offset64, it.name))
	}
	return mix(h ^ q)
}

// contentPatternString is contentPatternHash's text: /missing/{*}?q.
func contentPatternString(u *parsedURL) string {
	var b strings.Builder
	for i, seg := range u.segs {
		b.WriteByte('/')
		if i == len(u.segs)-1 {
			b.WriteString("{*}")
			break
		}
		foldString(&b, seg)
	}
	if b.Len() == 0 {
		b.WriteByte('/')
	}
	it := params{rest: u.query, sep: '&'}
	for k := 0; it.next(); k++ {
		if k == 0 {
			b.WriteByte('?')
		} else {
			b.WriteByte('&')
		}
		b.WriteString(it.name)
	}
	return b.String()
}

// growingKey hashes u with its volatile query values replaced by a
// placeholder, and separately hashes those values. A value is volatile when
// it looks generated (isVolatile) or when its parameter has carried a
// generated value on this path before (flagged), so that a random token
// that happens to contain no digit is still counted. ok is false when u has
// no volatile value. Newly seen volatile parameters are flagged in hs.
func growingKey(u *parsedURL, hs *hostState) (key, values uint64, ok bool) {
	var q uint64
	ph0 := hashString(offset64, u.path)
	it := params{rest: u.query, sep: '&'}
	for it.next() {
		ph := hashByte(hashString(offset64, it.name), '=')
		if hs.volatile(ph0, it.name, isVolatile(it.value)) {
			ok = true
			values += mix(hashString(ph, it.value))
			ph = hashString(ph, "{v}")
		} else {
			ph = hashString(ph, it.value)
		}
		q += mix(ph)
	}
	if !ok {
		return 0, 0, false
	}
	return mix(ph0 ^ q), values, true
}

// growingDescription names the volatile parameters of u and gives its
// shape, for a reason: `"t"` and `/page?t={v}`.
func growingDescription(u *parsedURL, hs *hostState) (names, shape string) {
	var quoted []string
	var b strings.Builder
	b.WriteString(u.path)
	ph0 := hashString(offset64, u.path)
	it := params{rest: u.query, sep: '&'}
	for k := 0; it.next(); k++ {
		if k == 0 {
			b.WriteByte('?')
		} else {
			b.WriteByte('&')
		}
		b.WriteString(it.name)
		b.WriteByte('=')
		if hs.volatile(ph0, it.name, false) {
			quoted = append(quoted, strconv.Quote(it.name))
			b.WriteString("{v}")
		} else {
			b.WriteString(it.value)
		}
	}
	return strings.Join(quoted, ", "), b.String()
}

// paramHash hashes one name=value pair; querySum adds them up, so that the
// hash of a query without one parameter is querySum minus its paramHash.
func paramHash(name, value string) uint64 {
	return mix(hashString(hashByte(hashString(offset64, name), '='), value))
}

func querySum(query string) uint64 {
	var q uint64
	it := params{rest: query, sep: '&'}
	for it.next() {
		q += paramHash(it.name, it.value)
	}
	return q
}

// paramValue returns the value of the first parameter called name.
func paramValue(query, name string) (string, bool) {
	it := params{rest: query, sep: '&'}
	for it.next() {
		if it.name == name {
			return it.value, true
		}
	}
	return "", false
}

// replaceParam writes u's path and query with name's value shown as {v}.
func replaceParam(u *parsedURL, name string) string {
	var b strings.Builder
	b.WriteString(u.path)
	it := params{rest: u.query, sep: '&'}
	for k := 0; it.next(); k++ {
		if k == 0 {
			b.WriteByte('?')
		} else {
			b.WriteByte('&')
		}
		b.WriteString(it.name)
		b.WriteByte('=')
		if it.name == name {
			b.WriteString("{v}")
		} else {
			b.WriteString(it.value)
		}
	}
	return b.String()
}

// linkHash hashes the links of the page u as the page's template wrote them:
// a link to the page's host relative to the page's directory ("x/y",
// "../about/"), a link to the page itself as {self} with its query, others
// whole; in any order. A soft 404 served at any URL of a directory (or at
// any depth, for its relative links) then hashes alike, while distinct
// pages of one template differ in the items they link to.
func linkHash(u *parsedURL, links []string) uint64 {
	dir := u.segs
	if len(dir) > 0 && !strings.HasSuffix(u.path, "/") {
		dir = dir[:len(dir)-1]
	}
	var sum uint64
	for _, l := range links {
		if i := strings.IndexByte(l, '#'); i >= 0 {
			l = l[:i]
		}
		h := offset64
		rest, end := "", -1
		if i := strings.Index(l, "://"); i >= 0 {
			rest = l[i+3:]
			end = strings.IndexAny(rest, "/?")
		}
		if end < 0 || !strings.EqualFold(rest[:end], u.host) {
			sum += mix(hashString(h, l))
			continue
		}
		path, query := rest[end:], ""
		if q := strings.IndexByte(path, '?'); q >= 0 {
			path, query = path[:q], path[q:]
		}
		if path == u.path || (path == "" && u.path == "/") {
			h = hashString(h, "{self}")
		} else {
			k := 0 // segments shared with the directory
			p := path
			for len(p) > 0 {
				if p[0] == '/' {
					p = p[1:]
					continue
				}
				seg := p
				if j := strings.IndexByte(p, '/'); j >= 0 {
					seg = p[:j]
				}
				if k >= len(dir) || seg != dir[k] {
					break
				}
				k++
				p = p[len(seg):]
			}
			for j := k; j < len(dir); j++ {
				h = hashString(h, "../")
			}
			h = hashString(h, strings.TrimLeft(p, "/"))
		}
		sum += mix(hashString(h, query))
	}
	return sum
}
