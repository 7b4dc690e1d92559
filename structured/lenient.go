package structured

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// A lenient JSON reader for JSON-LD blocks as pages write them. It accepts
// RFC 8259 JSON and, noting each departure, what pages get wrong: trailing
// and doubled commas, missing commas between members, JavaScript comments,
// single-quoted strings, raw control characters and unknown escapes in
// strings, invalid numbers (kept as strings), several values one after
// another, and input that ends or turns to garbage in the middle (the
// containers open at that point are closed, and what came before is
// kept). HTML comment and CDATA wrappers around the values are skipped.
// Nesting deeper than the limit is skipped without recursion; strings are
// cut at the limit.

// jkind is the kind of a JSON value.
type jkind uint8

const (
	jInvalid jkind = iota // nothing could be read
	jSkipped              // a container past the depth limit
	jNull
	jBool
	jNumber
	jString
	jArray
	jObject
)

// jnode is a JSON value with the members of objects in order.
type jnode struct {
	kind  jkind
	s     string   // a string, a number as written, "true" or "false"
	keys  []string // an object's keys, one per element
	elems []jnode  // an array's elements or an object's values
}

// member returns the value of an object's key, or nil.
func (n *jnode) member(key string) *jnode {
	for i, k := range n.keys {
		if k == key {
			return &n.elems[i]
		}
	}
	return nil
}

// lexer reads one block.
type lexer struct {
	b        []byte
	i        int
	maxDepth int
	maxStr   int

	dirty    bool     // the value being read is not valid JSON as written
	fatal    bool     // reading stopped at a syntax error or the end
	problems []string // what was wrong, for Block.Err (bounded)
	limited  []string // which limits cut something
}

const maxProblems = 8

func (l *lexer) problem(format string, args ...any) {
	l.dirty = true
	if len(l.problems) < maxProblems {
		l.problems = append(l.problems, fmt.Sprintf(format, args...))
	}
}

func (l *lexer) limit(format string, args ...any) {
	l.dirty = true
	if len(l.limited) < maxProblems {
		l.limited = append(l.limited, fmt.Sprintf(format, args...))
	}
}

// stop notes a syntax error; the values open are closed where they are.
func (l *lexer) stop(what string) {
	l.fatal = true
	if l.i >= len(l.b) {
		l.problem("%s: the block ends early", what)
		return
	}
	r, _ := utf8.DecodeRune(l.b[l.i:])
	l.problem("%s: unexpected %q at byte %d", what, r, l.i)
}

// space skips white space and JavaScript comments (noted as problems).
func (l *lexer) space() {
	for l.i < len(l.b) {
		switch c := l.b[l.i]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			l.i++
		case c == '\f':
			l.problem("form feed at byte %d", l.i)
			l.i++
		case c == 0xC2 && l.i+1 < len(l.b) && l.b[l.i+1] == 0xA0:
			l.problem("no-break space at byte %d", l.i)
			l.i += 2
		case c == '/' && l.i+1 < len(l.b) && (l.b[l.i+1] == '/' || l.b[l.i+1] == '*'):
			l.problem("comment at byte %d", l.i)
			l.comment()
		default:
			return
		}
	}
}

// comment skips a // or /* comment at l.i.
func (l *lexer) comment() {
	if l.b[l.i+1] == '/' {
		for l.i < len(l.b) && l.b[l.i] != '\n' {
			l.i++
		}
		return
	}
	l.i += 2
	for l.i < len(l.b) && !(l.b[l.i] == '*' && l.i+1 < len(l.b) && l.b[l.i+1] == '/') {
		l.i++
	}
	l.i = min(l.i+2, len(l.b))
}

