package crawlkit

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"sync"

	"github.com/crawlkit/crawlkit/fetch"
	"github.com/crawlkit/crawlkit/frontier"
	"github.com/crawlkit/crawlkit/urlnorm"
)

// Stage 3 of the path of a URL: fetch. A leased URL the gate let through
// is requested (MaxPages permitting), and its answer becomes a Page.

// errRobots is the render fetcher's refusal of a URL robots.txt does not
// allow.
var errRobots = errors.New("crawlkit: disallowed by robots.txt")

// fetchPage requests l's URL. It returns the page of an HTTP answer, or nil
// with res.err (or res.gate, for a redirect the gate refused) set. ok is
// false when the work was abandoned: ctx ended, or MaxPages was reached.
func (cr *Crawler) fetchPage(ctx context.Context, l *frontier.Lease, media bool, res *result) (p *Page, ok bool) {
	data := pageData(l)
	header, skip, err := cr.beforeRequest(ctx, l.URL, cr.leaseHost(l), l.Depth, data)
	switch {
	case skip != reasonNone:
		res.gate = skip
		return nil, true
	case err != nil:
		res.handlerErr = err
		cr.cfg.Logger.Warn("BeforeRequest failed; the URL will be fetched again", "url", l.URL, "err", err)
		return nil, true
	}
	// MaxPages counts responses to requests for pages robots.txt allows,
	// not leases, nor requests that got no response.
	if cr.pages != nil && !cr.pages.acquire() {
		cr.limitReached.Store(true)
		return nil, false
	}
	f := cr.fetcher
	if media {
		f = cr.mediaFetcher
	}
	fetched := cr.cfg.Now()
	resp, err := cr.doFetch(context.WithValue(ctx, leaseKey{}, &leaseWork{url: l.URL, res: res}), f, &fetch.Request{URL: l.URL, Header: header})
	if cr.pages != nil {
		cr.pages.release(gotResponse(err))
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, false
		}
		res.err = err
		if !errors.Is(err, fetch.ErrNotModified) && !errors.Is(err, errGated) && !errors.Is(err, fetch.ErrHostBlocked) {
			cr.onError(ctx, l.URL, err)
		}
		if errors.Is(err, fetch.ErrNotModified) {
			cr.stats.fetched.Add(1)
		}
		return nil, true
	}
	cr.stats.fetched.Add(1)
	cr.stats.bytes.Add(int64(len(resp.Body)))
	cr.stats.wireBytes.Add(resp.WireBytes)
	res.status = resp.StatusCode
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500 {
		res.retryAfter, res.hasRetryAfter = fetch.ParseRetryAfter(resp.Header.Get("Retry-After"), cr.cfg.Now())
		if res.hasRetryAfter && (resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable) {
			cr.waits.set(cr.leaseHost(l), waitRetryAfter, cr.cfg.Now().Add(res.retryAfter))
			// The host's block is on disk before its URL is settled, so
			// that no restart, however abrupt, contacts it sooner.
			if cr.db != nil {
				if err := cr.saveState(); err != nil {
					cr.cfg.Logger.Warn("saving the crawl state", "err", err)
				}
			}
		}
	}
	return &Page{
		doc:           &pageDoc{},
		md:            &pageMD{},
		URL:           l.URL,
		FinalURL:      resp.FinalURL.String(),
		Depth:         l.Depth,
		Attempt:       l.Attempt,
		Data:          data,
		StatusCode:    resp.StatusCode,
		Header:        resp.Header,
		ContentType:   resp.ContentType,
		Body:          resp.Body,
		Truncated:     resp.Truncated,
		Media:         media,
		Fetched:       fetched,
		Timing:        resp.Timing,
		Redirects:     resp.Redirects,
		RequestHeader: resp.RequestHeader,
		RemoteAddr:    resp.RemoteAddr,
		Wire:          resp.Wire,
		finalURL:      resp.FinalURL,
	}, true
}

// gotResponse reports whether a page fetch that returned err got an answer
// from the server, which Config.MaxPages counts: a success, a 304, or an
// answer the fetcher refused once it came (without that, a site whose every
// link redirects out of scope would never use the budget up).
func gotResponse(err error) bool {
	return err == nil || errors.Is(err, fetch.ErrNotModified) || refusedAnswer(err)
}

