package usage

import (
	"strings"
	"unicode/utf8"
)

// This file parses the two Structured Field types the signals use (RFC
// 9651): the Dictionary of Content-Usage (§3.2) and the List of Robots-Tag
// (§3.1), by the parsing algorithms of §4.2. Only what the signals read is
// kept (a member's key, whether its value is a Token and which, and its
// parameters' keys); every other value is checked for syntax and dropped.
// A parse is one pass over the input, so linear in its length; callers
// bound the input (maxField).

// maxField bounds the octets of a field value read, after its lines are
// joined. RFC 9651 §4.1 lets parsers bound field size; the Robots-Tag draft
// asks for at least 8 KiB (draft-illyes-repext §3.1.1).
const maxField = 16 << 10

// sfMember is one member of a Dictionary or List: its key (Dictionary) and
// its value, of which only a Token is kept (token is "" otherwise), and
// the keys of its parameters with a true Boolean or Token value.
type sfMember struct {
	key    string
	token  string
	params []sfParam
}

// sfParam is one parameter: its key, and its value when that is a Token or
// the Boolean true ("" and true then); other values leave ok false.
type sfParam struct {
	key   string
	token string
	ok    bool
}

type sfParser struct {
	s   string
	i   int
	bad bool
}

func (p *sfParser) peek() byte {
	if p.i < len(p.s) {
		return p.s[p.i]
	}
	return 0
}

func (p *sfParser) eof() bool { return p.i >= len(p.s) }

func (p *sfParser) skipSP() {
	for p.i < len(p.s) && p.s[p.i] == ' ' {
		p.i++
	}
}

func (p *sfParser) skipOWS() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

// parseDictionary parses s as a Dictionary (RFC 9651 §4.2.2). A key seen
// twice keeps its last value (§4.2.2 step 2.4). ok is false when s does not
// parse, in which case RFC 9651 §4.2 has the whole field ignored.
func parseDictionary(s string) (members []sfMember, ok bool) {
	p := sfParser{s: s}
	p.skipSP()
	if p.eof() {
		return nil, true
	}
	index := map[string]int{}
	for !p.eof() {
		key := p.key()
		if p.bad {
			return nil, false
		}
		m := sfMember{key: key}
		if p.peek() == '=' {
			p.i++
			m.token, m.params = p.itemOrInnerList()
		} else {
			m.params = p.params()
		}
		if p.bad {
			return nil, false
		}
		if j, seen := index[key]; seen {
			members[j] = m
		} else {
			index[key] = len(members)
			members = append(members, m)
		}
		if !p.nextMember() {
			return nil, false
		}
	}
	return members, true
}

// parseList parses s as a List (RFC 9651 §4.2.1).
func parseList(s string) (members []sfMember, ok bool) {
	p := sfParser{s: s}
	p.skipSP()
	for !p.eof() {
		var m sfMember
		m.token, m.params = p.itemOrInnerList()
		if p.bad {
			return nil, false
		}
		members = append(members, m)
		if !p.nextMember() {
			return nil, false
		}
	}
	return members, true
}

// nextMember consumes the separator after a member: optional white space,
// then the end, or a comma that must be followed by another member.
func (p *sfParser) nextMember() bool {
	p.skipOWS()
	if p.eof() {
		return true
	}
	if p.peek() != ',' {
		return false
	}
	p.i++
	p.skipOWS()
	return !p.eof() // a trailing comma is an error
}

// itemOrInnerList parses §4.2.1.1; only an Item's Token value is returned.
func (p *sfParser) itemOrInnerList() (token string, params []sfParam) {
	if p.peek() == '(' {
		p.innerList()
		return "", p.params()
	}
	kind, v := p.bareItem()
	if kind != 't' {
		v = ""
	}
	return v, p.params()
}

// innerList parses §4.2.1.2 without its parameters.
func (p *sfParser) innerList() {
	p.i++ // '('
	for !p.eof() && !p.bad {
		p.skipSP()
		if p.peek() == ')' {
			p.i++
			return
		}
		p.bareItem()
		p.params()
		if c := p.peek(); c != ' ' && c != ')' {
			p.bad = true
			return
		}
	}
	p.bad = true // no closing parenthesis
}

// params parses §4.2.3.2. A parameter seen twice keeps its last value.
func (p *sfParser) params() []sfParam {
	var out []sfParam
	for !p.bad && p.peek() == ';' {
		p.i++
		p.skipSP()
		k := p.key()
		if p.bad {
			return nil
		}
		prm := sfParam{key: k, ok: true}
		if p.peek() == '=' {
			p.i++
			kind, v := p.bareItem()
			switch {
			case kind == 't':
				prm.token = v
			case kind == '?' && v == "1":
			default:
				prm.ok = false
			}
		}
		replaced := false
		for j := range out {
			if out[j].key == k {
				out[j], replaced = prm, true
			}
		}
		if !replaced {
			out = append(out, prm)
		}
	}
	return out
}

