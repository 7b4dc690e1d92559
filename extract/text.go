package extract

import (
	"bytes"
	"slices"
	"strings"
	"unicode/utf8"
	"unsafe"
)

// textBuf accumulates text with white-space runs folded to one space,
// without leading or trailing space, up to limit bytes.
type textBuf struct {
	b         []byte
	limit     int
	pending   bool // a space is due before the next word
	truncated bool
}

func (t *textBuf) reset() {
	t.b, t.pending, t.truncated = t.b[:0], false, false
}

// space marks a word boundary.
func (t *textBuf) space() {
	if len(t.b) > 0 {
		t.pending = true
	}
}

// isSpace reports HTML ASCII white space (the HTML standard's definition),
// plus VT which browsers also collapse in practice.
func isSpace(c byte) bool { return spaceTable[c] }

var spaceTable = [256]bool{' ': true, '\t': true, '\n': true, '\r': true, '\f': true, '\v': true}

func (t *textBuf) add(p []byte) {
	if t.truncated {
		return
	}
	if len(t.b)+len(p)+1 <= t.limit {
		t.addAll(p)
		return
	}
	for len(p) > 0 {
		if isSpace(p[0]) {
			t.space()
			i := 1
			for i < len(p) && isSpace(p[i]) {
				i++
			}
			p = p[i:]
			continue
		}
		i := 1
		for i < len(p) && !isSpace(p[i]) {
			i++
		}
		word := p[:i]
		p = p[i:]
		need := len(word)
		if t.pending {
			need++
		}
		if len(t.b)+need > t.limit {
			t.truncated = true
			room := t.limit - len(t.b)
			if t.pending {
				room--
			}
			if room > 0 {
				// Cut at a rune boundary.
				for room > 0 && !utf8.RuneStart(word[room]) {
					room--
				}
				if room > 0 {
					if t.pending {
						t.b = append(t.b, ' ')
					}
					t.b = append(t.b, word[:room]...)
				}
			}
			return
		}
		if t.pending {
			t.b = append(t.b, ' ')
			t.pending = false
		}
		t.b = append(t.b, word...)
	}
}

// addAll is add for text that fits within the limit whatever its spaces:
// folding never makes text longer, except for one pending space before
// it. It folds in one pass, writing straight into the buffer.
func (t *textBuf) addAll(p []byte) {
	n := len(t.b)
	if cap(t.b)-n < len(p)+1 {
		t.b = slices.Grow(t.b, len(p)+1)
	}
	out := t.b[:n+len(p)+1]
	pending := t.pending
	for len(p) > 0 {
		c := p[0]
		if spaceTable[c] {
			if n > 0 {
				pending = true
			}
			p = p[1:]
			continue
		}
		// Copy the longest run that needs no folding in one move.
		k := plainRun(p)
		if pending {
			out[n] = ' '
			n++
			pending = false
		}
		n += copy(out[n:], p[:k])
		p = p[k:]
	}
	t.b, t.pending = out[:n], pending
}

// plainRun returns the length of the longest prefix of p, which starts
// with a byte that is not white space, made of such bytes and of single
// ' ' between them: text that folding leaves as it is.
func plainRun(p []byte) int {
	i := 1
	for i < len(p) {
		c := p[i]
		if c > ' ' {
			i++
			continue
		}
		if c == ' ' && i+1 < len(p) && p[i+1] > ' ' {
			i += 2
			continue
		}
		if !spaceTable[c] && c != ' ' {
			i++ // a control character: not white space
			continue
		}
		break
	}
	return i
}

func (t *textBuf) string() string {
	return validUTF8(string(t.b))
}

// take returns the text and gives up the buffer: when the text fills at
// least half of it, the string shares its memory instead of copying it
// (the buffer is never written again); a mostly empty buffer is copied so
// that the string does not pin unused capacity.
func (t *textBuf) take() string {
	b := t.b
	t.b = nil
	if len(b) == 0 {
		return ""
	}
	if 2*len(b) < cap(b) {
		return validUTF8(string(b))
	}
	return validUTF8(unsafe.String(&b[0], len(b)))
}

// validUTF8 replaces invalid byte sequences with U+FFFD: the tokenizer passes
// bytes through, and a page that lies about its charset must not produce
// invalid strings.
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

func trimHTMLSpace(b []byte) []byte {
	for len(b) > 0 && (isSpace(b[0]) || b[0] == 0) {
		b = b[1:]
	}
	for len(b) > 0 && (isSpace(b[len(b)-1]) || b[len(b)-1] == 0) {
		b = b[:len(b)-1]
	}
	return b
}

// equalFold compares ASCII case-insensitively without allocating.
func equalFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := 0; i < len(b); i++ {
		c, d := b[i], s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if 'A' <= d && d <= 'Z' {
			d += 'a' - 'A'
		}
		if c != d {
			return false
		}
	}
	return true
}

