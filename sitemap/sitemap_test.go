package sitemap

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"
	"time"
)

func collect(t *testing.T, p *Parser, body string, src Source) ([]Entry, Info, error) {
	t.Helper()
	return p.Collect(strings.NewReader(body), src)
}

func urlsOf(es []Entry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.URL
	}
	return out
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func date(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

func TestURLSetFields(t *testing.T) {
	body := `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:image="http://www.google.com/schemas/sitemap-image/1.1">
  <url>
    <loc>  https://ex.com/a  </loc>
    <lastmod>2024-02-29T10:11:12.5+02:00</lastmod>
    <changefreq> Daily </changefreq>
    <priority>0.9</priority>
    <image:image><image:loc>https://ex.com/img/a.png</image:loc></image:image>
  </url>
  <url>
    <priority>1.5</priority>
    <changefreq>sometimes</changefreq>
    <lastmod>2024-13-01</lastmod>
    <loc>https://ex.com/b</loc>
  </url>
  <url><loc></loc></url>
  <url><loc>mailto:someone@ex.com</loc></url>
  <url><loc>/relative</loc></url>
</urlset>`
	es, info, err := collect(t, nil, body, Source{URL: "https://ex.com/sitemap.xml"})
	if err != nil {
		t.Fatal(err)
	}
	if got := urlsOf(es); !equal(got, []string{"https://ex.com/a", "https://ex.com/b"}) {
		t.Fatalf("urls = %q", got)
	}
	a, b := es[0], es[1]
	if !a.LastMod.Equal(date("2024-02-29T08:11:12.5Z")) || a.LastMod.Location() != time.UTC {
		t.Errorf("a.LastMod = %v", a.LastMod)
	}
	if a.ChangeFreq != Daily || a.Priority != 0.9 || a.Kind != KindPage {
		t.Errorf("a = %+v", a)
	}
	if !b.LastMod.IsZero() || b.ChangeFreq != "" || b.Priority != DefaultPriority {
		t.Errorf("b should have only defaults, got %+v", b)
	}
	want := Info{Format: FormatURLSet, Bytes: int64(len(body)), Pages: 2, Invalid: 3}
	if info != want {
		t.Errorf("info = %+v, want %+v", info, want)
	}
}

func TestFormats(t *testing.T) {
	tests := []struct {
		name   string
		body   string
		format Format
		urls   []string
		kind   Kind
	}{
		{"index legacy namespace", `<sitemapindex xmlns="http://www.google.com/schemas/sitemap/0.84"><sitemap><loc>http://ex.com/s1.xml</loc></sitemap></sitemapindex>`,
			FormatIndex, []string{"http://ex.com/s1.xml"}, KindSitemap},
		{"prefixed urlset", `<sm:urlset xmlns:sm="http://www.sitemaps.org/schemas/sitemap/0.9"><sm:url><sm:loc>http://ex.com/p</sm:loc></sm:url></sm:urlset>`,
			FormatURLSet, []string{"http://ex.com/p"}, KindPage},
		{"rss guid fallback", `<rss version="2.0"><channel><link>http://ex.com/</link>
			<item><guid>http://ex.com/perma</guid></item>
			<item><guid isPermaLink="false">http://ex.com/not-a-link</guid></item>
			<item><atom:link xmlns:atom="http://www.w3.org/2005/Atom" href="http://ex.com/x"/><link>http://ex.com/l</link><link>http://ex.com/second</link></item>
			</channel></rss>`,
			FormatRSS, []string{"http://ex.com/perma", "http://ex.com/l"}, KindPage},
		{"atom prefers alternate", `<feed xmlns="http://www.w3.org/2005/Atom"><link href="http://ex.com/"/>
			<entry><link rel="enclosure" href="http://ex.com/a.mp3"/><link href="http://ex.com/a"/><link rel="alternate" href="http://ex.com/late"/></entry>
			<entry><link rel="related" href="http://ex.com/b"/></entry></feed>`,
			FormatAtom, []string{"http://ex.com/a", "http://ex.com/b"}, KindPage},
		{"text", "http://ex.com/1\n\n  http://ex.com/2  \r\nnot a url\nftp://ex.com/3\n",
			FormatText, []string{"http://ex.com/1", "http://ex.com/2"}, KindPage},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			es, info, err := collect(t, nil, tc.body, Source{URL: "http://ex.com/sitemap"})
			if err != nil {
				t.Fatal(err)
			}
			if info.Format != tc.format {
				t.Errorf("format = %v, want %v", info.Format, tc.format)
			}
			if got := urlsOf(es); !equal(got, tc.urls) {
				t.Errorf("urls = %q, want %q", got, tc.urls)
			}
			for _, e := range es {
				if e.Kind != tc.kind {
					t.Errorf("%s: kind %v, want %v", e.URL, e.Kind, tc.kind)
				}
			}
		})
	}
}

