package crawltest

import (
	"strconv"
	"strings"
	"time"
)

// RobotsVariant is what a host serves at /robots.txt.
type RobotsVariant int

// The robots.txt variants. Hosts get them in this order, cycling (see
// Config.RobotsVariants). Page sections referred to below ("/private/",
// "/tmp-notes/", "/news/", "/blog/", "/shop/") exist on every host.
const (
	// RobotsDisallow disallows the prefixes /private/ and /tmp (which also
	// covers /tmp-notes/) for every agent.
	RobotsDisallow RobotsVariant = iota
	// RobotsMissing answers 404: everything is allowed (RFC 9309 §2.3.1.3).
	RobotsMissing
	// RobotsUnavailable answers 503: the crawler must assume complete
	// disallow (RFC 9309 §2.3.1.4), so no page of the host is reachable.
	RobotsUnavailable
	// RobotsCrawlDelay asks every agent for Config.CrawlDelay between
	// requests and disallows /private/.
	RobotsCrawlDelay
	// RobotsAgentGroup has a "*" group that disallows /private/, a group
	// for "otherbot" that disallows everything, and a group for
	// Config.Agent that disallows /news/ (but not /private/, since the
	// most specific group replaces "*", RFC 9309 §2.2.1) and sets
	// Crawl-delay.
	RobotsAgentGroup
	// RobotsWildcard uses "*" and "$" (RFC 9309 §2.2.3): it disallows
	// print versions of articles (/*?print=; a shop item's canonical
	// print URL has print=1 after its other parameters, so it stays
	// allowed), blog pages whose name contains "draft",
	// and /shop/item$ (which matches no page, since every item has a
	// query); it allows /private/*.html$ over the longer-matching
	// Disallow: /private/ (RFC 9309 §2.2.2, longest match wins).
	RobotsWildcard
)

var robotsNames = [...]string{"disallow", "missing", "unavailable", "crawl-delay", "agent-group", "wildcard"}

// AllRobotsVariants returns every variant, the default for
// Config.RobotsVariants: a new slice on every call, so that no importer
// changes another's default.
func AllRobotsVariants() []RobotsVariant {
	return []RobotsVariant{
		RobotsDisallow, RobotsMissing, RobotsUnavailable, RobotsCrawlDelay, RobotsAgentGroup, RobotsWildcard,
	}
}

// String returns the variant's name, such as "crawl-delay".
func (v RobotsVariant) String() string {
	if v < 0 || int(v) >= len(robotsNames) {
		return "RobotsVariant(" + strconv.Itoa(int(v)) + ")"
	}
	return robotsNames[v]
}

// robotsRule is one Allow or Disallow line.
type robotsRule struct {
	allow   bool
	pattern string
}

// robotsGroup is a group of rules for one or more product tokens.
type robotsGroup struct {
	agents []string // lower-case product tokens, or "*"
	delay  bool     // whether the group carries Crawl-delay
	rules  []robotsRule
}

// robotsGroups returns the structured form of a variant's robots.txt; it is
// the single source from which both the served text and the generator's
// own allow decisions are derived.
func robotsGroups(v RobotsVariant, agent string) []robotsGroup {
	agent = strings.ToLower(agent)
	switch v {
	case RobotsDisallow:
		return []robotsGroup{{agents: []string{"*"}, rules: []robotsRule{
			{false, "/private/"}, {false, "/tmp"},
		}}}
	case RobotsCrawlDelay:
		return []robotsGroup{{agents: []string{"*"}, delay: true, rules: []robotsRule{
			{false, "/private/"},
		}}}
	case RobotsAgentGroup:
		return []robotsGroup{
			{agents: []string{"*"}, rules: []robotsRule{{false, "/private/"}}},
			{agents: []string{"otherbot"}, rules: []robotsRule{{false, "/"}}},
			{agents: []string{agent}, delay: true, rules: []robotsRule{{false, "/news/"}}},
		}
	case RobotsWildcard:
		return []robotsGroup{{agents: []string{"*"}, rules: []robotsRule{
			{false, "/*?print="},
			{false, "/blog/*draft"},
			{false, "/shop/item$"},
			{true, "/private/*.html$"},
			{false, "/private/"},
		}}}
	}
	return nil
}