// parseRel reads a rel attribute: an unordered set of space-separated,
// ASCII case-insensitive tokens (HTML §4.6.7).
func parseRel(v []byte) Rel {
	var r Rel
	for len(v) > 0 {
		for len(v) > 0 && isSpace(v[0]) {
			v = v[1:]
		}
		i := 0
		for i < len(v) && !isSpace(v[i]) {
			i++
		}
		tok := v[:i]
		v = v[i:]
		switch {
		case equalFold(tok, "nofollow"):
			r |= RelNofollow
		case equalFold(tok, "ugc"):
			r |= RelUGC
		case equalFold(tok, "sponsored"):
			r |= RelSponsored
		case equalFold(tok, "canonical"):
			r |= RelCanonical
		case equalFold(tok, "alternate"):
			r |= RelAlternate
		case equalFold(tok, "next"):
			r |= RelNext
		case equalFold(tok, "prev"), equalFold(tok, "previous"):
			r |= RelPrev
		case equalFold(tok, "stylesheet"):
			r |= RelStylesheet
		case equalFold(tok, "icon"), equalFold(tok, "apple-touch-icon"), equalFold(tok, "mask-icon"):
			r |= RelIcon
		case equalFold(tok, "preload"), equalFold(tok, "prefetch"), equalFold(tok, "modulepreload"),
			equalFold(tok, "dns-prefetch"), equalFold(tok, "preconnect"), equalFold(tok, "prerender"):
			r |= RelPreload
		case equalFold(tok, "noopener"), equalFold(tok, "noreferrer"):
			r |= RelNoopener
		}
	}
	return r
}

// eachSrcset calls fn with the URL of every image candidate in a srcset
// attribute, following the HTML standard's "parse a srcset attribute"
// (§4.8.4.3.10): candidates are separated by commas; a URL is a run of
// characters other than ASCII white space, with trailing commas removed;
// descriptors follow up to the next comma outside parentheses (which do not
// nest: the first ')' closes them).
func eachSrcset(v []byte, fn func(url []byte)) {
	for {
		for len(v) > 0 && (isASCIISpace(v[0]) || v[0] == ',') {
			v = v[1:]
		}
		if len(v) == 0 {
			return
		}
		i := 0
		for i < len(v) && !isASCIISpace(v[i]) {
			i++
		}
		u := v[:i]
		v = v[i:]
		trailingComma := false
		for len(u) > 0 && u[len(u)-1] == ',' {
			u, trailingComma = u[:len(u)-1], true
		}
		if len(u) > 0 {
			fn(u)
		}
		if trailingComma {
			continue
		}
		// Skip the descriptors up to a comma not inside parentheses.
		// Parentheses do not nest: the first ')' ends them.
		inParens := false
		for len(v) > 0 {
			c := v[0]
			v = v[1:]
			if c == '(' {
				inParens = true
			} else if c == ')' {
				inParens = false
			} else if c == ',' && !inParens {
				break
			}
		}
	}
}

// refreshURL extracts the URL of a <meta http-equiv="refresh"> content value
// following the HTML standard's "shared declarative refresh steps"
// (§4.2.5.3): after optional ASCII whitespace, a time made of digits and
// dots that starts with a digit or a dot; then either the end of the value
// or ASCII whitespace, ';' or ',' (anything else makes the value invalid);
// optional whitespace, one optional ';' or ',' and more whitespace. What
// remains is the URL, unless it starts with "url" (in any case), optional
// whitespace and '=': then the URL follows after more whitespace. A URL
// that starts with ' or " (after "url=", or in place of it) ends before the
// next such quote, or at the end of the value when there is none. The
// result is trimmed of HTML white space (the URL parser strips it too). It
// is empty when there is no URL: for a plain reload ("5"), an empty URL
// (which the standard resolves to the page itself) and an invalid value.
func refreshURL(c []byte) []byte {
	c = skipASCIISpace(c)
	i := 0
	for i < len(c) && c[i] >= '0' && c[i] <= '9' {
		i++
	}
	if i == 0 && (len(c) == 0 || c[0] != '.') {
		return nil
	}
	for i < len(c) && (c[i] >= '0' && c[i] <= '9' || c[i] == '.') {
		i++
	}
	c = c[i:]
	if len(c) == 0 {
		return nil // a reload of the page itself
	}
	if c[0] != ';' && c[0] != ',' && !isASCIISpace(c[0]) {
		return nil
	}
	c = skipASCIISpace(c)
	if len(c) > 0 && (c[0] == ';' || c[0] == ',') {
		c = c[1:]
	}
	c = skipASCIISpace(c)
	if len(c) == 0 {
		return nil
	}
	if c[0] == 'u' || c[0] == 'U' {
		// Only "url", white space and '=' introduce the URL; otherwise
		// the URL starts with the u, and quotes are not removed.
		if len(c) < 3 || !equalFold(c[:3], "url") {
			return trimHTMLSpace(c)
		}
		rest := skipASCIISpace(c[3:])
		if len(rest) == 0 || rest[0] != '=' {
			return trimHTMLSpace(c)
		}
		c = skipASCIISpace(rest[1:])
	}
	if len(c) > 0 && (c[0] == '"' || c[0] == '\'') {
		q := c[0]
		c = c[1:]
		if j := bytes.IndexByte(c, q); j >= 0 {
			c = c[:j]
		}
	}
	return trimHTMLSpace(c)
}

// isASCIISpace reports whether c is ASCII whitespace as the WHATWG Infra
// standard defines it: tab, line feed, form feed, carriage return or
// space. Unlike isSpace it excludes the vertical tab.
func isASCIISpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r'
}

// skipASCIISpace returns b without its leading ASCII whitespace.
func skipASCIISpace(b []byte) []byte {
	for len(b) > 0 && isASCIISpace(b[0]) {
		b = b[1:]
	}
	return b
}