// key parses §4.2.3.3: lcalpha or "*", then lcalpha, DIGIT, "_", "-", "."
// or "*".
func (p *sfParser) key() string {
	c := p.peek()
	if !(c >= 'a' && c <= 'z' || c == '*') {
		p.bad = true
		return ""
	}
	start := p.i
	for p.i < len(p.s) {
		c := p.s[p.i]
		if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.' || c == '*' {
			p.i++
			continue
		}
		break
	}
	return p.s[start:p.i]
}

// bareItem parses §4.2.3.1 and returns its kind: 't' Token, '?' Boolean
// (v "0" or "1"), 'n' Integer or Decimal, 's' String, 'b' Byte Sequence,
// '@' Date, '%' Display String; 0 on error.
func (p *sfParser) bareItem() (kind byte, v string) {
	c := p.peek()
	switch {
	case c == '-' || c >= '0' && c <= '9':
		p.number(false)
		return 'n', ""
	case c == '"':
		p.i++
		p.str()
		return 's', ""
	case c == '*' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
		return 't', p.token()
	case c == ':':
		p.byteSeq()
		return 'b', ""
	case c == '?':
		p.i++
		if b := p.peek(); b == '0' || b == '1' {
			p.i++
			return '?', string(b)
		}
	case c == '@':
		p.i++
		p.number(true)
		return '@', ""
	case c == '%':
		p.i++
		if p.peek() == '"' {
			p.i++
			p.displayString()
			return '%', ""
		}
	}
	p.bad = true
	return 0, ""
}

// number parses §4.2.4 (an Integer when integer is set, as a Date's).
func (p *sfParser) number(integer bool) {
	if p.peek() == '-' {
		p.i++
	}
	start, dot := p.i, -1
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c >= '0' && c <= '9':
		case c == '.' && dot < 0 && !integer:
			if p.i-start > 12 {
				p.bad = true
				return
			}
			dot = p.i
		default:
			goto end
		}
		p.i++
		if dot < 0 && p.i-start > 15 || dot >= 0 && p.i-start > 16 {
			p.bad = true
			return
		}
	}
end:
	n := p.i - start
	switch {
	case n == 0 || start < len(p.s) && p.s[start] == '.':
		p.bad = true
	case dot >= 0 && (dot == p.i-1 || p.i-dot-1 > 3):
		p.bad = true
	}
}

// str parses §4.2.5 after the opening quote.
func (p *sfParser) str() {
	for p.i < len(p.s) {
		c := p.s[p.i]
		p.i++
		switch {
		case c == '\\':
			if n := p.peek(); n == '"' || n == '\\' {
				p.i++
				continue
			}
			p.bad = true
			return
		case c == '"':
			return
		case c < 0x20 || c > 0x7e:
			p.bad = true
			return
		}
	}
	p.bad = true
}

// token parses §4.2.6: tchar, ":" and "/" after the first character.
func (p *sfParser) token() string {
	start := p.i
	p.i++
	for p.i < len(p.s) && (isTchar(p.s[p.i]) || p.s[p.i] == ':' || p.s[p.i] == '/') {
		p.i++
	}
	return p.s[start:p.i]
}

func isTchar(c byte) bool {
	if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

// byteSeq parses §4.2.7.
func (p *sfParser) byteSeq() {
	p.i++
	for p.i < len(p.s) {
		c := p.s[p.i]
		p.i++
		switch {
		case c == ':':
			return
		case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '+', c == '/', c == '=':
		default:
			p.bad = true
			return
		}
	}
	p.bad = true
}

// displayString parses §4.2.10 after `%"`: printable ASCII other than
// "%" and `"`, and %xx escapes in lower-case hex that decode to UTF-8.
func (p *sfParser) displayString() {
	var buf []byte
	for p.i < len(p.s) {
		c := p.s[p.i]
		p.i++
		switch {
		case c == '%':
			if p.i+2 > len(p.s) || !isLowerHex(p.s[p.i]) || !isLowerHex(p.s[p.i+1]) {
				p.bad = true
				return
			}
			buf = append(buf, hexVal(p.s[p.i])<<4|hexVal(p.s[p.i+1]))
			p.i += 2
		case c == '"':
			if !utf8.Valid(buf) {
				p.bad = true
			}
			return
		case c < 0x20 || c > 0x7e:
			p.bad = true
			return
		default:
			buf = append(buf, c)
		}
	}
	p.bad = true
}

func isLowerHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' }

func hexVal(c byte) byte {
	if c <= '9' {
		return c - '0'
	}
	return c - 'a' + 10
}

// joinField joins a field's lines as RFC 9651 §4.2 asks (with ", "), cut
// at maxField octets; cut reports a cut, after which the caller keeps only
// the members that parse whole (draft-illyes-repext §3.1.1).
func joinField(lines []string) (s string, cut bool) {
	s = strings.Join(lines, ", ")
	if len(s) > maxField {
		// Keep the members before the last separator within the bound;
		// one cut in the middle would fail the whole field.
		s = s[:maxField]
		if i := strings.LastIndexByte(s, ','); i >= 0 {
			return s[:i], true
		}
		return "", true
	}
	return s, false
}
