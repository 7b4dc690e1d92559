// Command scrape is a catalogue scraper written the crawlkit way: it
// crawls a shop's listings and writes one CSV row (url, title, price) per
// product page. robots.txt, its Crawl-delay and per-host politeness come
// with the Crawler.
//
//	go run ./examples/scrape -demo                  # against a local demo shop
//	go run ./examples/scrape -o products.csv https://shop.example/
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/netip"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/crawlkit/crawlkit/examples/scrape/shop"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "scrape:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("scrape", flag.ContinueOnError)
	out := fs.String("o", "", "CSV output file (default standard output)")
	agent := fs.String("user-agent", "scrapebot/1.0 (+https://example.com/bot)", "User-Agent naming you and a contact")
	demo := fs.Bool("demo", false, "scrape a demo shop served on 127.0.0.1")
	delay := fs.Duration("delay", time.Second, "least time between two requests to a host (robots.txt's Crawl-delay may ask for more)")
	allowNet := fs.String("allow-private", "", "comma-separated address prefixes the guard lets through (e.g. 127.0.0.0/8 for a local site)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	seeds := fs.Args()
	var allow []netip.Prefix
	for _, p := range strings.FieldsFunc(*allowNet, func(r rune) bool { return r == ',' }) {
		pfx, err := netip.ParsePrefix(strings.TrimSpace(p))
		if err != nil {
			return fmt.Errorf("-allow-private: %w", err)
		}
		allow = append(allow, pfx)
	}
	if *demo {
		s, err := shop.Start(shop.Config{})
		if err != nil {
			return err
		}
		defer s.Close()
		seeds, allow = s.Seeds(), []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	}
	w := stdout
	if *out != "" {
		f, err := os.Create(*out)
		if err != nil {
			return err
		}
		defer f.Close()
		w = f
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt)
	defer stop()
	return scrape(ctx, seeds, *agent, *delay, allow, w)
}
