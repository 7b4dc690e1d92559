package structured

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/crawlkit/crawlkit/extract"
)

// benchPage is a shop's product page of about 70 KB: the head of
// testdata/product.html (Open Graph, Twitter, a JSON-LD Product with
// reviews and offers), then navigation, a long description with links, a
// grid of 24 related products marked up with microdata, customer reviews,
// and a footer: 213 links in all, like the extract package's bench pages
// in density.
func benchPage(tb testing.TB) []byte {
	src, err := os.ReadFile("testdata/product.html")
	if err != nil {
		tb.Fatal(err)
	}
	head, _, _ := bytes.Cut(src, []byte("<body>"))
	var b bytes.Buffer
	b.Write(head)
	b.WriteString(`<body><header><nav class="main-nav">`)
	for i := range 40 {
		fmt.Fprintf(&b, `<a class="nav-link" href="/c/category-%d">Category %d</a>`, i, i)
	}
	b.WriteString(`</nav></header><main><h1>Alpine Trail 30L Backpack</h1><section class="description">`)
	for i := range 60 {
		fmt.Fprintf(&b, `<p>The ventilated back panel keeps air moving on long climbs, and the hip-belt pockets hold a phone, snacks and a map. `+
			`See the <a href="/guides/packing-%d">packing guide</a> for how to load it for a day on the hill. Section %d.</p>`, i, i)
	}
	b.WriteString(`</section><section class="related"><h2>You may also like</h2><ul>`)
	for i := range 24 {
		fmt.Fprintf(&b, `<li itemscope itemtype="https://schema.org/Product"><a itemprop="url" href="/p/item-%d">`+
			`<img itemprop="image" src="/img/item-%d.jpg" alt=""><span itemprop="name">Trail item %d</span></a>`+
			`<div itemprop="offers" itemscope itemtype="https://schema.org/Offer"><meta itemprop="priceCurrency" content="EUR">`+
			`<span itemprop="price" content="%d.00">€%d.00</span><link itemprop="availability" href="https://schema.org/InStock"></div></li>`, i, i, i, 20+i, 20+i)
	}
	b.WriteString(`</ul></section><section class="reviews"><h2>Reviews</h2>`)
	for i := 0; b.Len() < 66<<10; i++ {
		fmt.Fprintf(&b, `<div class="review"><p class="author">Customer %d, verified buyer</p><p>Used it for three seasons of day hikes and one `+
			`week-long trek. The rain cover deploys in seconds and the hip belt does not slip, though the side pockets are `+
			`a little tight for a one-litre bottle. Would buy again.</p></div>`, i)
	}
	b.WriteString(`</section></main><footer><ul>`)
	for i := range 40 {
		fmt.Fprintf(&b, `<li><a href="/help/topic-%d">Help topic %d</a></li>`, i, i)
	}
	b.WriteString(`</ul></footer></body></html>`)
	return b.Bytes()
}

// BenchmarkParse measures a page's structured data read (parse and walk)
// beside the extraction every fetched page gets (extract.ExtractBytes, the
// baseline), and the walk alone on a tree already parsed (FromNode, as
// Page.Structured does after Page.HTML).
func BenchmarkParse(b *testing.B) {
	page := benchPage(b)
	const pageURL = "https://shop.northpeak.example/p/alpine-trail-30"
	d := ParseBytes(page, pageURL)
	if len(d.JSONLD) != 1 || len(d.Microdata) != 24 || len(d.OpenGraph.Images) != 2 {
		b.Fatalf("unexpected bench page: %d blocks, %d items", len(d.JSONLD), len(d.Microdata))
	}
	b.Run("extract", func(b *testing.B) {
		b.SetBytes(int64(len(page)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := extract.ExtractBytes(page, pageURL, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("structured", func(b *testing.B) {
		b.SetBytes(int64(len(page)))
		b.ReportAllocs()
		for b.Loop() {
			ParseBytes(page, pageURL)
		}
	})
	b.Run("walk", func(b *testing.B) {
		doc, err := html.Parse(strings.NewReader(string(page)))
		if err != nil {
			b.Fatal(err)
		}
		b.SetBytes(int64(len(page)))
		b.ReportAllocs()
		for b.Loop() {
			FromNode(doc, pageURL)
		}
	})
}
