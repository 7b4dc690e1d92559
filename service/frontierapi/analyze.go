package frontierapi

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/crawlkit/crawlkit/robots"
	"github.com/crawlkit/crawlkit/service/dashboard"
	"github.com/crawlkit/crawlkit/urlnorm"
)

// The Server is the dashboard's Analyzer.
var _ dashboard.Analyzer = (*Server)(nil)

// AnalyzeURL implements dashboard.Analyzer: the URL's normalized form, what
// the service remembers of it, and robots.txt's decision (fetching the file
// if the cache does not hold it).
func (s *Server) AnalyzeURL(ctx context.Context, rawURL string) (dashboard.URLReport, error) {
	norm, err := s.norm.Normalize(rawURL)
	if err != nil {
		return dashboard.URLReport{}, fmt.Errorf("%w: %v", dashboard.ErrBadRequest, err)
	}
	host, err := urlnorm.HostOf(norm)
	if err != nil {
		return dashboard.URLReport{}, fmt.Errorf("%w: %v", dashboard.ErrBadRequest, err)
	}
	rep, known := s.hist.URL(norm)
	rep.URL, rep.Normalized, rep.Host = rawURL, norm, host
	if !known || rep.State == "unknown" {
		if seen, err := s.seen.ContainsKey(urlnorm.Key(norm)); err == nil && seen {
			rep.State = "seen"
		}
	}
	if s.cfg.Robots != nil {
		pol, err := s.cfg.Robots.PolicyAt(ctx, norm, s.cfg.Now())
		if err != nil {
			rep.Robots = &dashboard.RobotsDecision{Allowed: true, Reason: "error", Error: err.Error()}
		} else {
			if d, err := pol.Allowed(s.cfg.Agent, norm); err == nil {
				rep.Robots = decisionOf(d)
			}
			if cd, err := pol.CrawlDelay(s.cfg.Agent); err == nil && cd.Set {
				rep.CrawlDelayMS = cd.Capped().Milliseconds()
			}
		}
	}
	return rep, nil
}

// AnalyzeHost implements dashboard.Analyzer. host is a host name (with a
// port if not the default) or a URL; robots.txt is looked up over http
// unless a URL names https.
func (s *Server) AnalyzeHost(ctx context.Context, host string) (dashboard.HostReport, error) {
	origin := "http://" + host + "/"
	if strings.Contains(host, "://") {
		origin = host
	}
	h, err := urlnorm.HostOf(origin)
	if err != nil {
		return dashboard.HostReport{}, fmt.Errorf("%w: host %q: %v", dashboard.ErrBadRequest, host, err)
	}
	rep, _ := s.hist.Host(h)
	rep.Host = h
	rep.BlockedUntil = s.stats.blockedUntil(h, s.cfg.Now())
	if s.cfg.Robots != nil {
		if pol, err := s.cfg.Robots.PolicyAt(ctx, origin, s.cfg.Now()); err == nil {
			rep.Robots = s.robotsState(pol)
		} else {
			rep.Robots = &dashboard.RobotsState{Source: "error", Error: err.Error(), BlockedPaths: []string{}}
		}
	}
	return rep, nil
}

// robotsState describes a policy for the service's agent. The blocked paths
// are the file's Disallow rules that apply to the agent: a rule is kept when
// the policy, asked about the rule's own path, answers with that rule.
func (s *Server) robotsState(pol *robots.Policy) *dashboard.RobotsState {
	info := pol.FetchInfo()
	st := &dashboard.RobotsState{
		Source: pol.Source().String(), URL: info.URL, Status: info.Status, Error: info.Err,
		FetchedAt: info.FetchedAt, Expires: info.Expires, Sitemaps: pol.Sitemaps(), BlockedPaths: []string{},
	}
	if cd, err := pol.CrawlDelay(s.cfg.Agent); err == nil && cd.Set {
		st.CrawlDelayMS = cd.Capped().Milliseconds()
	}
	seen := map[string]bool{}
	for _, r := range pol.Rules() {
		if r.Allow || r.Pattern == "" || seen[r.Pattern] {
			continue
		}
		path := strings.TrimSuffix(strings.ReplaceAll(r.Pattern, "*", "x"), "$")
		if !strings.HasPrefix(path, "/") {
			path = "/" + path
		}
		d, err := pol.Allowed(s.cfg.Agent, path)
		if err == nil && !d.Allowed && d.Reason == robots.ReasonRule && d.Rule == r {
			seen[r.Pattern] = true
			st.BlockedPaths = append(st.BlockedPaths, r.Pattern)
		}
	}
	if pol.Source() == robots.SourceUnreachable {
		st.BlockedPaths = append(st.BlockedPaths, "/ (robots.txt unreachable: everything)")
	}
	sort.Strings(st.BlockedPaths)
	return st
}