// robotsText renders a variant's robots.txt.
func robotsText(v RobotsVariant, agent string, delay time.Duration, host string) string {
	var b strings.Builder
	b.WriteString("# robots.txt for " + host + "\n")
	d := strconv.FormatFloat(delay.Seconds(), 'f', -1, 64)
	for i, g := range robotsGroups(v, agent) {
		if i > 0 {
			b.WriteByte('\n')
		}
		for _, a := range g.agents {
			b.WriteString("User-agent: " + a + "\n")
		}
		if g.delay {
			b.WriteString("Crawl-delay: " + d + "\n")
		}
		for _, r := range g.rules {
			if r.allow {
				b.WriteString("Allow: " + r.pattern + "\n")
			} else {
				b.WriteString("Disallow: " + r.pattern + "\n")
			}
		}
	}
	return b.String()
}

// selectGroup returns the group that applies to the product token (RFC
// 9309 §2.2.1: the group naming the token, else the "*" group), or nil.
func selectGroup(groups []robotsGroup, token string) *robotsGroup {
	token = strings.ToLower(token)
	var star *robotsGroup
	for i := range groups {
		for _, a := range groups[i].agents {
			if a == token && token != "" {
				return &groups[i]
			}
			if a == "*" {
				star = &groups[i]
			}
		}
	}
	return star
}

// robotsAllowed decides whether target (path and query) is allowed for the
// product token under variant v with the given groups, following RFC 9309: the longest matching
// pattern wins, Allow wins a tie (§2.2.2), /robots.txt is always allowed
// (§2.2.2), and an unavailable robots.txt disallows everything (§2.3.1.4).
func robotsAllowed(v RobotsVariant, groups []robotsGroup, token, target string) bool {
	if target == "/robots.txt" {
		return true
	}
	if v == RobotsUnavailable {
		return false
	}
	g := selectGroup(groups, token)
	if g == nil {
		return true
	}
	best, allowed := -1, true
	for _, r := range g.rules {
		if !patternMatch(r.pattern, target) {
			continue
		}
		if n := len(r.pattern); n > best || n == best && r.allow {
			best, allowed = n, r.allow
		}
	}
	return allowed
}

// patternMatch reports whether a robots.txt path pattern matches the start
// of target: '*' matches any run of characters and a final '$' anchors the
// pattern at the end of target (RFC 9309 §2.2.3).
func patternMatch(pattern, target string) bool {
	anchored := strings.HasSuffix(pattern, "$")
	if anchored {
		pattern = pattern[:len(pattern)-1]
	}
	parts := strings.Split(pattern, "*")
	if !strings.HasPrefix(target, parts[0]) {
		return false
	}
	rest := target[len(parts[0]):]
	if len(parts) == 1 {
		return !anchored || rest == ""
	}
	for _, p := range parts[1 : len(parts)-1] {
		i := strings.Index(rest, p)
		if i < 0 {
			return false
		}
		rest = rest[i+len(p):]
	}
	last := parts[len(parts)-1]
	if anchored {
		return strings.HasSuffix(rest, last)
	}
	return strings.Contains(rest, last)
}

// productToken extracts the product token from a User-Agent header value:
// the leading run of letters, digits, '-' and '_' ("crawlkit/1.0 (+url)"
// gives "crawlkit").
func productToken(userAgent string) string {
	for i := 0; i < len(userAgent); i++ {
		if !isTokenChar(userAgent[i]) {
			return userAgent[:i]
		}
	}
	return userAgent
}

func isTokenChar(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_'
}

// validToken reports whether s is a product token as RFC 9309 §2.2.1
// defines it (letters, '-' and '_'); digits are accepted too, as crawlers
// in the wild use them.
func validToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isTokenChar(s[i]) {
			return false
		}
	}
	return true
}
