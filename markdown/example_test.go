package markdown_test

import (
	"fmt"

	"github.com/crawlkit/crawlkit/markdown"
)

func Example() {
	page := `<html><head><title>Widgets explained</title>
<meta name="author" content="Ada Lovelace">
<meta property="article:published_time" content="2024-05-01T10:00:00Z">
</head><body>
<nav><ul><li><a href="/">Home</a></li><li><a href="/shop">Shop</a></li><li><a href="/about">About</a></li></ul></nav>
<article>
<h1>Widgets explained</h1>
<p>A <b>widget</b> is a small gadget that turns a crank. Every workshop keeps a drawer of them,
and most people never wonder where the <a href="/history">first widget</a> came from.</p>
<p>Widgets come in three sizes, each made for a different crank, and the
<a href="https://standards.example/widgets">widget standard</a> names them all.</p>
<ul><li>Small, for clocks.</li><li>Medium, for mills; see the <a href="/history">history</a>.</li></ul>
</article>
<footer>Copyright Widget Co.</footer>
</body></html>`
	d, err := markdown.Convert([]byte(page), "https://example.com/guide/widgets")
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Printf("title %q, byline %q, date %s, %d links, ~%d tokens\n",
		d.Title, d.Byline, d.Date.Format("2006-01-02"), len(d.Links), d.Tokens)
	fmt.Print(d.Markdown)
	// Output:
	// title "Widgets explained", byline "Ada Lovelace", date 2024-05-01, 2 links, ~101 tokens
	// A **widget** is a small gadget that turns a crank. Every workshop keeps a drawer of them, and most people never wonder where the [first widget][1] came from.
	//
	// Widgets come in three sizes, each made for a different crank, and the [widget standard][2] names them all.
	//
	// - Small, for clocks.
	// - Medium, for mills; see the [history][1].
	//
	// [1]: https://example.com/history
	// [2]: https://standards.example/widgets
}
