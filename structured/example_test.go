package structured_test

import (
	"fmt"
	"strings"

	"github.com/crawlkit/crawlkit/structured"
)

func Example() {
	page := `<html><head>
<meta property="og:title" content="Stovetop Espresso Maker">
<meta property="og:image" content="/img/moka.jpg">
<meta property="og:image:width" content="800">
<meta name="twitter:card" content="summary">
<script type="application/ld+json">
{"@context": "https://schema.org", "@type": "Product", "name": "Stovetop Espresso Maker",
 "offers": {"@type": "Offer", "price": 34.90, "priceCurrency": "EUR"},}
</script>
</head><body>
<ol itemscope itemtype="https://schema.org/BreadcrumbList">
 <li itemprop="itemListElement" itemscope itemtype="https://schema.org/ListItem">
  <a itemprop="item" href="/kitchen"><span itemprop="name">Kitchen</span></a>
  <meta itemprop="position" content="1"></li>
</ol>
</body></html>`
	d, err := structured.Parse(strings.NewReader(page), "https://shop.example/p/moka")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, p := range d.Find("Product") {
		offer := p.Item("offers")
		fmt.Println(p.String("name"), offer.String("price"), offer.String("priceCurrency"))
	}
	fmt.Println("block error:", d.JSONLD[0].Err)
	fmt.Println("block JSON:", string(d.JSONLD[0].Raw))
	for _, li := range d.Find("ListItem") {
		fmt.Println("breadcrumb", li.String("position"), li.String("name"), li.String("item"))
	}
	img := d.OpenGraph.Images[0]
	fmt.Println("og:image", img.URL, img.Width)
	fmt.Println("twitter:card", d.Twitter.Get("twitter:card"))
	// Output:
	// Stovetop Espresso Maker 34.90 EUR
	// block error: structured: malformed JSON-LD in block 0: trailing comma at byte 160
	// block JSON: {"@context":"https://schema.org","@type":"Product","name":"Stovetop Espresso Maker","offers":{"@type":"Offer","price":34.90,"priceCurrency":"EUR"}}
	// breadcrumb 1 Kitchen https://shop.example/kitchen
	// og:image https://shop.example/img/moka.jpg 800
	// twitter:card summary
}
