package crawlkit

import (
	"sort"
	"time"
)

// HostActivity is one host's share of a crawl, for a live view of it
// (package dashboard): its fetches in the last one to two minutes, all of
// them, the failed ones, and the latest.
type HostActivity struct {
	Host                    string
	Recent, Fetched, Errors int64
	LastFetch               time.Time
}

// TopHosts returns up to n hosts, the most fetched recently first (then
// the most fetched overall, then by name).
func (cr *Crawler) TopHosts(n int) []HostActivity {
	cr.stats.mu.Lock()
	top := make([]HostActivity, 0, len(cr.stats.activity))
	for host, a := range cr.stats.activity {
		top = append(top, HostActivity{Host: host, Recent: a.recent, Fetched: a.fetched, Errors: a.errors, LastFetch: a.last})
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
	return top[:min(len(top), max(n, 0))]
}

// RobotsBlockedHosts returns up to n of the hosts whose robots.txt keeps
// the crawl away (unreachable, or disallowing everything), sorted.
func (cr *Crawler) RobotsBlockedHosts(n int) []string {
	cr.blockedMu.Lock()
	hosts := make([]string, 0, len(cr.blockedHosts))
	for h := range cr.blockedHosts {
		hosts = append(hosts, h)
	}
	cr.blockedMu.Unlock()
	sort.Strings(hosts)
	return hosts[:min(len(hosts), max(n, 0))]
}
