package extract

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
	"golang.org/x/net/html/charset"
	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/htmlindex"
	"golang.org/x/text/transform"

	"github.com/crawlkit/crawlkit/urlnorm"
)

// tokenizer is the part of *html.Tokenizer extraction uses; scanner is the
// faster implementation for a UTF-8 document already in memory.
type tokenizer interface {
	Next() html.TokenType
	Err() error
	Text() []byte
	Raw() []byte
	TagAttr() (key, val []byte, more bool)
	NextIsNotRawText()
}

// state is one extraction pass.
type state struct {
	o   Config
	z   tokenizer
	doc *Document

	// links hold the links found so far, with Raw set and URL not yet
	// resolved.
	links    []Link
	baseHref string
	haveBase bool
	canon    string // raw href of the first rel=canonical link

	text   textBuf
	anchor textBuf
	// anchorLink is the index in links of the open <a>, or -1.
	anchorLink int

	skipRaw   bool // the next text tokens are raw text to ignore
	inTitle   bool // the next text tokens are the <title>
	titleSeen bool
	title     textBuf
	svg       int // depth of <svg>, whose <title> is not the page's
	template  int // depth of <template>, whose content is inert
	noscript  int // depth of <noscript>, whose text is not Document.Text
	langSeen  bool
	metaLang  string

	// queryEnc is the document's encoding when URL queries are
	// percent-encoded in it rather than in UTF-8, else nil.
	queryEnc encoding.Encoding

	// formOpen reports that a <form> start tag was seen and no </form>
	// after it; form is the index in links of that form's action, or -1.
	formOpen bool
	form     int
	// notGet holds the indices in links of forms some visible submission
	// of which is not a GET (see Config.FollowForms).
	notGet map[int]bool

	robots robotsAcc
}

func (o *Config) run(r io.Reader, body []byte, pageURL string, header http.Header) (*Document, error) {
	s := &state{o: o.withDefaults(), doc: &Document{}, anchorLink: -1, form: -1}
	pageURL = strings.TrimSpace(pageURL)
	if pageURL != "" {
		u, err := urlnorm.ResolveString("", pageURL)
		if err != nil || !isHTTP(u) {
			return nil, fmt.Errorf("%w: %q", ErrInvalidPageURL, pageURL)
		}
		pageURL = u
	}
	s.doc.Base = pageURL
	s.text.limit = s.o.MaxTextBytes
	// Visible text is at most about as long as the markup it comes from
	// (entities and charset conversion aside), so a buffer of the body's
	// size is filled without regrowing; finish hands it to Document.Text
	// without a copy when the text fills most of it.
	s.text.b = make([]byte, 0, min(s.o.MaxTextBytes, max(len(body)+64, 4096)))
	// Link-heavy pages have a link every few hundred bytes of markup;
	// append grows the slice for denser ones.
	s.links = make([]Link, 0, min(s.o.MaxLinks, len(body)/400+16))
	s.anchor.limit = s.o.MaxAnchorText
	s.title.limit = s.o.MaxFieldBytes
	s.robots.agent = strings.ToLower(strings.TrimSpace(s.o.UserAgent))

	contentType := ""
	if header != nil {
		contentType = header.Get("Content-Type")
		for _, v := range header.Values("X-Robots-Tag") {
			s.robots.header(v)
		}
	}

	// Charset: look at the first 1024 bytes, as the WHATWG prescan does.
	var peek []byte
	var src io.Reader
	if r == nil {
		peek = body[:min(len(body), 1024)]
		src = bytes.NewReader(body)
	} else {
		br := bufio.NewReaderSize(r, 4096)
		peek, _ = br.Peek(1024)
		src = br
	}
	enc, name := determineCharset(peek, contentType)
	s.doc.Charset = name
	switch name {
	case "utf-8", "utf-16be", "utf-16le", "replacement":
		// The output encoding of these is UTF-8.
	default:
		// Not enc, whose encoder writes "&#N;" for what it cannot
		// encode, which the URL Standard percent-encodes.
		s.queryEnc, _ = htmlindex.Get(name)
	}
	switch {
	case r == nil && (name == "utf-8" || name == "windows-1252" && isASCII(body)):
		// The common case: tokenize the body in place. (A page without
		// a charset declaration and without non-ASCII bytes is sniffed
		// as windows-1252, which decodes ASCII to itself.)
		sc := newScanner(bytes.TrimPrefix(body, []byte("\xEF\xBB\xBF")))
		sc.SetMaxBuf(s.o.MaxTokenBytes)
		s.z = sc
	default:
		if name != "utf-8" {
			src = transform.NewReader(src, enc.NewDecoder())
		} else if bytes.HasPrefix(peek, []byte("\xEF\xBB\xBF")) {
			// The tokenizer would keep a UTF-8 BOM as text.
			src = skipBOM(src)
		}
		z := html.NewTokenizer(src)
		z.SetMaxBuf(s.o.MaxTokenBytes)
		s.z = z
	}
	err := s.loop()
	s.finish(header)
	return s.doc, err
}

