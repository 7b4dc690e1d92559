package sitemap

import (
	"bufio"
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/html/charset"
)

// field is the entry child element whose text is being captured.
type field uint8

const (
	fieldNone field = iota
	fieldLoc
	fieldLastMod
	fieldChangeFreq
	fieldPriority
	fieldGUID
	fieldPublished // Atom <published>, used when <updated> is absent
	fieldIgnored   // any other element; captured only to keep nesting straight
)

// pending is the entry being assembled.
type pending struct {
	loc, guid   string
	hasLoc      bool
	preferred   bool // Atom: loc came from a rel="alternate" (or rel-less) link
	lastMod     string
	published   string
	changeFreq  string
	priority    string
	guidIsPerma bool
}

// xmlState walks the token stream of an XML document. It matches elements by
// local name only, ignoring namespaces: sitemaps appear with the
// sitemaps.org namespace, the legacy Google namespace, a prefix, or none at
// all, and feeds likewise. Structure is checked by depth instead, so that
// extension elements such as <image:image><image:loc> inside a <url> are not
// mistaken for the URL's own <loc>.
type xmlState struct {
	d          *doc
	stack      []xml.Name
	entryDepth int // depth of the open entry element, 0 when none
	cur        pending

	capture      field
	captureDepth int
	buf          []byte
	overflow     bool

	// bases holds the xml:base attributes of the open elements of a feed,
	// innermost last; each u is resolved against the one before it, or the
	// document's URL, and is nil when it could not be resolved.
	bases []xmlBase
}

type xmlBase struct {
	depth int
	u     *url.URL
}

// maxXMLToken bounds the bytes the XML decoder may read for one token (a
// start tag with its attributes, a text node, a comment, a directive), or
// Parser.MaxBytes when that is smaller. See tokenReader.
const maxXMLToken = 1 << 20

