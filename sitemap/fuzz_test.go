package sitemap

import (
	"bytes"
	"compress/gzip"
	"net/url"
	"strings"
	"testing"
)

// fuzzLimits keeps each fuzz input cheap while still hitting every cap.
var fuzzLimits = Parser{MaxBytes: 64 << 10, MaxURLs: 50, MaxURLLength: 200, MaxNesting: 16}

// checkParse runs the parser and checks the invariants every input must
// keep: no panic, no more entries or bytes than the limits allow, and only
// absolute in-scope http(s) URLs.
func checkParse(t *testing.T, body []byte) {
	src := Source{URL: "http://ex.com/dir/sitemap.xml"}
	n := 0
	info, _ := fuzzLimits.Parse(bytes.NewReader(body), src, func(e Entry) error {
		n++
		u, err := url.Parse(e.URL)
		if err != nil || u.Host == "" || (!strings.EqualFold(u.Scheme, "http") && !strings.EqualFold(u.Scheme, "https")) {
			t.Fatalf("delivered %q, not an absolute http(s) URL", e.URL)
		}
		if o := originOf(u); o != "http://ex.com" {
			t.Fatalf("delivered %q, outside the sitemap's site", e.URL)
		}
		if e.Kind == KindPage && !strings.HasPrefix(cleanPath(u.EscapedPath()), "/dir/") {
			t.Fatalf("delivered %q, outside the sitemap's directory", e.URL)
		}
		if len(e.URL) > fuzzLimits.MaxURLLength {
			t.Fatalf("delivered a URL of %d bytes", len(e.URL))
		}
		if e.Priority < 0 || e.Priority > 1 {
			t.Fatalf("priority %v out of range", e.Priority)
		}
		return nil
	})
	if n > fuzzLimits.MaxURLs || info.Bytes > fuzzLimits.MaxBytes || n != info.Pages+info.Sitemaps {
		t.Fatalf("%d entries, info %+v: limits not kept", n, info)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"http://ex.com/dir/a\nhttp://ex.com/dir/b",
		`<urlset><url><loc>http://ex.com/dir/a</loc><lastmod>2004-01-01</lastmod><priority>0.3</priority></url></urlset>`,
		`<sitemapindex><sitemap><loc>http://ex.com/s.xml</loc></sitemap></sitemapindex>`,
		`<rss><channel><item><link>http://ex.com/dir/i</link><pubDate>Thu, 05 Jan 2017 13:34:51 +0100</pubDate></item></channel></rss>`,
		`<feed xmlns="http://www.w3.org/2005/Atom"><entry><link href="http://ex.com/dir/e"/><updated>2003-12-13T18:30:02Z</updated></entry></feed>`,
		`<rdf:RDF xmlns:rdf="r"><item><link>http://ex.com/dir/r</link></item></rdf:RDF>`,
		"\ufeff<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><urlset/>",
		"<!DOCTYPE x [<!ENTITY e SYSTEM \"file:///etc/passwd\">]><urlset><url><loc>&e;</loc></url></urlset>",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(checkParse)
}

// The per-format targets wrap the input in a document skeleton so the
// fuzzer spends its time inside that format's element handling.
func fuzzFormat(f *testing.F, prefix, suffix string, seeds ...string) {
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkParse(t, []byte(prefix+s+suffix))
	})
}

func FuzzURLSet(f *testing.F) {
	fuzzFormat(f, `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url>`, `</url></urlset>`,
		"<loc>http://ex.com/dir/a</loc><lastmod>2005-01-01T00:00+01:00</lastmod>",
		"<loc>http://ex.com/dir/a</loc><loc>http://ex.com/dir/b</loc><changefreq>daily</changefreq>",
		"<loc><![CDATA[http://ex.com/dir/c]]>&amp;x</loc></url><url><loc>http://ex.com/dir/d</loc>",
		"<loc>http://ex.com/dir/%2e%2E/e</loc><loc>http://ex.com/dir/f/../g"+strings.Repeat(" ", 300)+"</loc>")
}

func FuzzIndex(f *testing.F) {
	fuzzFormat(f, `<sitemapindex><sitemap>`, `</sitemap></sitemapindex>`,
		"<loc>http://ex.com/s1.xml</loc><lastmod>2004-10-01T18:23:17+00:00</lastmod>")
}

func FuzzText(f *testing.F) {
	fuzzFormat(f, "", "", "http://ex.com/dir/a\r\n\r\nhttp://ex.com/dir/b\n", "\ufeffhttp://ex.com/dir/x")
}

func FuzzRSS(f *testing.F) {
	fuzzFormat(f, `<rss version="2.0"><channel><item>`, `</item></channel></rss>`,
		"<link>http://ex.com/dir/1</link><pubDate>05 Jan 17 13:34:54 +0100</pubDate>",
		`<link xml:base="/dir/x/">../../y</link>`,
		`<guid isPermaLink="true">http://ex.com/dir/g</guid>`)
}

func FuzzAtom(f *testing.F) {
	fuzzFormat(f, `<feed xmlns="http://www.w3.org/2005/Atom"><entry>`, `</entry></feed>`,
		`<link rel="alternate" href="http://ex.com/dir/a"/><updated>2003-12-13T18:30:02Z</updated>`,
		`<link xml:base="sub/" href="../a"/>`, `<x xml:base="//other.example/dir/"><link href="b"/></x>`)
}

// FuzzGzip compresses the input first: the decompressed stream must obey
// the same caps.
func FuzzGzip(f *testing.F) {
	f.Add([]byte("http://ex.com/dir/a\n"), uint16(1))
	f.Add([]byte("<urlset><url><loc>http://ex.com/dir/a</loc></url></urlset>"), uint16(3000))
	f.Fuzz(func(t *testing.T, chunk []byte, repeat uint16) {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		for i := 0; i < int(repeat)%4096 && len(chunk) > 0; i++ {
			zw.Write(chunk)
			if buf.Len() > 1<<20 {
				break
			}
		}
		zw.Close()
		checkParse(t, buf.Bytes())
	})
}

func FuzzDates(f *testing.F) {
	for _, s := range []string{"2005-01-01", "2004-12-23T18:00:15+00:00", "Thu, 05 Jan 2017 13:34:51 +0100", "5 Jan 17 1:2 GMT"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if tm, ok := parseW3CDate(s); ok && tm.Location().String() != "UTC" {
			t.Fatalf("W3C %q: not UTC", s)
		}
		if tm, ok := parseRFC822Date(s); ok && tm.Location().String() != "UTC" {
			t.Fatalf("RFC 822 %q: not UTC", s)
		}
	})
}