// determineCharset decides a page's encoding from its first 1024 bytes and
// its Content-Type, as the WHATWG encoding sniffing algorithm does (BOM,
// Content-Type charset, <meta> prescan, windows-1252).
func determineCharset(peek []byte, contentType string) (encoding.Encoding, string) {
	enc, name, certain := charset.DetermineEncoding(peek, contentType)
	if !certain && name == "x-user-defined" {
		// WHATWG prescan: a <meta> naming x-user-defined means
		// windows-1252; only a Content-Type label selects it.
		enc, name = charmap.Windows1252, "windows-1252"
	}
	return enc, name
}

// UTF8 returns body, an HTML page's bytes in the charset its
// Content-Type, byte-order mark or <meta> declares (WHATWG encoding
// sniffing, as Extract decides it), converted to UTF-8 without a BOM, and
// the charset's name. Bytes that are not valid in the charset become
// U+FFFD. A UTF-8 or ASCII body is returned as it is, without a copy.
func UTF8(body []byte, contentType string) ([]byte, string) {
	enc, name := determineCharset(body[:min(len(body), 1024)], contentType)
	if name == "utf-8" && utf8.Valid(body) || name == "windows-1252" && isASCII(body) {
		return bytes.TrimPrefix(body, []byte("\xEF\xBB\xBF")), name
	}
	out, _, err := transform.Bytes(enc.NewDecoder(), body)
	if err != nil {
		// The decoders replace invalid input; an error here is a
		// transformer's internal one, and the bytes are kept.
		return body, name
	}
	return bytes.TrimPrefix(out, []byte("\xEF\xBB\xBF")), name
}

// isASCII reports whether b has no byte above 0x7F, eight bytes at a time.
func isASCII(b []byte) bool {
	for len(b) >= 8 {
		if binary.LittleEndian.Uint64(b)&0x8080808080808080 != 0 {
			return false
		}
		b = b[8:]
	}
	for _, c := range b {
		if c >= 0x80 {
			return false
		}
	}
	return true
}

func skipBOM(r io.Reader) io.Reader {
	var bom [3]byte
	io.ReadFull(r, bom[:])
	return r
}

func isHTTP(u string) bool {
	return strings.HasPrefix(u, "http://") || strings.HasPrefix(u, "https://")
}

func (s *state) loop() error {
	z := s.z
	for {
		tt := z.Next()
		if tt != html.TextToken {
			s.skipRaw = false
			s.inTitle = false
		}
		switch tt {
		case html.ErrorToken:
			err := z.Err()
			if err == io.EOF {
				return nil
			}
			if errors.Is(err, html.ErrBufferExceeded) {
				return fmt.Errorf("%w (%d bytes)", ErrTokenTooLarge, s.o.MaxTokenBytes)
			}
			return err
		case html.TextToken:
			switch {
			case s.inTitle:
				s.title.add(z.Text())
			case s.skipRaw || s.template > 0:
			default:
				t := z.Text()
				if s.noscript == 0 {
					s.text.add(t)
				}
				if s.anchorLink >= 0 {
					s.anchor.add(t)
				}
			}
		case html.StartTagToken, html.SelfClosingTagToken:
			s.start(tt == html.SelfClosingTagToken)
		case html.EndTagToken:
			s.end()
		}
	}
}