// between skips what may stand between top-level values without making
// them malformed: white space, JavaScript comments, HTML comment and
// CDATA delimiters, and the ';' or ',' that separate values written one
// after another.
func (l *lexer) between() {
	for l.i < len(l.b) {
		rest := l.b[l.i:]
		switch {
		case rest[0] == ' ' || rest[0] == '\t' || rest[0] == '\n' || rest[0] == '\r' || rest[0] == '\f' || rest[0] == ';' || rest[0] == ',':
			l.i++
		case len(rest) > 1 && rest[0] == 0xC2 && rest[1] == 0xA0:
			l.i += 2
		case len(rest) > 1 && rest[0] == '/' && (rest[1] == '/' || rest[1] == '*'):
			l.comment()
		case hasPrefix(rest, "<!--"):
			l.i += 4
		case hasPrefix(rest, "-->"):
			l.i += 3
		case hasPrefix(rest, "<![CDATA["):
			l.i += 9
		case hasPrefix(rest, "]]>"):
			l.i += 3
		default:
			return
		}
	}
}

func hasPrefix(b []byte, s string) bool { return len(b) >= len(s) && string(b[:len(s)]) == s }

// values reads a block's top-level values. start and end delimit the first
// one, which is valid JSON as written when clean.
func (l *lexer) values() (vals []jnode, start, end int, clean bool) {
	for !l.fatal {
		l.between()
		if l.i >= len(l.b) {
			break
		}
		s := l.i
		l.dirty = false
		v := l.value(0)
		if v.kind == jInvalid {
			break
		}
		if len(vals) == 0 {
			start, end, clean = s, l.i, !l.dirty
		}
		vals = append(vals, v)
	}
	if len(vals) > 1 {
		l.problem("%d JSON values one after another", len(vals))
	}
	return vals, start, end, clean
}

// value reads one value at l.i, nested depth deep.
func (l *lexer) value(depth int) jnode {
	l.space()
	if l.i >= len(l.b) {
		l.stop("value")
		return jnode{}
	}
	switch c := l.b[l.i]; {
	case c == '{' || c == '[':
		if depth >= l.maxDepth {
			l.skipContainer()
			l.limit("MaxDepth %d", l.maxDepth)
			return jnode{kind: jSkipped}
		}
		if c == '{' {
			return l.object(depth)
		}
		return l.array(depth)
	case c == '"' || c == '\'':
		return jnode{kind: jString, s: l.string()}
	case c == '-' || c == '+' || c == '.' || c >= '0' && c <= '9':
		return l.number()
	case isWordByte(c):
		w := l.word()
		switch w {
		case "true", "false":
			return jnode{kind: jBool, s: w}
		case "null":
			return jnode{kind: jNull}
		}
		l.i -= len(w)
		l.stop("value")
		return jnode{}
	}
	l.stop("value")
	return jnode{}
}

func (l *lexer) object(depth int) jnode {
	n := jnode{kind: jObject}
	l.i++ // {
	for {
		l.space()
		if l.i >= len(l.b) {
			l.stop("object")
			return n
		}
		var key string
		switch c := l.b[l.i]; {
		case c == '}':
			l.i++
			return n
		case c == ',':
			l.problem("extra comma at byte %d", l.i)
			l.i++
			continue
		case c == '"' || c == '\'':
			key = l.string()
		case isWordByte(c):
			l.problem("unquoted key at byte %d", l.i)
			key = l.key()
		default:
			l.stop("object key")
			return n
		}
		l.space()
		if l.i >= len(l.b) || l.b[l.i] != ':' {
			l.stop("object")
			return n
		}
		l.i++
		v := l.value(depth + 1)
		if v.kind != jInvalid && v.kind != jSkipped {
			n.keys = append(n.keys, key)
			n.elems = append(n.elems, v)
		}
		if l.fatal {
			return n
		}
		if !l.separator('}') {
			return n
		}
	}
}

func (l *lexer) array(depth int) jnode {
	n := jnode{kind: jArray}
	l.i++ // [
	for {
		l.space()
		if l.i >= len(l.b) {
			l.stop("array")
			return n
		}
		switch l.b[l.i] {
		case ']':
			l.i++
			return n
		case ',':
			l.problem("extra comma at byte %d", l.i)
			l.i++
			continue
		}
		v := l.value(depth + 1)
		if v.kind != jInvalid && v.kind != jSkipped {
			n.elems = append(n.elems, v)
		}
		if l.fatal {
			return n
		}
		if !l.separator(']') {
			return n
		}
	}
}

