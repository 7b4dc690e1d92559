package robots_test

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/crawlkit/crawlkit/robots"
)

// Adversarial probes that fuzzing is unlikely to reach. They assert on work
// done (bytes allocated, rules kept), not on wall time.

// TestCrawlDelayDecimalOnly: Crawl-delay values are decimal numbers.
// strconv.ParseFloat also reads Go literal syntax, so "1_0" was 10 seconds,
// "0x1p4" 16 and "0x1p-2" a quarter second; no robots.txt author means
// that, and other parsers skip such values.
func TestCrawlDelayDecimalOnly(t *testing.T) {
	for _, v := range []string{"1_0", "0x1p4", "0X1P-2", "0x10", "Inf", "+Inf", "infinity", "NaN", "1.5s", "１０"} {
		p := robots.ParseString("User-agent: *\nCrawl-delay: " + v + "\n")
		if d, _ := p.CrawlDelay("bot"); d.Set {
			t.Errorf("Crawl-delay %q: %+v, want unset", v, d)
		}
	}
	for v, want := range map[string]float64{"10": 10, "0.5": 0.5, ".5": 0.5, "5.": 5, "+2": 2, "1e1": 10, "1E-1": 0.1, "007": 7} {
		p := robots.ParseString("User-agent: *\nCrawl-delay: " + v + "\n")
		if d, _ := p.CrawlDelay("bot"); !d.Set || d.Seconds != want {
			t.Errorf("Crawl-delay %q: %+v, want %v seconds", v, d, want)
		}
	}
}

func allocBytes(f func()) uint64 {
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	f()
	runtime.ReadMemStats(&m1)
	return m1.TotalAlloc - m0.TotalAlloc
}

// TestHostileShapesBoundedMemory: files at the 500 KiB cap built from
// degenerate lines parse with memory a small multiple of their size (about
// 18 times for 13,000 one-rule groups of one agent, the worst here; 15
// times at 50 KiB, so linear), and
// their odd line structure reads as RFC 9309 says.
func TestHostileShapesBoundedMemory(t *testing.T) {
	const size = robots.DefaultMaxBytes
	many := func(unit string) string { return strings.Repeat(unit, size/len(unit)) }
	var groups strings.Builder
	for i := 0; groups.Len() < size-64; i++ {
		fmt.Fprintf(&groups, "User-agent: ExampleBot\nDisallow: /p%d/\n", i)
	}
	for _, c := range []struct {
		name, body, path string
		allowed          bool
	}{
		{"one long line", "User-agent: *\nDisallow: /" + strings.Repeat("a", size-40) + "\n", "/" + strings.Repeat("a", size-40), false},
		{"empty lines", "User-agent: *\n" + many("\n")[:size-30] + "Disallow: /x\n", "/x", false},
		{"cr-only empty lines", "User-agent: *\r" + many("\r")[:size-30] + "Disallow: /x\r", "/x", false},
		{"user-agent lines", many("User-agent: a\n")[:size-28] + "Disallow: /x\n", "/x", true},
		{"many groups one agent", groups.String(), "/p5000/x", false},
		{"sitemap lines", many("Sitemap: http://a/x\n"), "/", true},
		{"huge sitemap url", "Sitemap: http://a/" + strings.Repeat("x", size-20) + "\n", "/", true},
		{"huge crawl-delay", "User-agent: ExampleBot\nCrawl-delay: " + strings.Repeat("9", size-60) + "\nDisallow: /x\n", "/x", false},
	} {
		if len(c.body) > size {
			t.Fatalf("%s: body of %d bytes", c.name, len(c.body))
		}
		var d robots.Decision
		a := allocBytes(func() {
			p := robots.ParseString(c.body)
			d, _ = p.Allowed("ExampleBot", c.path)
		})
		if d.Allowed != c.allowed {
			t.Errorf("%s: %+v, want allowed=%v", c.name, d, c.allowed)
		}
		if a > 32*size {
			t.Errorf("%s: %d bytes allocated for a %d-byte file", c.name, a, len(c.body))
		}
	}
}

// TestOddBytesInFile: RFC 9309 allows a byte-order mark only at the start;
// in the middle of the file it is part of the line, whose key is then
// unknown, as in Google's parser. Invalid UTF-8 in a pattern is compared
// octet for octet (percent-encoded), and a CR-only file splits into lines.
func TestOddBytesInFile(t *testing.T) {
	for _, c := range []struct {
		body, path string
		allowed    bool
	}{
		{"User-agent: *\n\xef\xbb\xbfDisallow: /x\n", "/x", true},
		{"\xef\xbb\xbfUser-agent: *\nDisallow: /x\n", "/x", false},
		{"User-agent: *\nDisallow: /\xff\xfe\n", "/%FF%fe", false},
		{"User-agent: *\nDisallow: /\xff\n", "/%FE", true},
		{"User-agent: *\rDisallow: /x\rAllow: /x/y\r", "/x/z", false},
		{"User-agent: *\rDisallow: /x\rAllow: /x/y\r", "/x/y", true},
	} {
		d, err := robots.ParseString(c.body).Allowed("ExampleBot", c.path)
		if err != nil || d.Allowed != c.allowed {
			t.Errorf("%q, %q: %+v %v, want allowed=%v", c.body, c.path, d, err, c.allowed)
		}
	}
}