// boundary marks an element boundary in the text unless the element is
// inline (phrasing content that does not separate words).
func (s *state) boundary(a atom.Atom) {
	switch a {
	case atom.A, atom.Abbr, atom.B, atom.Bdi, atom.Bdo, atom.Cite, atom.Code, atom.Data,
		atom.Del, atom.Dfn, atom.Em, atom.Font, atom.I, atom.Ins, atom.Kbd, atom.Label,
		atom.Mark, atom.Q, atom.S, atom.Samp, atom.Small, atom.Span, atom.Strong,
		atom.Sub, atom.Sup, atom.Time, atom.U, atom.Var, atom.Wbr, atom.Tt, atom.Big, atom.Strike, atom.Nobr:
		return
	}
	s.text.space()
	if s.anchorLink >= 0 {
		s.anchor.space()
	}
}

func (s *state) start(selfClosing bool) {
	raw := s.z.Raw()
	a := rawTagAtom(raw)
	hasAttr := hasAttrs(raw)
	s.boundary(a)
	switch a {
	case atom.Script, atom.Style, atom.Textarea, atom.Xmp,
		atom.Noembed, atom.Noframes, atom.Plaintext:
		// The tokenizer reads these elements' content as raw text.
		s.skipRaw = true
		if a == atom.Script && hasAttr {
			s.simple(KindScript, "src")
		}
		return
	case atom.Iframe:
		s.skipRaw = true
		if hasAttr {
			s.simple(KindIframe, "src")
		}
		return
	case atom.Title:
		if !s.titleSeen && s.svg == 0 && s.template == 0 {
			s.titleSeen, s.inTitle = true, true
		} else {
			s.skipRaw = true
		}
		return
	case atom.Svg:
		if !selfClosing {
			s.svg++
		}
	case atom.Template:
		if !selfClosing {
			s.template++
		}
	case atom.Noscript:
		// A crawler runs no scripts: the content is markup, as HTML
		// parses it with scripting disabled, not the raw text the
		// tokenizer would make of it. "<noscript/>" opens the element
		// too (the slash means nothing on an HTML element).
		s.z.NextIsNotRawText()
		s.noscript++
	case atom.Form:
		s.formTag(hasAttr)
		return
	}
	if !hasAttr {
		if a == atom.A {
			s.closeAnchor()
		}
		return
	}
	switch a {
	case atom.A:
		s.closeAnchor()
		s.anchorTag(selfClosing)
	case atom.Area:
		s.linkTag(KindArea, "href")
	case atom.Link:
		s.linkTag(KindLink, "href")
	case atom.Img:
		s.imgTag(KindImg)
	case atom.Source:
		s.imgTag(KindSource)
	case atom.Frame:
		s.simple(KindFrame, "src")
	case atom.Video, atom.Audio, atom.Embed, atom.Track:
		s.media()
	case atom.Button, atom.Input:
		if s.form >= 0 {
			s.submitButton(a)
		}
	case atom.Meta:
		s.meta()
	case atom.Base:
		s.base()
	case atom.Html:
		s.htmlTag()
	}
}

func (s *state) end() {
	a := rawTagAtom(s.z.Raw())
	switch a {
	case atom.A:
		s.closeAnchor()
	case atom.Svg:
		if s.svg > 0 {
			s.svg--
		}
	case atom.Template:
		if s.template > 0 {
			s.template--
		}
	case atom.Noscript:
		if s.noscript > 0 {
			s.noscript--
		}
	case atom.Form:
		s.formOpen, s.form = false, -1
	}
	s.boundary(a)
}

// attrs calls fn for each attribute of the current tag. Keys are lower
// case; values are entity-decoded and valid only during the call.
func (s *state) attrs(fn func(key, val []byte)) {
	if raw := s.z.Raw(); rawIsPlain(raw) {
		eachRawAttr(raw, fn)
		return
	}
	for {
		k, v, more := s.z.TagAttr()
		fn(k, v)
		if !more {
			return
		}
	}
}

