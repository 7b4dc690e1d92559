package extract

import (
	"bytes"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

const samplePage = `<!DOCTYPE html>
<html lang="en-GB">
<head>
<meta charset="utf-8">
<title>  Sample &amp; Page
</title>
<meta name="description" content="  A   page for
 tests. ">
<meta name="ROBOTS" content="noarchive">
<link rel="stylesheet" href="/css/site.css">
<link rel="canonical" href="https://ex.com/canonical">
<link rel="alternate" hreflang="de" href="/de/">
<script src="/js/app.js"></script>
<script>var s = "<a href='/not-a-link'>no</a>";</script>
<style>body { color: red }</style>
</head>
<body>
<h1>Hello</h1><p>First <b>bold</b>paragraph.</p>
<a href="/a?x=1&amp;y=2" rel="nofollow">  Link
  <em>A</em></a>
<a href="b.html" rel="UGC noopener"><img src="/img/b.png" alt="Bee" srcset="/img/b-2x.png 2x, /img/b,3x.png 3x"></a>
<a href="mailto:x@ex.com">mail</a>
<a href="javascript:void(0)">js</a>
<a>no href</a>
<map><area href="/area" alt="Area text"></map>
<iframe src="/frame.html">fallback <b>text</b></iframe>
<form action="/search"><input name="q"></form>
<noscript><p>Enable JS</p></noscript>
<template><p>inert</p><a href="/tpl">tpl</a></template>
<svg><title>icon</title><a xlink:href="/svg-link">s</a></svg>
<video src="/v.mp4" poster="/poster.jpg"></video>
<textarea>typed</textarea>
<p>Last&nbsp;line</p>
</body></html>`

func TestExtractSample(t *testing.T) {
	d, err := ExtractBytes([]byte(samplePage), "https://ex.com/dir/page.html", nil)
	if err != nil {
		t.Fatal(err)
	}
	if d.Title != "Sample & Page" || d.Description != "A page for tests." || d.Language != "en-GB" {
		t.Errorf("title %q, description %q, language %q", d.Title, d.Description, d.Language)
	}
	if d.Canonical != "https://ex.com/canonical" || d.Charset != "utf-8" || d.Base != "https://ex.com/dir/page.html" {
		t.Errorf("canonical %q, charset %q, base %q", d.Canonical, d.Charset, d.Base)
	}
	if want := (Robots{Noarchive: true}); d.Robots != want {
		t.Errorf("robots %+v, want %+v", d.Robots, want)
	}
	wantText := "Hello First boldparagraph. Link A mail js no href s Last\u00a0line"
	if d.Text != wantText {
		t.Errorf("text:\n got %q\nwant %q", d.Text, wantText)
	}
	type row struct {
		URL  string
		Kind Kind
		Text string
		Rel  Rel
		Lang string
		Fol  bool
	}
	var got []row
	for _, l := range d.Links {
		got = append(got, row{l.URL, l.Kind, l.Text, l.Rel, l.Hreflang, l.Follow})
	}
	want := []row{
		{"https://ex.com/css/site.css", KindLink, "", RelStylesheet, "", true},
		{"https://ex.com/canonical", KindLink, "", RelCanonical, "", true},
		{"https://ex.com/de/", KindLink, "", RelAlternate, "de", true},
		{"https://ex.com/js/app.js", KindScript, "", 0, "", true},
		{"https://ex.com/a?x=1&y=2", KindA, "Link A", RelNofollow, "", false},
		{"https://ex.com/dir/b.html", KindA, "Bee", RelUGC | RelNoopener, "", false},
		{"https://ex.com/img/b.png", KindImg, "Bee", 0, "", true},
		{"https://ex.com/img/b-2x.png", KindImg, "Bee", 0, "", true},
		{"https://ex.com/img/b,3x.png", KindImg, "Bee", 0, "", true},
		{"https://ex.com/area", KindArea, "Area text", 0, "", true},
		{"https://ex.com/frame.html", KindIframe, "", 0, "", true},
		{"https://ex.com/search", KindForm, "", 0, "", false},
		{"https://ex.com/tpl", KindA, "", 0, "", true},
		{"https://ex.com/svg-link", KindA, "s", 0, "", true},
		{"https://ex.com/v.mp4", KindMedia, "", 0, "", true},
		{"https://ex.com/poster.jpg", KindMedia, "", 0, "", true},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("links:\n got %+v\nwant %+v", got, want)
	}
	if d.Skipped != 2 {
		t.Errorf("Skipped = %d, want 2 (mailto, javascript)", d.Skipped)
	}
}

func TestErrors(t *testing.T) {
	for _, u := range []string{"/relative", "ftp://ex.com/", "http://"} {
		if _, err := ExtractBytes([]byte("<a href=x>"), u, nil); !errors.Is(err, ErrInvalidPageURL) {
			t.Errorf("page URL %q: err = %v, want ErrInvalidPageURL", u, err)
		}
	}
	d, err := ExtractBytes([]byte(`<a href="/rel">r</a><a href="http://ex.com/abs">a</a>`), "", nil)
	if err != nil || len(d.Links) != 1 || d.Links[0].URL != "http://ex.com/abs" || d.Skipped != 1 {
		t.Errorf("no page URL: links %+v skipped %d err %v", d.Links, d.Skipped, err)
	}
	big := "<p>" + strings.Repeat("x", 5000) + "</p><a href=/after>after</a>"
	d, err = (&Config{MaxTokenBytes: 1024}).ExtractBytes([]byte(`<a href="/before">b</a>`+big), "http://ex.com/", nil)
	if !errors.Is(err, ErrTokenTooLarge) || d == nil || len(d.Links) != 1 {
		t.Errorf("giant token: err %v, doc %+v", err, d)
	}
}

func TestHeaderRobotsAndCharset(t *testing.T) {
	h := http.Header{}
	h.Set("Content-Type", "text/html; charset=ISO-8859-1")
	h.Add("X-Robots-Tag", "otherbot: noindex, nofollow")
	h.Add("X-Robots-Tag", "mybot: nosnippet, unavailable_after: 25 Jun 2010 15:00:00 PST")
	h.Add("X-Robots-Tag", "noimageindex")
	h.Set("Content-Language", "fr, en")
	body := []byte("<title>Caf\xe9</title><meta name=MyBot content='noindex'><meta name=otherbot content=none><p>na\xefve</p><a href=/x>x</a>")
	d, err := (&Config{UserAgent: "MyBot"}).ExtractBytes(body, "http://ex.com/", h)
	if err != nil {
		t.Fatal(err)
	}
	if d.Charset != "windows-1252" || d.Title != "Café" || d.Text != "naïve x" || d.Language != "fr" {
		t.Errorf("charset %q title %q text %q lang %q", d.Charset, d.Title, d.Text, d.Language)
	}
	if want := (Robots{Noindex: true, Nosnippet: true, NoImageIndex: true}); d.Robots != want {
		t.Errorf("robots %+v, want %+v", d.Robots, want)
	}
	if !d.Links[0].Follow {
		t.Errorf("link not followable although only otherbot is told nofollow")
	}
	d, _ = ExtractBytes([]byte(`<meta name="robots" content="NONE"><a href=/x>x</a>`), "http://ex.com/", nil)
	if !d.Robots.Noindex || !d.Robots.Nofollow || d.Links[0].Follow {
		t.Errorf("robots none: %+v, follow %v", d.Robots, d.Links[0].Follow)
	}
}

func TestReaderPathMetaCharset(t *testing.T) {
	// windows-1251 declared in a meta tag: "Привет" is CF F0 E8 E2 E5 F2.
	body := "<html><head><meta http-equiv=\"Content-Type\" content=\"text/html; charset=windows-1251\"><title>\xcf\xf0\xe8\xe2\xe5\xf2</title></head><body><a href=\"/\xef\">\xef</a></body></html>"
	d, err := Extract(strings.NewReader(body), "http://ex.com/", nil)
	if err != nil {
		t.Fatal(err)
	}
	if d.Charset != "windows-1251" || d.Title != "Привет" || d.Text != "п" || len(d.Links) != 1 || d.Links[0].URL != "http://ex.com/%D0%BF" {
		t.Errorf("charset %q title %q text %q links %+v", d.Charset, d.Title, d.Text, d.Links)
	}
}

// TestScannerPathMatchesReaderPath extracts realistic pages from memory
// (scanner) and from a reader (x/net/html's tokenizer) and compares.
func TestScannerPathMatchesReaderPath(t *testing.T) {
	for seed := int64(1); seed <= 8; seed++ {
		page := realisticPage(seed, 30<<10)
		d1, err1 := ExtractBytes(page, "https://www.example.com/news/story", nil)
		d2, err2 := Extract(bytes.NewReader(page), "https://www.example.com/news/story", nil)
		if err1 != nil || err2 != nil {
			t.Fatalf("seed %d: errors %v, %v", seed, err1, err2)
		}
		if len(d1.Links) < 50 || len(d1.Text) < 10<<10 {
			t.Fatalf("seed %d: only %d links and %d bytes of text", seed, len(d1.Links), len(d1.Text))
		}
		if !reflect.DeepEqual(d1, d2) {
			t.Fatalf("seed %d: documents differ", seed)
		}
	}
}
