package crawlkit

import (
	"context"
	"errors"
	"net/url"
	"time"

	"github.com/crawlkit/crawlkit/fetch"
	"github.com/crawlkit/crawlkit/robots"
	"github.com/crawlkit/crawlkit/urlnorm"
)

// Stage 2 of the path of a URL: the gate. Before a leased URL is
// requested, and before every redirect target and sitemap, the gate
// decides once whether it may be: scope, the address guard's verdict on
// the host's robots.txt, robots.txt itself, and the host's Crawl-delay.

// errGated is returned to the fetcher by the redirect check when the gate
// refused a URL; the reason is on the lease's result, not in the error.
var errGated = errors.New("crawlkit: refused by the gate")

// leaseKey is the context key of the lease a fetch works for.
type leaseKey struct{}

// leaseWork is what the fetch's redirect check needs of the lease: the URL
// the gate already judged, and the result to record a refusal on.
type leaseWork struct {
	url string
	res *result
}

// gate applies robots.txt and Crawl-delay to a leased URL (its scope was
// judged when it was admitted). It reports false, with res.gate set, when
// the URL must not be fetched.
func (cr *Crawler) gate(ctx context.Context, rawURL, host string, res *result) bool {
	if cr.cfg.DangerouslyIgnoreRobotsTxt {
		return true
	}
	why, retryAt := cr.robotsVerdict(ctx, rawURL, host)
	if why == reasonNone {
		why = cr.usageGate(ctx, rawURL, host)
	}
	res.gate, res.robotsRetryAt = why, retryAt
	return why == reasonNone
}

// robotsVerdict decides whether robots.txt lets the crawl fetch rawURL of
// host now, and sets the host's Crawl-delay. retryAt is when an
// unreachable robots.txt is fetched again.
func (cr *Crawler) robotsVerdict(ctx context.Context, rawURL, host string) (why Reason, retryAt time.Time) {
	pol, err := cr.robots.Policy(ctx, rawURL)
	if err != nil {
		return ReasonRobots, time.Time{}
	}
	if pol.Source() == robots.SourceUnreachable {
		if cr.guarded.has(host) {
			cr.hostStopped(host, ReasonGuard, "the address guard refused the host's address; allow its network with Config.AllowPrivate")
			return ReasonGuard, time.Time{}
		}
		info := pol.FetchInfo()
		cr.lastFetchErr.Store("robots.txt of " + host + ": " + info.Err)
		cr.hostStopped(host, ReasonRobotsUnreachable, "robots.txt unreachable ("+info.Err+"); the host is retried until Config.RobotsRetries or Config.MaxRetryWait runs out")
		return ReasonRobotsUnreachable, info.Expires
	}
	cd, err := pol.CrawlDelay(cr.token)
	if err == nil && cd.Set {
		if cd.Exceeded && cr.cfg.CrawlDelayPolicy == SkipSlowHosts {
			cr.hostStopped(host, ReasonCrawlDelay, "robots.txt Crawl-delay is over Config.MaxCrawlDelay and Config.CrawlDelayPolicy is SkipSlowHosts")
			return ReasonCrawlDelay, time.Time{}
		}
		delay := cd.Capped()
		key := host
		if cr.cfg.PolitenessKey != nil {
			if u, err := url.Parse(rawURL); err == nil {
				key = cr.politeKey(u)
			}
		}
		cr.fetcher.Politeness().SetCrawlDelay(key, delay)
		if delay > cr.cfg.Delay {
			cr.waits.setDelay(host, delay)
		}
	}
	d, err := pol.Allowed(cr.token, rawURL)
	if err != nil || !d.Allowed {
		if root, rerr := pol.Allowed(cr.token, "/"); rerr == nil && !root.Allowed {
			cr.hostStopped(host, ReasonRobots, "robots.txt disallows the whole host for "+cr.token)
		}
		return ReasonRobots, time.Time{}
	}
	return reasonNone, time.Time{}
}

// checkRequest vets every URL the fetchers request: every redirect
// target and sitemap, and a leased URL unless the gate judged it already.
// A redirect may lead to a host none of whose URLs was leased, so its
// robots.txt and Crawl-delay are applied here.
func (cr *Crawler) checkRequest(ctx context.Context, u *url.URL) error {
	if err := cr.waitRate(ctx); err != nil {
		return err
	}
	lw, _ := ctx.Value(leaseKey{}).(*leaseWork)
	if lw != nil && u.String() == lw.url {
		return nil
	}
	refuse := func(why Reason, retryAt time.Time) error {
		if lw != nil {
			lw.res.gate, lw.res.robotsRetryAt = why, retryAt
		}
		return errGated
	}
	if !cr.inScope(u) {
		return refuse(ReasonScope, time.Time{})
	}
	if cr.filter != nil {
		s, err := urlnorm.Normalize(u.String())
		if err != nil {
			s = u.String()
		}
		if why := cr.filter.refuses(s); why != "" {
			cr.filtered(s, why)
			return refuse(ReasonFilter, time.Time{})
		}
	}
	if cr.cfg.DangerouslyIgnoreRobotsTxt {
		return nil
	}
	if why, retryAt := cr.robotsVerdict(ctx, u.String(), urlnorm.Host(u)); why != reasonNone {
		return refuse(why, retryAt)
	}
	// A redirect of a leased URL meets the usage gate too; a sitemap,
	// fetched outside any lease, is discovery, not content to be used.
	if lw != nil {
		if why := cr.usageGate(ctx, u.String(), urlnorm.Host(u)); why != reasonNone {
			return refuse(why, time.Time{})
		}
	}
	return nil
}

// waitRate waits for the global request rate cap
// (Config.MaxRequestsPerSecond), which every request of the crawl (pages,
// redirect hops, robots.txt files, sitemaps) passes before its host's
// politeness.
func (cr *Crawler) waitRate(ctx context.Context) error {
	if cr.rate == nil {
		return nil
	}
	return cr.rate.Wait(ctx)
}

// inScope applies the scope to a URL about to be requested in the
// normalized form links are judged in (see Config.ScopeFunc): a redirect
// target is the server's spelling of a URL, not normalized. A URL that does
// not normalize is out of scope, as a link to it would not be followed.
// The URL requested is u, unchanged.
func (cr *Crawler) inScope(u *url.URL) bool {
	n, err := urlnorm.Normalize(u.String())
	if err != nil {
		return false
	}
	nu, err := url.Parse(n)
	if err != nil {
		return false
	}
	return cr.scope.allows(nu)
}

// noteRobotsFetch remembers a host whose robots.txt fetch the address
// guard refused, so that the gate gives its URLs up at once instead of
// retrying robots.txt for minutes.
func (cr *Crawler) noteRobotsFetch(host string, err error) {
	if errors.Is(err, fetch.ErrBlockedAddress) {
		cr.guarded.add(host)
		return
	}
}
