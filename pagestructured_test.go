package crawlkit_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/structured"
)

// A shop whose product page carries JSON-LD, Open Graph and a microdata
// breadcrumb: the Handler reads them with Page.Structured (once per
// page), and a JSONL sink asked for them records them; pages without any
// and an image have none.
func TestPageStructured(t *testing.T) {
	s := serveHosts(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			http.NotFound(w, r)
		case "/":
			writeHTML(w, `<html><body><a href="/p/teapot">Teapot</a><a href="/logo.png">logo</a></body></html>`)
		case "/p/teapot":
			writeHTML(w, `<html><head><title>Teapot</title>
<meta property="og:title" content="Cast-iron teapot"><meta property="og:image" content="/img/teapot.jpg">
<script type="application/ld+json">{"@context":"https://schema.org","@type":"Product","name":"Cast-iron teapot",
"offers":{"@type":"Offer","price":"42.00","priceCurrency":"EUR"},}</script></head><body>
<ol itemscope itemtype="https://schema.org/BreadcrumbList"><li itemprop="itemListElement" itemscope itemtype="https://schema.org/ListItem">
<a itemprop="item" href="/kitchen"><span itemprop="name">Kitchen</span></a><meta itemprop="position" content="1"></li></ol>
<a href="/">home</a></body></html>`)
		case "/kitchen":
			writeHTML(w, `<html><head><meta name="description" content="Pots and pans"></head><body>Kitchen</body></html>`)
		case "/logo.png":
			w.Header().Set("Content-Type", "image/png")
			w.Write([]byte("\x89PNG\r\n\x1a\n"))
		}
	})
	dir := t.TempDir()
	sink, err := crawlkit.NewJSONLSink(crawlkit.JSONLConfig{Dir: dir, Structured: true})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	seen := map[string]*structured.Data{}
	notHTML := 0
	c, err := crawlkit.New(crawlkit.Config{
		UserAgent: testAgent, Seeds: []string{"http://shop.test/"}, DialContext: s.dial, AllowPrivate: loopback,
		Delay: crawlkit.NoDelay, MediaTypes: []string{"image/png"}, Sink: sink,
		Handler: func(_ context.Context, p *crawlkit.Page) error {
			d, err := p.Structured()
			mu.Lock()
			defer mu.Unlock()
			if errors.Is(err, crawlkit.ErrNotHTML) {
				notHTML++
				return nil
			}
			if err != nil {
				t.Errorf("%s: %v", p.URL, err)
				return nil
			}
			again, _ := p.Structured()
			if again != d {
				t.Errorf("%s: Structured read the page twice", p.URL)
			}
			seen[p.URL] = d
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if notHTML != 1 {
		t.Errorf("%d pages not HTML, want the image", notHTML)
	}
	for _, u := range []string{"http://shop.test/", "http://shop.test/kitchen"} {
		if d := seen[u]; d == nil || !d.Empty() {
			t.Errorf("%s: %+v, want no structured data", u, d)
		}
	}
	d := seen["http://shop.test/p/teapot"]
	if d == nil {
		t.Fatal("the product page was not handled")
	}
	p := d.Find("Product")
	if len(p) != 1 || p[0].String("name") != "Cast-iron teapot" || p[0].Item("offers").String("price") != "42.00" {
		t.Errorf("products %+v", p)
	}
	if !errors.Is(d.JSONLD[0].Err, structured.ErrMalformed) {
		t.Errorf("the block's trailing comma not reported: %v", d.JSONLD[0].Err)
	}
	if li := d.Find("ListItem"); len(li) != 1 || li[0].String("item") != "http://shop.test/kitchen" {
		t.Errorf("breadcrumb %+v", li)
	}
	if img := d.OpenGraph.Images; len(img) != 1 || img[0].URL != "http://shop.test/img/teapot.jpg" {
		t.Errorf("og:image %+v", img)
	}

	// The JSONL records: the product page's holds its data, the others
	// none.
	f, err := os.Open(filepath.Join(dir, "pages-00001.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	records := map[string]crawlkit.PageRecord{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r crawlkit.PageRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		records[r.URL] = r
	}
	if len(records) != 4 {
		t.Fatalf("%d records, want 4: %v", len(records), records)
	}
	for url, r := range records {
		if (r.Structured != nil) != (url == "http://shop.test/p/teapot") {
			t.Errorf("%s: structured %s", url, r.Structured)
		}
	}
	var rec struct {
		JSONLD []struct {
			Raw   json.RawMessage `json:"raw"`
			Error string          `json:"error"`
		} `json:"jsonld"`
		Microdata []struct {
			Type []string `json:"type"`
		} `json:"microdata"`
		OpenGraph struct {
			Properties []structured.Property `json:"properties"`
			Images     []structured.Media    `json:"images"`
		} `json:"opengraph"`
	}
	if err := json.Unmarshal(records["http://shop.test/p/teapot"].Structured, &rec); err != nil {
		t.Fatal(err)
	}
	var product struct {
		Type   string `json:"@type"`
		Offers struct {
			Price string `json:"price"`
		} `json:"offers"`
	}
	if len(rec.JSONLD) != 1 || json.Unmarshal(rec.JSONLD[0].Raw, &product) != nil || product.Type != "Product" || product.Offers.Price != "42.00" || rec.JSONLD[0].Error == "" {
		t.Errorf("recorded JSON-LD %+v", rec.JSONLD)
	}
	if len(rec.Microdata) != 1 || len(rec.Microdata[0].Type) != 1 || rec.Microdata[0].Type[0] != "https://schema.org/BreadcrumbList" {
		t.Errorf("recorded microdata %+v", rec.Microdata)
	}
	if len(rec.OpenGraph.Properties) != 2 || len(rec.OpenGraph.Images) != 1 {
		t.Errorf("recorded Open Graph %+v", rec.OpenGraph)
	}
}

// A Page built by hand is read on each call; one that is not HTML says so.
func TestPageStructuredBuilt(t *testing.T) {
	p := &crawlkit.Page{ContentType: "text/html", FinalURL: "https://a.test/x/",
		Body: []byte(`<meta property="og:image" content="i.png"><div itemscope><a itemprop=u href=y>y</a></div>`)}
	d, err := p.Structured()
	if err != nil {
		t.Fatal(err)
	}
	if d.OpenGraph.Images[0].URL != "https://a.test/x/i.png" || d.Microdata[0].String("u") != "https://a.test/x/y" {
		t.Errorf("data %+v", d)
	}
	if _, err := (&crawlkit.Page{ContentType: "application/pdf"}).Structured(); !errors.Is(err, crawlkit.ErrNotHTML) {
		t.Errorf("PDF: %v, want ErrNotHTML", err)
	}
}
