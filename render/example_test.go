package render_test

import (
	"fmt"

	"github.com/crawlkit/crawlkit/render"
)

// The heuristic decides from the plain fetch which pages need a browser.
func ExampleHeuristic_Decide() {
	pages := map[string]string{
		"article": `<html><body><h1>Release notes</h1>
<p>Version 2 reads robots.txt groups the way RFC 9309 says, folds URLs before
queueing them and keeps one connection per host. The crawler's politeness
model now also takes the server's response time into account, as Heritrix does.</p>
<a href="/v1">Version 1</a> <a href="/roadmap">Roadmap</a></body></html>`,
		"react shell": `<html><head><script src="/static/js/main.js" defer></script></head>
<body><div id="root"></div></body></html>`,
		"noscript": `<html><body><noscript>You need to enable JavaScript to run this app.</noscript>
<main></main><script>boot()</script></body></html>`,
	}
	var h render.Heuristic // the zero value uses the defaults
	for _, name := range []string{"article", "react shell", "noscript"} {
		fmt.Printf("%s: %v\n", name, h.Decide([]byte(pages[name])))
	}
	// Output:
	// article: no render: none (text 219, scripts 0, links 2)
	// react shell: render: empty-root+little-text (text 0, scripts 1, links 0)
	// noscript: render: noscript+little-text (text 0, scripts 1, links 0)
}
