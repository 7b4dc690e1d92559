// Package live shows a running Crawler on the dashboard: it adapts the
// Crawler's Stats and activity to a dashboard.Snapshot. It is apart from
// package dashboard, which imports no other crawlkit package, so that the
// frontier service and other sources of numbers do not link the Crawler.
package live

import (
	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/service/dashboard"
)

// crawlerHosts bounds the host lists of a Crawler's snapshot.
const crawlerHosts = 20

// Snapshot returns a Crawler's progress as the dashboard shows it:
// its Stats, failures by category, the most active hosts and the hosts
// robots.txt keeps the crawl away from.
func Snapshot(cr *crawlkit.Crawler) dashboard.Snapshot {
	s := cr.Stats()
	snap := dashboard.Snapshot{
		URLs: dashboard.URLCounts{
			Discovered: s.URLs.Discovered, Queued: s.URLs.Queued, Fetched: s.URLs.Fetched,
			Successful: s.URLs.Successful, Failed: s.URLs.Failed, Retried: s.URLs.Retried,
			Duplicates: s.URLs.Duplicates, BlockedByRobots: s.URLs.BlockedByRobots,
			TrapRejected: s.URLs.TrapRejected, OutOfScope: s.URLs.OutOfScope,
			FetchedByRedirect: s.URLs.FetchedByRedirect,
		},
		Throughput: dashboard.Throughput(s.Throughput),
		Hosts:      dashboard.HostCounts(s.Hosts),
		Workers:    dashboard.WorkerCounts(s.Workers),
		Bytes:      s.Bytes,
		Errors: dashboard.ErrorCounts{
			Network: s.Errors.Network,
			Timeout: s.Errors.Timeout,
			Client:  s.Errors.HTTP4xx,
			Server:  s.Errors.HTTP5xx,
			Robots:  s.URLs.BlockedByRobots,
			Trap:    s.URLs.TrapRejected,
		},
		NotFetched:    byReasonName(s.URLs.NotFetched),
		Deferred:      byReasonName(s.URLs.Deferred),
		LinksRejected: byReasonName(s.LinksRejected),
		Waiting:       dashboard.Waiting(s.Waiting),
	}
	for _, h := range cr.TopHosts(crawlerHosts) {
		snap.TopHosts = append(snap.TopHosts, dashboard.HostActivity{Host: h.Host, Recent: h.Recent, Fetched: h.Fetched, Errors: h.Errors, LastFetch: h.LastFetch})
	}
	for _, h := range cr.RobotsBlockedHosts(crawlerHosts) {
		snap.BlockedHosts = append(snap.BlockedHosts, dashboard.BlockedHost{Host: h, Reason: "robots.txt"})
	}
	return snap
}

// New returns a live dashboard of a crawl: an http.Handler that
// serves the page and its event stream. It samples the crawl once a second
// until it is closed; the caller closes it. The dashboard does no
// authentication: serve it on a loopback or otherwise protected address.
// For a title of one's own, pass Snapshot to dashboard.New as the Source.
func New(cr *crawlkit.Crawler) (*dashboard.Dashboard, error) {
	return dashboard.New(dashboard.Config{Source: func() dashboard.Snapshot { return Snapshot(cr) }, Title: "crawlkit"})
}

// byReasonName keys counts by reason name, as the dashboard shows them.
func byReasonName(m map[crawlkit.Reason]int64) map[string]int64 {
	out := make(map[string]int64, len(m))
	for r, n := range m {
		out[r.String()] = n
	}
	return out
}