// hasAttrs reports whether a raw start tag may have attributes: anything
// after the name other than white space, '/' and the closing '>'.
func hasAttrs(raw []byte) bool {
	i := 1
	for i < len(raw) && !isTagSpace(raw[i]) && raw[i] != '/' && raw[i] != '>' {
		i++
	}
	for ; i < len(raw); i++ {
		if c := raw[i]; !isTagSpace(c) && c != '/' && c != '>' {
			return true
		}
	}
	return false
}

// urlAttr turns an attribute value into a link reference, or "" when it
// is empty or over the size limit (counted as skipped).
func (s *state) urlAttr(v []byte) string {
	v = trimHTMLSpace(v)
	if len(v) == 0 {
		return ""
	}
	if len(v) > s.o.MaxAttrBytes {
		s.doc.Skipped++
		return ""
	}
	return string(v)
}

// smallAttr copies an attribute cut to MaxFieldBytes.
func (s *state) smallAttr(v []byte) string {
	v = trimHTMLSpace(v)
	if len(v) > s.o.MaxFieldBytes {
		v = v[:s.o.MaxFieldBytes]
	}
	return validUTF8(string(v))
}

func (s *state) add(l Link) int {
	if len(s.links) >= s.o.MaxLinks {
		s.doc.LinksTruncated = true
		return -1
	}
	s.links = append(s.links, l)
	return len(s.links) - 1
}

// simple records a link from one URL attribute.
func (s *state) simple(k Kind, attr string) {
	var raw string
	s.attrs(func(key, val []byte) {
		if raw == "" && string(key) == attr {
			raw = s.urlAttr(val)
		}
	})
	if raw != "" {
		s.add(Link{Raw: raw, Kind: k})
	}
}

// formTag records the action of a <form> and whether its method is GET.
// Its submit buttons, up to </form>, are the form's (HTML ignores a <form>
// start tag while a form is open, so a nested one does not take them).
func (s *state) formTag(hasAttr bool) {
	nested := s.formOpen
	s.formOpen = true
	if !nested {
		s.form = -1
	}
	if !hasAttr {
		return
	}
	var raw string
	var actionSeen, methodSeen, get bool
	s.attrs(func(key, val []byte) {
		switch string(key) {
		case "action":
			if !actionSeen {
				raw, actionSeen = s.urlAttr(val), true
			}
		case "method":
			if !methodSeen {
				get, methodSeen = isGetMethod(val), true
			}
		}
	})
	if raw == "" {
		return
	}
	i := s.add(Link{Raw: raw, Kind: KindForm})
	if i < 0 {
		return
	}
	if methodSeen && !get {
		s.markNotGet(i)
	}
	if !nested {
		s.form = i
	}
}

// submitButton marks the open form as not GET when the <button> or <input>
// is a submit button whose formmethod overrides the form's method with one
// that is not GET (HTML §4.10.18.6).
func (s *state) submitButton(a atom.Atom) {
	var typeSeen, methodSeen, submit, get bool
	submit = a == atom.Button // a button's missing and invalid type mean submit
	s.attrs(func(key, val []byte) {
		switch string(key) {
		case "type":
			if !typeSeen {
				typeSeen = true
				if a == atom.Button {
					submit = !equalFold(val, "button") && !equalFold(val, "reset")
				} else {
					submit = equalFold(val, "submit") || equalFold(val, "image")
				}
			}
		case "formmethod":
			if !methodSeen {
				get, methodSeen = isGetMethod(val), true
			}
		}
	})
	if submit && methodSeen && !get {
		s.markNotGet(s.form)
	}
}

func (s *state) markNotGet(i int) {
	if s.notGet == nil {
		s.notGet = map[int]bool{}
	}
	s.notGet[i] = true
}

// isGetMethod reports whether a method or formmethod attribute value means
// GET: it is an enumerated attribute whose keywords are get, post and dialog
// (ASCII case-insensitive, white space not trimmed), and whose invalid value
// default is GET (HTML §4.10.18.6).
func isGetMethod(v []byte) bool {
	return !equalFold(v, "post") && !equalFold(v, "dialog")
}

