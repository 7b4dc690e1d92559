package main

import (
	"context"
	"io"
	"net/netip"
	"regexp"
	"strings"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/crawlkit/crawlkit"
)

// scrape writes a row per product page of the sites at seeds.
func scrape(ctx context.Context, seeds []string, agent string, delay time.Duration, allow []netip.Prefix, w io.Writer) error {
	csv, err := crawlkit.NewCSVWriter(w, "url", "title", "price")
	if err != nil {
		return err
	}
	c, err := crawlkit.New(crawlkit.Config{
		UserAgent:    agent,
		Seeds:        seeds,
		Delay:        delay,
		AllowPrivate: allow,
		// Only listings and products: the rest of the site is not needed.
		AllowURLs: []*regexp.Regexp{regexp.MustCompile(`^https?://[^/]+/($|category/|product/)`)},
		Handler: func(_ context.Context, p *crawlkit.Page) (err error) {
			p.Each("h1.name", func(_ int, s *goquery.Selection) {
				err = csv.Write(map[string]string{
					"url":   p.URL,
					"title": strings.TrimSpace(s.Text()),
					"price": p.Find("span.price").First().Text(),
				})
			})
			return err
		},
	})
	if err != nil {
		return err
	}
	if err := c.Run(ctx); err != nil {
		return err
	}
	return csv.Flush()
}
