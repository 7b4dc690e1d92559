package robots_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/crawlkit/crawlkit/robots"
)

func Example() {
	p := robots.ParseString(`User-agent: *
Disallow: /private/
Allow: /private/press/
Crawl-delay: 2

Sitemap: https://example.com/sitemap.xml
`)
	for _, u := range []string{"https://example.com/private/x", "https://example.com/private/press/1", "/about"} {
		d, err := p.Allowed("ExampleBot", u)
		if err != nil {
			fmt.Println(err)
			continue
		}
		why := d.Reason.String()
		if d.Reason == robots.ReasonRule {
			why += " " + d.Rule.Pattern
		}
		fmt.Printf("%-36s allowed=%-5v %s\n", u, d.Allowed, why)
	}
	cd, _ := p.CrawlDelay("ExampleBot")
	fmt.Println("crawl-delay:", cd.Capped(), "sitemaps:", p.Sitemaps())
	// Output:
	// https://example.com/private/x        allowed=false rule /private/
	// https://example.com/private/press/1  allowed=true  rule /private/press/
	// /about                               allowed=true  no matching rule
	// crawl-delay: 2s sitemaps: [https://example.com/sitemap.xml]
}

func ExamplePolicy_Agent() {
	p := robots.ParseString("User-agent: examplebot\nDisallow: /search\n\nUser-agent: *\nDisallow: /\n")
	// Look the agent up once per host, then check each URL.
	rules, err := p.Agent("ExampleBot")
	if err != nil {
		panic(err)
	}
	fmt.Println(rules.Agent(), rules.Allowed("/search?q=x").Allowed, rules.Allowed("/news").Allowed)
	_, err = p.Agent("ExampleBot/2.0")
	fmt.Println(err)
	// Output:
	// examplebot false true
	// robots: invalid product token: "ExampleBot/2.0"
}

func ExampleCrawlDelay() {
	p := robots.ParseString("User-agent: *\nCrawl-delay: 120\n")
	cd, _ := p.CrawlDelay("ExampleBot")
	if cd.Exceeded {
		// The caller decides: honour the cap, or skip the host.
		fmt.Printf("asks for %v, more than the %v maximum; capping to %v\n", cd.Duration(), cd.Max, cd.Capped())
	}
	// Output:
	// asks for 2m0s, more than the 30s maximum; capping to 30s
}

func ExampleCache() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			io.WriteString(w, "User-agent: *\nDisallow: /admin/\n")
		default:
			io.WriteString(w, "page")
		}
	}))
	defer srv.Close()

	cache := robots.NewCache(robots.Config{Client: srv.Client(), UserAgent: "ExampleBot/1.0 (+https://example.com/bot)"})
	ctx := context.Background()
	for _, path := range []string{"/admin/users", "/blog/post"} {
		d, err := cache.Allowed(ctx, "ExampleBot", srv.URL+path)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(path, d.Allowed)
	}
	p, _ := cache.Policy(ctx, srv.URL)
	fmt.Println(p.Source(), p.FetchInfo().Status, p.FetchInfo().Expires.Sub(p.FetchInfo().FetchedAt))
	// Output:
	// /admin/users false
	// /blog/post true
	// file 200 24h0m0s
}