func (s *state) anchorTag(selfClosing bool) {
	var l Link
	s.attrs(func(key, val []byte) {
		switch string(key) {
		case "href":
			l.Raw = s.urlAttr(val)
		case "xlink:href": // SVG <a>
			if l.Raw == "" {
				l.Raw = s.urlAttr(val)
			}
		case "rel":
			l.Rel = parseRel(val)
		case "hreflang":
			l.Hreflang = s.smallAttr(val)
		}
	})
	if l.Raw == "" {
		return
	}
	l.Kind = KindA
	i := s.add(l)
	if i >= 0 && !selfClosing {
		s.anchorLink = i
		s.anchor.reset()
	}
}

func (s *state) closeAnchor() {
	if s.anchorLink < 0 {
		return
	}
	s.links[s.anchorLink].Text = s.anchor.string()
	s.anchorLink = -1
}

func (s *state) linkTag(k Kind, attr string) {
	l := Link{Kind: k}
	s.attrs(func(key, val []byte) {
		switch string(key) {
		case attr:
			l.Raw = s.urlAttr(val)
		case "rel":
			l.Rel = parseRel(val)
		case "hreflang":
			l.Hreflang = s.smallAttr(val)
		case "alt":
			if k == KindArea {
				l.Text = s.altText(val)
			}
		}
	})
	if l.Raw == "" {
		return
	}
	if k == KindLink && l.Rel&RelCanonical != 0 && s.canon == "" && s.template == 0 {
		s.canon = l.Raw
	}
	s.add(l)
}

func (s *state) altText(v []byte) string {
	var t textBuf
	t.limit = s.o.MaxAnchorText
	t.add(v)
	return t.string()
}

// imgTag records src and every srcset candidate of <img> or <source>; the
// alt text of an image inside a link is part of the link's anchor text.
func (s *state) imgTag(k Kind) {
	var src, alt string
	var srcset []byte
	var srcsetOK bool
	s.attrs(func(key, val []byte) {
		switch string(key) {
		case "src":
			src = s.urlAttr(val)
		case "alt":
			alt = s.altText(val)
		case "srcset":
			// Candidates are copied out one by one below; the value is
			// only valid until the next TagAttr call, so keep a copy.
			if len(val) <= s.o.MaxAttrBytes*4 {
				srcset, srcsetOK = append([]byte(nil), val...), true
			} else {
				s.doc.Skipped++
			}
		}
	})
	if src != "" {
		s.add(Link{Raw: src, Kind: k, Text: alt})
	}
	if srcsetOK {
		eachSrcset(srcset, func(u []byte) {
			if raw := s.urlAttr(u); raw != "" {
				s.add(Link{Raw: raw, Kind: k, Text: alt})
			}
		})
	}
	if alt != "" && s.anchorLink >= 0 {
		s.anchor.space()
		s.anchor.add([]byte(alt))
		s.anchor.space()
	}
}

func (s *state) media() {
	s.attrs(func(key, val []byte) {
		switch string(key) {
		case "src", "poster":
			if raw := s.urlAttr(val); raw != "" {
				s.add(Link{Raw: raw, Kind: KindMedia})
			}
		}
	})
}

func (s *state) meta() {
	var name, equiv, content []byte
	s.attrs(func(key, val []byte) {
		switch string(key) {
		case "name":
			name = append(name[:0], trimHTMLSpace(val)...)
		case "http-equiv":
			equiv = append(equiv[:0], trimHTMLSpace(val)...)
		case "content":
			// Kept whole (the tag is bounded by MaxTokenBytes): a
			// refresh URL cut short would be another URL, so it is
			// measured against MaxAttrBytes only once parsed out.
			content = append(content[:0], val...)
		}
	})
	switch {
	case len(name) > 0:
		switch {
		case equalFold(name, "description"):
			if s.doc.Description == "" && s.template == 0 {
				var t textBuf
				t.limit = s.o.MaxFieldBytes
				t.add(content)
				s.doc.Description = t.string()
			}
		case equalFold(name, "robots"),
			s.robots.agent != "" && equalFold(name, s.robots.agent):
			s.robots.meta(content[:min(len(content), s.o.MaxAttrBytes)])
		}
	case equalFold(equiv, "refresh"):
		if u := refreshURL(content); len(u) > 0 {
			if raw := s.urlAttr(u); raw != "" {
				s.add(Link{Raw: raw, Kind: KindMetaRefresh})
			}
		}
	case equalFold(equiv, "content-language"):
		if s.metaLang == "" {
			// The header form may list several languages; the first is
			// the primary one.
			first, _, _ := bytes.Cut(content, []byte(","))
			s.metaLang = s.smallAttr(first)
		}
	}
}

