package sitemap_test

import (
	"fmt"
	"strings"

	"github.com/crawlkit/crawlkit/sitemap"
)

func Example() {
	doc := `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <url><loc>https://example.com/blog/first?a=1&amp;b=2</loc><lastmod>2024-05-01</lastmod><changefreq>weekly</changefreq></url>
  <url><loc>https://example.com/blog/second</loc><priority>0.9</priority></url>
  <url><loc>https://example.com/shop/item</loc></url>
  <url><loc>https://elsewhere.example/blog/x</loc></url>
</urlset>`
	info, err := sitemap.Parse(strings.NewReader(doc), sitemap.Source{URL: "https://example.com/blog/sitemap.xml"},
		func(e sitemap.Entry) error {
			fmt.Println(e.URL, e.LastMod.Format("2006-01-02"), e.ChangeFreq, e.Priority)
			return nil
		})
	if err != nil {
		fmt.Println("error:", err)
	}
	fmt.Printf("%s: %d pages, %d out of scope\n", info.Format, info.Pages, info.OutOfScope)
	// Output:
	// https://example.com/blog/first?a=1&b=2 2024-05-01 weekly 0.5
	// https://example.com/blog/second 0001-01-01  0.9
	// urlset: 2 pages, 2 out of scope
}

func ExampleFromRobots() {
	// Sitemap: lines of https://example.com/robots.txt, as a robots parser
	// exposes them. A sitemap listed there may list any URL of example.com.
	for _, s := range sitemap.FromRobots("https://example.com/robots.txt",
		[]string{"https://cdn.example.net/sitemaps/example.xml.gz", "/sitemap_index.xml"}) {
		fmt.Println(s.URL, "cross-submitted by", s.RobotsOrigin)
	}
	// Output:
	// https://cdn.example.net/sitemaps/example.xml.gz cross-submitted by https://example.com
	// https://example.com/sitemap_index.xml cross-submitted by https://example.com
}
