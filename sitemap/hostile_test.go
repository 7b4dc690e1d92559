package sitemap

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
)

// Adversarial probes that fuzzing is unlikely to reach. Each asserts on work
// done (bytes allocated, bytes read, entries delivered), not on wall time.

const hostileDoc = `<urlset><url><loc>http://ex.com/a</loc></url></urlset>`

// TestGzipTrailerVerified: an XML sitemap ends at its root element, but a
// gzip stream cut short or corrupted after that point (a truncated
// download, a wrong CRC-32) must not be reported as a clean document.
// Bytes after the last complete gzip member are ignored, as gzip(1) does,
// so that padding does not fail an otherwise sound file.
func TestGzipTrailerVerified(t *testing.T) {
	good := gzipped(t, strings.NewReader(hostileDoc))
	badCRC := append([]byte(nil), good...)
	badCRC[len(badCRC)-8] ^= 0xFF
	text := gzipped(t, strings.NewReader("http://ex.com/a\n"))
	for _, c := range []struct {
		name string
		body []byte
		ok   bool
	}{
		{"complete", good, true},
		{"trailing junk", append(append([]byte(nil), good...), "junkjunkjunk"...), true},
		{"trailing zeros", append(append([]byte(nil), good...), make([]byte, 512)...), true},
		{"text trailing junk", append(append([]byte(nil), text...), "junk"...), true},
		{"truncated trailer", good[:len(good)-4], false},
		{"no trailer", good[:len(good)-8], false},
		{"bad crc", badCRC, false},
	} {
		es, info, err := Collect(bytes.NewReader(c.body), Source{URL: "http://ex.com/s.xml"})
		if len(es) != 1 || !info.Compressed {
			t.Errorf("%s: %d entries, info %+v, want the one URL", c.name, len(es), info)
		}
		if c.ok && err != nil {
			t.Errorf("%s: err = %v, want nil", c.name, err)
		}
		if !c.ok && !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: err = %v, want ErrMalformed", c.name, err)
		}
	}
}

// TestByteOrderMarkDecidesEncoding: a byte-order mark names the encoding
// unambiguously (XML 1.0 Appendix F), so it wins over a contradicting
// encoding declaration, whichever of the two is UTF-8. Before, a UTF-8 BOM
// with encoding="UTF-16" was decoded as UTF-16 and reported as a document
// without a root element, and one with encoding="ISO-8859-1" turned "é"
// into "Ã©".
func TestByteOrderMarkDecidesEncoding(t *testing.T) {
	const body = `<?xml version="1.0" encoding="%s"?><urlset><url><loc>http://ex.com/café</loc></url></urlset>`
	utf16 := func(s string) string {
		var b bytes.Buffer
		b.WriteString("\xff\xfe")
		for _, r := range s {
			b.WriteByte(byte(r))
			b.WriteByte(byte(r >> 8))
		}
		return b.String()
	}
	for name, doc := range map[string]string{
		"utf8 bom, utf-16 declared":     "\ufeff" + fmt.Sprintf(body, "UTF-16"),
		"utf8 bom, iso-8859-1 declared": "\ufeff" + fmt.Sprintf(body, "ISO-8859-1"),
		"utf8 bom, utf-8 declared":      "\ufeff" + fmt.Sprintf(body, "UTF-8"),
		"utf16le bom, utf-8 declared":   utf16(fmt.Sprintf(body, "UTF-8")),
		"utf16le bom, latin1 declared":  utf16(fmt.Sprintf(body, "ISO-8859-1")),
		"utf16le bom, utf-16 declared":  utf16(fmt.Sprintf(body, "UTF-16")),
		"no bom, iso-8859-1 declared":   strings.ReplaceAll(fmt.Sprintf(body, "ISO-8859-1"), "é", "\xe9"),
	} {
		es, _, err := collect(t, nil, doc, Source{URL: "http://ex.com/s.xml"})
		if err != nil || !equal(urlsOf(es), []string{"http://ex.com/café"}) {
			t.Errorf("%s: urls %q, err %v", name, urlsOf(es), err)
		}
	}
}