// refusedAnswers are the fetcher's refusals of an answer it got: limits
// and checks applied to the response, which asking again would meet again.
var refusedAnswers = []error{fetch.ErrDisallowed, fetch.ErrTooManyRedirects, fetch.ErrHeadersTooLarge,
	fetch.ErrBodyTooLarge, fetch.ErrDecompressionBomb, fetch.ErrUnsupportedEncoding, fetch.ErrBadEncoding}

// refusedAnswer reports whether err is one of refusedAnswers.
func refusedAnswer(err error) bool {
	for _, r := range refusedAnswers {
		if errors.Is(err, r) {
			return true
		}
	}
	return false
}

// pageBudget enforces Config.MaxPages. A request is admitted only while
// the responses received and the requests in flight are fewer than the
// limit, and one that ends without a response gives its place back. A
// request that finds the remaining places taken by requests in flight
// waits until they end, so that failing requests neither let more than
// MaxPages responses in nor stop the crawl short of them.
type pageBudget struct {
	max      int
	mu       sync.Mutex
	changed  sync.Cond // signalled when a request in flight ends
	done     int       // responses received
	inFlight int
}

func newPageBudget(max int) *pageBudget {
	b := &pageBudget{max: max}
	b.changed.L = &b.mu
	return b
}

// acquire admits a request, waiting for requests in flight if needed. It
// reports false once MaxPages responses were received.
func (b *pageBudget) acquire() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	for b.done < b.max && b.done+b.inFlight >= b.max {
		b.changed.Wait()
	}
	if b.done >= b.max {
		return false
	}
	b.inFlight++
	return true
}

// release ends a request admitted by acquire; response reports that it got
// one.
func (b *pageBudget) release(response bool) {
	b.mu.Lock()
	b.inFlight--
	if response {
		b.done++
	}
	b.mu.Unlock()
	b.changed.Broadcast()
}

// markRedirectTarget records the URL a redirected fetch of l ended at as
// seen, through the checks a link to it passes (scope, depth, trap, seen
// set), so that links found later do not fetch it again: its content is
// handled as l's page. It is not queued. A target that was seen already
// (queued from a link before) is fetched under its own URL as well; one
// that fails the checks is not recorded. known reports a target that was
// seen already, and so is perhaps queued and fetched again when leased
// unless its key is remembered (rememberRedirected).
func (cr *Crawler) markRedirectTarget(l *frontier.Lease, final *url.URL) (targetKey uint64, known bool) {
	if final == nil {
		return 0, false
	}
	n, err := urlnorm.Normalize(final.String())
	if err != nil || n == l.URL {
		return 0, false
	}
	var link Link
	_, key, ok := cr.admitURL(n, l.URL, l.Depth, &link)
	if !ok {
		return urlnorm.Key(n), link.Followed
	}
	// Recorded on disk without a sync of its own: the synced write that
	// settles l makes it durable, and a crash before that fetches l, and
	// so the target, again.
	if cr.claims != nil {
		if err := cr.claims.durable([]uint64{key}, true); err != nil {
			cr.cfg.Logger.Warn("seen store", "err", err)
		}
	}
	return 0, false
}

// maxRedirected bounds Crawler.redirected. Forgetting a key costs at most
// one extra fetch of its URL.
const maxRedirected = 1 << 16

// rememberRedirected records that the URL with key was fetched as a
// redirect target although it was already known to the crawl.
func (cr *Crawler) rememberRedirected(key uint64) {
	cr.redirectedMu.Lock()
	defer cr.redirectedMu.Unlock()
	if cr.redirected == nil {
		cr.redirected = make(map[uint64]struct{})
	}
	if len(cr.redirected) >= maxRedirected {
		for k := range cr.redirected {
			delete(cr.redirected, k)
			break
		}
	}
	cr.redirected[key] = struct{}{}
}

// takeRedirected reports whether l's URL was already fetched in this Run
// as the target of another URL's redirect, and forgets that, so that it
// answers true once. A lease of a URL fetched successfully before (a
// recrawl) is never skipped: the redirect may have been long ago.
func (cr *Crawler) takeRedirected(l *frontier.Lease) bool {
	if l.Fingerprint != 0 || l.Interval != 0 {
		return false
	}
	cr.redirectedMu.Lock()
	defer cr.redirectedMu.Unlock()
	if len(cr.redirected) == 0 {
		return false
	}
	key := urlnorm.Key(l.URL)
	if _, ok := cr.redirected[key]; !ok {
		return false
	}
	delete(cr.redirected, key)
	return true
}
