package extract

import (
	"net/http"
	"reflect"
	"strings"
	"testing"
)

// A refresh URL longer than MaxAttrBytes is dropped like any other
// over-long URL, not cut to a different URL that is then followed.
func TestMetaRefreshLongURLNotCut(t *testing.T) {
	o := &Config{MaxAttrBytes: 100}
	long := "/" + strings.Repeat("x", 200)
	d, err := o.ExtractBytes([]byte(`<meta http-equiv=refresh content="0; url=`+long+`">`), "https://ex.com/", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Links) != 0 || d.Skipped != 1 {
		t.Errorf("over-long refresh URL: links %+v, skipped %d; want none, 1", d.Links, d.Skipped)
	}
	// A short quoted URL followed by a long tail is still found.
	d, _ = o.ExtractBytes([]byte(`<meta http-equiv=refresh content="0; url='/ok' `+strings.Repeat("y", 200)+`">`), "https://ex.com/", nil)
	if len(d.Links) != 1 || d.Links[0].URL != "https://ex.com/ok" {
		t.Errorf("quoted refresh URL with a long tail: links %+v", d.Links)
	}
}

// HTML "parse a srcset attribute": the parentheses state does not nest (a
// ')' always returns to the descriptor state), and the separators are ASCII
// white space, which does not include U+000B.
func TestSrcsetParensDoNotNest(t *testing.T) {
	var got []string
	eachSrcset([]byte("a.jpg (( ), b.jpg 2x, c\vd.jpg 3x"), func(u []byte) { got = append(got, string(u)) })
	if want := []string{"a.jpg", "b.jpg", "c\vd.jpg"}; !reflect.DeepEqual(got, want) {
		t.Errorf("srcset candidates %q, want %q", got, want)
	}
}

// The content of <template> is not part of the document (HTML §4.12.3: it
// belongs to the template contents' DocumentFragment), so a <base>, <title>,
// canonical link or description inside it is not the document's.
func TestTemplateContentIsNotDocumentMetadata(t *testing.T) {
	page := `<template><base href="https://evil.test/"><title>tpl</title><link rel=canonical href=/tpl-canon>` +
		`<meta name=description content=tpl></template>` +
		`<title>real</title><meta name=description content=real><link rel=canonical href=/canon><a href=x>x</a>`
	d, err := ExtractBytes([]byte(page), "https://ex.com/dir/p", nil)
	if err != nil {
		t.Fatal(err)
	}
	if d.Base != "https://ex.com/dir/p" || d.Title != "real" || d.Description != "real" || d.Canonical != "https://ex.com/canon" {
		t.Errorf("base %q title %q description %q canonical %q", d.Base, d.Title, d.Description, d.Canonical)
	}
	if n := len(d.Links); n == 0 || d.Links[n-1].URL != "https://ex.com/dir/x" {
		t.Errorf("links %+v, want the last one resolved against the page URL", d.Links)
	}
}

// HTML §4.2.3: the frozen base URL comes from the first base element that
// has an href attribute, even an empty one (which resolves to the
// document's URL); later <base> elements are ignored. A <base> without
// href does not count.
func TestFirstBaseWithHrefAttributeWins(t *testing.T) {
	page := `<base target=_blank><base href=""><base href="/other/"><a href=x>x</a>`
	d, err := ExtractBytes([]byte(page), "https://ex.com/dir/p#frag", nil)
	if err != nil {
		t.Fatal(err)
	}
	if d.Base != "https://ex.com/dir/p" || len(d.Links) != 1 || d.Links[0].URL != "https://ex.com/dir/x" {
		t.Errorf("base %q links %+v; want base https://ex.com/dir/p, link https://ex.com/dir/x", d.Base, d.Links)
	}
}

// WHATWG encoding sniffing, prescan: a <meta> declaring x-user-defined
// means windows-1252 (only a transport-layer label selects x-user-defined).
func TestMetaXUserDefinedIsWindows1252(t *testing.T) {
	body := "<meta charset=x-user-defined><p>caf\xe9</p>"
	for _, d := range extractBoth(t, body, nil) {
		if d.Charset != "windows-1252" || d.Text != "café" {
			t.Errorf("charset %q text %q; want windows-1252, café", d.Charset, d.Text)
		}
	}
}

// HTML "encoding-parse a URL": in a document whose encoding is not UTF-8,
// a URL's query is percent-encoded in the document's encoding, and
// characters it cannot encode become "%26%23N%3B"; the path and fragment
// stay UTF-8. This is the URL a browser requests.
func TestQueryEncodedInDocumentEncoding(t *testing.T) {
	h := http.Header{"Content-Type": {"text/html; charset=windows-1251"}}
	// "Пр" is CF F0 in windows-1251; U+263A is not in it.
	body := "<base href='/b/?\xcf'><a href='/\xcf\xf0?q=\xcf\xf0&amp;s=&#x263A;+ #\xcf\xf0'>x</a><a href='#f'>f</a>" +
		"<a href='http://other.test/?\xcf'>o</a><link rel=canonical href='/c?\xcf'>"
	want := []string{
		"https://ex.com/%D0%9F%D1%80?q=%CF%F0&s=%26%239786%3B+%20#%D0%9F%D1%80",
		"https://ex.com/b/?%CF#f",
		"http://other.test/?%CF",
		"https://ex.com/c?%CF",
	}
	for _, d := range extractBoth(t, body, h) {
		var got []string
		for _, l := range d.Links {
			got = append(got, l.URL)
		}
		if !reflect.DeepEqual(got, want) || d.Canonical != want[3] {
			t.Errorf("windows-1251 links\n got %q\nwant %q (canonical %q)", got, want, d.Canonical)
		}
	}
	// An undeclared ASCII page is windows-1252: "&eacute;" is E9 there.
	d, _ := ExtractBytes([]byte(`<a href="/caf&eacute;?q=caf&eacute;">x</a>`), "https://ex.com/", nil)
	if len(d.Links) != 1 || d.Links[0].URL != "https://ex.com/caf%C3%A9?q=caf%E9" {
		t.Errorf("windows-1252 link %+v", d.Links)
	}
	// UTF-8 and UTF-16 documents use UTF-8.
	d, _ = ExtractBytes([]byte("<meta charset=utf-8><a href='/?q=caf\xc3\xa9'>x</a>"), "https://ex.com/", nil)
	if len(d.Links) != 1 || d.Links[0].URL != "https://ex.com/?q=caf%C3%A9" {
		t.Errorf("utf-8 link %+v", d.Links)
	}
	d, _ = ExtractBytes([]byte("\xff\xfe<\x00a\x00 \x00h\x00r\x00e\x00f\x00=\x00?\x00\xe9\x00>\x00"), "https://ex.com/", nil)
	if len(d.Links) != 1 || d.Links[0].URL != "https://ex.com/?%C3%A9" {
		t.Errorf("utf-16 link %+v", d.Links)
	}
}

