package extract

import (
	"bytes"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"golang.org/x/net/html"
)

// scanner tokenizes an HTML document held entirely in memory. It returns
// the same tokens as html.NewTokenizer(bytes.NewReader(b)) — the same
// types, Raw bytes, Text and TagAttr results, and the same errors, including
// html.ErrBufferExceeded under SetMaxBuf — but works on the slice directly:
// it finds '<' with bytes.IndexByte instead of reading byte by byte through
// a buffered reader, and it returns sub-slices of the input wherever a
// token's text needs no rewriting.
//
// Its state machine follows x/net/html's token.go step by step (the HTML
// standard's tokenizer states as that package implements them), including
// where it reads ahead and backs up, because the buffer limit counts every
// byte read for the current token, look-ahead included.
//
// Differences from *html.Tokenizer:
//   - Raw, Text and TagAttr may return sub-slices of the input document,
//     which callers must not modify. (The html.Tokenizer's results are in
//     its own buffer or fresh copies, which callers may rewrite, as
//     extract's eachRawAttr does when it lower-cases names in Raw; and it
//     unescapes in place, so there Raw can change after Text. Here the
//     input is never written.)
//   - TagAttr results are valid until the next call to Next (the
//     html.Tokenizer returns copies); Text results, as there, too.
//   - An empty TagAttr value may be an empty non-nil slice where the
//     html.Tokenizer returns nil.
//   - Only the seven methods extract uses exist: no AllowCDATA (CDATA
//     sections are bogus comments, the html.Tokenizer's default), no
//     Token, TagName or Buffered.
type scanner struct {
	buf []byte // the whole document
	tt  html.TokenType
	// err is the first error; it is never reset, except where a
	// "<!DOCTYPE" prefix running into EOF is read again as a bogus comment.
	err error

	// raw is the current token's bytes in buf; raw.end is the read position.
	raw span
	// lim is the first position readByte cannot simply return: len(buf),
	// or the byte whose reading makes the token maxBuf long.
	lim    int
	maxBuf int
	// data is a text token's text, a tag's name, a comment's contents...
	data span

	pendingAttr   [2]span
	attr          [][2]span
	attrSeen      map[string]struct{} // only for tags with many attributes
	nAttrReturned int

	// rawTag is the lower-case name of the element ("script", "title"...)
	// whose content the next token is, or "" (one of the constant strings
	// of startRawTag, so it is never allocated).
	rawTag     string
	textIsRaw  bool // the text is not entity-decoded
	convertNUL bool // NUL bytes in the text become U+FFFD

	// scratch holds rewritten text and attributes of the current token.
	// It is only appended to until the next Next, so every slice of it
	// that was returned stays intact until then.
	scratch []byte
}

// span is a range of positions in the scanner's input, end exclusive.
type span struct {
	start, end int
}

// attrSeenMin is the number of saved attributes of one tag above which the
// duplicate check uses a map instead of comparing with each earlier name.
const attrSeenMin = 24

// newScanner returns a scanner for the UTF-8 document b, which it does not
// modify and which must not be modified while the scanner is in use.
func newScanner(b []byte) *scanner {
	return &scanner{buf: b}
}

// reset makes z scan b from its beginning, keeping its buffers and its
// buffer limit.
func (z *scanner) reset(b []byte) {
	*z = scanner{buf: b, maxBuf: z.maxBuf, attr: z.attr[:0], scratch: z.scratch[:0]}
}

// SetMaxBuf limits a token to fewer than n bytes, counted as the
// html.Tokenizer counts them: every byte read while scanning the token,
// including bytes looked at ahead and then given back, so a token can fail
// a little before its own length reaches n. A token reaching the limit is
// cut off there, as if the input ended (a text token is returned up to
// the limit, a tag becomes an ErrorToken) and the error is
// html.ErrBufferExceeded. 0 means no limit.
func (z *scanner) SetMaxBuf(n int) {
	z.maxBuf = n
}

// NextIsNotRawText makes the content after the current start tag markup
// rather than raw text or RCDATA, as html.Tokenizer's method of that name
// does: extract calls it after <noscript>.
func (z *scanner) NextIsNotRawText() {
	z.rawTag = ""
}

// Err returns the error of the last ErrorToken: io.EOF at the end of the
// input, html.ErrBufferExceeded past the SetMaxBuf limit. It is nil after
// other tokens.
func (z *scanner) Err() error {
	if z.tt != html.ErrorToken {
		return nil
	}
	return z.err
}

