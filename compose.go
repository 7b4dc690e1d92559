package crawlkit

import (
	"net/http"
	"time"

	"github.com/crawlkit/crawlkit/fetch"
	"github.com/crawlkit/crawlkit/frontier"
)

// OutcomeOf is the frontier outcome of one fetch as the Crawler decides
// it, for a crawl loop built from the packages without the Crawler: a 2xx
// succeeds, a 304 (fetch.ErrNotModified) is not modified, a 429 or 5xx and
// a timeout or dropped connection are retried (after Retry-After, RFC 9110
// §10.2.3, when the server sent one and it is within DefaultMaxRetryWait),
// and the rest fails for good. The Retry-After is read against now.
func OutcomeOf(resp *fetch.Response, err error, now time.Time) frontier.Outcome {
	r := &result{err: err}
	if err == nil && resp != nil {
		r.status = resp.StatusCode
		if r.status == http.StatusTooManyRequests || r.status >= 500 {
			r.retryAfter, r.hasRetryAfter = fetch.ParseRetryAfter(resp.Header.Get("Retry-After"), now)
		}
	}
	return classify(r, 0, settlePolicy{maxRetryWait: DefaultMaxRetryWait}, now).outcome
}
