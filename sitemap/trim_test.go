package sitemap

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// unicodeSpaces are the characters of Unicode's White_Space property that
// XML 1.0 allows in character data (U+000B and U+000C are not XML
// characters). They are written out rather than derived from
// unicode.IsSpace, so the test does not share the implementation's
// definition.
var unicodeSpaces = []rune{
	'\t', '\n', '\r', ' ', '\u0085', '\u00a0', '\u1680',
	'\u2000', '\u2001', '\u2002', '\u2003', '\u2004', '\u2005', '\u2006',
	'\u2007', '\u2008', '\u2009', '\u200a',
	'\u2028', '\u2029', '\u202f', '\u205f', '\u3000',
}

func TestLocTrimsUnicodeWhiteSpace(t *testing.T) {
	src := Source{URL: "http://ex.com/sitemap.xml"}
	for _, r := range unicodeSpaces {
		sp := string(r)
		pad := sp + " " + sp // mixed with ASCII, and more than one
		docs := []struct {
			name, body string
		}{
			{"urlset", `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>` + pad + `http://ex.com/a` + pad + `</loc></url></urlset>`},
			{"index", `<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><sitemap><loc>` + pad + `http://ex.com/a` + pad + `</loc></sitemap></sitemapindex>`},
			{"cdata", `<urlset><url><loc><![CDATA[` + pad + `http://ex.com/a` + pad + `]]></loc></url></urlset>`},
			{"char refs", fmt.Sprintf(`<urlset><url><loc>&#x%x;http://ex.com/a&#x%x;</loc></url></urlset>`, r, r)},
			{"rss", `<rss version="2.0"><channel><item><link>` + pad + `http://ex.com/a` + pad + `</link></item></channel></rss>`},
			{"atom", `<feed xmlns="http://www.w3.org/2005/Atom"><entry><link href="` + pad + `http://ex.com/a` + pad + `"/></entry></feed>`},
			{"text", pad + "http://ex.com/a" + pad + "\n"},
		}
		for _, d := range docs {
			if d.name == "atom" && (r == '\t' || r == '\n' || r == '\r') {
				continue // attribute value normalisation turns these into spaces anyway
			}
			es, info, err := Collect(strings.NewReader(d.body), src)
			if err != nil || len(es) != 1 || es[0].URL != "http://ex.com/a" || info.Invalid != 0 {
				t.Errorf("U+%04X, %s: entries %q, info %+v, err %v; want exactly http://ex.com/a", r, d.name, urlsOf(es), info, err)
			}
		}
	}
}

func TestLocKeepsInnerUnicodeSpace(t *testing.T) {
	// Only surrounding white space is trimmed; a space inside is part of
	// what the document lists (url.Parse accepts it, as browsers would
	// after percent-encoding it).
	body := "<urlset><url><loc>\u00a0http://ex.com/a\u00a0b\u3000</loc></url></urlset>"
	es, _, err := Collect(strings.NewReader(body), Source{URL: "http://ex.com/sitemap.xml"})
	if err != nil || !equal(urlsOf(es), []string{"http://ex.com/a\u00a0b"}) {
		t.Errorf("urls = %q, err %v; want the inner no-break space kept", urlsOf(es), err)
	}
}

func TestLocTrailingUnicodeSpaceAcrossBound(t *testing.T) {
	// The capture buffer stops MaxURLLength+256 bytes in. Trailing no-break
	// spaces (two bytes each) that reach past it, with the bound falling in
	// the middle of one, are still trailing white space, not an overflow;
	// text after them is.
	p := &Parser{MaxURLLength: 50}
	loc := "http://ex.com/a"
	if (p.MaxURLLength+256-len(loc))%2 == 0 {
		t.Fatal("the bound must fall in the middle of a no-break space")
	}
	pad := strings.Repeat("\u00a0", 200)
	body := "<urlset><url><loc>" + loc + pad + "</loc></url>" +
		"<url><loc>http://ex.com/b" + pad + "x</loc></url></urlset>"
	es, info, err := p.Collect(strings.NewReader(body), Source{URL: "http://ex.com/s.xml"})
	if err != nil || !equal(urlsOf(es), []string{"http://ex.com/a"}) || info.Invalid != 1 {
		t.Errorf("urls = %q, info %+v, err %v; want a, and b invalid", urlsOf(es), info, err)
	}
}

func TestFieldsTrimUnicodeWhiteSpace(t *testing.T) {
	body := "<urlset><url><loc>http://ex.com/a</loc>" +
		"<lastmod>\u00a02005-01-02\u3000</lastmod><changefreq>\u2003daily\u00a0</changefreq><priority>\u00a00.7\u2009</priority>" +
		"</url></urlset>"
	es, _, err := Collect(strings.NewReader(body), Source{URL: "http://ex.com/sitemap.xml"})
	if err != nil || len(es) != 1 {
		t.Fatalf("entries %q, err %v", urlsOf(es), err)
	}
	e := es[0]
	if !e.LastMod.Equal(date("2005-01-02T00:00:00Z")) || e.ChangeFreq != Daily || e.Priority != 0.7 {
		t.Errorf("entry = %+v; want lastmod 2005-01-02, daily, 0.7", e)
	}
}

func TestLastModKeepsFractionalSeconds(t *testing.T) {
	src := Source{URL: "http://ex.com/sitemap.xml"}
	tests := []struct {
		in   string
		want string // RFC 3339 in UTC
		nsec int
	}{
		{"2004-12-23T18:00:15.5+00:00", "2004-12-23T18:00:15.5Z", 500000000},
		{"2004-12-23T18:00:15.123-05:00", "2004-12-23T23:00:15.123Z", 123000000},
		{"2004-12-23T18:00:15.000001Z", "2004-12-23T18:00:15.000001Z", 1000},
		{"2004-12-23T18:00:15.123456789Z", "2004-12-23T18:00:15.123456789Z", 123456789},
		{"2004-12-23T18:00:15.1234567891+0100", "2004-12-23T17:00:15.123456789Z", 123456789}, // past nanoseconds: truncated
		{"2004-12-23T18:00:15Z", "2004-12-23T18:00:15Z", 0},
	}
	for _, tc := range tests {
		docs := map[string]string{
			"urlset": `<urlset><url><loc>http://ex.com/a</loc><lastmod>` + tc.in + `</lastmod></url></urlset>`,
			"index":  `<sitemapindex><sitemap><loc>http://ex.com/a</loc><lastmod>` + tc.in + `</lastmod></sitemap></sitemapindex>`,
			"atom":   `<feed xmlns="http://www.w3.org/2005/Atom"><entry><link href="http://ex.com/a"/><updated>` + tc.in + `</updated></entry></feed>`,
			"rss":    `<rss version="2.0"><channel><item><link>http://ex.com/a</link><pubDate>` + tc.in + `</pubDate></item></channel></rss>`,
		}
		for name, body := range docs {
			es, _, err := Collect(strings.NewReader(body), src)
			if err != nil || len(es) != 1 {
				t.Errorf("%s %s: entries %q, err %v", name, tc.in, urlsOf(es), err)
				continue
			}
			got := es[0].LastMod
			if !got.Equal(date(tc.want)) || got.Nanosecond() != tc.nsec || got.Location() != time.UTC {
				t.Errorf("%s %s: LastMod = %s, want %s", name, tc.in, got.Format(time.RFC3339Nano), tc.want)
			}
		}
	}
}
