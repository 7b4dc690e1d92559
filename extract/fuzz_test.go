package extract

import (
	"bytes"
	"errors"
	"net/http"
	"reflect"
	"testing"
	"unicode/utf8"
)

// FuzzExtract checks that any input extracts without panicking, within the
// limits, with valid UTF-8 strings and only absolute http(s) link URLs.
func FuzzExtract(f *testing.F) {
	for _, s := range []string{
		samplePage,
		`<base href="//x.test/"><a href="a" rel="nofollow ugc">t<img alt=i srcset="a 1x, b 2x"></a>`,
		`<meta http-equiv=refresh content="0;url='/r'"><meta name=robots content=none>`,
		"<meta charset=iso-8859-1><p>caf\xe9</p>",
		"\xef\xbb\xbf<title>bom</title>", "\xff\xfe<\x00p\x00>\x00",
		`<a href="?a=1&amp=2&copy=3&#x41;&#0;">x</a>`,
		"<svg><a xlink:href=/s><title>t</title></a></svg><template><a href=/t></template>",
		`<A HREF="/Upper" REL=NoFollow>x</A><IMG SRC=/i.png ALT=Alt>`,
		`<noscript><a href=/n>n</a><meta http-equiv=refresh content="0;url=/r"></noscript><noscript/><p>after`,
		`<form method=POST action=/p><button formmethod=get>x</button><form action=/nested></form><form action=/g><input type=submit formmethod=dialog>`,
	} {
		f.Add([]byte(s), "text/html")
	}
	o := &Config{UserAgent: "fuzzbot", MaxLinks: 20, MaxTextBytes: 200, MaxAnchorText: 20, MaxFieldBytes: 30, MaxAttrBytes: 100, MaxTokenBytes: 4096}
	f.Fuzz(func(t *testing.T, body []byte, contentType string) {
		h := http.Header{"Content-Type": {contentType}, "X-Robots-Tag": {contentType}}
		orig := bytes.Clone(body)
		d, err := o.ExtractBytes(body, "http://ex.test/dir/page", h)
		if !bytes.Equal(body, orig) {
			t.Fatalf("ExtractBytes modified the body: %q became %q", orig, body)
		}
		if d == nil {
			t.Fatalf("nil document (err %v)", err)
		}
		if len(d.Links) > o.MaxLinks || len(d.Text) > o.MaxTextBytes || len(d.Title) > o.MaxFieldBytes || len(d.Description) > o.MaxFieldBytes {
			t.Fatalf("limits exceeded: %d links, text %d, title %d, description %d", len(d.Links), len(d.Text), len(d.Title), len(d.Description))
		}
		for _, s := range []string{d.Text, d.Title, d.Description, d.Language} {
			if !utf8.ValidString(s) {
				t.Fatalf("invalid UTF-8: %q", s)
			}
		}
		for _, l := range d.Links {
			if !isHTTP(l.URL) || len(l.Text) > o.MaxAnchorText || !utf8.ValidString(l.Text) || !utf8.ValidString(l.Raw) {
				t.Fatalf("bad link %+v", l)
			}
		}
		if d.Canonical != "" && !isHTTP(d.Canonical) {
			t.Fatalf("bad canonical %q", d.Canonical)
		}
		// A body in memory is tokenized by scanner, a reader by
		// x/net/html: the two must find the same document.
		d2, err2 := o.Extract(bytes.NewReader(body), "http://ex.test/dir/page", h)
		if errors.Is(err, ErrTokenTooLarge) != errors.Is(err2, ErrTokenTooLarge) {
			t.Fatalf("ExtractBytes error %v, Extract error %v", err, err2)
		}
		if !reflect.DeepEqual(d, d2) {
			t.Fatalf("ExtractBytes and Extract differ:\n%+v\n%+v", d, d2)
		}
	})
}

func FuzzSrcsetAndRefresh(f *testing.F) {
	f.Add([]byte("a.jpg 1x, b,c.jpg 2x, (x,y) d"))
	f.Add([]byte("0; url='x'"))
	f.Add([]byte(" .5 url = \"x\" y"))
	f.Fuzz(func(t *testing.T, v []byte) {
		n := 0
		eachSrcset(v, func(u []byte) {
			if len(u) == 0 {
				t.Fatal("empty candidate")
			}
			n++
		})
		if n > len(v) {
			t.Fatalf("%d candidates from %d bytes", n, len(v))
		}
		if u := refreshURL(v); len(u) > len(v) {
			t.Fatal("refresh URL longer than its input")
		} else if !bytes.Contains(v, u) {
			t.Fatalf("refresh URL %q is not part of its input %q", u, v)
		}
	})
}