// Raw returns the current token's bytes, a sub-slice of the input.
// Consecutive tokens' Raw bytes partition the input up to the first
// ErrorToken.
func (z *scanner) Raw() []byte {
	return z.buf[z.raw.start:z.raw.end:z.raw.end]
}

// readByte returns the next byte, or sets z.err and returns 0 at the end
// of the input or of the buffer limit.
func (z *scanner) readByte() byte {
	if z.raw.end < z.lim {
		c := z.buf[z.raw.end]
		z.raw.end++
		return c
	}
	return z.readPastLimit()
}

// readPastLimit is readByte at or past lim. At the end of the input it
// sets io.EOF without consuming anything; otherwise the byte is consumed
// and the token has reached maxBuf bytes: html.ErrBufferExceeded (as the
// html.Tokenizer does, even when called again after the error).
func (z *scanner) readPastLimit() byte {
	if z.raw.end >= len(z.buf) {
		z.err = io.EOF
		return 0
	}
	z.raw.end++
	z.err = html.ErrBufferExceeded
	return 0
}

// skipTo advances the read position past the next c, as calling readByte
// until it returns c would. It returns false, with z.err set, when the
// input or the buffer limit ends first.
func (z *scanner) skipTo(c byte) bool {
	if z.raw.end < z.lim {
		if i := bytes.IndexByte(z.buf[z.raw.end:z.lim], c); i >= 0 {
			z.raw.end += i + 1
			return true
		}
		z.raw.end = z.lim
	}
	z.readPastLimit()
	return false
}

// Next scans the next token and returns its type.
func (z *scanner) Next() html.TokenType {
	z.raw.start = z.raw.end
	z.data.start = z.raw.end
	z.data.end = z.raw.end
	z.scratch = z.scratch[:0]
	if z.err != nil {
		z.tt = html.ErrorToken
		return z.tt
	}
	z.lim = len(z.buf)
	if z.maxBuf > 0 && z.maxBuf <= len(z.buf)-z.raw.start {
		z.lim = z.raw.start + z.maxBuf - 1
	}
	if z.rawTag != "" {
		if z.rawTag == "plaintext" {
			// Everything up to EOF is text.
			z.raw.end = max(z.raw.end, z.lim)
			z.readPastLimit()
			z.data.end = z.raw.end
			z.textIsRaw = true
		} else {
			z.readRawOrRCDATA()
		}
		if z.data.end > z.data.start {
			z.tt = html.TextToken
			z.convertNUL = true
			return z.tt
		}
	}
	z.textIsRaw = false
	z.convertNUL = false

loop:
	for {
		if !z.skipTo('<') {
			break loop
		}
		// Is this '<' the start of a tag, comment or doctype, or text?
		c := z.readByte()
		if z.err != nil {
			break loop
		}
		var tt html.TokenType
		switch {
		case 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z':
			tt = html.StartTagToken
		case c == '/':
			tt = html.EndTagToken
		case c == '!' || c == '?':
			// Comments, doctypes and bogus comments such as "<?xml ...>".
			tt = html.CommentToken
		default:
			// Text; c is looked at again.
			z.raw.end--
			continue
		}

		// Text read before the tag is a token of its own.
		if x := z.raw.end - len("<a"); z.raw.start < x {
			z.raw.end = x
			z.data.end = x
			z.tt = html.TextToken
			return z.tt
		}
		switch tt {
		case html.StartTagToken:
			z.tt = z.readStartTag()
			return z.tt
		case html.EndTagToken:
			c = z.readByte()
			if z.err != nil {
				break loop
			}
			if c == '>' {
				// "</>" is nothing; it is returned as an empty comment
				// so that Raw still partitions the input.
				z.tt = html.CommentToken
				return z.tt
			}
			if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' {
				z.readTag(false)
				if z.err != nil {
					z.tt = html.ErrorToken
				} else {
					z.tt = html.EndTagToken
				}
				return z.tt
			}
			z.raw.end--
			z.readUntilCloseAngle()
			z.tt = html.CommentToken
			return z.tt
		case html.CommentToken:
			if c == '!' {
				z.tt = z.readMarkupDeclaration()
				return z.tt
			}
			z.raw.end--
			z.readUntilCloseAngle()
			z.tt = html.CommentToken
			return z.tt
		}
	}
	if z.raw.start < z.raw.end {
		z.data.end = z.raw.end
		z.tt = html.TextToken
		return z.tt
	}
	z.tt = html.ErrorToken
	return z.tt
}

