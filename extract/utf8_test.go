package extract

import (
	"bytes"
	"testing"
	"unicode/utf8"
)

func TestUTF8(t *testing.T) {
	for _, c := range []struct {
		name, contentType string
		body              []byte
		want, charset     string
	}{
		{"utf-8 header", "text/html; charset=utf-8", []byte("<p>Café</p>"), "<p>Café</p>", "utf-8"},
		{"utf-8 BOM", "text/html", []byte("\xEF\xBB\xBF<p>Café</p>"), "<p>Café</p>", "utf-8"},
		{"latin-1 header", "text/html; charset=iso-8859-1", []byte("<p>Caf\xe9</p>"), "<p>Café</p>", "windows-1252"},
		{"meta prescan", "text/html", []byte("<meta charset=\"windows-1251\"><p>\xcf\xf0\xe8\xe2\xe5\xf2</p>"),
			`<meta charset="windows-1251"><p>Привет</p>`, "windows-1251"},
		{"shift_jis header", "text/html; charset=shift_jis", []byte("<p>\x93\xfa\x96\x7b</p>"), "<p>日本</p>", "shift_jis"},
		{"utf-16le BOM", "text/html", []byte("\xff\xfe<\x00p\x00>\x00\xe9\x00"), "<p>é", "utf-16le"},
		{"invalid utf-8", "text/html; charset=utf-8", []byte("<p>a\xffb</p>"), "<p>a\uFFFDb</p>", "utf-8"},
		{"plain ascii", "", []byte("<p>hello</p>"), "<p>hello</p>", "windows-1252"},
	} {
		got, name := UTF8(c.body, c.contentType)
		if string(got) != c.want || name != c.charset {
			t.Errorf("%s: UTF8 = %q (%s), want %q (%s)", c.name, got, name, c.want, c.charset)
		}
		if !utf8.Valid(got) {
			t.Errorf("%s: result is not valid UTF-8", c.name)
		}
	}
	body := []byte("<p>plain</p>")
	if got, _ := UTF8(body, "text/html; charset=utf-8"); &got[0] != &body[0] {
		t.Error("a UTF-8 body was copied")
	}
}

func FuzzUTF8(f *testing.F) {
	f.Add([]byte("<meta charset=shift_jis>\x93\xfa"), "text/html")
	f.Add([]byte("\xfe\xff\x00<"), "")
	f.Fuzz(func(t *testing.T, body []byte, ct string) {
		got, _ := UTF8(bytes.Clone(body), ct)
		if !utf8.Valid(got) {
			t.Errorf("UTF8(%q, %q) = %q, not valid UTF-8", body, ct, got)
		}
	})
}
