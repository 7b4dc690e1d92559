package extract

import (
	"bytes"
	"fmt"
	"io"
	"math/rand"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// htmlTokenizer is the part of *html.Tokenizer that extract uses, which
// the scanner also implements.
type htmlTokenizer interface {
	Next() html.TokenType
	Err() error
	Text() []byte
	Raw() []byte
	TagAttr() (key, val []byte, more bool)
	SetMaxBuf(n int)
	NextIsNotRawText()
}

var (
	_ htmlTokenizer = (*html.Tokenizer)(nil)
	_ htmlTokenizer = (*scanner)(nil)
)

// scanTok is everything observable about one token.
type scanTok struct {
	tt    html.TokenType
	err   error // Err()
	raw   string
	text  string // Text() for text, comment and doctype tokens
	attrs []string
}

func (t scanTok) String() string {
	s := fmt.Sprintf("%v raw=%q", t.tt, t.raw)
	switch t.tt {
	case html.ErrorToken:
		s += fmt.Sprintf(" err=%v", t.err)
	case html.TextToken, html.CommentToken, html.DoctypeToken:
		s += fmt.Sprintf(" text=%q", t.text)
	case html.StartTagToken, html.SelfClosingTagToken:
		s += fmt.Sprintf(" attrs=%q", t.attrs)
	}
	return s
}

// collect tokenizes with z and records every token up to the first
// ErrorToken. It fails the test when the tokenizer breaks its own
// contract: Err set on a non-error token, Text or TagAttr answering for
// the wrong token type, a second Text not empty, more tokens than bytes.
func collect(t testing.TB, z htmlTokenizer, input []byte) []scanTok {
	t.Helper()
	var toks []scanTok
	for len(toks) <= len(input)+1 {
		tt := z.Next()
		// Raw first: the html.Tokenizer unescapes in place, so its Raw
		// can change once Text or TagAttr has been called.
		tok := scanTok{tt: tt, err: z.Err(), raw: string(z.Raw())}
		if tt != html.ErrorToken && tok.err != nil {
			t.Fatalf("Err() = %v after a %v token", tok.err, tt)
		}
		switch tt {
		case html.TextToken, html.CommentToken, html.DoctypeToken:
			tok.text = string(z.Text())
			if again := z.Text(); len(again) != 0 {
				t.Fatalf("second Text() = %q", again)
			}
			if k, v, more := z.TagAttr(); k != nil || v != nil || more {
				t.Fatalf("TagAttr() on a %v token = %q, %q, %v", tt, k, v, more)
			}
		case html.StartTagToken, html.SelfClosingTagToken:
			if rawTagAtom([]byte(tok.raw)) == atom.Noscript {
				// As extract does: <noscript> content is markup.
				z.NextIsNotRawText()
			}
			if x := z.Text(); x != nil {
				t.Fatalf("Text() on a %v token = %q", tt, x)
			}
			for {
				k, v, more := z.TagAttr()
				if k == nil {
					break
				}
				tok.attrs = append(tok.attrs, string(k)+"="+string(v))
				if !more {
					break
				}
			}
		case html.EndTagToken:
			if k, v, more := z.TagAttr(); k != nil || v != nil || more {
				t.Fatalf("TagAttr() on an end tag = %q, %q, %v", k, v, more)
			}
		}
		toks = append(toks, tok)
		if tt == html.ErrorToken {
			// The error sticks.
			if tt, err := z.Next(), z.Err(); tt != html.ErrorToken || err != tok.err || len(z.Raw()) != 0 {
				t.Fatalf("Next after the error token: %v %v %q", tt, err, z.Raw())
			}
			return toks
		}
	}
	t.Fatalf("more tokens than input bytes")
	return nil
}

// diffScan compares the scanner with html.Tokenizer on input with the
// buffer limit maxBuf (0: none), and checks that the scanner's Raw bytes
// partition the input and that the input is left unmodified.
func diffScan(t testing.TB, input []byte, maxBuf int) {
	t.Helper()
	ref := html.NewTokenizer(bytes.NewReader(input))
	ref.SetMaxBuf(maxBuf)
	want := collect(t, ref, input)

	orig := bytes.Clone(input)
	z := newScanner(input)
	z.SetMaxBuf(maxBuf)
	got := collect(t, z, input)
	if !bytes.Equal(orig, input) {
		t.Fatalf("scanner modified its input")
	}

	for i := 0; i < max(len(got), len(want)); i++ {
		var g, w scanTok
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if !sameTok(g, w) {
			t.Fatalf("input %q maxBuf %d: token %d:\n got %v\nwant %v", trimQ(input), maxBuf, i, g, w)
		}
	}
	// Raw partitions the input up to the error token.
	var all []byte
	for _, tok := range got {
		all = append(all, tok.raw...)
	}
	if last := got[len(got)-1]; last.err == io.EOF && !bytes.Equal(all, input) {
		t.Fatalf("Raw bytes %q do not add up to the input %q", all, input)
	} else if !bytes.HasPrefix(input, all) {
		t.Fatalf("Raw bytes %q are not a prefix of the input %q", all, input)
	}
}

func sameTok(a, b scanTok) bool {
	if a.tt != b.tt || a.err != b.err || a.raw != b.raw || a.text != b.text || len(a.attrs) != len(b.attrs) {
		return false
	}
	for i := range a.attrs {
		if a.attrs[i] != b.attrs[i] {
			return false
		}
	}
	return true
}

func trimQ(b []byte) []byte {
	if len(b) > 300 {
		return append(b[:300:300], "..."...)
	}
	return b
}

// scanCases are documents for the differential tests: every tokenizer
// state, its odd corners, and page-like markup.
var scanCases = []string{
	"",
	"plain text",
	"a<b",
	"<",
	"<<",
	"<<p>",
	"a < b > c",
	"x<1>y<#>z< p>",
	"</",
	"</>",
	"</ >",
	"</.",
	"</.>",
	"</ x y>",
	"</3>",
	"<.>",
	"<a",
	"<a ",
	"<a><b",
	"<a>b<c/>d</e>",
	"<A HREF=X>y</A>",
	"<DIV Class=\"A\" ID='b' data-X=c>",
	"<p id=\"0\"</p>",
	"<p a=/>",
	"<p a=\"/\"/>",
	"<br/>",
	"<br />",
	"<br/ >",
	"<br / x>",
	"<img src=a/>",
	"<img src='a'/>",
	"<a =b>",
	"<a ==b>",
	"<a ===b>",
	"<a b = c d= e f =g h='i'j=k l=\"m\"n>",
	"<a b c d>",
	"<a b=c b=d B=e>",
	"<a b=1 c=2 b=3 C=4>",
	"<a\tb\nc\fd\re>",
	"<a b='c\"d' e=\"f'g\">",
	"<a b=\"c\r\nd\re\">",
	"<a b=\"\x00\" \x00=c>",
	"<a\x00b c=d>",
	"<a b='unterminated>",
	"<a b=\"unterminated",
	"<a b=",
	"<a b= ",
	"<a b=>",
	"<a b =>",
	"<a b/c>",
	"<a b/=c>",
	"<a /b>",
	"<a //>",
	"<a/b/c/>",
	"<a b=c/>",
	"<a b=c />",
	"</a b=c>",
	"</a/>",
	"</A B=C>",
	"</a",
	"</a ",
	// Character references in text and attributes.
	"&amp;&lt;&gt;&quot;&apos;&nbsp;&copy;",
	"a&amp b&ampx c&amp;d &amp",
	"&notit; &notin; &not &noti &notx",
	"&AMP;&AMP&Amp;",
	"&#65;&#x41;&#X41;&#x;&#;&#&#65&#x4g",
	"&#0;&#128;&#x80;&#159;&#x9F;&#xD800;&#x110000;&#99999999999;&#13;",
	"&;&&&&#&#x&",
	"&fjlig;&NotEqualTilde;&nGt;&acE;",
	"&zzzz; &zzzz",
	"<a href=\"?a=1&amp=2&copy=3&copy;=4&#x41;&#0;&notit;&not\">x</a>",
	"<a b=&amp c=&amp= d=&amp;= e=&ampx f=&ampx= g='&lt'>",
	"<a b='&fjlig;&NotEqualTilde;&#128;&#xDFFF;'>",
	"<a b='&nbsp&nbsp;&Nbsp;'>",
	// Newlines and NUL.
	"a\rb\r\nc\n\rd\r\r\ne\r",
	"\r",
	"\r\n",
	"a\x00b",
	"<!--a\x00b\r\nc-->",
	"<!DOCTYPE a\x00\rb>",
	"<script>a\x00b\r\nc</script>",
	"<title>a\x00b&amp;\r</title>",
	"<textarea>\x00&lt;\r\n</textarea>",
	"<xmp>\x00&lt;</xmp>",
	"<plaintext>\x00&lt;\r\n</plaintext><p>",
	// Raw text and RCDATA.
	"<script><a></b></script>",
	"<SCRIPT>a</SCR",
	"<SCRIPT>a</SCR ipt>",
	"<SCRIPT>a</SCRipt",
	"<SCRIPT>a</SCRiptx",
	"<SCRIPT>a</SCRipt ",
	"<SCRIPT>a</SCRipt>",
	"<SCRIPT>a</SCRipt/>",
	"<SCRIPT>a</SCRipt<script>",
	"<SCRIPT>a</SCRipt</script>",
	"<script>a</style>",
	"<script></script>",
	"<script/>x</script>",
	"<script>",
	"<script>a",
	"<script>a<",
	"<script>a</",
	"<style>&apos;</style>",
	"<style>a</stylex></style >b",
	"<textarea><div></textarea>",
	"<title><b>K&amp;R C</b></title>",
	"<title>foobar<</title>",
	"<title></title>",
	"<TITLE>x</Title>",
	"<iframe><p>x</iframe>",
	"<noembed><p></noembed>",
	"<noframes><p></noframes>",
	"<noscript><p></noscript>",
	"<NoScript a=b><a href=x>&amp;</a><script>x</script></noscript>t",
	"<noscript/><title>&amp;</title></noscript>",
	"<xmp><p></xmp>",
	"<plaintext><p></plaintext>",
	"<plaintext>",
	"<plaintext/>x",
	"<PlainText>x",
	"<scripts>x</scripts>",
	"<scrip>x</scrip>",
	"<titles><b>",
	"<svg><title><b>x</b></title></svg>",
	// Script data escape states.
	"<script><!--x--></script>",
	"<script><!--<script>x</script>--></script>",
	"<script><!--<script>x</script>y--></script>z",
	"<script><!--<script></script></script>",
	"<script><!-- a -> b --></script>",
	"<script><!-- a <p> b </script>",
	"<script><!--<SCRIPT>--></script>",
	"<script><!--<scriptx>--></script>",
	"<script><!--<script/></script>--></script>",
	"<script><!--<script>--></script>",
	"<script><!--<script>-<-</script>",
	"<script><!--<script>--<</script>",
	"<script><!--<script><!--</script>",
	"<script><!--<script>--->x</script>",
	"<script><!--<</script>",
	"<script><!--</x></script>",
	"<script><!--</script></script>",
	"<script><!-</script>",
	"<script><!</script>",
	"<script><!-",
	"<script><!--",
	"<script><!--<",
	"<script><!--<s",
	"<script><!--<script",
	"<script><!--<script>",
	"<script><!--<script>-",
	"<script><!--<script>--",
	"<script><!--<script><",
	"<script><!--<script></",
	"<script><!--<script></script",
	"<script><!----></script>",
	"<script><!---->x</script>",
	"<script><!--->-></script>",
	"<script>if (a<b && c>d) x = '</scr' + 'ipt>';</script>",
	// Comments.
	"<!---->",
	"<!-- -->",
	"<!--x-->",
	"<!-->",
	"<!--->",
	"<!---->x",
	"<!----->",
	"<!--a--!>b",
	"<!--a--!-->",
	"<!--a--!x-->",
	"<!--a--!!>-->",
	"<!--a---->",
	"<!--a-->-->",
	"<!--a->-->",
	"<!--<!-- a -->",
	"<!--",
	"<!--a",
	"<!--a-",
	"<!--a--",
	"<!--a--!",
	"<!---",
	"<!--!>",
	"<!",
	"<!-",
	"<!>",
	"<!>>",
	"<!x>",
	"<!x",
	"<!-x>",
	"<![CDATA[x]]>",
	"<?xml version=\"1.0\"?>",
	"<?",
	"<?>",
	"<?x",
	// Doctypes.
	"<!DOCTYPE html>",
	"<!doctypehtml>",
	"<!doctype  html>",
	"<!DocType\r\nhtml PUBLIC \"-//W3C//DTD HTML 4.01//EN\">",
	"<!DOCUMENT html>",
	"<!DOCtype",
	"<!DOCtype ",
	"<!DOCtype x",
	"<!DOC",
	"<!D",
	"<!DOCTYPEx>",
	"<!DOCTYPE&amp;x>",
	"<!DOCTYPE>",
	// Non-ASCII and invalid UTF-8.
	"<p title=\"caf\xc3\xa9\">\xe2\x82\xac \xff\xfe</p>",
	"<\xc3\xa9>",
	"<a\xc3\xa9 b\xc3\xa9=c>",
	// Page-like markup.
	samplePage,
	`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>News &amp; Views | Site</title>
<meta name="description" content="A &quot;quoted&quot; description &mdash; with entities">
<link rel="stylesheet" href="/a.css?v=1&amp;x=2">
<script type="application/ld+json">{"@context":"https://schema.org","name":"</p>"}</script>
<style>body > p { color: red } a[href^="http"]::after { content: "<" }</style>
<!--[if lt IE 9]><script src="html5shiv.js"></script><![endif]-->
</head>
<body class=home><nav><ul><li><a href=/ class=active>Home</a><li><a href="/about">About&nbsp;us</a></ul></nav>
<main><h1>Hello,&nbsp;world</h1><p>Some <b>bold</b> and <i>italic</i> text &copy 2024.<br>
<img src="/i.png" alt="An &lt;image&gt;" width=10 height=10/>
<form action="/search" method=get><input type=text name=q value="a&b"><textarea name=t>a <b>c</b> &amp; d</textarea></form>
<table><tr><td>1<td>2</table>
<svg viewBox="0 0 10 10"><path d="M0 0L10 10"/><title>svg</title></svg>
<noscript><img src="/pixel.gif"></noscript>
<iframe src="https://example.com/embed"></iframe>
</main><footer>&#169; Example &#x2014; <a href='mailto:a@b.c'>mail</a></footer>
<script>
  var s = "<!--"; if (a < b) { document.write("<script>x<\/script>") }
</script>
</body></html>`,
}

// manyAttrs is a tag with more attributes than the scanner compares
// name by name, with repeated names before and after that point.
func manyAttrs() string {
	var b bytes.Buffer
	b.WriteString("<div")
	for i := 0; i < 60; i++ {
		fmt.Fprintf(&b, " a%d=%d", i%37, i)
		if i%7 == 3 {
			fmt.Fprintf(&b, " A%d=dup%d", i/2, i)
		}
	}
	b.WriteString(" A0=last a59=x>")
	return b.String()
}

func TestScannerMatchesHTMLTokenizer(t *testing.T) {
	for _, c := range append(scanCases, manyAttrs()) {
		diffScan(t, []byte(c), 0)
	}
}

// TestScannerMatchesAtEOF cuts every case at every position, so that the
// input ends in every state of the tokenizer.
func TestScannerMatchesAtEOF(t *testing.T) {
	for _, c := range scanCases {
		if len(c) > 2000 {
			c = c[:2000]
		}
		for i := 0; i <= len(c); i++ {
			diffScan(t, []byte(c[:i]), 0)
		}
	}
}

// TestScannerMatchesWithMaxBuf checks that the buffer limit strikes at the
// same byte, with the same partial token, as in the html.Tokenizer.
func TestScannerMatchesWithMaxBuf(t *testing.T) {
	for _, c := range scanCases {
		if len(c) > 600 {
			c = c[:600]
		}
		for n := 1; n <= len(c)+2; n++ {
			diffScan(t, []byte(c), n)
		}
	}
	page := realisticPage(3, 30<<10)
	for _, n := range []int{100, 1000, 4096, 8192} {
		diffScan(t, page, n)
	}
}

func TestScannerMatchesRealisticPages(t *testing.T) {
	for seed := int64(1); seed <= 4; seed++ {
		diffScan(t, realisticPage(seed, 30<<10), 0)
	}
	// Tokens larger than the html.Tokenizer's initial 4 KB buffer.
	long := strings.Repeat("x&amp;y\r\n<", 3000)
	for _, c := range []string{
		"<p>" + long + "</p>",
		"<!--" + long + "-->",
		"<script>" + long + "</script>",
		"<title>" + long + "</title>",
		"<a href=\"" + long + "\" title='" + long + "'>",
	} {
		diffScan(t, []byte(c), 0)
		diffScan(t, []byte(c), 5000)
	}
}

// scanPieces are fragments that TestScannerMatchesRandomDocs strings
// together, so that states meet in combinations no list of cases has.
var scanPieces = []string{
	"<", ">", "/", "!", "?", "-", "--", "=", "'", "\"", " ", "\r", "\n", "\r\n", "\t", "\f", "\x00",
	"&", "&amp", "&amp;", "&lt;", "&notit;", "&not", "&#", "&#x", "&#65", "&#x41;", "&#128;", "&#0;", "&fjlig;", "&Amp;", "&zz;",
	"a", "B", "x y", "\xc3\xa9", "\xff",
	"<a", "<A", "</a", "<p", "<br/>", "<img src=", "<a href='", "<a href=\"", "b=c", "B=d", "/>",
	"<script>", "</script>", "</SCRIPT ", "<script", "<style>", "</style>", "<title>", "</title>",
	"<textarea>", "</textarea>", "<xmp>", "</xmp>", "<plaintext>", "<iframe>", "</iframe>", "<noscript>",
	"<!--", "-->", "--!>", "<!-->", "<!--->", "<!", "<!DOCTYPE", "<!doctype html>", "<!DOC", "<?xml", "</ ", "</>",
	"<!--<script>", "</script>-->",
}

// TestScannerMatchesRandomDocs compares the tokenizers on documents made
// of random fragments, with and without a buffer limit.
func TestScannerMatchesRandomDocs(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	n := 20000
	if testing.Short() {
		n = 2000
	}
	var b []byte
	for i := 0; i < n; i++ {
		b = b[:0]
		for k := r.Intn(30); k >= 0; k-- {
			b = append(b, scanPieces[r.Intn(len(scanPieces))]...)
		}
		diffScan(t, b, 0)
		diffScan(t, b, 1+r.Intn(len(b)+4))
	}
}

// TestScannerMaxBuf spells out the limit rule: a token fails once the
// bytes read for it, look-ahead included, reach n.
func TestScannerMaxBuf(t *testing.T) {
	type want struct {
		tt  html.TokenType
		raw string
		err error
	}
	for _, c := range []struct {
		in   string
		n    int
		want []want
	}{
		// A 5-byte tag fits under 6 but not under 5.
		{"<abc>", 6, []want{{html.StartTagToken, "<abc>", nil}, {html.ErrorToken, "", io.EOF}}},
		{"<abc>", 5, []want{{html.ErrorToken, "<abc>", html.ErrBufferExceeded}}},
		// Text is cut at the limit and returned; the error comes next.
		{"abcdefgh", 4, []want{{html.TextToken, "abcd", nil}, {html.ErrorToken, "", html.ErrBufferExceeded}}},
		// Text followed by a tag is read with two bytes of look-ahead
		// ("<p"), which count.
		{"abc<p>", 5, []want{{html.TextToken, "abc<p", nil}, {html.ErrorToken, "", html.ErrBufferExceeded}}},
		{"abc<p>", 6, []want{{html.TextToken, "abc", nil}, {html.StartTagToken, "<p>", nil}, {html.ErrorToken, "", io.EOF}}},
		// The limit applies per token.
		{"<a><b><c>", 4, []want{{html.StartTagToken, "<a>", nil}, {html.StartTagToken, "<b>", nil}, {html.StartTagToken, "<c>", nil}, {html.ErrorToken, "", io.EOF}}},
		// Ending exactly at EOF is EOF, not the limit.
		{"abc", 4, []want{{html.TextToken, "abc", nil}, {html.ErrorToken, "", io.EOF}}},
	} {
		z := newScanner([]byte(c.in))
		z.SetMaxBuf(c.n)
		for i, w := range c.want {
			tt := z.Next()
			if tt != w.tt || string(z.Raw()) != w.raw || z.Err() != w.err {
				t.Errorf("%q limit %d: token %d = %v %q %v, want %v %q %v", c.in, c.n, i, tt, z.Raw(), z.Err(), w.tt, w.raw, w.err)
				break
			}
		}
		diffScan(t, []byte(c.in), c.n)
	}
}

// TestScannerSliceValidity checks that Text and TagAttr results stay
// intact until the next Next, however many of them are taken.
func TestScannerSliceValidity(t *testing.T) {
	in := []byte(`<a B="&amp;1" C="&lt;2" D="&#65;3" e="x&quot;4" f="&copy;5">`)
	z := newScanner(in)
	if z.Next() != html.StartTagToken {
		t.Fatal("not a start tag")
	}
	var keys, vals [][]byte
	for {
		k, v, more := z.TagAttr()
		keys, vals = append(keys, k), append(vals, v)
		if !more {
			break
		}
	}
	got := fmt.Sprintf("%s", keys) + fmt.Sprintf("%s", vals)
	if want := "[b c d e f][&1 <2 A3 x\"4 ©5]"; got != want {
		t.Errorf("attributes %s, want %s", got, want)
	}
}

// TestScannerNoAllocs checks that scanning a realistic page with a reused
// scanner, as extract reads it, allocates nothing once the scanner's
// buffers and the reference cache are warm.
func TestScannerNoAllocs(t *testing.T) {
	page := realisticPage(1, 30<<10)
	z := newScanner(page)
	run := func() {
		z.reset(page)
		scanLikeExtract(z)
	}
	run()
	if n := testing.AllocsPerRun(20, run); n != 0 {
		t.Errorf("%v allocations per page", n)
	}
}

// scanLikeExtract reads every token as extract does: Text of text tokens,
// Raw of tags, TagAttr when the raw tag cannot be read in place.
func scanLikeExtract(z htmlTokenizer) (n int) {
	for {
		switch z.Next() {
		case html.ErrorToken:
			return n
		case html.TextToken:
			n += len(z.Text())
		case html.StartTagToken, html.SelfClosingTagToken:
			raw := z.Raw()
			n += len(raw)
			if !rawIsPlain(raw) {
				for {
					k, v, more := z.TagAttr()
					n += len(k) + len(v)
					if !more {
						break
					}
				}
			}
		case html.EndTagToken:
			n += len(z.Raw())
		}
	}
}

func TestNamedRefCache(t *testing.T) {
	for _, attribute := range []bool{false, true} {
		for _, name := range []string{"amp;", "amp", "notit;", "not", "fjlig;", "zz", "AMP", "ampx"} {
			first := namedRef([]byte(name), attribute)
			if again := namedRef([]byte(name), attribute); again != first {
				t.Errorf("%q (attribute %v): %q, then %q from the cache", name, attribute, first, again)
			}
		}
	}
	// A text reference decodes as the html package decodes it.
	if got, want := namedRef([]byte("notit;"), false), html.UnescapeString("&notit;"); got != want {
		t.Errorf("&notit; = %q, want %q", got, want)
	}
	// In an attribute only complete names count.
	if got := namedRef([]byte("notit;"), true); got != "&notit;" {
		t.Errorf("&notit; in an attribute = %q", got)
	}
}

// BenchmarkScanner reads the same 30 KB realistic page with the scanner
// and with html.Tokenizer (a new tokenizer per page, the reading extract
// does). The "interleaved" case alternates the two page by page and
// reports each one's throughput from its median page time, which keeps a
// busy shared machine from favouring whichever side ran while it was
// quieter; one op there is one page through both.
func BenchmarkScanner(b *testing.B) {
	page := realisticPage(1, 30<<10)
	scan := func() int {
		z := newScanner(page)
		z.SetMaxBuf(DefaultMaxTokenBytes)
		return scanLikeExtract(z)
	}
	xnet := func() int {
		z := html.NewTokenizer(bytes.NewReader(page))
		z.SetMaxBuf(DefaultMaxTokenBytes)
		return scanLikeExtract(z)
	}
	if scan() != xnet() {
		b.Fatal("the tokenizers read the page differently")
	}
	b.Run("scanner", func(b *testing.B) {
		b.SetBytes(int64(len(page)))
		b.ReportAllocs()
		for b.Loop() {
			scan()
		}
	})
	b.Run("x-net-html", func(b *testing.B) {
		b.SetBytes(int64(len(page)))
		b.ReportAllocs()
		for b.Loop() {
			xnet()
		}
	})
	b.Run("interleaved", func(b *testing.B) {
		var ts, tx []time.Duration
		for b.Loop() {
			t0 := time.Now()
			scan()
			t1 := time.Now()
			xnet()
			t2 := time.Now()
			ts, tx = append(ts, t1.Sub(t0)), append(tx, t2.Sub(t1))
		}
		ms, mx := medianDuration(ts), medianDuration(tx)
		b.ReportMetric(float64(len(page))/ms.Seconds()/1e6, "MB/s-scanner")
		b.ReportMetric(float64(len(page))/mx.Seconds()/1e6, "MB/s-x-net-html")
		b.ReportMetric(float64(mx)/float64(ms), "x-faster")
	})
}

func medianDuration(d []time.Duration) time.Duration {
	slices.Sort(d)
	return d[len(d)/2]
}
