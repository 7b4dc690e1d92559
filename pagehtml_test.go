package crawlkit_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/crawltest"
	"github.com/crawlkit/crawlkit/extract"
)

// A shop's product pages, one of them in windows-1252: the Handler
// selects name and price with CSS selectors, and gets UTF-8 text.
func TestPageSelectors(t *testing.T) {
	s := serveHosts(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			http.NotFound(w, r)
		case "/":
			writeHTML(w, `<html><body><a href="/p/1">1</a><a href="/p/2">2</a><a href="/logo.png">logo</a></body></html>`)
		case "/p/1":
			writeHTML(w, `<html><body><div class="product"><h2>Teapot</h2><span class="price">12.50</span></div></body></html>`)
		case "/p/2":
			w.Header().Set("Content-Type", "text/html; charset=windows-1252")
			fmt.Fprint(w, "<html><body><div class=\"product\"><h2>Caf\xe9 set</h2><span class=\"price\">30.00</span></div>"+
				"<div class=\"product\"><h2>Cr\xe8me jug</h2><span class=\"price\">8.00</span></div></body></html>")
		case "/logo.png":
			w.Header().Set("Content-Type", "image/png")
			w.Write([]byte("\x89PNG\r\n\x1a\n"))
		}
	})
	var mu sync.Mutex
	var got []string
	notHTML := 0
	c, err := crawlkit.New(crawlkit.Config{
		UserAgent: testAgent, Seeds: []string{"http://shop.test/"}, DialContext: s.dial, AllowPrivate: loopback,
		Delay: crawlkit.NoDelay, MediaTypes: []string{"image/png"},
		Handler: func(_ context.Context, p *crawlkit.Page) error {
			if _, err := p.HTML(); errors.Is(err, crawlkit.ErrNotHTML) {
				mu.Lock()
				notHTML++
				mu.Unlock()
				return nil
			}
			p.Each("div.product", func(_ int, sel *goquery.Selection) {
				mu.Lock()
				defer mu.Unlock()
				got = append(got, sel.Find("h2").Text()+" "+sel.Find(".price").Text())
			})
			if p.URL == "http://shop.test/" {
				if n := p.Find("a[href]").Length(); n != 3 {
					t.Errorf("home: %d links selected, want 3", n)
				}
				doc, _ := p.HTML()
				var again *goquery.Document
				done := make(chan struct{})
				go func() { again, _ = p.HTML(); close(done) }()
				<-done
				if again != doc {
					t.Error("HTML parsed the page twice")
				}
				if doc.Url == nil || doc.Url.String() != "http://shop.test/" {
					t.Errorf("document URL %v, want the page's", doc.Url)
				}
			}
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	sort.Strings(got)
	want := []string{"Café set 30.00", "Crème jug 8.00", "Teapot 12.50"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("selected %q, want %q", got, want)
	}
	if notHTML != 1 {
		t.Errorf("%d pages reported as not HTML, want the image", notHTML)
	}
}

// BenchmarkPageHTML compares the parse behind Page.HTML with the
// extraction every fetched page gets, on a page of the synthetic web.
func BenchmarkPageHTML(b *testing.B) {
	web, err := crawltest.NewWeb(crawltest.Config{Hosts: 1, PagesPerHost: 4, Seed: 3})
	if err != nil {
		b.Fatal(err)
	}
	defer web.Close()
	resp, err := web.Client().Get(web.Seeds()[0])
	if err != nil {
		b.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	b.Run("extract", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			if _, err := extract.ExtractBytes(body, "http://h0000.test/", resp.Header); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("html", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			p := &crawlkit.Page{ContentType: "text/html", Header: resp.Header, Body: body}
			if _, err := p.HTML(); err != nil {
				b.Fatal(err)
			}
		}
	})
}
