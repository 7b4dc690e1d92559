package prometheus_test

import (
	"fmt"
	"net/http/httptest"
	"strings"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/metrics/prometheus"
)

// Serve a Crawler's Stats to Prometheus next to the crawl: pass the
// *crawlkit.Crawler itself where this example passes a fixed Stats.
func ExampleHandler() {
	var s crawlkit.Stats
	s.URLs.Fetched = 42
	rec := httptest.NewRecorder()
	prometheus.Handler(fixed(s)).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	for _, line := range strings.Split(rec.Body.String(), "\n") {
		if strings.HasPrefix(line, `crawlkit_urls_total{outcome="fetched"}`) {
			fmt.Println(line)
		}
	}
	// Output: crawlkit_urls_total{outcome="fetched"} 42
}
