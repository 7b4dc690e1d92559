package crawlkit

import (
	"sync"
	"time"

	"github.com/crawlkit/crawlkit/trap"
)

// How the crawl explains itself: every link it does not follow and every
// URL it does not fetch is counted by Reason and logged at Debug; a rule
// that stops a whole host or URL pattern says so once at Info; and what
// the crawl waits for is tracked for Stats.Waiting.

// reject records that link is not followed, for why (detail, if any,
// says more).
func (cr *Crawler) reject(link *Link, why Reason, detail string) {
	link.Rejected = why.String()
	if detail != "" {
		link.Rejected += ": " + detail
	}
	cr.stats.linksRejected.add(why)
	if cr.debug {
		cr.cfg.Logger.Debug("link not followed", "url", link.URL, "raw", link.Raw, "reason", link.Rejected)
	}
}

// rejectAll rejects every link of p for why: the page's links are not to
// be followed as a whole.
func (cr *Crawler) rejectAll(p *Page, why Reason) {
	for i := range p.Links {
		l := &p.Links[i]
		switch {
		case l.URL == "":
			cr.reject(l, ReasonInvalidURL, l.Rejected)
		case !isPageKind(l.Kind) && !isMediaKind(l.Kind):
			cr.reject(l, ReasonNotPageLink, "")
		default:
			cr.reject(l, why, "")
		}
	}
}

// filtered logs, once per rule, that a URL filter stops URLs.
func (cr *Crawler) filtered(u, why string) {
	if cr.filter.firstRefusal(why) {
		cr.cfg.Logger.Info("URLs not fetched: a URL filter refuses them (Config.AllowURLs, Config.DenyURLs)", "rule", why, "example", u)
	}
}

// trapStopped logs, once per stop, a trap verdict that stops a whole URL
// pattern, host or domain, with the Config field that changes the rule.
func (cr *Crawler) trapStopped(u string, v trap.Verdict) {
	if !v.First {
		return
	}
	cr.cfg.Logger.Info("spider-trap rule stops URLs", "rule", string(v.Rule), "stops", v.Scope.String(), "target", v.Target,
		"first", u, "reason", v.Reason, "config", "Config.Trap."+v.Setting)
}

// hostStopped records that a rule stops every URL of host (robots.txt
// disallows all, the guard refused it, its robots.txt is unreachable, its
// Crawl-delay is too long) and says so once at Info.
func (cr *Crawler) hostStopped(host string, why Reason, msg string) {
	cr.blockedMu.Lock()
	defer cr.blockedMu.Unlock()
	if cr.blockedHosts[host] {
		return
	}
	if seen, _ := cr.blockedSeen.TestAndAdd(host); seen {
		return
	}
	cr.stats.hostsBlocked.Add(1)
	if len(cr.blockedHosts) < maxActivity {
		cr.blockedHosts[host] = true
	}
	cr.cfg.Logger.Info("host stopped", "host", host, "reason", why.String(), "why", msg)
}

// hostSet is a bounded set of host names: past its bound it forgets an
// arbitrary host, which then costs one more robots.txt fetch.
type hostSet struct {
	mu    sync.Mutex
	hosts map[string]struct{}
}

const maxHostSet = 1 << 14

func (s *hostSet) add(host string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.hosts == nil {
		s.hosts = map[string]struct{}{}
	}
	if len(s.hosts) >= maxHostSet {
		for h := range s.hosts {
			delete(s.hosts, h)
			break
		}
	}
	s.hosts[host] = struct{}{}
}

func (s *hostSet) has(host string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.hosts[host]
	return ok
}

// waitKind is what a host waits for.
type waitKind uint8

const (
	waitCrawlDelay waitKind = iota // spaced by a Crawl-delay longer than Config.Delay
	waitRobots                     // robots.txt unreachable, fetched again at until
	waitRetryAfter                 // 429/503 with Retry-After until
)

type hostWait struct {
	kind  waitKind
	until time.Time
	delay time.Duration
}

// waits tracks the hosts the crawl waits for, up to maxWaits of them (the
// counts in Stats.Waiting are of the hosts tracked).
type waits struct {
	mu    sync.Mutex
	hosts map[string]hostWait
}

const maxWaits = 4096

func (w *waits) put(host string, hw hostWait) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.hosts == nil {
		w.hosts = map[string]hostWait{}
	}
	if _, ok := w.hosts[host]; !ok && len(w.hosts) >= maxWaits {
		return
	}
	w.hosts[host] = hw
}

func (w *waits) set(host string, k waitKind, until time.Time) {
	w.put(host, hostWait{kind: k, until: until})
}

func (w *waits) setDelay(host string, d time.Duration) {
	w.put(host, hostWait{kind: waitCrawlDelay, delay: d})
}

// snapshot counts the waits in force at now, forgetting those over.
func (w *waits) snapshot(now time.Time) WaitStats {
	w.mu.Lock()
	defer w.mu.Unlock()
	var s WaitStats
	for host, hw := range w.hosts {
		switch hw.kind {
		case waitCrawlDelay:
			s.CrawlDelayHosts++
			s.LongestCrawlDelay = max(s.LongestCrawlDelay, hw.delay)
		case waitRobots, waitRetryAfter:
			if !hw.until.After(now) {
				delete(w.hosts, host)
				continue
			}
			if hw.kind == waitRobots {
				s.RobotsRetryHosts++
				if s.NextRobotsRetry.IsZero() || hw.until.Before(s.NextRobotsRetry) {
					s.NextRobotsRetry = hw.until
				}
			} else {
				s.RetryAfterHosts++
				s.RetryAfterUntil = later(s.RetryAfterUntil, hw.until)
			}
		}
	}
	return s
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
