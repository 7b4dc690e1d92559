// Package prometheus exports a Crawler's Stats in the Prometheus exposition
// format (https://prometheus.io/docs/instrumenting/exposition_formats/).
// It lives apart from the root package so that a crawler that does not
// serve metrics does not link the Prometheus client.
package prometheus

import (
	"net/http"

	prom "github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/crawlkit/crawlkit"
)

// Source is what the metrics read: a *crawlkit.Crawler, or anything that
// reports the same Stats (a wrapper summing several crawlers).
type Source interface {
	Stats() crawlkit.Stats
}

// Handler serves src's metrics. They live in a registry of their own, so
// several crawlers in one process do not collide; use Collector to add
// them to another registry.
func Handler(src Source) http.Handler {
	reg := prom.NewRegistry()
	reg.MustRegister(Collector(src))
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
}

// Collector returns a Prometheus client Collector of src's metrics, named
// crawlkit_*. Each scrape reads src.Stats once.
func Collector(src Source) prom.Collector {
	return &collector{src: src}
}

type collector struct{ src Source }

var (
	descURLs = prom.NewDesc("crawlkit_urls_total",
		"URLs by outcome: discovered, fetched, successful, failed, retried, duplicate, robots_blocked, trap_rejected, out_of_scope, fetched_by_redirect.",
		[]string{"outcome"}, nil)
	descNotFetched = prom.NewDesc("crawlkit_not_fetched_total", "URLs the crawl did not fetch, by reason.", []string{"reason"}, nil)
	descQueued     = prom.NewDesc("crawlkit_queue_urls", "URLs queued in memory or leased.", nil, nil)
	descBytes      = prom.NewDesc("crawlkit_fetched_bytes_total", "Body bytes fetched, decoded.", nil, nil)
	descWireBytes  = prom.NewDesc("crawlkit_wire_bytes_total", "Body bytes received before content decoding.", nil, nil)
	descSinkErrors = prom.NewDesc("crawlkit_sink_errors_total", "Pages the Sink failed to write.", nil, nil)
	descThroughput = prom.NewDesc("crawlkit_pages_per_second", "Pages fetched per second over the last ten seconds.", nil, nil)
	descHosts      = prom.NewDesc("crawlkit_hosts", "Hosts by state: discovered, active, blocked.", []string{"state"}, nil)
	descWorkers    = prom.NewDesc("crawlkit_workers", "Workers by state: active, idle.", []string{"state"}, nil)
)

func (c *collector) Describe(ch chan<- *prom.Desc) {
	for _, d := range []*prom.Desc{descURLs, descNotFetched, descQueued, descBytes, descWireBytes, descSinkErrors, descThroughput, descHosts, descWorkers} {
		ch <- d
	}
}

func (c *collector) Collect(ch chan<- prom.Metric) {
	s := c.src.Stats()
	counter := func(v int64, label string) {
		ch <- prom.MustNewConstMetric(descURLs, prom.CounterValue, float64(v), label)
	}
	counter(s.URLs.Discovered, "discovered")
	counter(s.URLs.Fetched, "fetched")
	counter(s.URLs.Successful, "successful")
	counter(s.URLs.Failed, "failed")
	counter(s.URLs.Retried, "retried")
	counter(s.URLs.Duplicates, "duplicate")
	counter(s.URLs.BlockedByRobots, "robots_blocked")
	counter(s.URLs.TrapRejected, "trap_rejected")
	counter(s.URLs.OutOfScope, "out_of_scope")
	counter(s.URLs.FetchedByRedirect, "fetched_by_redirect")
	for r, n := range s.URLs.NotFetched {
		ch <- prom.MustNewConstMetric(descNotFetched, prom.CounterValue, float64(n), r.String())
	}
	ch <- prom.MustNewConstMetric(descQueued, prom.GaugeValue, float64(s.URLs.Queued))
	ch <- prom.MustNewConstMetric(descBytes, prom.CounterValue, float64(s.Bytes))
	ch <- prom.MustNewConstMetric(descWireBytes, prom.CounterValue, float64(s.WireBytes))
	ch <- prom.MustNewConstMetric(descSinkErrors, prom.CounterValue, float64(s.SinkErrors))
	ch <- prom.MustNewConstMetric(descThroughput, prom.GaugeValue, s.Throughput.Current)
	ch <- prom.MustNewConstMetric(descHosts, prom.GaugeValue, float64(s.Hosts.Discovered), "discovered")
	ch <- prom.MustNewConstMetric(descHosts, prom.GaugeValue, float64(s.Hosts.Active), "active")
	ch <- prom.MustNewConstMetric(descHosts, prom.GaugeValue, float64(s.Hosts.Blocked), "blocked")
	ch <- prom.MustNewConstMetric(descWorkers, prom.GaugeValue, float64(s.Workers.Active), "active")
	ch <- prom.MustNewConstMetric(descWorkers, prom.GaugeValue, float64(s.Workers.Idle), "idle")
}