// skipWhiteSpace skips HTML white space.
func (z *scanner) skipWhiteSpace() {
	if z.err != nil {
		return
	}
	p := z.raw.end
	for p < z.lim && scanClass[z.buf[p]]&classSpace != 0 {
		p++
	}
	z.raw.end = p
	if p >= z.lim {
		z.readPastLimit()
	}
}

// Byte classes for the tag loops.
const (
	classSpace   = 1 << iota // ' ', '\n', '\r', '\t', '\f'
	classNameEnd             // white space, '/', '>': ends a tag name
	classKeyEnd              // classNameEnd and '='
	classValEnd              // white space and '>': ends an unquoted value
)

var scanClass = [256]uint8{
	' ':  classSpace | classNameEnd | classKeyEnd | classValEnd,
	'\n': classSpace | classNameEnd | classKeyEnd | classValEnd,
	'\r': classSpace | classNameEnd | classKeyEnd | classValEnd,
	'\t': classSpace | classNameEnd | classKeyEnd | classValEnd,
	'\f': classSpace | classNameEnd | classKeyEnd | classValEnd,
	'/':  classNameEnd | classKeyEnd,
	'>':  classNameEnd | classKeyEnd | classValEnd,
	'=':  classKeyEnd,
}

// scanUntil returns the position of the first byte from p on, before lim,
// in class; lim if there is none.
func (z *scanner) scanUntil(p int, class uint8) int {
	for p < z.lim && scanClass[z.buf[p]]&class == 0 {
		p++
	}
	return p
}

// readRawOrRCDATA reads the content of the element z.rawTag up to its end
// tag (not included).
func (z *scanner) readRawOrRCDATA() {
	if z.rawTag == "script" {
		z.readScript()
		z.textIsRaw = true
		z.rawTag = ""
		return
	}
	for {
		if !z.skipTo('<') {
			break
		}
		c := z.readByte()
		if z.err != nil {
			break
		}
		if c != '/' {
			z.raw.end--
			continue
		}
		if z.readRawEndTag() || z.err != nil {
			break
		}
	}
	z.data.end = z.raw.end
	// RCDATA (textarea, title) is entity-decoded; raw text is not.
	z.textIsRaw = z.rawTag != "textarea" && z.rawTag != "title"
	z.rawTag = ""
}

// readRawEndTag reports whether "</" (already read) starts the end tag of
// z.rawTag; if so the position is moved back to the '<'.
func (z *scanner) readRawEndTag() bool {
	for i := 0; i < len(z.rawTag); i++ {
		c := z.readByte()
		if z.err != nil {
			return false
		}
		if c != z.rawTag[i] && c != z.rawTag[i]-('a'-'A') {
			z.raw.end--
			return false
		}
	}
	c := z.readByte()
	if z.err != nil {
		return false
	}
	switch c {
	case ' ', '\n', '\r', '\t', '\f', '/', '>':
		// "</", the name and c.
		z.raw.end -= 3 + len(z.rawTag)
		return true
	}
	z.raw.end--
	return false
}

// readScript reads script data up to "</script", through the escaped
// ("<!--") and double-escaped ("<!--<script>") states of the HTML standard
// (§13.2.5.4, 13.2.5.15-13.2.5.31).
func (z *scanner) readScript() {
	defer func() {
		z.data.end = z.raw.end
	}()
	var c byte

scriptData:
	if !z.skipTo('<') {
		return
	}
	// scriptDataLessThanSign
	c = z.readByte()
	if z.err != nil {
		return
	}
	switch c {
	case '/':
		goto scriptDataEndTagOpen
	case '!':
		goto scriptDataEscapeStart
	}
	z.raw.end--
	goto scriptData

scriptDataEndTagOpen:
	if z.readRawEndTag() || z.err != nil {
		return
	}
	goto scriptData

scriptDataEscapeStart:
	c = z.readByte()
	if z.err != nil {
		return
	}
	if c == '-' {
		goto scriptDataEscapeStartDash
	}
	z.raw.end--
	goto scriptData

scriptDataEscapeStartDash:
	c = z.readByte()
	if z.err != nil {
		return
	}
	if c == '-' {
		goto scriptDataEscapedDashDash
	}
	z.raw.end--
	goto scriptData

scriptDataEscaped:
	c = z.readByte()
	if z.err != nil {
		return
	}
	switch c {
	case '-':
		goto scriptDataEscapedDash
	case '<':
		goto scriptDataEscapedLessThanSign
	}
	goto scriptDataEscaped

scriptDataEscapedDash:
	c = z.readByte()
	if z.err != nil {
		return
	}
	switch c {
	case '-':
		goto scriptDataEscapedDashDash
	case '<':
		goto scriptDataEscapedLessThanSign
	}
	goto scriptDataEscaped

scriptDataEscapedDashDash:
	c = z.readByte()
	if z.err != nil {
		return
	}
	switch c {
	case '-':
		goto scriptDataEscapedDashDash
	case '<':
		goto scriptDataEscapedLessThanSign
	case '>':
		goto scriptData
	}
	goto scriptDataEscaped

scriptDataEscapedLessThanSign:
	c = z.readByte()
	if z.err != nil {
		return
	}
	if c == '/' {
		goto scriptDataEscapedEndTagOpen
	}
	if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' {
		goto scriptDataDoubleEscapeStart
	}
	z.raw.end--
	goto scriptData

