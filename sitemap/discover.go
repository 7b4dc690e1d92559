package sitemap

import (
	"fmt"
	"net/url"
	"strings"
)

// MaxRobotsSitemaps caps the sources FromRobots takes from one robots.txt
// file. Sites list a handful of sitemaps there, and an index lists the rest;
// without a cap a 500 KiB robots.txt could name some 20,000 sitemaps, each on
// a different host and so with a budget of its own.
const MaxRobotsSitemaps = 100

// FromRobots turns the Sitemap: values of the robots.txt file at robotsURL
// (as the robots package exposes them) into Sources. Each is marked as
// cross-submitted by the robots file's origin, so it may list any URL of that
// host (sitemaps.org, "Sitemaps & Cross Submits"). RFC 9309 §2.2.4 asks for
// absolute URLs; relative values are resolved against robotsURL anyway.
// Values that are not http(s) URLs, and duplicates, are dropped, and so are
// the values after the first MaxRobotsSitemaps sources.
func FromRobots(robotsURL string, sitemapURLs []string) []Source {
	base, err := url.Parse(strings.TrimSpace(robotsURL))
	if err != nil || originOf(base) == "" {
		return nil
	}
	origin := originOf(base)
	seen := make(map[string]bool, min(len(sitemapURLs), MaxRobotsSitemaps))
	var out []Source
	for _, raw := range sitemapURLs {
		if len(out) >= MaxRobotsSitemaps {
			break
		}
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
