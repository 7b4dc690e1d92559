package robots_test

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/crawlkit/crawlkit/robots"
	"github.com/temoto/robotstxt"
)

// genRobots builds a deterministic robots.txt of about size octets in the
// shape of large real files: a few named groups and a big "*" group of
// directory and file prefixes, with a share of wildcard rules (query
// parameters, extensions, "$" anchors). It uses only syntax that
// temoto/robotstxt reads correctly, so both parsers see the same rules.
func genRobots(size int, seed int64) string {
	r := rand.New(rand.NewSource(seed))
	words := []string{"shop", "cart", "search", "user", "admin", "api", "static", "media", "blog",
		"news", "tag", "category", "product", "account", "help", "docs", "private", "tmp", "archive", "print"}
	w := func() string { return words[r.Intn(len(words))] }
	var b strings.Builder
	b.WriteString("# generated\nSitemap: https://example.com/sitemap.xml\n\n")
	for _, ua := range []string{"Googlebot", "Bingbot"} {
		fmt.Fprintf(&b, "User-agent: %s\nDisallow: /%s/\nAllow: /%s/%s\nCrawl-delay: 2\n\n", ua, w(), w(), w())
	}
	b.WriteString("User-agent: *\n")
	for i := 0; b.Len() < size; i++ {
		kind := "Disallow"
		if r.Intn(4) == 0 {
			kind = "Allow"
		}
		var pat string
		switch r.Intn(10) {
		case 0:
			pat = fmt.Sprintf("/*?%s=", w())
		case 1:
			pat = fmt.Sprintf("/%s/*.%s$", w(), []string{"pdf", "json", "xml"}[r.Intn(3)])
		case 2:
			pat = fmt.Sprintf("/%s/*/%s%d", w(), w(), i)
		case 3:
			pat = fmt.Sprintf("/%s%d.html$", w(), i)
		default:
			pat = fmt.Sprintf("/%s/%s%d/", w(), w(), i)
		}
		fmt.Fprintf(&b, "%s: %s\n", kind, pat)
	}
	return b.String()
}

// genURLs returns n paths, some under the generated rules and some not.
func genURLs(n int, seed int64) []string {
	r := rand.New(rand.NewSource(seed))
	words := []string{"shop", "cart", "search", "user", "admin", "api", "static", "media", "blog",
		"news", "tag", "category", "product", "account", "help", "docs", "private", "tmp", "archive", "print"}
	out := make([]string, n)
	for i := range out {
		w1, w2 := words[r.Intn(len(words))], words[r.Intn(len(words))]
		switch r.Intn(4) {
		case 0:
			out[i] = fmt.Sprintf("/%s/%s%d/page-%d.html", w1, w2, r.Intn(3000), r.Intn(100))
		case 1:
			out[i] = fmt.Sprintf("/%s/item/%d?%s=%d&ref=home", w1, r.Intn(1000), w2, r.Intn(9))
		case 2:
			out[i] = fmt.Sprintf("/%s/files/report-%d.pdf", w1, r.Intn(1000))
		default:
			out[i] = fmt.Sprintf("/%s%d.html", w1, r.Intn(3000))
		}
	}
	return out
}

var benchSizes = []struct {
	name string
	size int
}{{"10KB", 10 << 10}, {"500KB", 500 << 10}}

// BenchmarkAllowed measures one URL check. crawlkit checks through
// AgentRules (the agent looked up once per host), crawlkit-policy through
// Policy.Allowed (agent looked up per call), temoto through
// FindGroup(agent).Test(path), all in the same run.
func BenchmarkAllowed(b *testing.B) {
	for _, sz := range benchSizes {
		body := genRobots(sz.size, 1)
		urls := genURLs(1024, 2)
		b.Run(sz.name+"/crawlkit", func(b *testing.B) {
			a, err := robots.ParseString(body).Agent("ExampleBot")
			if err != nil {
				b.Fatal(err)
			}
			a.Allowed("/") // compile outside the timed loop
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				_ = a.Allowed(urls[i&1023])
			}
		})
		b.Run(sz.name+"/crawlkit-policy", func(b *testing.B) {
			p := robots.ParseString(body)
			_, _ = p.Allowed("ExampleBot", "/")
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				_, _ = p.Allowed("ExampleBot", urls[i&1023])
			}
		})
		b.Run(sz.name+"/temoto", func(b *testing.B) {
			t, err := robotstxt.FromString(body)
			if err != nil {
				b.Fatal(err)
			}
			g := t.FindGroup("ExampleBot")
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				_ = g.Test(urls[i&1023])
			}
		})
	}
}

// BenchmarkParse measures parsing. crawlkit is Parse alone; crawlkit+compile
// adds compiling the rules of one agent (what a crawler pays per host before
// its first check); temoto is robotstxt.FromBytes alone.
func BenchmarkParse(b *testing.B) {
	for _, sz := range benchSizes {
		body := []byte(genRobots(sz.size, 1))
		b.Run(sz.name+"/crawlkit", func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				_ = robots.Parse(body)
			}
		})
		b.Run(sz.name+"/crawlkit+compile", func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				_, _ = robots.Parse(body).Allowed("ExampleBot", "/")
			}
		})
		b.Run(sz.name+"/temoto", func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := robotstxt.FromBytes(body); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// hostileShapes are robots.txt bodies built to make a careless parser or
// matcher quadratic: many user-agent lines followed by many Crawl-delay
// lines, thousands of distinct and duplicate wildcard rules on one tree
// node, one line of a quarter million wildcards, many groups for one agent.
var hostileShapes = map[string]func(n int) string{
	"ua-then-delays": func(n int) string {
		var b strings.Builder
		for i := 0; b.Len() < n/2; i++ {
			fmt.Fprintf(&b, "User-agent: bot%c%c\n", 'a'+i%26, 'a'+i/26%26)
		}
		for b.Len() < n {
			b.WriteString("Crawl-delay: 1\n")
		}
		return b.String()
	},
	"wildcards-one-node": func(n int) string {
		var b strings.Builder
		b.WriteString("User-agent: *\n")
		for i := 0; b.Len() < n; i++ {
			fmt.Fprintf(&b, "Disallow: /*x%d\nDisallow: /*dup\n", i)
		}
		return b.String()
	},
	"one-long-wildcard-line": func(n int) string {
		return "User-agent: *\nDisallow: /" + strings.Repeat("*a", n/2-20) + "\n"
	},
	"many-groups-one-agent": func(n int) string {
		var b strings.Builder
		for i := 0; b.Len() < n; i++ {
			fmt.Fprintf(&b, "User-agent: ExampleBot\nDisallow: /p%d/\n", i)
		}
		return b.String()
	},
}

// BenchmarkParseHostile parses and compiles each hostile shape at 50 KiB
// and 500 KiB and checks one URL; ns/op growing about tenfold between the
// two sizes shows linear time.
func BenchmarkParseHostile(b *testing.B) {
	path := "/" + strings.Repeat("a", 2000) + "?x=1"
	for _, name := range []string{"ua-then-delays", "wildcards-one-node", "one-long-wildcard-line", "many-groups-one-agent"} {
		for _, size := range []int{50 << 10, 500 << 10} {
			body := []byte(hostileShapes[name](size))
			b.Run(fmt.Sprintf("%s/%dKB", name, size>>10), func(b *testing.B) {
				b.SetBytes(int64(len(body)))
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					p := robots.Parse(body)
					a, _ := p.Agent("ExampleBot")
					_ = a.Allowed(path)
					_ = a.CrawlDelay()
				}
			})
		}
	}
}