// bom reports that the document started with a byte-order mark. A BOM names
// the encoding unambiguously (XML 1.0 Appendix F), so it wins over an
// encoding declaration that contradicts it: the declaration is then
// ignored, as libxml2 does, rather than decoding the document a second time
// in the declared encoding. (XML 1.0 §4.3.3 makes such a contradiction a
// fatal error; the contradiction is a common generator bug, and the BOM is
// what the bytes actually are.)
func (d *doc) parseXML(r *bufio.Reader, bom bool) error {
	tr := &tokenReader{r: r, limit: min(maxXMLToken, d.lim.MaxBytes)}
	dec := xml.NewDecoder(tr)
	// Strict mode rejects unbalanced tags and any entity reference other
	// than the five predefined ones and character references. No Entity
	// map is set, so neither entities declared in a DOCTYPE nor external
	// entities are ever expanded (no XXE, no "billion laughs"); XInclude is
	// not interpreted by encoding/xml at all.
	dec.Strict = true
	dec.CharsetReader = func(label string, in io.Reader) (io.Reader, error) {
		if bom {
			// UTF-8 by its BOM, or already transcoded to UTF-8 from
			// UTF-16 by its BOM.
			return in, nil
		}
		return charset.NewReaderLabel(label, in)
	}
	s := &xmlState{d: d, stack: make([]xml.Name, 0, 8)}
	for {
		tok, err := dec.RawToken()
		tr.n = 0 // a token boundary
		if err == io.EOF {
			if len(s.stack) > 0 || d.info.Format == FormatUnknown {
				if d.info.Format == FormatUnknown {
					return fmt.Errorf("%w: no root element", ErrUnknownFormat)
				}
				return fmt.Errorf("%w: unexpected end of document inside <%s>", ErrMalformed, s.stack[len(s.stack)-1].Local)
			}
			return nil
		}
		if err != nil {
			if errors.Is(err, ErrTooLarge) || errors.Is(err, ErrMalformed) {
				return err
			}
			return fmt.Errorf("%w: %w", ErrMalformed, err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if len(s.stack) >= d.lim.MaxNesting {
				return fmt.Errorf("%w: elements nested deeper than %d", ErrMalformed, d.lim.MaxNesting)
			}
			s.stack = append(s.stack, t.Name)
			if err := s.start(t); err != nil {
				return err
			}
		case xml.EndElement:
			if len(s.stack) == 0 {
				return fmt.Errorf("%w: unexpected </%s>", ErrMalformed, t.Name.Local)
			}
			top := s.stack[len(s.stack)-1]
			if top != t.Name {
				return fmt.Errorf("%w: element <%s> closed by </%s>", ErrMalformed, qname(top), qname(t.Name))
			}
			if err := s.end(); err != nil {
				return err
			}
			if n := len(s.bases); n > 0 && s.bases[n-1].depth == len(s.stack) {
				s.bases = s.bases[:n-1]
			}
			s.stack = s.stack[:len(s.stack)-1]
			if len(s.stack) == 0 {
				// The root is closed; whatever follows is not part of the
				// document.
				return nil
			}
		case xml.CharData:
			if s.capture != fieldNone && s.capture != fieldIgnored {
				s.text(t)
			}
		}
	}
}

// tokenReader passes at most limit bytes to the XML decoder between two
// token boundaries, which parseXML marks by resetting n, and then fails with
// ErrMalformed. encoding/xml has no limit of its own: it buffers a whole
// token before returning it, and for a start tag also builds its []Attr,
// which for a tag of millions of short attributes takes some 30 times the
// tag's size. With the limit the decoder's memory is a constant times limit,
// however large MaxBytes is.
//
// n counts the bytes read from r rather than following
// Decoder.InputOffset, which counts transcoded bytes once an encoding
// declaration installs a CharsetReader; the two differ by the decoder's
// read-ahead, which is small against limit.
type tokenReader struct {
	r     *bufio.Reader
	limit int64
	n     int64 // bytes read since the last token boundary
}

func (t *tokenReader) Read(p []byte) (int, error) {
	if t.n >= t.limit {
		return 0, t.tooLong()
	}
	if rest := t.limit - t.n; int64(len(p)) > rest {
		p = p[:rest]
	}
	n, err := t.r.Read(p)
	t.n += int64(n)
	return n, err
}

// ReadByte is what the decoder calls when no CharsetReader is installed:
// an io.ByteReader is used as it is, without a bufio.Reader of its own.
func (t *tokenReader) ReadByte() (byte, error) {
	if t.n >= t.limit {
		return 0, t.tooLong()
	}
	c, err := t.r.ReadByte()
	if err == nil {
		t.n++
	}
	return c, err
}

func (t *tokenReader) tooLong() error {
	return fmt.Errorf("%w: XML token longer than %d bytes", ErrMalformed, t.limit)
}

func qname(n xml.Name) string {
	if n.Space == "" {
		return n.Local
	}
	return n.Space + ":" + n.Local
}

// text appends captured character data, skipping leading white space and
// stopping at a bound so a hostile text node cannot grow the buffer. Only
// text other than white space past the bound makes the value overflow:
// white space there is trailing white space, which finishField trims,
// unless more text follows it, which then overflows in turn.
//
// White space is Unicode's (unicode.IsSpace), not only XML's four ASCII
// characters: sitemaps generated from CMS text often wrap a <loc> in
// no-break spaces (U+00A0), and ideographic (U+3000) or other typographic
// spaces (U+2000 to U+200A) turn up the same way. None of them can be part of
// a URL, where they would have to be percent-encoded.
func (s *xmlState) text(b []byte) {
	if len(s.buf) == 0 {
		b = bytes.TrimLeftFunc(b, unicode.IsSpace)
	}
	room := max(s.d.lim.MaxURLLength+256-len(s.buf), 0)
	if len(b) > room {
		// Cut at a character boundary, so that a multi-byte space
		// straddling the bound is still seen as white space.
		for room > 0 && !utf8.RuneStart(b[room]) {
			room--
		}
		if len(bytes.TrimLeftFunc(b[room:], unicode.IsSpace)) > 0 {
			s.overflow = true
		}
		b = b[:room]
	}
	s.buf = append(s.buf, b...)
}

func (s *xmlState) start(t xml.StartElement) error {
	depth := len(s.stack)
	if s.capture != fieldNone {
		return nil // nested inside a captured field: only text matters
	}
	name := t.Name.Local
	d := s.d
	if depth == 1 {
		switch {
		case strings.EqualFold(name, "urlset"):
			d.info.Format = FormatURLSet
		case strings.EqualFold(name, "sitemapindex"):
			d.info.Format = FormatIndex
		case strings.EqualFold(name, "rss"):
			d.info.Format = FormatRSS
		case name == "RDF":
			d.info.Format = FormatRSS1
		case name == "feed":
			d.info.Format = FormatAtom
		default:
			return fmt.Errorf("%w: root element <%s>", ErrUnknownFormat, qname(t.Name))
		}
		s.pushBase(t, depth)
		return nil
	}
	s.pushBase(t, depth)
	if s.entryDepth == 0 {
		if s.isEntry(name, depth) {
			s.entryDepth = depth
			s.cur = pending{}
		}
		return nil
	}
	// Here depth == s.entryDepth+1: a direct child of the entry, since
	// deeper elements are inside a capture.
	f := fieldIgnored
	switch d.info.Format {
	case FormatURLSet, FormatIndex:
		switch name {
		case "loc":
			f = fieldLoc
		case "lastmod":
			f = fieldLastMod
		case "changefreq":
			if d.info.Format == FormatURLSet {
				f = fieldChangeFreq
			}
		case "priority":
			if d.info.Format == FormatURLSet {
				f = fieldPriority
			}
		}
	case FormatRSS, FormatRSS1:
		switch name {
		case "link":
			f = fieldLoc
		case "guid":
			if d.info.Format == FormatRSS {
				f = fieldGUID
				s.cur.guidIsPerma = true // RSS 2.0: isPermaLink defaults to true
				for _, a := range t.Attr {
					if a.Name.Local == "isPermaLink" {
						s.cur.guidIsPerma = strings.EqualFold(strings.TrimSpace(a.Value), "true")
					}
				}
			}
		case "pubDate", "date": // RSS 2.0 <pubDate>, Dublin Core <dc:date>
			f = fieldLastMod
		}
	case FormatAtom:
		switch name {
		case "link":
			s.atomLink(t)
		case "updated":
			f = fieldLastMod
		case "published":
			f = fieldPublished
		}
	}
	s.beginCapture(f, depth)
	return nil
}

// isEntry reports whether an element at depth opens an entry of the
// document's format.
func (s *xmlState) isEntry(name string, depth int) bool {
	switch s.d.info.Format {
	case FormatURLSet:
		return depth == 2 && name == "url"
	case FormatIndex:
		return depth == 2 && name == "sitemap"
	case FormatRSS:
		// RSS 2.0 puts items in <channel>; some 0.9x feeds put them at the top.
		return name == "item" && (depth == 2 || (depth == 3 && s.stack[1].Local == "channel"))
	case FormatRSS1:
		return depth == 2 && name == "item"
	case FormatAtom:
		return depth == 2 && name == "entry"
	}
	return false
}

// atomLink takes an entry's URL from its <link>: the first rel="alternate"
// link (rel defaults to alternate, RFC 4287 §4.2.7.2), or failing that the
// first link of any relation.
func (s *xmlState) atomLink(t xml.StartElement) {
	var href, rel string
	for _, a := range t.Attr {
		switch a.Name.Local {
		case "href":
			href = a.Value
		case "rel":
			rel = strings.TrimSpace(a.Value)
		}
	}
	href = strings.TrimSpace(href)
	if href == "" || s.cur.preferred {
		return
	}
	href = s.resolve(href)
	alt := rel == "" || rel == "alternate"
	if alt || !s.cur.hasLoc {
		s.cur.loc, s.cur.hasLoc, s.cur.preferred = href, true, alt
	}
}

// pushBase records the xml:base attribute of a feed element at depth.
// Sitemaps need none: their <loc> must be absolute.
func (s *xmlState) pushBase(t xml.StartElement, depth int) {
	switch s.d.info.Format {
	case FormatRSS, FormatRSS1, FormatAtom:
	default:
		return
	}
	for _, a := range t.Attr {
		if a.Name.Space != "xml" || a.Name.Local != "base" {
			continue
		}
		var u *url.URL
		if base := s.base(); base != nil && len(a.Value) <= s.d.lim.MaxURLLength {
			if ref, err := url.Parse(strings.TrimSpace(a.Value)); err == nil {
				u = base.ResolveReference(ref)
			}
		}
		s.bases = append(s.bases, xmlBase{depth: depth, u: u})
		return
	}
}

// base returns the base URI in effect: the innermost xml:base, or the
// document's URL; nil when an xml:base could not be resolved.
func (s *xmlState) base() *url.URL {
	if n := len(s.bases); n > 0 {
		return s.bases[n-1].u
	}
	return s.d.base
}

// resolve resolves a feed link against the base URI in effect. An absolute
// or unparsable link is returned as it is, for emit to judge.
func (s *xmlState) resolve(link string) string {
	ref, err := url.Parse(link)
	if err != nil || ref.IsAbs() {
		return link
	}
	base := s.base()
	if base == nil {
		return link
	}
	return base.ResolveReference(ref).String()
}

func (s *xmlState) beginCapture(f field, depth int) {
	s.capture, s.captureDepth = f, depth
	s.buf, s.overflow = s.buf[:0], false
}

func (s *xmlState) end() error {
	depth := len(s.stack)
	if s.capture != fieldNone {
		if depth != s.captureDepth {
			return nil
		}
		f := s.capture
		s.capture = fieldNone
		return s.finishField(f)
	}
	if depth == s.entryDepth {
		s.entryDepth = 0
		return s.flush()
	}
	return nil
}

func (s *xmlState) finishField(f field) error {
	if f == fieldIgnored {
		return nil
	}
	v := string(bytes.TrimRightFunc(s.buf, unicode.IsSpace))
	if s.overflow {
		if f == fieldLoc {
			// Too long to be a URL: record it as present but invalid.
			v = strings.Repeat("x", s.d.lim.MaxURLLength+1)
		} else {
			v = ""
		}
	}
	c := &s.cur
	switch f {
	case fieldLoc:
		if s.d.info.Format == FormatURLSet || s.d.info.Format == FormatIndex {
			// Several <loc> in one entry are separate entries; the fields
			// that follow a <loc> belong to it.
			if c.hasLoc {
				if err := s.flush(); err != nil {
					return err
				}
			}
			c.loc, c.hasLoc = v, true
		} else if !c.hasLoc && v != "" {
			c.loc, c.hasLoc = s.resolve(v), true // feeds: the first non-empty <link>
		}
	case fieldLastMod:
		c.lastMod = v
	case fieldPublished:
		c.published = v
	case fieldChangeFreq:
		c.changeFreq = v
	case fieldPriority:
		c.priority = v
	case fieldGUID:
		if c.guid == "" && c.guidIsPerma {
			c.guid = v // an identifier: never resolved, used only if absolute
		}
	}
	return nil
}

// flush delivers the pending entry, if it has a URL, and clears it.
func (s *xmlState) flush() error {
	c := s.cur
	s.cur = pending{}
	loc := c.loc
	if !c.hasLoc || loc == "" {
		if c.guid == "" {
			if c.hasLoc {
				s.d.info.Invalid++
			}
			return nil
		}
		loc = c.guid
	}
	e := Entry{Priority: DefaultPriority}
	if s.d.info.Format == FormatIndex {
		e.Kind = KindSitemap
	}
	e.LastMod, _ = s.lastMod(c)
	if c.changeFreq != "" {
		switch cf := ChangeFreq(strings.ToLower(c.changeFreq)); cf {
		case Always, Hourly, Daily, Weekly, Monthly, Yearly, Never:
			e.ChangeFreq = cf
		}
	}
	if c.priority != "" {
		if p, err := strconv.ParseFloat(c.priority, 64); err == nil && p >= 0 && p <= 1 {
			e.Priority = p
		}
	}
	return s.d.emit(loc, e)
}

func (s *xmlState) lastMod(c pending) (t time.Time, ok bool) {
	switch s.d.info.Format {
	case FormatRSS:
		if c.lastMod != "" {
			return parseRFC822Date(c.lastMod)
		}
	case FormatAtom:
		if c.lastMod != "" {
			return parseW3CDate(c.lastMod)
		}
		if c.published != "" {
			return parseW3CDate(c.published)
		}
	default:
		if c.lastMod != "" {
			return parseW3CDate(c.lastMod)
		}
	}
	return time.Time{}, false
}
