package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"net/netip"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/examples/scrape/shop"
)

// TestScrapeShop scrapes a local shop of 3 hosts × 30 templated products
// and judges the run from the shop's side: every product in the CSV with
// its title and price, no disallowed cart request, no request to a host
// sooner than its Crawl-delay, no page fetched twice.
func TestScrapeShop(t *testing.T) {
	s, err := shop.Start(shop.Config{CrawlDelay: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var out bytes.Buffer
	loopback := []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	if err := scrape(context.Background(), s.Seeds(), "scrapebot/1.0", 10*time.Millisecond, loopback, &out); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&out).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) == 0 || len(rows[0]) != 3 || rows[0][0] != "url" {
		t.Fatalf("header = %v", rows)
	}
	got := map[string][2]string{}
	for _, r := range rows[1:] {
		if _, dup := got[r[0]]; dup {
			t.Errorf("product %s written twice", r[0])
		}
		got[r[0]] = [2]string{r[1], r[2]}
	}
	want := s.Products()
	for _, p := range want {
		if g, ok := got[p.URL]; !ok {
			t.Errorf("missing %s", p.URL)
		} else if g != [2]string{p.Title, p.Price} {
			t.Errorf("%s = %q, want %q %q", p.URL, g, p.Title, p.Price)
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d products written, the shop has %d", len(got), len(want))
	}
	r := s.Report()
	if r.RobotsViolations != 0 || r.TooSoon != 0 || r.Repeats != 0 {
		t.Errorf("shop's account: %+v", r)
	}
}