func TestUnknownAndMalformed(t *testing.T) {
	tests := []struct {
		name string
		body string
		want error
	}{
		{"empty", "", ErrUnknownFormat},
		{"white space only", " \n\t", ErrUnknownFormat},
		{"html page", "<html><body><a href='http://ex.com/'>x</a></body></html>", ErrUnknownFormat},
		{"prose", "Not found.\nSorry.", ErrUnknownFormat},
		{"truncated", "<urlset><url><loc>http://ex.com/a</loc></url>", ErrMalformed},
		{"unknown entity", "<urlset><url><loc>http://ex.com/&nbsp;</loc></url></urlset>", ErrMalformed},
		{"billion laughs", `<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">]><urlset><url><loc>http://ex.com/&lol2;</loc></url></urlset>`, ErrMalformed},
		{"too deep", "<urlset>" + strings.Repeat("<a>", 100) + strings.Repeat("</a>", 100) + "</urlset>", ErrMalformed},
		{"bad gzip", "\x1f\x8bnot really gzip", ErrMalformed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := collect(t, nil, tc.body, Source{URL: "http://ex.com/sitemap.xml"})
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
		})
	}
}

func TestScope(t *testing.T) {
	body := `<urlset>
<url><loc>http://ex.com/dir/a</loc></url>
<url><loc>HTTP://EX.COM:80/dir/b</loc></url>
<url><loc>http://ex.com/other</loc></url>
<url><loc>http://ex.com/dirt</loc></url>
<url><loc>https://ex.com/dir/c</loc></url>
<url><loc>http://www.ex.com/dir/d</loc></url>
<url><loc>http://robots.example/anything</loc></url>
</urlset>`
	es, info, err := collect(t, nil, body, Source{URL: "http://ex.com/dir/sitemap.xml?x=/"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := urlsOf(es), []string{"http://ex.com/dir/a", "HTTP://EX.COM:80/dir/b"}; !equal(got, want) {
		t.Errorf("plain scope: urls = %q, want %q", got, want)
	}
	if info.OutOfScope != 5 {
		t.Errorf("OutOfScope = %d, want 5", info.OutOfScope)
	}
	// Cross-submitted from robots.example's robots.txt: that whole origin is
	// admitted in addition to the sitemap's own directory.
	es, _, err = collect(t, nil, body, Source{URL: "http://ex.com/dir/sitemap.xml", RobotsOrigin: "http://robots.example"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := urlsOf(es), []string{"http://ex.com/dir/a", "HTTP://EX.COM:80/dir/b", "http://robots.example/anything"}; !equal(got, want) {
		t.Errorf("cross-submitted: urls = %q, want %q", got, want)
	}
	for _, bad := range []Source{{URL: ""}, {URL: "/sitemap.xml"}, {URL: "ftp://ex.com/s.xml"}, {URL: "http://ex.com/s.xml", RobotsOrigin: "robots.example"}} {
		if _, _, err := collect(t, nil, body, bad); !errors.Is(err, ErrInvalidSource) {
			t.Errorf("source %+v: err = %v, want ErrInvalidSource", bad, err)
		}
	}
}

func TestMaxURLs(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 10; i++ {
		b.WriteString("http://ex.com/" + string(rune('a'+i)) + "\n")
	}
	p := &Parser{MaxURLs: 4}
	es, info, err := p.Collect(strings.NewReader(b.String()), Source{URL: "http://ex.com/s.txt"})
	if !errors.Is(err, ErrTooManyURLs) {
		t.Fatalf("err = %v, want ErrTooManyURLs", err)
	}
	if len(es) != 4 || info.Pages != 4 || es[3].URL != "http://ex.com/d" {
		t.Errorf("delivered %q (info %+v), want the first 4", urlsOf(es), info)
	}
}

func TestMaxURLLength(t *testing.T) {
	long := "http://ex.com/" + strings.Repeat("a", 100)
	for _, body := range []string{
		long + "\nhttp://ex.com/ok\n",
		"<urlset><url><loc>" + long + "</loc></url><url><loc>http://ex.com/ok</loc></url></urlset>",
	} {
		es, info, err := (&Parser{MaxURLLength: 50}).Collect(strings.NewReader(body), Source{URL: "http://ex.com/s"})
		if err != nil {
			t.Fatal(err)
		}
		if got := urlsOf(es); !equal(got, []string{"http://ex.com/ok"}) || info.Invalid != 1 {
			t.Errorf("urls = %q, info %+v; want only the short URL and 1 invalid", got, info)
		}
	}
}

func gzipped(t testing.TB, parts ...io.Reader) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	for _, p := range parts {
		if _, err := io.Copy(zw, p); err != nil {
			t.Fatal(err)
		}
	}
	zw.Close()
	return buf.Bytes()
}

// repeatReader yields b repeated n times without holding it all.
type repeatReader struct {
	b   []byte
	n   int
	off int
}

func (r *repeatReader) Read(p []byte) (int, error) {
	total := 0
	for len(p) > 0 && r.n > 0 {
		c := copy(p, r.b[r.off:])
		p, total, r.off = p[c:], total+c, r.off+c
		if r.off == len(r.b) {
			r.off, r.n = 0, r.n-1
		}
	}
	if total == 0 && r.n == 0 {
		return 0, io.EOF
	}
	return total, nil
}

func TestGzipBombStopsAtDecompressedCap(t *testing.T) {
	const limit = 256 << 10
	// 16 MiB of white space inside a loc compresses to about 16 KiB.
	bomb := gzipped(t, strings.NewReader("<urlset><url><loc>http://ex.com/a</loc></url><url><loc>"),
		&repeatReader{b: bytes.Repeat([]byte(" "), 1<<20), n: 16})
	if len(bomb) > limit {
		t.Fatalf("bomb is %d bytes compressed, the test needs it below the cap", len(bomb))
	}
	es, info, err := (&Parser{MaxBytes: limit}).Collect(bytes.NewReader(bomb), Source{URL: "http://ex.com/s.xml"})
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("err = %v, want ErrTooLarge", err)
	}
	if !info.Compressed || info.Bytes != limit {
		t.Errorf("info = %+v, want compressed and exactly %d bytes read", info, limit)
	}
	if len(es) != 1 {
		t.Errorf("entries before the cap = %q, want the first URL", urlsOf(es))
	}
}

func TestByteCapExactAndUncompressed(t *testing.T) {
	doc := "http://ex.com/a\nhttp://ex.com/b\n"
	p := &Parser{MaxBytes: int64(len(doc))}
	if _, _, err := p.Collect(strings.NewReader(doc), Source{URL: "http://ex.com/s"}); err != nil {
		t.Errorf("document of exactly MaxBytes: %v", err)
	}
	if _, _, err := p.Collect(strings.NewReader(doc+"x"), Source{URL: "http://ex.com/s"}); !errors.Is(err, ErrTooLarge) {
		t.Errorf("document of MaxBytes+1: err = %v, want ErrTooLarge", err)
	}
}

// emptyMembers is an endless run of empty gzip members: no output at all, so
// only the cap on the compressed stream ends it.
type emptyMembers struct {
	member []byte
	off    int
}

func (e *emptyMembers) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		c := copy(p[n:], e.member[e.off:])
		n += c
		e.off = (e.off + c) % len(e.member)
	}
	return n, nil
}

