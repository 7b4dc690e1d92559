package extract

import (
	"bytes"
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/crawlkit/crawlkit/urlnorm"
)

var words = strings.Fields(`the of and to in is was for on that with as by at from his her
crawler politeness frontier robots sitemap archive network server content page index search
result market history science garden travel recipe weather museum library station council`)

// realisticPage builds a deterministic page of about size bytes shaped like
// a news or shop page: a head with meta tags, style sheets, preloads and an
// inline script; navigation menus; article paragraphs with inline links;
// images with srcset; a footer full of links.
func realisticPage(seed int64, size int) []byte {
	r := rand.New(rand.NewSource(seed))
	sentence := func(n int) string {
		var b strings.Builder
		for i := 0; i < n; i++ {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(words[r.Intn(len(words))])
		}
		return b.String()
	}
	var b bytes.Buffer
	b.WriteString(`<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>` + sentence(8) + ` | Example News</title>
<meta name="description" content="` + sentence(25) + `">
<meta name="robots" content="index, follow, max-image-preview:large">
<meta property="og:title" content="` + sentence(6) + `">
<link rel="canonical" href="https://www.example.com/news/2024/story-` + fmt.Sprint(seed) + `">
<link rel="stylesheet" href="/static/css/main.4f3a2b.css"><link rel="preload" href="/static/fonts/sans.woff2" as="font">
<link rel="icon" href="/favicon.ico"><link rel="alternate" hreflang="de" href="https://de.example.com/news/story">
<script async src="https://cdn.example.net/analytics.js"></script>
<script>window.dataLayer=window.dataLayer||[];function gtag(){dataLayer.push(arguments)}gtag('js',new Date());gtag('config','G-XXXX');var cfg={"a":1,"b":"<div>"};</script>
<style>.nav{display:flex}.nav a{color:#333;padding:4px 8px}.article p{line-height:1.5}</style>
</head><body class="article-page"><header><nav class="nav" aria-label="main">`)
	for i := 0; i < 25; i++ {
		fmt.Fprintf(&b, `<a href="/section/%s-%d/" class="nav-item">%s</a>`, words[r.Intn(len(words))], i, sentence(2))
	}
	b.WriteString(`</nav></header><main><article class="article"><h1>` + sentence(9) + `</h1>`)
	b.WriteString(`<div class="byline">By <a href="/authors/jane-doe" rel="author">Jane Doe</a> <time datetime="2024-05-01">May 1</time></div>`)
	for i := 0; b.Len() < size*3/4; i++ {
		b.WriteString(`<p>` + sentence(20+r.Intn(30)))
		if i%2 == 0 {
			fmt.Fprintf(&b, ` <a href="/news/2024/related-%d?utm_source=article&amp;ref=%d">%s</a>`, r.Intn(10000), i, sentence(4))
		}
		b.WriteString(` ` + sentence(15) + `.</p>`)
		if i%5 == 4 {
			fmt.Fprintf(&b, `<figure><img src="/img/%d.jpg" srcset="/img/%d-480.jpg 480w, /img/%d-960.jpg 960w" alt="%s" loading="lazy"><figcaption>%s</figcaption></figure>`,
				i, i, i, sentence(5), sentence(8))
		}
	}
	b.WriteString(`</article><aside><ul class="related">`)
	for i := 0; i < 12; i++ {
		fmt.Fprintf(&b, `<li><a href="https://www.example.com/news/2024/item-%d"><img src="/thumbs/%d.jpg" alt="">%s</a></li>`, r.Intn(100000), i, sentence(6))
	}
	b.WriteString(`</ul></aside></main><footer><ul>`)
	for b.Len() < size-200 {
		fmt.Fprintf(&b, `<li><a href="/about/%s">%s</a></li>`, words[r.Intn(len(words))], sentence(2))
	}
	b.WriteString(`</ul><p>&copy; 2024 Example News</p></footer><script src="/static/js/app.91ab.js" defer></script></body></html>`)
	return b.Bytes()
}

func benchPages() [][]byte {
	pages := make([][]byte, 8)
	for i := range pages {
		pages[i] = realisticPage(int64(i+1), 30<<10)
	}
	return pages
}

func pagesSize(pages [][]byte) int64 {
	n := 0
	for _, p := range pages {
		n += len(p)
	}
	return int64(n)
}

// BenchmarkExtract measures this package on 30 KB pages: links resolved,
// metadata, robots and visible text.
func BenchmarkExtract(b *testing.B) {
	pages := benchPages()
	b.SetBytes(pagesSize(pages) / int64(len(pages)))
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		d, err := ExtractBytes(pages[i%len(pages)], "https://www.example.com/news/2024/story", nil)
		if err != nil || len(d.Links) < 50 || len(d.Text) < 1000 {
			b.Fatal(err, len(d.Links), len(d.Text))
		}
		i++
	}
}

// BenchmarkParseTreeWalk is the baseline most Go crawlers use (goquery sits
// on html.Parse): build the DOM, then walk it for the same links (resolved
// with the same resolver), title, description and visible text.
func BenchmarkParseTreeWalk(b *testing.B) {
	pages := benchPages()
	b.SetBytes(pagesSize(pages) / int64(len(pages)))
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		links, text := treeWalk(b, pages[i%len(pages)], "https://www.example.com/news/2024/story")
		if links < 50 || text < 1000 {
			b.Fatal(links, text)
		}
		i++
	}
}

func treeWalk(b *testing.B, page []byte, base string) (nLinks, nText int) {
	root, err := html.Parse(bytes.NewReader(page))
	if err != nil {
		b.Fatal(err)
	}
	var links []string
	var text strings.Builder
	var title, desc string
	attr := func(n *html.Node, key string) string {
		for _, a := range n.Attr {
			if a.Key == key {
				return a.Val
			}
		}
		return ""
	}
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		switch n.Type {
		case html.TextNode:
			text.WriteString(n.Data)
			text.WriteByte(' ')
		case html.ElementNode:
			switch n.DataAtom {
			case atom.Script, atom.Style, atom.Noscript, atom.Template:
				if src := attr(n, "src"); src != "" {
					links = append(links, src)
				}
				return
			case atom.Title:
				if n.FirstChild != nil {
					title = n.FirstChild.Data
				}
				return
			case atom.Meta:
				if attr(n, "name") == "description" {
					desc = attr(n, "content")
				}
			case atom.A, atom.Link, atom.Area:
				if h := attr(n, "href"); h != "" {
					links = append(links, h)
				}
			case atom.Img, atom.Iframe, atom.Source:
				if h := attr(n, "src"); h != "" {
					links = append(links, h)
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(root)
	resolved := 0
	for _, l := range links {
		if _, err := urlnorm.ResolveString(base, l); err == nil {
			resolved++
		}
	}
	folded := strings.Join(strings.Fields(text.String()), " ")
	_, _ = title, desc
	return resolved, len(folded)
}