// base records the href of the document's first <base> that has one, even
// an empty one (HTML §4.2.3: "the first base element with an href content
// attribute, in tree order"); a <base> in a <template> is not in the
// document.
func (s *state) base() {
	if s.haveBase || s.template > 0 {
		return
	}
	s.attrs(func(key, val []byte) {
		if !s.haveBase && string(key) == "href" {
			// An empty or over-long value leaves baseHref empty, which
			// resolves to the page URL.
			s.baseHref, s.haveBase = s.urlAttr(val), true
		}
	})
}

func (s *state) htmlTag() {
	if s.langSeen {
		return
	}
	s.attrs(func(key, val []byte) {
		if string(key) == "lang" && !s.langSeen {
			if v := s.smallAttr(val); v != "" {
				s.doc.Language, s.langSeen = v, true
			}
		}
	})
}

// finish resolves the links against the final base and fills in the rest
// of the Document.
func (s *state) finish(header http.Header) {
	s.closeAnchor()
	d := s.doc
	d.Title = s.title.string()
	// A BOM of an encoding other than UTF-8 survives decoding as U+FEFF.
	d.Text, d.TextTruncated = strings.TrimPrefix(s.text.take(), "\uFEFF"), s.text.truncated
	if d.Language == "" {
		d.Language = s.metaLang
	}
	if d.Language == "" && header != nil {
		first, _, _ := strings.Cut(header.Get("Content-Language"), ",")
		d.Language = s.smallAttr([]byte(first))
	}
	d.Robots = s.robots.result()

	var qe *queryEncoder
	if s.queryEnc != nil {
		qe = &queryEncoder{e: s.queryEnc.NewEncoder()}
	}
	base := d.Base
	if s.haveBase {
		// HTML: the document base URL is the first <base href> resolved
		// against the document's URL, if that resolution succeeds.
		if b, err := urlnorm.ResolveString(base, qe.encode(s.baseHref)); err == nil && isHTTP(b) {
			base = b
		}
	}
	d.Base = base
	// origin is base up to its path ("https://host:8080"), for the fast
	// path below.
	origin := ""
	if i := strings.Index(base, "://"); i >= 0 {
		if j := strings.IndexByte(base[i+3:], '/'); j >= 0 {
			origin = base[:i+3+j]
		}
	}
	resolve := func(raw string) (string, bool) {
		raw = qe.encode(raw)
		b := base
		switch {
		case hasHTTPPrefix(raw):
			// "http://..." and "https://..." do not depend on the base
			// (URL Standard: special authority slashes state).
			b = ""
		case origin != "" && isPathAbsolute(raw):
			// A path-absolute reference replaces the base's path, query
			// and fragment: resolving it equals parsing origin+ref, which
			// spares parsing the base again for every link.
			raw, b = origin+raw, ""
		case base == "" && !hasScheme(raw):
			return "", false
		}
		u, err := urlnorm.ResolveString(b, raw)
		if err != nil || !isHTTP(u) {
			return "", false
		}
		return u, true
	}
	if s.canon != "" {
		d.Canonical, _ = resolve(s.canon)
	}
	// Resolve in place, dropping what does not resolve to http(s).
	links := s.links[:0]
	for i, l := range s.links {
		u, ok := resolve(l.Raw)
		if !ok {
			d.Skipped++
			continue
		}
		l.URL, l.Raw = u, validUTF8(l.Raw)
		l.Follow = !l.Rel.Nofollow() && !d.Robots.Nofollow && (l.Kind != KindForm || s.o.FollowForms && !s.notGet[i])
		links = append(links, l)
	}
	clear(s.links[len(links):])
	if len(links) > 0 {
		d.Links = links
	}
}