// extractBoth runs ExtractBytes and Extract (the scanner and the reader
// paths) on body.
func extractBoth(t *testing.T, body string, h http.Header) []*Document {
	t.Helper()
	d1, err1 := ExtractBytes([]byte(body), "https://ex.com/", h)
	d2, err2 := Extract(strings.NewReader(body), "https://ex.com/", h)
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	return []*Document{d1, d2}
}

// HTML §4.10.18.6 (form submission): a form's method attribute is an
// enumerated attribute (get, post, dialog; ASCII case-insensitive; missing
// and invalid values mean get), and a submit button's formmethod overrides
// it for submissions through that button. With FollowForms only a form
// every visible submission of which is a GET is followed: a crawler must
// never turn a POST form into GET requests.
func TestFollowFormsOnlyGetForms(t *testing.T) {
	cases := []struct {
		form   string
		follow bool
	}{
		{`<form action=/f>`, true},
		{`<form action=/f method=get>`, true},
		{`<form action=/f method=GET>`, true},
		{`<form action=/f method="">`, true},      // invalid: get
		{`<form action=/f method=bogus>`, true},   // invalid: get
		{`<form action=/f method=" post">`, true}, // not a keyword (no trimming): get
		{`<form action=/f method=post>`, false},
		{`<form action=/f METHOD=PoSt>`, false},
		{`<form action=/f method=dialog>`, false}, // closes a dialog, fetches nothing
		{`<form action=/f method=post><button formmethod=get>s</button>`, false},
		{`<form action=/f><button formmethod=post>s</button>`, false},
		{`<form action=/f><button type=SUBMIT formmethod=POST>s</button>`, false},
		{`<form action=/f><button type=bogus formmethod=post>s</button>`, false}, // invalid type: submit
		{`<form action=/f><input type=submit formmethod=post>`, false},
		{`<form action=/f><input type=Image src=/i.png formmethod=dialog>`, false},
		{`<form action=/f><button type=button formmethod=post>b</button><button type=reset formmethod=post>r</button>`, true},
		{`<form action=/f><input type=text formmethod=post><button formmethod=get>s</button>`, true},
		{`<form action=/f><button formmethod=bogus>s</button>`, true},
		{`<form action=/f></form><button formmethod=post>s</button>`, true}, // not the form's button
	}
	for _, c := range cases {
		body := c.form + `<input name=q></form><form action=/g method=get></form>`
		for _, o := range []*Config{{FollowForms: true}, {}} {
			d1, err1 := o.ExtractBytes([]byte(body), "https://ex.com/", nil)
			d2, err2 := o.Extract(strings.NewReader(body), "https://ex.com/", nil)
			if err1 != nil || err2 != nil {
				t.Fatal(err1, err2)
			}
			for _, d := range []*Document{d1, d2} {
				var got []bool
				for _, l := range d.Links {
					if l.Kind == KindForm {
						got = append(got, l.Follow)
					}
				}
				want := []bool{c.follow && o.FollowForms, o.FollowForms}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%s FollowForms %v: form links followed %v, want %v", c.form, o.FollowForms, got, want)
				}
			}
		}
	}
}

// A crawler runs no scripts, so it sees a page as a browser with scripting
// disabled does, where <noscript> content is markup (HTML §13.2.6.4.4): its
// links are the page's links (with their anchor text), but its text stays
// out of Document.Text.
func TestNoscriptContentIsMarkup(t *testing.T) {
	body := `<p>before</p><noscript><a href="/nojs">Plain &amp; simple</a><img src="/pixel.gif" alt="px">` +
		`<meta http-equiv=refresh content="0; url=/fallback"> text</noscript><p>after</p>` +
		`<NOSCRIPT/><a href=/x>x</a></NOSCRIPT><a href=/y>y</a>`
	type row struct {
		URL  string
		Kind Kind
		Text string
	}
	want := []row{
		{"https://ex.com/nojs", KindA, "Plain & simple"},
		{"https://ex.com/pixel.gif", KindImg, "px"},
		{"https://ex.com/fallback", KindMetaRefresh, ""},
		{"https://ex.com/x", KindA, "x"},
		{"https://ex.com/y", KindA, "y"},
	}
	for _, d := range extractBoth(t, body, nil) {
		var got []row
		for _, l := range d.Links {
			got = append(got, row{l.URL, l.Kind, l.Text})
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("links\n got %+v\nwant %+v", got, want)
		}
		if d.Text != "before after y" {
			t.Errorf("text %q, want %q", d.Text, "before after y")
		}
	}
}