// separator reads what follows a member or element: a comma (a trailing
// one is noted, and the closing bracket left for the caller), the closing
// bracket, or, noted as a missing comma, the start of another value.
func (l *lexer) separator(closer byte) bool {
	l.space()
	if l.i >= len(l.b) {
		l.stop("container")
		return false
	}
	switch c := l.b[l.i]; {
	case c == ',':
		comma := l.i
		l.i++
		l.space()
		if l.i < len(l.b) && l.b[l.i] == closer {
			l.problem("trailing comma at byte %d", comma)
		}
		return true
	case c == closer:
		return true
	case c == '"' || c == '\'' || c == '{' || c == '[' || c == '-' || c >= '0' && c <= '9' || isWordByte(c):
		l.problem("missing comma at byte %d", l.i)
		return true
	}
	l.stop("container")
	return false
}

// skipContainer skips the object or array at l.i, strings included,
// without recursion.
func (l *lexer) skipContainer() {
	depth := 0
	for l.i < len(l.b) {
		switch c := l.b[l.i]; c {
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				l.i++
				return
			}
		case '"', '\'':
			for l.i++; l.i < len(l.b) && l.b[l.i] != c; l.i++ {
				if l.b[l.i] == '\\' {
					l.i++
				}
			}
		}
		l.i++
	}
	l.i = len(l.b)
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == '$' || c == '@' || c >= '0' && c <= '9'
}

// word reads a bare word (an unquoted key or literal).
func (l *lexer) word() string {
	s := l.i
	for l.i < len(l.b) && (isWordByte(l.b[l.i]) || l.b[l.i] == ':' && l.i+1 < len(l.b) && isWordByte(l.b[l.i+1])) {
		l.i++
	}
	return l.boundBytes(l.b[s:l.i])
}

// key reads an unquoted key: a word, which may hold colons
// ("schema:name"), up to the colon that ends it ({a:true}).
func (l *lexer) key() string {
	start := l.i
	w := l.word()
	if i := strings.LastIndexByte(w, ':'); i >= 0 {
		l.space()
		if l.i >= len(l.b) || l.b[l.i] != ':' {
			l.i = start + i
			return w[:i]
		}
	}
	return w
}

// number reads a number; one that is not a JSON number is kept as a
// string.
func (l *lexer) number() jnode {
	s := l.i
	for l.i < len(l.b) {
		c := l.b[l.i]
		if !(c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E') {
			break
		}
		l.i++
	}
	text := l.boundBytes(l.b[s:l.i])
	if !isJSONNumber(text) {
		l.problem("invalid number %q at byte %d", text, s)
		return jnode{kind: jString, s: text}
	}
	return jnode{kind: jNumber, s: text}
}

// isJSONNumber reports whether s is a number in RFC 8259 §6 grammar.
func isJSONNumber(s string) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	digits := func() int {
		st := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		return i - st
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case digits() == 0:
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(s)
}

// string reads a quoted string at l.i, decoding escapes.
func (l *lexer) string() string {
	q := l.b[l.i]
	if q == '\'' {
		l.problem("single-quoted string at byte %d", l.i)
	}
	l.i++
	s := l.i
	// The common case: no escapes, no control characters.
	for l.i < len(l.b) {
		c := l.b[l.i]
		if c == q {
			out := l.b[s:l.i]
			l.i++
			if !utf8.Valid(out) {
				l.problem("invalid UTF-8 in string at byte %d", s)
			}
			return l.boundBytes(out)
		}
		if c == '\\' || c < 0x20 {
			break
		}
		l.i++
	}
	buf := append([]byte(nil), l.b[s:l.i]...)
	for l.i < len(l.b) {
		c := l.b[l.i]
		switch {
		case c == q:
			l.i++
			if !utf8.Valid(buf) {
				l.problem("invalid UTF-8 in string at byte %d", s)
			}
			return l.boundBytes(buf)
		case c < 0x20:
			l.problem("control character %q in string at byte %d", c, l.i)
			buf = append(buf, c)
			l.i++
		case c == '\\':
			buf = l.escape(buf, q)
		default:
			buf = append(buf, c)
			l.i++
		}
		if len(buf) > l.maxStr+utf8.UTFMax {
			// Keep reading to the closing quote, keeping nothing more.
			buf = buf[:l.maxStr+utf8.UTFMax]
		}
	}
	l.stop("string")
	return l.boundBytes(buf)
}

