package sitemap

import (
	"fmt"
	"net/url"
	"strings"
)

// FromRobots turns the Sitemap: values of the robots.txt file at robotsURL
// (as the robots package exposes them) into Sources. Each is marked as
// cross-submitted by the robots file's origin, so it may list any URL of that
// host (sitemaps.org, "Sitemaps & Cross Submits"). RFC 9309 §2.2.4 asks for
// absolute URLs; relative values are resolved against robotsURL anyway.
// Values that are not http(s) URLs, and duplicates, are dropped.
func FromRobots(robotsURL string, sitemapURLs []string) []Source {
	base, err := url.Parse(strings.TrimSpace(robotsURL))
	if err != nil || originOf(base) == "" {
		return nil
	}
	origin := originOf(base)
	seen := make(map[string]bool, len(sitemapURLs))
	var out []Source
	for _, raw := range sitemapURLs {
		ref, err := url.Parse(strings.TrimSpace(raw))
		if err != nil {
			continue
		}
		u := base.ResolveReference(ref)
		u.Fragment, u.RawFragment = "", ""
		if originOf(u) == "" {
			continue
		}
		s := u.String()
		if seen[s] {
			continue
		}
		seen[s] = true
		out = append(out, Source{URL: s, RobotsOrigin: origin})
	}
	return out
}

// Conventional returns the Source for /sitemap.xml at the root of the site
// of siteURL, the location crawlers try when robots.txt names no sitemap.
func Conventional(siteURL string) (Source, error) {
	u, err := url.Parse(strings.TrimSpace(siteURL))
	if err != nil || originOf(u) == "" {
		return Source{}, fmt.Errorf("%w: %q is not an absolute http(s) URL", ErrInvalidSource, siteURL)
	}
	return Source{URL: originOf(u) + "/sitemap.xml"}, nil
}

// Discover returns the sitemaps to read for a site: those its robots.txt
// lists (robotsSitemaps, the Sitemap: values of siteURL's /robots.txt), or
// the conventional /sitemap.xml when it lists none.
func Discover(siteURL string, robotsSitemaps []string) ([]Source, error) {
	c, err := Conventional(siteURL)
	if err != nil {
		return nil, err
	}
	robotsURL := strings.TrimSuffix(c.URL, "/sitemap.xml") + "/robots.txt"
	if s := FromRobots(robotsURL, robotsSitemaps); len(s) > 0 {
		return s, nil
	}
	return []Source{c}, nil
}
