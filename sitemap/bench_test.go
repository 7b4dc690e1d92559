package sitemap

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"
)

// benchURLSet builds a realistic urlset of n entries.
func benchURLSet(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n" + `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">` + "\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "  <url>\n    <loc>https://www.example.com/products/category-%d/item-%d?ref=sitemap&amp;v=%d</loc>\n    <lastmod>2024-%02d-%02dT10:%02d:00+00:00</lastmod>\n    <changefreq>weekly</changefreq>\n    <priority>0.%d</priority>\n  </url>\n",
			i%50, i, i%7, i%12+1, i%28+1, i%60, i%10)
	}
	b.WriteString("</urlset>\n")
	return b.Bytes()
}

func benchParse(b *testing.B, doc []byte) {
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	src := Source{URL: "https://www.example.com/sitemap.xml"}
	for b.Loop() {
		n := 0
		if _, err := Parse(bytes.NewReader(doc), src, func(Entry) error { n++; return nil }); err != nil {
			b.Fatal(err)
		}
		if n == 0 {
			b.Fatal("no entries")
		}
	}
}

func BenchmarkParseURLSet(b *testing.B) { benchParse(b, benchURLSet(10000)) }

func BenchmarkParseURLSetGzip(b *testing.B) {
	doc := benchURLSet(10000)
	z := gzipped(b, bytes.NewReader(doc))
	b.SetBytes(int64(len(doc))) // throughput in decompressed bytes
	b.ReportAllocs()
	src := Source{URL: "https://www.example.com/sitemap.xml"}
	for b.Loop() {
		if _, err := Parse(bytes.NewReader(z), src, func(Entry) error { return nil }); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseText(b *testing.B) {
	var s strings.Builder
	for i := 0; i < 10000; i++ {
		fmt.Fprintf(&s, "https://www.example.com/products/category-%d/item-%d?ref=sitemap\n", i%50, i)
	}
	benchParse(b, []byte(s.String()))
}

// BenchmarkParseMaxSizeStreaming parses a protocol-maximum 50,000-URL
// sitemap generated on the fly; B/op shows the document is not held in
// memory.
func BenchmarkParseMaxSizeStreaming(b *testing.B) {
	one := benchURLSet(1000)
	head := bytes.Index(one, []byte("<url>"))
	tail := bytes.LastIndex(one, []byte("</urlset>"))
	body := one[head:tail]
	size := int64(head + 50*len(body) + len(one) - tail)
	b.SetBytes(size)
	b.ReportAllocs()
	src := Source{URL: "https://www.example.com/sitemap.xml"}
	for b.Loop() {
		r := io.MultiReader(bytes.NewReader(one[:head]), &repeatReader{b: body, n: 50}, bytes.NewReader(one[tail:]))
		info, err := Parse(r, src, func(Entry) error { return nil })
		if err != nil || info.Pages != 50000 {
			b.Fatal(info, err)
		}
	}
}