func TestEndlessEmptyGzipMembers(t *testing.T) {
	var one bytes.Buffer
	zw := gzip.NewWriter(&one)
	zw.Close()
	_, _, err := (&Parser{MaxBytes: 1 << 16}).Collect(&emptyMembers{member: one.Bytes()}, Source{URL: "http://ex.com/s"})
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("err = %v, want ErrTooLarge", err)
	}
}

func TestCallbackErrorUnwrapped(t *testing.T) {
	stop := errors.New("stop here")
	n := 0
	_, err := Parse(strings.NewReader("http://ex.com/a\nhttp://ex.com/b\n"), Source{URL: "http://ex.com/s"}, func(Entry) error {
		n++
		return stop
	})
	if err != stop || n != 1 {
		t.Fatalf("err = %v after %d calls, want the callback's own error after 1", err, n)
	}
}

func TestEncodings(t *testing.T) {
	// ISO-8859-1 declared: é is the single byte 0xE9 in the input.
	latin1 := "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><urlset><url><loc>http://ex.com/caf\xe9</loc></url></urlset>"
	// UTF-16LE with a BOM.
	var u16 bytes.Buffer
	u16.WriteString("\xff\xfe")
	for _, r := range `<?xml version="1.0" encoding="UTF-16"?><urlset><url><loc>http://ex.com/café</loc></url></urlset>` {
		u16.WriteByte(byte(r))
		u16.WriteByte(byte(r >> 8))
	}
	for name, body := range map[string]string{"latin1": latin1, "utf16": u16.String()} {
		es, _, err := collect(t, nil, body, Source{URL: "http://ex.com/s.xml"})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := urlsOf(es); !equal(got, []string{"http://ex.com/café"}) {
			t.Errorf("%s: urls = %q", name, got)
		}
	}
}

