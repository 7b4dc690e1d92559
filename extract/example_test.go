package extract_test

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/crawlkit/crawlkit/extract"
)

func Example() {
	page := `<html lang="en"><head>
<title>Widgets &amp; Gadgets</title>
<meta name="description" content="All about widgets.">
<link rel="canonical" href="/widgets">
<meta name="robots" content="noarchive">
</head><body>
<h1>Widgets</h1><p>Widgets are <b>small</b> gadgets.</p>
<a href="sprocket.html">Sprockets</a>
<a href="https://partner.example/" rel="sponsored">Our partner</a>
<form action="/search"><input name="q"></form>
<script>document.write("<p>not text</p>")</script>
</body></html>`
	header := http.Header{"X-Robots-Tag": {"mybot: nosnippet"}}
	opts := &extract.Config{UserAgent: "MyBot"}
	d, err := opts.Extract(strings.NewReader(page), "https://example.com/catalog/index.html", header)
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Printf("title %q, language %s, canonical %s\n", d.Title, d.Language, d.Canonical)
	fmt.Printf("text %q\n", d.Text)
	fmt.Printf("robots %+v\n", d.Robots)
	for _, l := range d.Links {
		fmt.Printf("%-4s %-36s follow=%-5v %q\n", l.Kind, l.URL, l.Follow, l.Text)
	}
	// Output:
	// title "Widgets & Gadgets", language en, canonical https://example.com/widgets
	// text "Widgets Widgets are small gadgets. Sprockets Our partner"
	// robots {Noindex:false Nofollow:false Noarchive:true Nosnippet:true NoImageIndex:false}
	// link https://example.com/widgets          follow=true  ""
	// a    https://example.com/catalog/sprocket.html follow=true  "Sprockets"
	// a    https://partner.example/             follow=false "Our partner"
	// form https://example.com/search           follow=false ""
}
