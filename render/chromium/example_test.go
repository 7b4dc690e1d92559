package chromium_test

import (
	"context"
	"fmt"
	"log"

	"github.com/crawlkit/crawlkit/render"
	"github.com/crawlkit/crawlkit/render/chromium"
)

// A renderer drives a local Chromium; every request of the page goes
// through the Fetcher (here a default fetch.Fetcher built from UserAgent,
// with the address guard on). Close stops the browser.
func ExampleNew() {
	r, err := chromium.New(chromium.Config{UserAgent: "examplebot/1.0 (+https://example.com/bot)"})
	if err != nil {
		log.Fatal(err) // render.ErrNoBrowser without Chromium
	}
	defer r.Close()
	res, err := r.Render(context.Background(), &render.Request{
		URL:  "https://example.com/app",
		Body: []byte(`<div id="root"></div><script>root.innerHTML = '<a href="/inbox">Inbox</a>'</script>`),
	})
	if err != nil {
		log.Fatal(err)
	}
	for _, l := range res.Document.Links {
		fmt.Println(l.URL)
	}
}