func TestW3CDate(t *testing.T) {
	tests := []struct {
		in   string
		want string // RFC 3339, "" for invalid
	}{
		{"2005", "2005-01-01T00:00:00Z"},
		{"2005-02", "2005-02-01T00:00:00Z"},
		{"2005-02-03", "2005-02-03T00:00:00Z"},
		{"2005-02-03T04:05Z", "2005-02-03T04:05:00Z"},
		{"2005-02-03T04:05-01:30", "2005-02-03T05:35:00Z"},
		{"2005-02-03T04:05:06.789+01:00", "2005-02-03T03:05:06.789Z"},
		{"2005-02-03t04:05:06z", "2005-02-03T04:05:06Z"},
		{"2005-02-03T04:05:06+0100", "2005-02-03T03:05:06Z"},
		{"2005-02-03T04:05:06", ""},
		{"2005-02-30", ""},
		{"2005-2-3", ""},
		{"03/02/2005", ""},
		{"", ""},
	}
	for _, tc := range tests {
		got, ok := parseW3CDate(tc.in)
		if tc.want == "" {
			if ok {
				t.Errorf("%q: got %v, want invalid", tc.in, got)
			}
			continue
		}
		if !ok || !got.Equal(date(tc.want)) {
			t.Errorf("%q: got %v %v, want %s", tc.in, got, ok, tc.want)
		}
	}
}

