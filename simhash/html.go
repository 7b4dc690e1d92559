package simhash

import (
	"errors"
	"fmt"
	"io"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// maxHTMLToken bounds the tokenizer's buffer: a single tag or text run
// longer than this is an error rather than unbounded memory.
const maxHTMLToken = 4 << 20

// FingerprintHTML returns the fingerprint of the visible text of an HTML
// document with the default options. See Fingerprinter.FingerprintHTML.
func FingerprintHTML(r io.Reader) (uint64, error) {
	var f Fingerprinter
	return f.FingerprintHTML(r)
}

// FingerprintHTML returns the fingerprint of the HTML document read from
// r: FingerprintPage of its title (the first <title> outside svg, math
// and template) and its visible text, streaming it through the
// golang.org/x/net/html tokenizer. The contents of head, title, script, style,
// noscript, template, svg, math, iframe, object and nav elements are not
// text: they are not page text, or (nav) are boilerplate shared by every
// page of a site that would make distinct pages look alike. Tags of
// inline elements (a, b, em, span, ...) do not break words; all other
// tags do. Character references are decoded. A single token (tag or text
// run) over 4 MiB is an error.
func (f *Fingerprinter) FingerprintHTML(r io.Reader) (uint64, error) {
	var st, title textState
	st.init(f)
	title.init(f)
	z := html.NewTokenizer(r)
	z.SetMaxBuf(maxHTMLToken)
	skip := 0    // depth inside skipped elements
	foreign := 0 // depth inside svg, math and template, whose titles are not the page's
	inTitle, titleSeen := false, false
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			if err := z.Err(); !errors.Is(err, io.EOF) {
				st.release()
				title.release()
				return 0, fmt.Errorf("simhash: reading HTML: %w", err)
			}
			return st.sumTitled(&title), nil
		case html.TextToken:
			switch {
			case inTitle:
				title.writeBytes(z.Text())
			case skip == 0:
				st.writeBytes(z.Text())
			}
		case html.StartTagToken, html.EndTagToken, html.SelfClosingTagToken:
			a := tagAtom(z.Raw())
			if a == atom.Body && tt == html.StartTagToken {
				skip = 0 // an unclosed head or nav ends where the body starts
			}
			if tt != html.SelfClosingTagToken {
				switch a {
				case atom.Svg, atom.Math, atom.Template:
					if tt == html.StartTagToken {
						foreign++
					} else if foreign > 0 {
						foreign--
					}
				case atom.Title:
					// The tokenizer reads a title's content as one text
					// run up to </title>, so no tag comes in between.
					inTitle = tt == html.StartTagToken && !titleSeen && foreign == 0
					titleSeen = titleSeen || inTitle
				}
				if skippedElement(a) {
					if tt == html.StartTagToken {
						skip++
					} else if skip > 0 {
						skip--
					}
				}
			}
			if !inlineElement(a) {
				st.separate()
			}
		}
	}
}

// maxTagAtom is longer than the name of every element FingerprintHTML
// treats specially (the longest is 8 bytes).
const maxTagAtom = 16

// tagAtom returns the atom of the element named by a start or end tag
// token's raw bytes ("<Name ...>", "</name>"), or 0 if the name is longer
// than maxTagAtom or no atom. It reads the name the way the tokenizer does
// (up to white space, '/' or '>', ASCII lower-cased) but without
// Tokenizer.TagName, which copies the name: that was one allocation per
// tag, nearly all of a page's allocations.
func tagAtom(raw []byte) atom.Atom {
	i := 1 // past '<'
	if i < len(raw) && raw[i] == '/' {
		i++
	}
	var name [maxTagAtom]byte
	n := 0
	for ; i < len(raw); i++ {
		c := raw[i]
		if c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r' || c == '/' || c == '>' {
			break
		}
		if n == len(name) {
			return 0
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		name[n] = c
		n++
	}
	return atom.Lookup(name[:n])
}

// separate ends the current token, if any.
func (st *textState) separate() {
	if st.tailLen > 0 {
		st.tailLen = 0
	}
	if st.inToken {
		st.endToken()
	}
}

func skippedElement(a atom.Atom) bool {
	switch a {
	case atom.Head, atom.Title, atom.Script, atom.Style, atom.Noscript, atom.Template,
		atom.Svg, atom.Math, atom.Iframe, atom.Object, atom.Nav:
		return true
	}
	return false
}

func inlineElement(a atom.Atom) bool {
	switch a {
	case atom.A, atom.Abbr, atom.B, atom.Bdi, atom.Bdo, atom.Cite, atom.Code,
		atom.Data, atom.Dfn, atom.Em, atom.I, atom.Kbd, atom.Mark, atom.Q,
		atom.S, atom.Samp, atom.Small, atom.Span, atom.Strong, atom.Sub,
		atom.Sup, atom.Time, atom.U, atom.Var, atom.Font:
		return true
	}
	return false
}
