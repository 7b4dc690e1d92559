package extract

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/crawlkit/crawlkit/urlnorm"
)

func TestBaseHrefAppliesToEarlierLinks(t *testing.T) {
	page := `<a href="early">e</a><base href="/sub/dir/"><base href="http://other.test/"><a href="late?q">l</a><a href="//cdn.test/x">c</a>`
	d, err := ExtractBytes([]byte(page), "https://ex.com/a/b", nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"https://ex.com/sub/dir/early", "https://ex.com/sub/dir/late?q", "https://cdn.test/x"}
	if d.Base != "https://ex.com/sub/dir/" || len(d.Links) != 3 {
		t.Fatalf("base %q links %+v", d.Base, d.Links)
	}
	for i, w := range want {
		if d.Links[i].URL != w {
			t.Errorf("link %d = %q, want %q", i, d.Links[i].URL, w)
		}
	}
}

func TestMetaRefreshAndSrcset(t *testing.T) {
	tests := []struct{ content, want string }{
		{"0; url=/next", "https://ex.com/next"},
		{"5;URL='/quoted page'", "https://ex.com/quoted%20page"},
		{"3, url = \"/dq\"", "https://ex.com/dq"},
		{"0;/bare", "https://ex.com/bare"},
		{"0 url=/space", "https://ex.com/space"},
		{"5 /bare-after-space", "https://ex.com/bare-after-space"},
		{"10", ""},
		{"x; url=/nope", ""},
	}
	for _, tc := range tests {
		d, _ := ExtractBytes([]byte(`<meta http-equiv="Refresh" content="`+strings.ReplaceAll(tc.content, `"`, "&quot;")+`">`), "https://ex.com/", nil)
		got := ""
		if len(d.Links) == 1 && d.Links[0].Kind == KindMetaRefresh {
			got = d.Links[0].URL
		}
		if got != tc.want {
			t.Errorf("refresh %q: got %q, want %q", tc.content, got, tc.want)
		}
	}
	var got []string
	eachSrcset([]byte(" a.jpg 1x,b.jpg 2x , data:image/png;base64,AA== 3x,c.jpg (w, x) 100w, d,e.jpg, ,f.jpg"), func(u []byte) {
		got = append(got, string(u))
	})
	want := []string{"a.jpg", "b.jpg", "data:image/png;base64,AA==", "c.jpg", "d,e.jpg", "f.jpg"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("srcset = %q, want %q", got, want)
	}
}

func TestLimits(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 50; i++ {
		fmt.Fprintf(&b, `<a href="/p%d">word%d ünïcödé</a> `, i, i)
	}
	b.WriteString(`<a href="/` + strings.Repeat("x", 200) + `">long</a>`)
	page := []byte(b.String())
	o := &Config{MaxLinks: 10, MaxTextBytes: 100, MaxAnchorText: 9, MaxAttrBytes: 100}
	d, err := o.ExtractBytes(page, "http://ex.com/", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Links) != 10 || !d.LinksTruncated {
		t.Errorf("%d links, truncated %v; want 10, true", len(d.Links), d.LinksTruncated)
	}
	if len(d.Text) > 100 || !d.TextTruncated || !utf8.ValidString(d.Text) || !strings.HasPrefix(d.Text, "word0 ünïcödé word1") {
		t.Errorf("text %q (%d bytes), truncated %v", d.Text, len(d.Text), d.TextTruncated)
	}
	for _, l := range d.Links {
		if len(l.Text) > 9 || !utf8.ValidString(l.Text) {
			t.Errorf("anchor text %q exceeds 9 bytes or is not UTF-8", l.Text)
		}
	}
	if d.Links[0].Text != "word0 ün" {
		t.Errorf("anchor text cut = %q, want %q (cut at a rune boundary)", d.Links[0].Text, "word0 ün")
	}
	d, _ = (&Config{MaxAttrBytes: 100}).ExtractBytes(page, "http://ex.com/", nil)
	if len(d.Links) != 50 || d.Skipped != 1 {
		t.Errorf("over-long href: %d links, %d skipped; want 50, 1", len(d.Links), d.Skipped)
	}
}

func TestHostileHTML(t *testing.T) {
	deep := strings.Repeat("<div><span><a href=/x>", 20000) + "text" + strings.Repeat("</a></span></div>", 20000)
	d, err := ExtractBytes([]byte(deep), "http://ex.com/", nil)
	if err != nil || len(d.Links) != DefaultMaxLinks || !d.LinksTruncated || d.Text != "text" {
		t.Errorf("deep nesting: err %v, %d links, text %q", err, len(d.Links), d.Text)
	}
	for _, page := range []string{
		"<a href='/a\x00b' rel=\x00nofollow>\x00</a>",
		"<a href=\"/unterminated", "<", "</", "<!--", "<a <a <a href=>", "\xff\xfe\x00<\x00a",
		"<title>t", "<svg><title>x</title></svg><title>real</title>",
		"<a href=/x>\xc3(\xa0\xe2\x82</a>", "<meta http-equiv=refresh content='0;url=\xff'>",
		"<script>" + strings.Repeat("</scr", 1000), "<plaintext><a href=/no>",
	} {
		d, err := ExtractBytes([]byte(page), "http://ex.com/", nil)
		if err != nil {
			t.Errorf("%q: %v", page, err)
			continue
		}
		for _, s := range []string{d.Text, d.Title} {
			if !utf8.ValidString(s) {
				t.Errorf("%q: invalid UTF-8 in %q", page, s)
			}
		}
		for _, l := range d.Links {
			if !utf8.ValidString(l.Text) || !utf8.ValidString(l.Raw) {
				t.Errorf("%q: invalid UTF-8 in link %+v", page, l)
			}
		}
	}
	d, _ = ExtractBytes([]byte("<svg><title>x</title></svg><title>real</title>"), "", nil)
	if d.Title != "real" {
		t.Errorf("title = %q, want the document's, not the SVG's", d.Title)
	}
	d, _ = ExtractBytes([]byte(`<a href="/first" href="/second" rel="nofollow" rel="">x</a>`), "http://ex.com/", nil)
	if d.Links[0].URL != "http://ex.com/first" || d.Links[0].Rel != RelNofollow {
		t.Errorf("duplicate attributes: %+v, want the first of each", d.Links[0])
	}
}

// The fast paths in finish must agree with resolving against the base.
func TestResolveFastPathsAgree(t *testing.T) {
	base := "https://user@ex.com:8443/dir/page?q#f"
	refs := []string{"/", "/a/../b", "/a?x#y", "/\t/evil.test", "/\\evil.test", "//evil.test/", "/%2e%2e/x",
		"/ä ö", "HTTP://Other.Test/x", "https://other.test", "http:relative", "http:/x", "/a\nb"}
	for _, ref := range refs {
		page := fmt.Sprintf(`<a href="%s">x</a>`, strings.ReplaceAll(ref, `"`, "&quot;"))
		d, _ := ExtractBytes([]byte(page), base, nil)
		want, err := urlnorm.ResolveString(base, strings.TrimSpace(ref))
		if err != nil || !isHTTP(want) {
			if len(d.Links) != 0 {
				t.Errorf("%q: got %q, want it dropped", ref, d.Links[0].URL)
			}
			continue
		}
		if len(d.Links) != 1 || d.Links[0].URL != want {
			t.Errorf("%q: got %+v, want %q", ref, d.Links, want)
		}
	}
}