func TestRFC822Date(t *testing.T) {
	tests := []struct {
		in   string
		want string
	}{
		{"Thu, 05 Jan 2017 13:34:51 +0100", "2017-01-05T12:34:51Z"},
		{"5 Jan 17 13:34 GMT", "2017-01-05T13:34:00Z"},
		{"Sat, 01 Jan 1999 00:00:00 EST", "1999-01-01T05:00:00Z"},
		{"01 Jan 99 00:00:00 pdt", "1999-01-01T07:00:00Z"},
		{"Mon, 31 Dec 2001 23:59:60 Z", "2001-12-31T23:59:59Z"},
		{"2017-01-05T13:34:51+01:00", "2017-01-05T12:34:51Z"},
		{"05 Jan 17 13:34:55", ""},
		{"31 Feb 2017 10:00:00 GMT", ""},
		{"05 Jan 2017 24:00:00 GMT", ""},
		{"05 Foo 2017 10:00:00 GMT", ""},
		{"05 Jan 2017 10:00:00 XYZ", ""},
		{"05 Jan 2017 10:00:00 +2500", ""},
		{"05 Jan 201 10:00:00 GMT", ""},
		{"2017-01-05", ""},
	}
	for _, tc := range tests {
		got, ok := parseRFC822Date(tc.in)
		if tc.want == "" {
			if ok {
				t.Errorf("%q: got %v, want invalid", tc.in, got)
			}
			continue
		}
		if !ok || !got.Equal(date(tc.want)) {
			t.Errorf("%q: got %v %v, want %s", tc.in, got, ok, tc.want)
		}
	}
}

func TestDiscover(t *testing.T) {
	got := FromRobots("https://ex.com/robots.txt", []string{
		"https://cdn.example/sitemaps/a.xml", "/b.xml", "https://cdn.example/sitemaps/a.xml#frag", "ftp://ex.com/c.xml", "",
	})
	want := []Source{
		{URL: "https://cdn.example/sitemaps/a.xml", RobotsOrigin: "https://ex.com"},
		{URL: "https://ex.com/b.xml", RobotsOrigin: "https://ex.com"},
		{URL: "https://ex.com/robots.txt", RobotsOrigin: "https://ex.com"},
	}
	// An empty value resolves to the robots URL itself; it is harmless (the
	// document is not a sitemap) and RFC 9309 leaves it undefined.
	if len(got) != len(want) {
		t.Fatalf("FromRobots = %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("FromRobots[%d] = %+v, want %+v", i, got[i], want[i])
		}
	}
	s, err := Discover("HTTPS://Ex.com:443/some/page?q", nil)
	if err != nil || len(s) != 1 || s[0] != (Source{URL: "https://ex.com/sitemap.xml"}) {
		t.Errorf("Discover without robots sitemaps = %+v, %v", s, err)
	}
	s, err = Discover("https://ex.com/", []string{"https://ex.com/s.xml"})
	if err != nil || len(s) != 1 || s[0] != (Source{URL: "https://ex.com/s.xml", RobotsOrigin: "https://ex.com"}) {
		t.Errorf("Discover with robots sitemaps = %+v, %v", s, err)
	}
	if _, err := Discover("not a url", nil); !errors.Is(err, ErrInvalidSource) {
		t.Errorf("Discover(bad) err = %v", err)
	}
}

