package extract

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// foldRef is white-space folding written plainly: split on HTML white
// space, drop empty fields, join with one space.
func foldRef(s string) string {
	return strings.Join(strings.FieldsFunc(s, func(r rune) bool { return r < 256 && spaceTable[byte(r)] }), " ")
}

func TestTextBufFolds(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	pieces := []string{"a", "word", "ünï", " ", "  ", "\n", "\t\r\n ", "\x01", "\x1f", "x\x00y", "\v", "\f", ".", "<"}
	for i := 0; i < 2000; i++ {
		var tb textBuf
		tb.limit = 1 << 20
		var all strings.Builder
		for j := r.IntN(30); j > 0; j-- {
			var chunk strings.Builder
			for k := r.IntN(8); k > 0; k-- {
				chunk.WriteString(pieces[r.IntN(len(pieces))])
			}
			if r.IntN(5) == 0 {
				tb.space() // an element boundary
				all.WriteByte(' ')
			}
			tb.add([]byte(chunk.String()))
			all.WriteString(chunk.String())
		}
		if got, want := string(tb.b), foldRef(all.String()); got != want {
			t.Fatalf("folded %q, want %q (input %q)", got, want, all.String())
		}
	}
}

func TestTextBufLimit(t *testing.T) {
	text := strings.Repeat("alpha  beta\n", 50)
	for limit := 1; limit < 80; limit++ {
		tb := textBuf{limit: limit}
		for _, chunk := range strings.SplitAfter(text, "\n") {
			tb.add([]byte(chunk))
		}
		want := foldRef(text)[:limit]
		want = strings.TrimRight(want, " ")
		if string(tb.b) != want || !tb.truncated {
			t.Fatalf("limit %d: %q (truncated %v), want %q", limit, tb.b, tb.truncated, want)
		}
	}
}

// TestRefreshURL checks refreshURL against the HTML standard's shared
// declarative refresh steps, case by case.
func TestRefreshURL(t *testing.T) {
	tests := []struct{ content, want string }{
		// The time may be followed by ';', ',' or white space, each with
		// white space around it.
		{"0; url=/next", "/next"},
		{"0;url=/next", "/next"},
		{"0,url=/next", "/next"},
		{"0 url=/next", "/next"},
		{"0\turl=/next", "/next"},
		{"0 ; url=/next", "/next"},
		{"0\n,\nurl=/next", "/next"},
		{"5 /next", "/next"},
		{"5;/next", "/next"},
		{"  3  ;  URL  =  /ws  ", "/ws"},
		// The time is digits, then digits and dots; it may start with a dot.
		{".5; url=/dot", "/dot"},
		{"1.5.2; url=/dots", "/dots"},
		{"007 url=/zeros", "/zeros"},
		// Anything else after the time makes the value invalid.
		{"x; url=/nope", ""},
		{"5x; url=/nope", ""},
		{"-1; url=/nope", ""},
		{"; url=/nope", ""},
		{"\v0; url=/nope", ""}, // vertical tab is not ASCII whitespace
		{"0\v; url=/nope", ""},
		// No URL: the page reloads itself.
		{"10", ""},
		{"10;", ""},
		{"10 , ", ""},
		{"0; url=", ""},
		{"0; url = ''", ""},
		// "url" in any case, optional white space, then '='.
		{"0; URL=/upper", "/upper"},
		{"0; uRl\t=\t/mixed", "/mixed"},
		// Without the '=', "url" is part of the URL, as is any word that
		// starts with u.
		{"0; url", "url"},
		{"0; url /x", "url /x"},
		{"0; urlx=/a", "urlx=/a"},
		{"0; uri.html", "uri.html"},
		{"0; u", "u"},
		{"0; 'url=/q'", "url=/q"},
		// Quotes, after "url=" or in its place, end at the matching quote
		// or at the end of the value.
		{"5;URL='/quoted page'", "/quoted page"},
		{`3, url = "/dq" tail`, "/dq"},
		{`0; url="/it's"`, "/it's"},
		{"0; url='/unterminated", "/unterminated"},
		{"0; '/no-url-word'", "/no-url-word"},
		{`0; "/dq" "x"`, "/dq"},
		{"0; url=a'b'", "a'b'"}, // a quote inside the URL is kept
		{"0; u'x'", "u'x'"},     // as are quotes after a word starting with u
		// Only one separator is skipped.
		{"0;;url=/x", ";url=/x"},
		{"0; , url=/x", ", url=/x"},
	}
	for _, tc := range tests {
		if got := string(refreshURL([]byte(tc.content))); got != tc.want {
			t.Errorf("refreshURL(%q) = %q, want %q", tc.content, got, tc.want)
		}
	}
}