// escape decodes the escape sequence at l.i onto buf.
func (l *lexer) escape(buf []byte, q byte) []byte {
	at := l.i
	l.i++ // backslash
	if l.i >= len(l.b) {
		return buf
	}
	c := l.b[l.i]
	l.i++
	switch c {
	case '"', '\\', '/':
		return append(buf, c)
	case 'b':
		return append(buf, '\b')
	case 'f':
		return append(buf, '\f')
	case 'n':
		return append(buf, '\n')
	case 'r':
		return append(buf, '\r')
	case 't':
		return append(buf, '\t')
	case 'u':
		r, ok := l.hex4()
		if !ok {
			l.problem("invalid \\u escape at byte %d", at)
			return append(buf, 'u')
		}
		if utf16.IsSurrogate(r) {
			r2 := utf8.RuneError
			if save := l.i; hasPrefix(l.b[l.i:], `\u`) {
				l.i += 2
				if lo, ok := l.hex4(); ok && utf16.DecodeRune(r, lo) != utf8.RuneError {
					r2 = utf16.DecodeRune(r, lo)
				} else {
					l.i = save
				}
			}
			r = r2
		}
		return utf8.AppendRune(buf, r)
	}
	if c != q {
		l.problem("unknown escape \\%c at byte %d", c, at)
	}
	return append(buf, c)
}

func (l *lexer) hex4() (rune, bool) {
	if l.i+4 > len(l.b) {
		return 0, false
	}
	v, err := strconv.ParseUint(string(l.b[l.i:l.i+4]), 16, 32)
	if err != nil {
		return 0, false
	}
	l.i += 4
	return rune(v), true
}

// boundBytes returns b as a string cut to the string limit.
func (l *lexer) boundBytes(b []byte) string {
	if len(b) <= l.maxStr {
		return string(b)
	}
	l.limit("MaxStringBytes %d", l.maxStr)
	n := l.maxStr
	for n > 0 && b[n]&0xC0 == 0x80 {
		n--
	}
	return string(b[:n])
}

// encode writes n as JSON, for a block that was not valid as written.
func encode(buf []byte, n *jnode) []byte {
	switch n.kind {
	case jBool, jNumber:
		return append(buf, n.s...)
	case jString:
		return quote(buf, n.s)
	case jArray:
		buf = append(buf, '[')
		for i := range n.elems {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = encode(buf, &n.elems[i])
		}
		return append(buf, ']')
	case jObject:
		buf = append(buf, '{')
		for i := range n.elems {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = quote(buf, n.keys[i])
			buf = append(buf, ':')
			buf = encode(buf, &n.elems[i])
		}
		return append(buf, '}')
	}
	return append(buf, "null"...)
}

// quote writes s as a JSON string; invalid UTF-8 becomes U+FFFD.
func quote(buf []byte, s string) []byte {
	const hex = "0123456789abcdef"
	buf = append(buf, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				buf = append(buf, '\\', c)
			case c == '\n':
				buf = append(buf, '\\', 'n')
			case c == '\r':
				buf = append(buf, '\\', 'r')
			case c == '\t':
				buf = append(buf, '\\', 't')
			case c < 0x20:
				buf = append(buf, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			default:
				buf = append(buf, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			buf = append(buf, `\ufffd`...)
		} else {
			buf = append(buf, s[i:i+size]...)
		}
		i += size
	}
	return append(buf, '"')
}
