package crawlkit

import (
	"sort"

	"github.com/crawlkit/crawlkit/dashboard"
)

// dashboardHosts bounds the host lists of a dashboard snapshot.
const dashboardHosts = 20

// DashboardSnapshot returns the crawl's progress in the form the live
// dashboard (package dashboard) shows: the Stats, failures by category, the
// most active hosts and the hosts robots.txt keeps the crawl away from.
func (cr *Crawler) DashboardSnapshot() dashboard.Snapshot {
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
			Network: cr.stats.errNetwork.Load(),
			Timeout: cr.stats.errTimeout.Load(),
			Client:  cr.stats.err4xx.Load(),
			Server:  cr.stats.err5xx.Load(),
			Robots:  s.URLs.BlockedByRobots,
			Trap:    s.URLs.TrapRejected,
		},
		NotFetched:    byReasonName(s.URLs.NotFetched),
		Deferred:      byReasonName(s.URLs.Deferred),
		LinksRejected: byReasonName(s.LinksRejected),
		Waiting:       dashboard.Waiting(s.Waiting),
	}

	cr.stats.mu.Lock()
	top := make([]dashboard.HostActivity, 0, len(cr.stats.activity))
	for host, a := range cr.stats.activity {
		top = append(top, dashboard.HostActivity{Host: host, Recent: a.recent, Fetched: a.fetched, Errors: a.errors, LastFetch: a.last})
	}
	cr.stats.mu.Unlock()
	sort.Slice(top, func(i, j int) bool {
		if top[i].Recent != top[j].Recent {
			return top[i].Recent > top[j].Recent
		}
		if top[i].Fetched != top[j].Fetched {
			return top[i].Fetched > top[j].Fetched
		}
		return top[i].Host < top[j].Host
	})
	snap.TopHosts = top[:min(len(top), dashboardHosts)]

	cr.blockedMu.Lock()
	for host := range cr.blockedHosts {
		snap.BlockedHosts = append(snap.BlockedHosts, dashboard.BlockedHost{Host: host, Reason: "robots.txt"})
	}
	cr.blockedMu.Unlock()
	sort.Slice(snap.BlockedHosts, func(i, j int) bool { return snap.BlockedHosts[i].Host < snap.BlockedHosts[j].Host })
	snap.BlockedHosts = snap.BlockedHosts[:min(len(snap.BlockedHosts), dashboardHosts)]
	return snap
}

// NewDashboard returns a live dashboard of this crawl: an http.Handler that
// serves the page and its event stream (see package dashboard). It samples
// the crawl once a second until it is closed; the caller closes it. The
// dashboard does no authentication: serve it on a loopback or otherwise
// protected address.
func (cr *Crawler) NewDashboard() (*dashboard.Dashboard, error) {
	return dashboard.New(dashboard.Config{Source: cr.DashboardSnapshot, Title: "crawlkit: " + cr.token})
}

// byReasonName keys counts by reason name, as the dashboard shows them.
func byReasonName(m map[Reason]int64) map[string]int64 {
	out := make(map[string]int64, len(m))
	for r, n := range m {
		out[r.String()] = n
	}
	return out
}