// countingRepeat yields prefix, then unit n times, then suffix.
func countingRepeat(prefix, unit, suffix string, n int) io.Reader {
	return io.MultiReader(strings.NewReader(prefix), &repeatReader{b: []byte(unit), n: n}, strings.NewReader(suffix))
}

func allocs(f func()) uint64 {
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	f()
	runtime.ReadMemStats(&m1)
	return m1.TotalAlloc - m0.TotalAlloc
}

// TestTextInvalidLinesCheap: lines that cannot be absolute http(s) URLs are
// rejected without allocating. Before, each cost a string copy and a
// url.Parse, about 140 bytes per line: a 50 MiB file of "x" lines churned
// 3.6 GB through the allocator.
func TestTextInvalidLinesCheap(t *testing.T) {
	const lines = 100000
	var info Info
	var err error
	a := allocs(func() {
		info, err = Parse(countingRepeat("http://ex.com/a\n", "x\n", "", lines), Source{URL: "http://ex.com/s"}, func(Entry) error { return nil })
	})
	if err != nil || info.Pages != 1 || info.Invalid != lines {
		t.Fatalf("info %+v, err %v", info, err)
	}
	if a > 1<<20 {
		t.Errorf("%d invalid lines allocated %d bytes, want < 1 MiB", lines, a)
	}
}

// TestHostileInputsBoundedWork: huge hostile inputs stop early, or read
// only up to the byte cap, with allocation bounded by the limits rather
// than by the input. Measured (2-CPU machine): 10 M nested elements stop
// after 32 KiB read and 73 KiB allocated; a 49 MiB <loc> after 1 MiB read
// and 2 MiB allocated; 32 M one-line <url> entries after the 50,000th, at
// about 400 bytes allocated per entry; a 100 MB text line at the byte cap
// with nothing allocated per byte; a feed item of a million <link>s, at
// about 5 bytes allocated per byte read, until the cap.
func TestHostileInputsBoundedWork(t *testing.T) {
	const capped = 4 << 20
	src := Source{URL: "http://ex.com/sitemap.xml"}
	for _, c := range []struct {
		name     string
		p        *Parser
		body     io.Reader
		want     error
		entries  int
		maxRead  int64
		maxAlloc uint64
	}{
		{"deep nesting", nil, countingRepeat("<urlset>", "<a>", "", 10<<20), ErrMalformed, 0, 64 << 10, 1 << 20},
		{"deep nesting in loc", nil, countingRepeat("<urlset><url><loc>", "<a>", "", 10<<20), ErrMalformed, 0, 64 << 10, 1 << 20},
		{"huge loc", nil, countingRepeat("<urlset><url><loc>", "a", "</loc></url></urlset>", 49<<20), ErrMalformed, 0, 2*maxXMLToken + 64<<10, 8 << 20},
		{"huge attribute", nil, countingRepeat(`<urlset><url a="`, "a", `"/></urlset>`, 49<<20), ErrMalformed, 0, 2*maxXMLToken + 64<<10, 8 << 20},
		{"tiny urls", nil, countingRepeat("<urlset>", "<url><loc>http://ex.com/a</loc></url>", "</urlset>", 32<<20), ErrTooManyURLs, DefaultMaxURLs, 4 << 20, DefaultMaxURLs * 1024},
		{"text line over the cap", &Parser{MaxBytes: capped}, countingRepeat("", "a", "\n", 100<<20), ErrTooLarge, 0, capped, 1 << 20},
		{"feed item with many links", &Parser{MaxBytes: capped}, countingRepeat("<rss><channel><item>", "<link>http://ex.com/a</link>", "</item></channel></rss>", 1<<20), ErrTooLarge, 0, capped, 64 << 20},
	} {
		var info Info
		var err error
		n := 0
		a := allocs(func() {
			info, err = c.p.Parse(c.body, src, func(Entry) error { n++; return nil })
		})
		if !errors.Is(err, c.want) || n != c.entries || info.Bytes > c.maxRead || a > c.maxAlloc {
			t.Errorf("%s: %d entries, %d bytes read, %d allocated, err %v; want %v, %d entries, at most %d read and %d allocated",
				c.name, n, info.Bytes, a, err, c.want, c.entries, c.maxRead, c.maxAlloc)
		}
	}
}
