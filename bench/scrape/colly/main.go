// Command colly is the catalogue scraper of examples/scrape written with
// colly v2, as its documentation shows, for the side-by-side run in
// bench/scrape: it writes one CSV row (url, title, price) per product.
package main

import (
	"encoding/csv"
	"flag"
	"log"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/gocolly/colly/v2"
)

func main() {
	delay := flag.Duration("delay", time.Second, "delay between requests to a domain")
	flag.Parse()
	var mu sync.Mutex // Async callbacks run concurrently
	w := csv.NewWriter(os.Stdout)
	defer w.Flush()
	_ = w.Write([]string{"url", "title", "price"})

	c := colly.NewCollector(colly.Async(true), colly.UserAgent("scrapebot/1.0 (+https://example.com/bot)"))
	if err := c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: 2, Delay: *delay}); err != nil {
		log.Fatal(err)
	}
	c.OnHTML("a[href]", func(e *colly.HTMLElement) {
		href := e.Attr("href")
		if href == "/" || strings.HasPrefix(href, "/category/") || strings.HasPrefix(href, "/product/") {
			_ = e.Request.Visit(href)
		}
	})
	c.OnHTML("h1.name", func(e *colly.HTMLElement) {
		mu.Lock()
		defer mu.Unlock()
		_ = w.Write([]string{e.Request.URL.String(), strings.TrimSpace(e.Text), e.DOM.Parent().Find("span.price").First().Text()})
	})
	c.OnError(func(r *colly.Response, err error) { log.Println(r.Request.URL, err) })
	for _, seed := range flag.Args() {
		_ = c.Visit(seed)
	}
	c.Wait()
}
