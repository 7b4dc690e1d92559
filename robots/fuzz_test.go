package robots_test

import (
	"strings"
	"testing"

	"github.com/crawlkit/crawlkit/robots"
)

// FuzzParse checks that no input makes parsing or matching panic, that the
// parse stays within the byte cap, and that decisions are consistent: the
// answer for a path does not depend on how it is spelled (absolute URL or
// path) and /robots.txt is always allowed.
func FuzzParse(f *testing.F) {
	seeds := []string{
		"User-agent: *\nDisallow: /\n",
		"User-agent: a\nAllow: /x*y$\nDisallow: /*%2A\nCrawl-delay: 1e400\n",
		"\xef\xbb\xbfuser-agent *\ndisallow /x#c\n\r\n\rsitemap: http://a/\n",
		"Disallow: /a\nUser-agent: b\nDisallow: *\nAllow: $\nAllow: /%\nAllow: /%zz\n",
		genRobots(2000, 5),
	}
	for _, s := range seeds {
		f.Add([]byte(s), "/a/b?c=d", false)
	}
	f.Fuzz(func(t *testing.T, body []byte, path string, google bool) {
		const max = 4096
		opts := robots.Config{GoogleExtensions: google, MaxFileBytes: max}
		p := opts.Parse(body)
		if p.Size() > max {
			t.Fatalf("parsed %d octets with a cap of %d", p.Size(), max)
		}
		for _, agent := range []string{"ExampleBot", "x", "Foo Bar"} {
			a, err := p.Agent(agent)
			if err != nil {
				continue
			}
			if strings.ContainsAny(path, "#") {
				path = strings.ReplaceAll(path, "#", "")
			}
			if path == "" || path[0] != '/' {
				path = "/" + path
			}
			d1 := a.Allowed(path)
			d2 := a.Allowed("https://example.com" + path)
			if d1 != d2 {
				t.Fatalf("path %q: %+v, as a URL %+v", path, d1, d2)
			}
			if d := a.Allowed("/robots.txt"); !d.Allowed {
				t.Fatalf("/robots.txt disallowed: %+v", d)
			}
			_ = a.CrawlDelay()
		}
		_ = p.Sitemaps()
	})
}
