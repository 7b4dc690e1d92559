package fetch

import (
	"net/http"
	"strings"
	"testing"
)

func TestParseContentType(t *testing.T) {
	cases := []struct {
		in, essence, charset string
		ok                   bool
	}{
		{"text/html", "text/html", "", true},
		{"Text/HTML; Charset=UTF-8", "text/html", "utf-8", true},
		{`text/html; charset="iso-8859-1"`, "text/html", "iso-8859-1", true},
		{`text/html; charset="a\"b"`, "text/html", `a"b`, true},
		{"text/html;charset=utf-8;charset=latin1", "text/html", "utf-8", true},
		{"text/html ; foo=bar; charset=gbk ", "text/html", "gbk", true},
		{"text/html;;charset=gbk", "text/html", "gbk", true},
		{"text/plain, text/html", "text/html", "", true},
		// Fetch §3.1.6 example: the charset carries over while the essence
		// stays the same.
		{"text/html;charset=gbk, text/html", "text/html", "gbk", true},
		{"text/html;charset=gbk, text/plain", "text/plain", "", true},
		{"text/html, */*", "text/html", "", true},
		{"", "", "", false},
		{"html", "", "", false},
		{"/html", "", "", false},
		{"text/", "", "", false},
		{"te xt/html", "", "", false},
		{"text/html;charset=", "text/html", "", true},
	}
	for _, c := range cases {
		e, cs, ok := ParseContentType(c.in)
		if e != c.essence || cs != c.charset || ok != c.ok {
			t.Errorf("ParseContentType(%q) = %q, %q, %v; want %q, %q, %v", c.in, e, cs, ok, c.essence, c.charset, c.ok)
		}
	}
}

func TestSniffContentType(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	html := []byte("<!DOCTYPE html><html><title>x</title>")
	cases := []struct {
		name, header string
		body         []byte
		want         string
		sniffed      bool
	}{
		{"declared html", "text/html; charset=utf-8", html, "text/html", false},
		{"missing header", "", html, "text/html", true},
		{"octet-stream", "application/octet-stream", html, "text/html", true},
		{"html that is a png", "text/html", png, "image/png", true},
		{"text/plain that is binary", "text/plain", []byte{0, 1, 2, 3, 0xff}, "application/octet-stream", true},
		{"image declared, html body kept", "image/png", html, "image/png", false},
		{"pdf declared", "application/pdf", html, "application/pdf", false},
		{"xml declared with xml body", "application/xml", []byte("<?xml version='1.0'?><urlset/>"), "application/xml", false},
	}
	for _, c := range cases {
		got, _, sniffed := SniffContentType(c.header, c.body)
		if got != c.want || sniffed != c.sniffed {
			t.Errorf("%s: SniffContentType = %q, sniffed %v; want %q, %v", c.name, got, sniffed, c.want, c.sniffed)
		}
	}
	if _, cs, _ := SniffContentType("text/html; charset=Shift_JIS", html); cs != "shift_jis" {
		t.Errorf("charset = %q, want shift_jis", cs)
	}
}

func FuzzParseContentType(f *testing.F) {
	for _, s := range []string{"text/html; charset=utf-8", `a/b;c="d\"e";charset=x`, "a/b, c/d;charset=e", `text/html;charset="`, ";;;=", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e, cs, ok := ParseContentType(s)
		if !ok {
			if e != "" || cs != "" {
				t.Fatalf("invalid %q gave %q %q", s, e, cs)
			}
			return
		}
		if e != strings.ToLower(e) || strings.Count(e, "/") != 1 || strings.ContainsAny(e, " \t;,") {
			t.Fatalf("bad essence %q from %q", e, s)
		}
		if cs != strings.ToLower(cs) || len(cs) > len(s) {
			t.Fatalf("bad charset %q from %q", cs, s)
		}
		// The result must be stable: formatting it and parsing again gives
		// the same essence.
		if e2, _, ok2 := ParseContentType(e); !ok2 || e2 != e {
			t.Fatalf("essence %q does not reparse (%q, %v)", e, e2, ok2)
		}
		SniffContentType(s, []byte(s))
	})
}

// FuzzSniffFastPath checks that the quick binary-signature pre-check never
// misses a binary type the full MIME sniffing algorithm would find, so the
// fast path cannot change SniffContentType's answer.
func FuzzSniffFastPath(f *testing.F) {
	for _, s := range []string{"\x89PNG\r\n\x1a\n", "%PDF-1.7", "<html>", "RIFF\x00\x00\x00\x00WEBPVP", "\x00\x00\x00\x18ftypmp42", "GIF89a", "\x1f\x8b\x08"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		detected, _, _ := ParseContentType(http.DetectContentType(body))
		if detected != "application/octet-stream" && !textual(detected) && !hasBinarySignature(body) {
			t.Fatalf("fast path misses %s for %q", detected, body)
		}
	})
}