// hasHTTPPrefix reports whether ref starts with "http://" or "https://",
// in any case.
func hasHTTPPrefix(ref string) bool {
	if len(ref) < 8 || !equalFold([]byte(ref[:4]), "http") {
		return false
	}
	rest := ref[4:]
	if rest[0] == 's' || rest[0] == 'S' {
		rest = rest[1:]
	}
	return strings.HasPrefix(rest, "://")
}

// isPathAbsolute reports whether ref is "/" followed by something that
// cannot make it scheme-relative: not '/' or '\' (both mean a host for
// http), nor a tab or newline (which the URL parser removes, so "/\t/host"
// would become "//host").
func isPathAbsolute(ref string) bool {
	if len(ref) == 0 || ref[0] != '/' {
		return false
	}
	if len(ref) == 1 {
		return true
	}
	switch ref[1] {
	case '/', '\\', '\t', '\n', '\r':
		return false
	}
	return true
}

// hasScheme reports whether ref starts with a URL scheme and a colon.
func hasScheme(ref string) bool {
	ref = strings.TrimLeft(ref, "\x00\x01\x02\x03\x04\x05\x06\x07\x08\t\n\v\f\r\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f ")
	for i := 0; i < len(ref); i++ {
		c := ref[i]
		switch {
		case 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z':
		case i > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'):
		case i > 0 && c == ':':
			return true
		default:
			return false
		}
	}
	return false
}

// queryEncoder percent-encodes the query of a URL reference in a document
// whose encoding is not UTF-8, as HTML's "encoding-parse a URL" and the URL
// Standard's query state do: the query is encoded in the document's
// encoding, and a code point the encoding cannot represent becomes
// "%26%23", its decimal number and "%3B" (an HTML numeric reference,
// percent-encoded). A nil *queryEncoder leaves references alone.
type queryEncoder struct {
	e   *encoding.Encoder
	out []byte
}

// encode returns ref with the non-ASCII characters of its query
// percent-encoded; the rest, left to the URL parser, is unchanged.
func (q *queryEncoder) encode(ref string) string {
	if q == nil {
		return ref
	}
	// The query starts at the first '?' and ends at the first '#' after
	// it; a '?' after a '#' is part of the fragment.
	i := strings.IndexAny(ref, "?#")
	if i < 0 || ref[i] == '#' {
		return ref
	}
	end := len(ref)
	if j := strings.IndexByte(ref[i:], '#'); j >= 0 {
		end = i + j
	}
	query := ref[i+1 : end]
	if isASCII([]byte(query)) {
		return ref
	}
	out := append(q.out[:0], ref[:i+1]...)
	// Encode runs of encodable code points in one go (ISO-2022-JP is
	// stateful) and each other code point as a reference.
	var one [utf8.UTFMax]byte
	var scratch [16]byte
	run := 0
	for k := 0; k < len(query); {
		r, size := utf8.DecodeRuneInString(query[k:])
		if r < utf8.RuneSelf {
			k++
			continue
		}
		q.e.Reset()
		if _, _, err := q.e.Transform(scratch[:], one[:utf8.EncodeRune(one[:], r)], true); err == nil {
			k += size
			continue
		}
		var ok bool
		if out, ok = q.appendRun(out, query[run:k]); !ok {
			return ref
		}
		out = fmt.Appendf(out, "%%26%%23%d%%3B", r)
		k += size
		run = k
	}
	out, ok := q.appendRun(out, query[run:])
	if !ok {
		return ref
	}
	out = append(out, ref[end:]...)
	q.out = out
	return string(out)
}

// appendRun appends s encoded, with every byte that is not ASCII, and '#',
// percent-encoded; the URL parser encodes the ASCII bytes it must.
func (q *queryEncoder) appendRun(out []byte, s string) ([]byte, bool) {
	if s == "" {
		return out, true
	}
	b, _, err := transform.Bytes(q.e, []byte(s))
	if err != nil {
		return out, false
	}
	const hex = "0123456789ABCDEF"
	for _, c := range b {
		if c >= utf8.RuneSelf || c == '#' {
			out = append(out, '%', hex[c>>4], hex[c&15])
		} else {
			out = append(out, c)
		}
	}
	return out, true
}
