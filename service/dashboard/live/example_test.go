package live_test

import (
	"fmt"
	"log"
	"net/http/httptest"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/service/dashboard/live"
)

// Serve a crawl's live dashboard beside it (here asked once, before the
// crawl runs).
func ExampleNew() {
	c, err := crawlkit.New(crawlkit.Config{UserAgent: "examplebot/1.0", Seeds: []string{"https://example.com/"}})
	if err != nil {
		log.Fatal(err)
	}
	d, err := live.New(c) // an http.Handler: mount it on a loopback address
	if err != nil {
		log.Fatal(err)
	}
	defer d.Close()
	rec := httptest.NewRecorder()
	d.ServeHTTP(rec, httptest.NewRequest("GET", "/api/snapshot", nil))
	fmt.Println(rec.Code, live.Snapshot(c).URLs.Fetched)
	// Output: 200 0
}
