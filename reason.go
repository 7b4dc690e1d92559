package crawlkit

import (
	"fmt"
	"sync/atomic"
)

// Reason says why the crawl did not fetch a URL, did not follow a link, or
// put a URL off. Every URL that leaves the path of a URL early leaves with
// one: it is counted in Stats (LinksRejected, URLs.NotFetched,
// URLs.Deferred), set on Link.Rejected for links, and logged at Debug.
type Reason uint8

// The reasons, in the order of the path of a URL: admission (a link is not
// queued), the gate (a leased URL is not fetched), the fetch and the
// settlement.
const (
	reasonNone Reason = iota

	// Admission: links and seeds not queued.

	// ReasonInvalidURL: the link does not resolve or normalize to an
	// http or https URL.
	ReasonInvalidURL
	// ReasonNofollow: rel=nofollow, or a page-wide nofollow (meta robots,
	// X-Robots-Tag); Config.FollowNofollow changes it.
	ReasonNofollow
	// ReasonMedia: a media link while Config.MediaTypes is empty.
	ReasonMedia
	// ReasonNotPageLink: a stylesheet, script or other link that is not
	// a page.
	ReasonNotPageLink
	// ReasonDepth: deeper than Config.MaxDepth.
	ReasonDepth
	// ReasonScope: outside Config.Scope or ScopeFunc (a redirect target
	// too).
	ReasonScope
	// ReasonTrap: a spider-trap rule of package trap rejected the URL
	// (Config.Trap).
	ReasonTrap
	// ReasonTrapStopped: the links of a page whose URL pattern or host a
	// trap content rule stopped (Config.Trap).
	ReasonTrapStopped
	// ReasonNearDuplicate: the links of a near-duplicate page, with
	// Config.SkipDuplicateLinks.
	ReasonNearDuplicate

	// Gate: leased URLs not fetched.

	// ReasonRobots: robots.txt disallows the URL (RFC 9309).
	ReasonRobots
	// ReasonCrawlDelay: the host's Crawl-delay is over
	// Config.MaxCrawlDelay and Config.CrawlDelayPolicy is SkipSlowHosts.
	ReasonCrawlDelay
	// ReasonGuard: the address guard refused the host's address (a
	// private, loopback or other non-public address); Config.AllowPrivate
	// changes it.
	ReasonGuard
	// ReasonRobotsUnreachable: the host's robots.txt could not be
	// fetched, so all of it is disallowed (RFC 9309 §2.3.1.4); deferred
	// Config.RobotsRetries times, then given up.
	ReasonRobotsUnreachable
	// ReasonRetryAfter: the server asked to come back later (429 or 503
	// with Retry-After), or the host is blocked until then.
	ReasonRetryAfter
	// ReasonMaxWait: the next attempt would be further away than
	// Config.MaxRetryWait.
	ReasonMaxWait

	// Fetch and settlement.

	// ReasonFetchError: no usable answer (network, DNS, TLS, timeout, an
	// answer over the limits); retried while it is transient.
	ReasonFetchError
	// ReasonHTTPError: the server answered 5xx or 429; retried.
	ReasonHTTPError
	// ReasonHandlerError: the Handler returned an error or panicked; the
	// page is fetched again.
	ReasonHandlerError
	// ReasonLinksPending: the page's links could not be queued; the page
	// is fetched again.
	ReasonLinksPending
	// ReasonRetryBudget: the URL failed Config.MaxAttempts times and was
	// given up.
	ReasonRetryBudget
	// ReasonMaxPages: Config.MaxPages was reached before the URL's turn.
	ReasonMaxPages
	// ReasonFilter: Config.DenyURLs matched the URL, or AllowURLs did
	// not (a redirect target too).
	ReasonFilter
	// ReasonSkipped: the Handler set Link.Skip.
	ReasonSkipped
	// ReasonUsage: robots.txt's usage preferences (Content-Usage,
	// Content-Signal) disallow Config.Usage.Purpose and Config.Usage.Action
	// is UsageSkip.
	ReasonUsage
	// ReasonLoginFailed: the host's Config.Login failed in this Run, so
	// none of its URLs is fetched.
	ReasonLoginFailed

	numReasons
)

var reasonNames = [numReasons]string{
	reasonNone:              "",
	ReasonInvalidURL:        "invalid-url",
	ReasonNofollow:          "nofollow",
	ReasonMedia:             "media",
	ReasonNotPageLink:       "not-a-page-link",
	ReasonDepth:             "depth",
	ReasonScope:             "scope",
	ReasonTrap:              "trap",
	ReasonTrapStopped:       "trap-stopped",
	ReasonNearDuplicate:     "near-duplicate",
	ReasonRobots:            "robots",
	ReasonCrawlDelay:        "crawl-delay",
	ReasonGuard:             "guard",
	ReasonRobotsUnreachable: "robots-unreachable",
	ReasonRetryAfter:        "retry-after",
	ReasonMaxWait:           "max-wait",
	ReasonFetchError:        "fetch-error",
	ReasonHTTPError:         "http-error",
	ReasonHandlerError:      "handler-error",
	ReasonLinksPending:      "links-pending",
	ReasonRetryBudget:       "retry-budget",
	ReasonMaxPages:          "max-pages",
	ReasonFilter:            "url-filter",
	ReasonSkipped:           "skipped",
	ReasonUsage:             "usage",
	ReasonLoginFailed:       "login-failed",
}

// String returns the reason's name, as Link.Rejected and the stats' JSON
// keys spell it.
func (r Reason) String() string {
	if r < numReasons {
		return reasonNames[r]
	}
	return fmt.Sprintf("Reason(%d)", uint8(r))
}

// MarshalText makes a Reason a readable JSON map key.
func (r Reason) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

// UnmarshalText reads a reason's name.
func (r *Reason) UnmarshalText(b []byte) error {
	for i, n := range reasonNames {
		if i > 0 && n == string(b) {
			*r = Reason(i)
			return nil
		}
	}
	return fmt.Errorf("crawlkit: unknown reason %q", b)
}

// reasonCounts counts by reason without a lock.
type reasonCounts [numReasons]atomic.Int64

func (c *reasonCounts) add(r Reason) { c[r].Add(1) }

// snapshot returns the non-zero counts.
func (c *reasonCounts) snapshot() map[Reason]int64 {
	m := map[Reason]int64{}
	for i := range c {
		if n := c[i].Load(); n != 0 {
			m[Reason(i)] = n
		}
	}
	return m
}

func (c *reasonCounts) get(r Reason) int64 { return c[r].Load() }
