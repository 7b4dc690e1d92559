package usage_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/usage"
)

// FuzzHeader feeds one value to every header parser: none may panic, and
// the merged verdicts must be consistent with the statements (a purpose a
// statement disallows is disallowed).
func FuzzHeader(f *testing.F) {
	for _, s := range []string{
		"train-ai=y, search=n", "a=(1 2), b=3, c=4;aa=bb, d=(5 6);valid", `b=%"f%c3%bc"`, "a=@1659578233",
		"search=yes, ai-train=no, ai-input=no", "*;nosnippet, ExampleBot;noindex",
		"googlebot: noindex, unavailable_after: Friday, 25-Jun-10 15:00:00 GMT", "1", "-1.5",
		"x=:ab==:, y=?1;a;b=\"\\\\\"",
	} {
		f.Add(s, "ExampleBot")
	}
	f.Fuzz(func(t *testing.T, v, token string) {
		st, _ := usage.ParseContentUsage(v)
		c := usage.Collector{Token: token, Now: func() time.Time { return time.Unix(1e9, 0) }}
		c.AddHeader(http.Header{
			"Content-Usage": {v}, "Content-Signal": {v}, "Robots-Tag": {v},
			"X-Robots-Tag": strings.Split(v, "\n"), "Tdm-Reservation": {v}, "Tdm-Policy": {v},
		})
		s := c.Signals()
		for _, p := range []usage.Purpose{usage.Search, usage.AITraining, usage.AIInput, usage.GenAITraining, usage.Automated} {
			if st.Resolve(p) == usage.Disallowed && s.Verdict(p) != usage.Disallowed {
				t.Fatalf("%q disallows %v, merged %v", v, p, s.Verdict(p))
			}
		}
	})
}

// FuzzHTML checks that no page makes the <meta> reader panic or hang.
func FuzzHTML(f *testing.F) {
	f.Add([]byte(`<html><head><meta name="robots" content="noai, noimageai"><meta name="tdm-reservation" content="1"></head>`))
	f.Add([]byte(`<meta name=examplebot content="unavailable_after: 2020-01-01"><meta content=x name=robots`))
	f.Fuzz(func(t *testing.T, body []byte) {
		_ = usage.ParseHTML(body, "ExampleBot")
	})
}

// FuzzTDMFile checks that no tdmrep.json makes parsing or lookup panic, and
// that a parsed file keeps only valid rules.
func FuzzTDMFile(f *testing.F) {
	f.Add([]byte(`[{"location": "/directory-b/images/*.jpg", "tdm-reservation": 0}, {"location":"/","tdm-reservation":"1","tdm-policy":"https://p/"}]`), "/directory-b/images/a.jpg")
	f.Fuzz(func(t *testing.T, body []byte, path string) {
		file, err := usage.ParseTDMFile(body)
		if err != nil {
			if file != nil {
				t.Fatal("a file and an error")
			}
			return
		}
		for _, r := range file.Rules {
			if r.Location == "" || r.Reservation == usage.TDMUnset {
				t.Fatalf("invalid rule kept: %+v", r)
			}
		}
		_ = file.Lookup("/" + path)
	})
}