// peakHeap runs fn and returns how far HeapInuse rose above its level
// before fn, sampled every millisecond.
func peakHeap(fn func()) uint64 {
	base := liveHeap()
	stop, done := make(chan struct{}), make(chan uint64)
	go func() {
		var peak uint64
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			peak = max(peak, m.HeapInuse)
			select {
			case <-stop:
				done <- peak
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	fn()
	close(stop)
	return max(<-done, base) - base
}

// encoding/xml holds a whole start tag with its []Attr before returning it,
// at some 30 times the tag's size; the per-token limit bounds that.
func TestParseBoundsXMLTokens(t *testing.T) {
	const size = 8 << 20
	src := Source{URL: "http://ex.com/sitemap.xml"}
	for name, head := range map[string]string{"UTF-8": "", "ISO-8859-1": `<?xml version="1.0" encoding="ISO-8859-1"?>`} {
		attrs := bytes.Repeat([]byte(" a=''"), 1<<16)
		n := 0
		body := &genReader{next: func() []byte {
			switch n++; {
			case n == 1:
				return []byte(head + "<urlset><url")
			case n <= 1+size/len(attrs):
				return attrs
			case n == 2+size/len(attrs):
				return []byte("/></urlset>")
			}
			return nil
		}}
		var info Info
		var err error
		peak := peakHeap(func() { info, err = Parse(body, src, func(Entry) error { return nil }) })
		t.Logf("%s, %d MiB start tag: peak heap +%d MiB, %d bytes read, %v", name, size>>20, peak>>20, info.Bytes, err)
		if !errors.Is(err, ErrMalformed) || info.Bytes > 2*maxXMLToken {
			t.Errorf("%s, %d MiB start tag: read %d bytes, err %v; want ErrMalformed after about %d bytes", name, size>>20, info.Bytes, err, maxXMLToken)
		}
		// Unbounded, the tag takes some 250 MiB; bounded, some 30 times
		// maxXMLToken.
		if peak > 100<<20 {
			t.Errorf("%s, %d MiB start tag: peak heap +%d MiB", name, size>>20, peak>>20)
		}
	}

	// Long tokens below the limit are still read.
	doc := "<urlset><url><x>" + strings.Repeat("t", maxXMLToken-1024) + "</x><loc>http://ex.com/a</loc></url></urlset>"
	if got, _, err := Collect(strings.NewReader(doc), src); err != nil || len(got) != 1 {
		t.Errorf("text node just under the token limit: %d entries, %v", len(got), err)
	}
}

// Servers resolve dot segments, so "/dir/../secret" is not under "/dir/"
// (sitemaps.org "Sitemap file location"; RFC 3986 §5.2.4).
func TestScopeDotSegments(t *testing.T) {
	body := `<urlset>
<url><loc>http://ex.com/dir/../secret</loc></url>
<url><loc>http://ex.com/dir/%2E%2e/secret</loc></url>
<url><loc>http://ex.com/dir/sub/../../secret</loc></url>
<url><loc>http://ex.com/dir/..</loc></url>
<url><loc>http://ex.com/dir/./a</loc></url>
<url><loc>http://ex.com/dir/sub/../b</loc></url>
<url><loc>http://ex.com/dir/..a/c</loc></url>
</urlset>`
	es, info, err := collect(t, nil, body, Source{URL: "http://ex.com/dir/sitemap.xml"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"http://ex.com/dir/./a", "http://ex.com/dir/sub/../b", "http://ex.com/dir/..a/c"}
	if got := urlsOf(es); !equal(got, want) || info.OutOfScope != 4 {
		t.Errorf("urls = %q (OutOfScope %d), want %q and 4 out of scope", got, info.OutOfScope, want)
	}
	// The sitemap's own URL is resolved the same way.
	es, _, err = collect(t, nil, "http://ex.com/dir/a\nhttp://ex.com/x/b\n", Source{URL: "http://ex.com/x/../dir/sitemap.txt"})
	if err != nil || !equal(urlsOf(es), []string{"http://ex.com/dir/a"}) {
		t.Errorf("sitemap URL with dot segments: urls = %q, err %v", urlsOf(es), err)
	}
	for in, want := range map[string]string{
		"": "/", "/": "/", "/a/b": "/a/b", "/a/./b": "/a/b", "/a/../b": "/b", "/..": "/", "/../a": "/a",
		"/a/..": "/", "/a/.": "/a/", "/a/%2e%2E/b": "/b", "/a/.../b": "/a/.../b", "/a/%2f../b": "/a/%2f../b",
	} {
		if got := cleanPath(in); got != want {
			t.Errorf("cleanPath(%q) = %q, want %q", in, got, want)
		}
	}
}

// A text line cut off by the byte limit or by a truncated gzip stream is not
// a URL the document lists; the read error wraps ErrMalformed.
func TestTextCutLineNotDelivered(t *testing.T) {
	doc := "http://ex.com/a\nhttp://ex.com/bbbbbbbb\n"
	// The limit falls inside the path: "http://ex.com/bbb" must not be
	// delivered.
	es, _, err := (&Parser{MaxBytes: 33}).Collect(strings.NewReader(doc), Source{URL: "http://ex.com/s.txt"})
	if !errors.Is(err, ErrTooLarge) || !equal(urlsOf(es), []string{"http://ex.com/a"}) {
		t.Errorf("cut by MaxBytes: urls = %q, err %v; want only the first line and ErrTooLarge", urlsOf(es), err)
	}

	gz := gzipped(t, strings.NewReader(doc))
	// Drop the trailer and the end of the deflate stream.
	for cut := 9; cut < len(gz)-10; cut++ {
		es, info, err := Collect(bytes.NewReader(gz[:len(gz)-cut]), Source{URL: "http://ex.com/s.txt"})
		if !errors.Is(err, ErrMalformed) {
			t.Fatalf("gzip cut by %d bytes: err = %v, want ErrMalformed", cut, err)
		}
		for _, u := range urlsOf(es) {
			if u != "http://ex.com/a" && u != "http://ex.com/bbbbbbbb" {
				t.Errorf("gzip cut by %d bytes (%d bytes read): delivered %q", cut, info.Bytes, u)
			}
		}
	}
}

// Atom links may be relative to xml:base or the document's URI (RFC 4287
// §4.2.7.1, XML Base); RSS links are resolved likewise, as crawler-commons
// does. Sitemap <loc> must stay absolute.
func TestFeedRelativeLinks(t *testing.T) {
	src := Source{URL: "http://ex.com/dir/feed.xml"}
	tests := []struct {
		name, body string
		want       []string
	}{
		{"atom against the document", `<feed xmlns="http://www.w3.org/2005/Atom"><entry><link href="a"/></entry><entry><link href="/dir/b?x"/></entry><entry><link href="//ex.com/dir/c"/></entry></feed>`,
			[]string{"http://ex.com/dir/a", "http://ex.com/dir/b?x", "http://ex.com/dir/c"}},
		{"atom xml:base", `<feed xmlns="http://www.w3.org/2005/Atom" xml:base="http://ex.com/dir/sub/">
			<entry><link href="a"/></entry>
			<entry xml:base="../other/"><link href="b"/></entry>
			<entry><link xml:base="/dir/x/" href="c"/></entry>
			<entry><link href="../d"/></entry></feed>`,
			[]string{"http://ex.com/dir/sub/a", "http://ex.com/dir/other/b", "http://ex.com/dir/x/c", "http://ex.com/dir/d"}},
		{"rss", `<rss xml:base="http://ex.com/dir/r/"><channel><item><link> x </link></item><item><guid>y</guid></item></channel></rss>`,
			[]string{"http://ex.com/dir/r/x"}},
		{"rss1", `<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"><item><link>z</link></item></rdf:RDF>`,
			[]string{"http://ex.com/dir/z"}},
		{"urlset stays absolute", `<urlset xml:base="http://ex.com/dir/"><url><loc>a</loc></url></urlset>`, nil},
	}
	for _, tc := range tests {
		es, _, err := collect(t, nil, tc.body, src)
		if err != nil || !equal(urlsOf(es), tc.want) {
			t.Errorf("%s: urls = %q, err %v; want %q", tc.name, urlsOf(es), err, tc.want)
		}
	}
}

// White space after a URL is trimmed however long it is; only other text
// past the capture bound makes the value too long.
func TestLocTrailingWhiteSpaceBeyondBound(t *testing.T) {
	p := &Parser{MaxURLLength: 50}
	pad := strings.Repeat(" \n\t", 200)
	body := "<urlset><url><loc>http://ex.com/a" + pad + "</loc></url>" +
		"<url><loc>http://ex.com/b" + pad + "<!-- c -->" + pad + "</loc></url>" +
		"<url><loc>http://ex.com/c" + pad + "x</loc></url></urlset>"
	es, info, err := p.Collect(strings.NewReader(body), Source{URL: "http://ex.com/s.xml"})
	if err != nil || !equal(urlsOf(es), []string{"http://ex.com/a", "http://ex.com/b"}) || info.Invalid != 1 {
		t.Errorf("urls = %q, info %+v, err %v; want a and b, and c invalid", urlsOf(es), info, err)
	}
}