scriptDataEscapedEndTagOpen:
	if z.readRawEndTag() || z.err != nil {
		return
	}
	goto scriptDataEscaped

scriptDataDoubleEscapeStart:
	z.raw.end--
	for i := 0; i < len("script"); i++ {
		c = z.readByte()
		if z.err != nil {
			return
		}
		if c != "script"[i] && c != "SCRIPT"[i] {
			z.raw.end--
			goto scriptDataEscaped
		}
	}
	c = z.readByte()
	if z.err != nil {
		return
	}
	switch c {
	case ' ', '\n', '\r', '\t', '\f', '/', '>':
		goto scriptDataDoubleEscaped
	}
	z.raw.end--
	goto scriptDataEscaped

scriptDataDoubleEscaped:
	c = z.readByte()
	if z.err != nil {
		return
	}
	switch c {
	case '-':
		goto scriptDataDoubleEscapedDash
	case '<':
		goto scriptDataDoubleEscapedLessThanSign
	}
	goto scriptDataDoubleEscaped

scriptDataDoubleEscapedDash:
	c = z.readByte()
	if z.err != nil {
		return
	}
	switch c {
	case '-':
		goto scriptDataDoubleEscapedDashDash
	case '<':
		goto scriptDataDoubleEscapedLessThanSign
	}
	goto scriptDataDoubleEscaped

scriptDataDoubleEscapedDashDash:
	c = z.readByte()
	if z.err != nil {
		return
	}
	switch c {
	case '-':
		goto scriptDataDoubleEscapedDashDash
	case '<':
		goto scriptDataDoubleEscapedLessThanSign
	case '>':
		goto scriptData
	}
	goto scriptDataDoubleEscaped

scriptDataDoubleEscapedLessThanSign:
	c = z.readByte()
	if z.err != nil {
		return
	}
	if c == '/' {
		goto scriptDataDoubleEscapeEnd
	}
	z.raw.end--
	goto scriptDataDoubleEscaped

scriptDataDoubleEscapeEnd:
	if z.readRawEndTag() {
		z.raw.end += len("</script>")
		goto scriptDataEscaped
	}
	if z.err != nil {
		return
	}
	goto scriptDataDoubleEscaped
}

// readComment reads a comment whose "<!--" has been read, including the
// short forms "<!-->" and "<!--->" and the "--!>" ending.
func (z *scanner) readComment() {
	z.data.start = z.raw.end
	defer func() {
		if z.data.end < z.data.start {
			// An empty comment such as "<!-->".
			z.data.end = z.data.start
		}
	}()

	dashCount := 0
	beginning := true
	for {
		if dashCount == 0 && !beginning {
			// Only a '-' can change the state here.
			if !z.skipTo('-') {
				z.data.end = z.abruptCommentDataEnd()
				return
			}
			dashCount = 1
			continue
		}
		c := z.readByte()
		if z.err != nil {
			z.data.end = z.abruptCommentDataEnd()
			return
		}
		switch c {
		case '-':
			dashCount++
			continue
		case '>':
			if dashCount >= 2 || beginning {
				z.data.end = z.raw.end - len("-->")
				return
			}
		case '!':
			if dashCount >= 2 {
				c = z.readByte()
				if z.err != nil {
					z.data.end = z.abruptCommentDataEnd()
					return
				} else if c == '>' {
					z.data.end = z.raw.end - len("--!>")
					return
				} else if c == '-' {
					dashCount = 1
					beginning = false
					continue
				}
			}
		}
		dashCount = 0
		beginning = false
	}
}

