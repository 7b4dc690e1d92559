package crawlkit_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/crawltest"
)

// A minimal crawler: it crawls a small synthetic web (crawltest) and
// collects the URLs of the pages it fetched. Against real sites, leave out
// DialContext and AllowPrivate, and keep the default one-second Delay.
func Example() {
	web, err := crawltest.NewWeb(crawltest.Config{Hosts: 3, PagesPerHost: 8, Seed: 1, Agent: "examplebot", NoTraps: true})
	if err != nil {
		panic(err)
	}
	defer web.Close()

	var mu sync.Mutex
	var fetched []string
	c, err := crawlkit.New(crawlkit.Config{
		UserAgent: "examplebot/1.0 (+https://example.com/bot)",
		Seeds:     web.Seeds(),
		Delay:     10 * time.Millisecond,
		Handler: func(_ context.Context, p *crawlkit.Page) error {
			if p.StatusCode == 200 {
				mu.Lock()
				fetched = append(fetched, p.URL)
				mu.Unlock()
			}
			return nil
		},
		// The synthetic web is served on loopback: let the address guard
		// through, and route its virtual hosts to the local server.
		AllowPrivate:  []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
		DialContext:   web.DialContext,
		RobotsRetries: -1,
	})
	if err != nil {
		panic(err)
	}
	if err := c.Run(context.Background()); err != nil {
		panic(err)
	}

	missing := web.TruthFor("examplebot", 0).Missing(fetched)
	rep := web.Report()
	fmt.Println("pages missed:", len(missing))
	fmt.Println("robots violations:", rep.RobotsViolations)
	fmt.Println("politeness violations:", rep.PolitenessViolations())
	// Output:
	// pages missed: 0
	// robots violations: 0
	// politeness violations: 0
}

// Scraping with CSS selectors: a Handler picks each product's name and
// price out of the page (Page.Each, goquery underneath), keeps to the
// shop's product pages (AllowURLs) and writes what it found as CSV.
func ExamplePage_Each() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		switch r.URL.Path {
		case "/":
			fmt.Fprint(w, `<a href="/p/1">teapot</a> <a href="/about">about us</a>`)
		case "/p/1":
			fmt.Fprint(w, `<div class="product"><h2>Teapot</h2><span class="price">12.50</span></div>`)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()

	out, _ := crawlkit.NewCSVWriter(os.Stdout, "name", "price")
	c, err := crawlkit.New(crawlkit.Config{
		UserAgent: "examplebot/1.0 (+https://example.com/bot)",
		Seeds:     []string{srv.URL + "/"},
		AllowURLs: []*regexp.Regexp{crawlkit.MustGlob(srv.URL + "/"), crawlkit.MustGlob(srv.URL + "/p/*")},
		Delay:     crawlkit.NoDelay,
		Handler: func(_ context.Context, p *crawlkit.Page) error {
			p.Each("div.product", func(_ int, s *goquery.Selection) {
				out.Write(map[string]string{"name": s.Find("h2").Text(), "price": s.Find(".price").Text()})
			})
			return nil
		},
		AllowPrivate: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
	})
	if err != nil {
		panic(err)
	}
	if err := c.Run(context.Background()); err != nil {
		panic(err)
	}
	out.Flush()
	fmt.Println("not fetched for the URL filter:", c.Stats().LinksRejected[crawlkit.ReasonFilter])
	// Output:
	// name,price
	// Teapot,12.50
	// not fetched for the URL filter: 1
}

// Pages as JSON Lines: every fetched page becomes one record in
// crawl-out/pages-00001.jsonl (rotated at MaxBytes, gzip if asked).
func ExampleNewJSONLSink() {
	web, err := crawltest.NewWeb(crawltest.Config{Hosts: 1, PagesPerHost: 3, Seed: 2, Agent: "examplebot", NoTraps: true})
	if err != nil {
		panic(err)
	}
	defer web.Close()
	dir, _ := os.MkdirTemp("", "crawl-out")
	defer os.RemoveAll(dir)
	sink, err := crawlkit.NewJSONLSink(crawlkit.JSONLConfig{Dir: dir, Headers: []string{"Content-Type"}})
	if err != nil {
		panic(err)
	}
	c, err := crawlkit.New(crawlkit.Config{
		UserAgent: "examplebot/1.0 (+https://example.com/bot)", Seeds: web.Seeds(), Sink: sink,
		Delay: crawlkit.NoDelay, DialContext: web.DialContext, RobotsRetries: -1,
		AllowPrivate: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
	})
	if err != nil {
		panic(err)
	}
	if err := c.Run(context.Background()); err != nil { // Run closes the Sink
		panic(err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "pages-00001.jsonl"))
	var r crawlkit.PageRecord
	json.Unmarshal(bytes.SplitN(b, []byte("\n"), 2)[0], &r)
	fmt.Println(r.URL, r.Status, r.Headers["Content-Type"])
	// Output: http://h0000.test/ 200 text/html; charset=utf-8
}
