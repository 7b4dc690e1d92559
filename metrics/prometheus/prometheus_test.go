package prometheus_test

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/metrics/prometheus"
)

type fixed crawlkit.Stats

func (f fixed) Stats() crawlkit.Stats { return crawlkit.Stats(f) }

func TestHandlerExportsStats(t *testing.T) {
	var s crawlkit.Stats
	s.URLs.Fetched, s.URLs.Queued, s.SinkErrors = 7, 3, 2
	s.Hosts.Discovered = 4
	s.URLs.NotFetched = map[crawlkit.Reason]int64{crawlkit.ReasonRobots: 5}
	rec := httptest.NewRecorder()
	prometheus.Handler(fixed(s)).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body := rec.Body.String()
	for _, want := range []string{
		`crawlkit_urls_total{outcome="fetched"} 7`,
		"crawlkit_queue_urls 3",
		"crawlkit_sink_errors_total 2",
		`crawlkit_hosts{state="discovered"} 4`,
		`crawlkit_not_fetched_total{reason="robots"} 5`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %q:\n%s", want, body)
		}
	}
}

// TestRegistriesDoNotCollide checks that two handlers, as two crawlers in
// one process would have, each serve their own numbers.
func TestRegistriesDoNotCollide(t *testing.T) {
	var a, b crawlkit.Stats
	a.URLs.Fetched, b.URLs.Fetched = 1, 2
	for _, c := range []struct {
		s    crawlkit.Stats
		want string
	}{{a, `outcome="fetched"} 1`}, {b, `outcome="fetched"} 2`}} {
		rec := httptest.NewRecorder()
		prometheus.Handler(fixed(c.s)).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
		if !strings.Contains(rec.Body.String(), c.want) {
			t.Errorf("want %q in\n%s", c.want, rec.Body.String())
		}
	}
}