// abruptCommentDataEnd is the end of a comment's data when the input ends
// inside it: a trailing "-", "--" or "--!" is not data.
func (z *scanner) abruptCommentDataEnd() int {
	raw := z.buf[z.raw.start:z.raw.end]
	if len(raw) >= len("<!--") {
		raw = raw[len("<!--"):]
		switch {
		case bytes.HasSuffix(raw, []byte("--!")):
			return z.raw.end - 3
		case bytes.HasSuffix(raw, []byte("--")):
			return z.raw.end - 2
		case bytes.HasSuffix(raw, []byte("-")):
			return z.raw.end - 1
		}
	}
	return z.raw.end
}

// readUntilCloseAngle reads a bogus comment up to and including '>'.
func (z *scanner) readUntilCloseAngle() {
	z.data.start = z.raw.end
	if !z.skipTo('>') {
		z.data.end = z.raw.end
		return
	}
	z.data.end = z.raw.end - len(">")
}

// readMarkupDeclaration reads a token starting with "<!" (already read):
// a comment, a doctype or a bogus comment.
func (z *scanner) readMarkupDeclaration() html.TokenType {
	z.data.start = z.raw.end
	var c [2]byte
	for i := 0; i < 2; i++ {
		c[i] = z.readByte()
		if z.err != nil {
			z.data.end = z.raw.end
			if i == 1 && c[0] == '>' {
				z.data.end--
			}
			return html.CommentToken
		}
	}
	if c[0] == '-' && c[1] == '-' {
		z.readComment()
		return html.CommentToken
	}
	z.raw.end -= 2
	if z.readDoctype() {
		return html.DoctypeToken
	}
	z.readUntilCloseAngle()
	return html.CommentToken
}

// readDoctype reads "DOCTYPE" (any case) and the rest of a doctype, or
// reports false with the position back after "<!".
func (z *scanner) readDoctype() bool {
	const s = "DOCTYPE"
	for i := 0; i < len(s); i++ {
		c := z.readByte()
		if z.err != nil {
			if z.err == io.EOF {
				// Read the prefix again as a bogus comment; EOF comes
				// again at its end.
				z.raw.end = z.data.start
				z.err = nil
				return false
			}
			z.data.end = z.raw.end
			return false
		}
		if c != s[i] && c != s[i]+('a'-'A') {
			z.raw.end = z.data.start
			return false
		}
	}
	if z.skipWhiteSpace(); z.err != nil {
		z.data.start = z.raw.end
		z.data.end = z.raw.end
		return true
	}
	z.readUntilCloseAngle()
	return true
}

// startRawTag returns the lower-case name of the element whose content is
// raw text or RCDATA that the start tag named name opens, or "".
func startRawTag(name []byte) string {
	if len(name) < 3 || len(name) > 9 {
		return ""
	}
	switch name[0] | 0x20 {
	case 'i':
		return rawTagIn(name, "iframe", "", "")
	case 'n':
		return rawTagIn(name, "noembed", "noframes", "noscript")
	case 'p':
		return rawTagIn(name, "plaintext", "", "")
	case 's':
		return rawTagIn(name, "script", "style", "")
	case 't':
		return rawTagIn(name, "textarea", "title", "")
	case 'x':
		return rawTagIn(name, "xmp", "", "")
	}
	return ""
}

// rawTagIn returns whichever of a, b and c equals name ignoring A-Z case,
// or "".
func rawTagIn(name []byte, a, b, c string) string {
	for _, s := range [3]string{a, b, c} {
		if s != "" && asciiLowerEqual(name, s) {
			return s
		}
	}
	return ""
}

// asciiLowerEqual reports whether b lower-cased (A-Z only) equals s.
func asciiLowerEqual(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := 0; i < len(b); i++ {
		c := b[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != s[i] {
			return false
		}
	}
	return true
}

// readStartTag reads a start tag whose "<a" has been read.
func (z *scanner) readStartTag() html.TokenType {
	z.readTag(true)
	if z.err != nil {
		return html.ErrorToken
	}
	if s := startRawTag(z.buf[z.data.start:z.data.end]); s != "" {
		z.rawTag = s
	}
	// Self-closing if the byte before '>' is a '/' that does not end the
	// last attribute's unquoted value (as in <p a=/>).
	n := len(z.attr)
	if z.buf[z.raw.end-2] == '/' && (n == 0 || z.raw.end-2 != z.attr[n-1][1].end-1) {
		return html.SelfClosingTagToken
	}
	return html.StartTagToken
}

// readTag reads a tag's name and attributes; the attributes are kept for
// TagAttr if saveAttr.
func (z *scanner) readTag(saveAttr bool) {
	z.attr = z.attr[:0]
	z.nAttrReturned = 0
	if z.attrSeen != nil {
		clear(z.attrSeen)
	}
	z.readTagName()
	if z.skipWhiteSpace(); z.err != nil {
		return
	}
	for {
		c := z.readByte()
		if z.err != nil || c == '>' {
			break
		}
		z.raw.end--
		z.readTagAttrKey()
		z.readTagAttrVal()
		// Keep the attribute if its name is not empty and new.
		if saveAttr && z.pendingAttr[0].start != z.pendingAttr[0].end && z.newAttrName() {
			z.attr = append(z.attr, z.pendingAttr)
		}
		if z.skipWhiteSpace(); z.err != nil {
			break
		}
	}
}

// newAttrName reports whether the pending attribute's name differs from
// the saved attributes' names, ignoring A-Z case.
func (z *scanner) newAttrName() bool {
	key := z.buf[z.pendingAttr[0].start:z.pendingAttr[0].end]
	if len(z.attr) < attrSeenMin {
		for _, a := range z.attr {
			if asciiFoldEqual(z.buf[a[0].start:a[0].end], key) {
				return false
			}
		}
		return true
	}
	if z.attrSeen == nil {
		z.attrSeen = make(map[string]struct{})
	}
	if len(z.attrSeen) == 0 {
		for _, a := range z.attr {
			z.attrSeen[lowerString(z.buf[a[0].start:a[0].end])] = struct{}{}
		}
	}
	k := lowerString(key)
	if _, ok := z.attrSeen[k]; ok {
		return false
	}
	z.attrSeen[k] = struct{}{}
	return true
}

// asciiFoldEqual reports whether a and b are equal ignoring A-Z case.
func asciiFoldEqual(a, b []byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if x == y {
			continue
		}
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

func lowerString(b []byte) string {
	s := []byte(string(b))
	for i, c := range s {
		if 'A' <= c && c <= 'Z' {
			s[i] = c + 'a' - 'A'
		}
	}
	return string(s)
}

// readTagName reads the name of a tag whose first letter has been read.
func (z *scanner) readTagName() {
	z.data.start = z.raw.end - 1
	p := z.scanUntil(z.raw.end, classNameEnd)
	z.raw.end = p
	if p >= z.lim {
		z.readPastLimit()
		z.data.end = z.raw.end
		return
	}
	z.data.end = p
	if scanClass[z.buf[p]]&classSpace != 0 {
		z.raw.end++ // the space is consumed
	}
}

// readTagAttrKey reads an attribute name into z.pendingAttr[0].
func (z *scanner) readTagAttrKey() {
	p := z.raw.end
	z.pendingAttr[0].start = p
	if p < z.lim && z.buf[p] == '=' {
		// A leading '=' is part of the name.
		p++
	}
	p = z.scanUntil(p, classKeyEnd)
	z.raw.end = p
	if p >= z.lim {
		z.readPastLimit()
	}
	// The byte after the name, if any, is looked at again.
	z.pendingAttr[0].end = z.raw.end
}

// readTagAttrVal reads an attribute value, if any, into z.pendingAttr[1].
func (z *scanner) readTagAttrVal() {
	z.pendingAttr[1].start = z.raw.end
	z.pendingAttr[1].end = z.raw.end
	if z.skipWhiteSpace(); z.err != nil {
		return
	}
	c := z.readByte()
	if z.err != nil {
		return
	}
	if c == '/' {
		// Self-closing start tag state.
		return
	}
	if c != '=' {
		z.raw.end--
		return
	}
	if z.skipWhiteSpace(); z.err != nil {
		return
	}
	quote := z.readByte()
	if z.err != nil {
		return
	}
	switch quote {
	case '>':
		z.raw.end--
		return

	case '\'', '"':
		z.pendingAttr[1].start = z.raw.end
		if !z.skipTo(quote) {
			z.pendingAttr[1].end = z.raw.end
			return
		}
		z.pendingAttr[1].end = z.raw.end - 1

	default:
		z.pendingAttr[1].start = z.raw.end - 1
		p := z.scanUntil(z.raw.end, classValEnd)
		z.raw.end = p
		if p >= z.lim {
			z.readPastLimit()
			z.pendingAttr[1].end = z.raw.end
			return
		}
		z.pendingAttr[1].end = p
		if z.buf[p] != '>' {
			z.raw.end++ // the space is consumed
		}
	}
}

// Text returns the text of a text, comment or doctype token: "\r\n" and
// "\r" become "\n"; NUL becomes U+FFFD in comments and in raw text (script,
// style, title...); character references are decoded except in raw text
// (script, style, xmp, iframe, noembed, noframes, noscript, plaintext). It
// returns an empty slice when called again for the same token and nil for
// other tokens.
func (z *scanner) Text() []byte {
	switch z.tt {
	case html.TextToken, html.CommentToken, html.DoctypeToken:
	default:
		return nil
	}
	d := z.buf[z.data.start:z.data.end:z.data.end]
	z.data.start = z.raw.end
	z.data.end = z.raw.end
	nul := z.convertNUL || z.tt == html.CommentToken
	unescape := !z.textIsRaw
	if bytes.IndexByte(d, '\r') < 0 && (!nul || bytes.IndexByte(d, 0) < 0) && (!unescape || bytes.IndexByte(d, '&') < 0) {
		return d
	}
	n := len(z.scratch)
	z.scratch = appendRewritten(z.scratch, d, nul, unescape, false)
	return z.scratch[n:len(z.scratch):len(z.scratch)]
}

// TagAttr returns the next attribute of a start tag: its name lower-cased
// (A-Z only) and its value with character references decoded by the
// attribute-value rules, both with NUL replaced by U+FFFD and the value's
// "\r\n" and "\r" replaced by "\n"; and whether more attributes follow.
// Repeated names are left out (the first one counts), as are empty names.
func (z *scanner) TagAttr() (key, val []byte, moreAttr bool) {
	if z.nAttrReturned >= len(z.attr) || (z.tt != html.StartTagToken && z.tt != html.SelfClosingTagToken) {
		return nil, nil, false
	}
	a := z.attr[z.nAttrReturned]
	z.nAttrReturned++
	k := z.buf[a[0].start:a[0].end:a[0].end]
	for _, c := range k {
		if 'A' <= c && c <= 'Z' || c == 0 {
			n := len(z.scratch)
			z.scratch = appendLowerKey(z.scratch, k)
			k = z.scratch[n:len(z.scratch):len(z.scratch)]
			break
		}
	}
	v := z.buf[a[1].start:a[1].end:a[1].end]
	if bytes.IndexByte(v, '\r') >= 0 || bytes.IndexByte(v, 0) >= 0 || bytes.IndexByte(v, '&') >= 0 {
		n := len(z.scratch)
		z.scratch = appendRewritten(z.scratch, v, true, true, true)
		v = z.scratch[n:len(z.scratch):len(z.scratch)]
	}
	return k, v, z.nAttrReturned < len(z.attr)
}

// appendLowerKey appends the attribute name k, lower-cased, with NUL
// replaced by U+FFFD.
func appendLowerKey(dst, k []byte) []byte {
	for _, c := range k {
		switch {
		case c == 0:
			dst = append(dst, "\uFFFD"...)
		case 'A' <= c && c <= 'Z':
			dst = append(dst, c+'a'-'A')
		default:
			dst = append(dst, c)
		}
	}
	return dst
}

// appendRewritten appends s with "\r\n" and "\r" turned into "\n", NUL
// into U+FFFD if nul, and character references decoded if unescape (by
// the rules for attribute values if attribute). This is the html
// Tokenizer's newline conversion, NUL replacement and unescaping in one
// pass: the three steps touch disjoint bytes, and a character reference
// never contains CR or NUL, so a reference reads the same in s as in the
// partly rewritten text.
func appendRewritten(dst, s []byte, nul, unescape, attribute bool) []byte {
	for i := 0; i < len(s); {
		// Copy the run of bytes that stay as they are.
		j := i
		for j < len(s) {
			c := s[j]
			if c == '\r' || c == 0 && nul || c == '&' && unescape {
				break
			}
			j++
		}
		dst = append(dst, s[i:j]...)
		if j == len(s) {
			break
		}
		switch s[j] {
		case '\r':
			dst = append(dst, '\n')
			j++
			if j < len(s) && s[j] == '\n' {
				j++
			}
		case 0:
			dst = append(dst, "\uFFFD"...)
			j++
		default: // '&'
			var n int
			dst, n = appendCharRef(dst, s[j:], attribute)
			j += n
		}
		i = j
	}
	return dst
}

// windows1252 is what the numeric references &#x80; to &#x9F; stand for
// (the HTML standard's table for numeric character references).
var windows1252 = [32]rune{
	0x20AC, 0x0081, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021,
	0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0x008D, 0x017D, 0x008F,
	0x0090, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014,
	0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x009D, 0x017E, 0x0178,
}

// appendCharRef decodes the character reference at the start of s
// (s[0] == '&') as x/net/html does, appends the result and returns how
// many bytes of s it stood for. When there is no reference it appends "&"
// and returns 1.
func appendCharRef(dst, s []byte, attribute bool) ([]byte, int) {
	if len(s) <= 1 {
		return append(dst, '&'), 1
	}
	i := 1
	if s[i] == '#' {
		if len(s) <= 2 {
			return append(dst, '&'), 1
		}
		i++
		hex := false
		if s[i] == 'x' || s[i] == 'X' {
			hex = true
			i++
		}
		i0 := i
		x := rune(0)
		for ; i < len(s); i++ {
			c := s[i]
			var d rune
			switch {
			case '0' <= c && c <= '9':
				d = rune(c - '0')
			case hex && 'a' <= c && c <= 'f':
				d = rune(c-'a') + 10
			case hex && 'A' <= c && c <= 'F':
				d = rune(c-'A') + 10
			default:
				goto digitsDone
			}
			if x <= utf8.MaxRune {
				if hex {
					x = 16*x + d
				} else {
					x = 10*x + d
				}
			}
		}
	digitsDone:
		if i == i0 {
			return append(dst, '&'), 1
		}
		if i < len(s) && s[i] == ';' {
			i++
		}
		switch {
		case 0x80 <= x && x <= 0x9F:
			x = windows1252[x-0x80]
		case x == 0 || 0xD800 <= x && x <= 0xDFFF || x > utf8.MaxRune:
			x = utf8.RuneError
		}
		return utf8.AppendRune(dst, x), i
	}

	// A named reference: letters and digits, and a ';' if one follows.
	for i < len(s) {
		c := s[i]
		i++
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' {
			continue
		}
		if c != ';' {
			i--
		}
		break
	}
	name := s[1:i]
	if len(name) == 0 {
		return append(dst, '&'), 1
	}
	if attribute && name[len(name)-1] != ';' && i < len(s) && s[i] == '=' {
		// "&name=" in an attribute value is left alone.
		return append(dst, '&'), 1
	}
	// The name's replacement, with whatever follows a shorter legacy
	// reference ("&notit;" is "¬it;" in text), covers all of s[:i].
	return append(dst, namedRef(name, attribute)...), i
}

// namedRef returns what "&"+name (name: letters and digits, maybe ending
// in ';') turns into when decoded as text, or when decoded in an
// attribute value if attribute (then only complete names count). The
// entity table is x/net/html's; lookups go through its exported functions
// and are cached.
func namedRef(name []byte, attribute bool) string {
	c := &refCache[0]
	if attribute {
		c = &refCache[1]
	}
	if m := c.m.Load(); m != nil {
		if r, ok := (*m)[string(name)]; ok {
			return r
		}
	}
	var r string
	if attribute {
		// The tokenizer is the only exported way to decode an attribute
		// value: the value is "&"+name, and '"' follows the name.
		z := html.NewTokenizer(strings.NewReader(`<a b="&` + string(name) + `">`))
		z.Next()
		_, v, _ := z.TagAttr()
		r = string(v)
	} else {
		r = html.UnescapeString("&" + string(name))
	}
	c.add(string(name), r)
	return r
}

// refCacheMax bounds each reference cache; names past it are looked up
// every time.
const refCacheMax = 512

// refCache holds decoded named references for text (0) and attribute
// values (1).
var refCache [2]refTable

// refTable is a bounded cache of decoded references. Readers load an
// immutable map without locking; add copies it.
type refTable struct {
	mu sync.Mutex
	m  atomic.Pointer[map[string]string]
}

func (c *refTable) add(name, r string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var old map[string]string
	if p := c.m.Load(); p != nil {
		old = *p
	}
	if len(old) >= refCacheMax {
		return
	}
	if _, ok := old[name]; ok {
		return
	}
	m := make(map[string]string, len(old)+1)
	for k, v := range old {
		m[k] = v
	}
	m[name] = r
	c.m.Store(&m)
}
