package crawlkit

import (
	"errors"
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/fetch"
	"github.com/crawlkit/crawlkit/frontier"
)

// TestClassify walks the decisions a lease's result leads to: the table is
// the settlement policy.
func TestClassify(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p := settlePolicy{robotsRetries: 2, maxRetryWait: 5 * time.Minute}
	netErr := &url.Error{Op: "Get", URL: "http://a.test/", Err: errors.New("connection refused")}
	cases := []struct {
		name    string
		r       result
		attempt int
		kind    frontier.OutcomeKind
		after   time.Duration
		class   settleClass
		reason  Reason
	}{
		{"ok", result{status: 200, fingerprint: 7}, 0, frontier.OutcomeSuccess, 0, classSuccess, reasonNone},
		{"redirect fetched", result{redirectFetched: true}, 0, frontier.OutcomeSuccess, 0, classRedirected, reasonNone},
		{"not found", result{status: 404}, 0, frontier.OutcomeFailed, 0, classFailed, reasonNone},
		{"server error", result{status: 500}, 0, frontier.OutcomeRetry, 0, classRetry, ReasonHTTPError},
		{"429 retry-after", result{status: 429, retryAfter: time.Minute, hasRetryAfter: true}, 0, frontier.OutcomeRetry, time.Minute, classRetry, ReasonRetryAfter},
		{"503 retry-after an hour", result{status: 503, retryAfter: time.Hour, hasRetryAfter: true}, 0, frontier.OutcomeFailed, 0, classNotFetched, ReasonMaxWait},
		{"handler error", result{status: 200, handlerErr: errors.New("db down")}, 0, frontier.OutcomeRetry, 0, classRetry, ReasonHandlerError},
		{"handler error on 404", result{status: 404, handlerErr: errors.New("db down")}, 0, frontier.OutcomeRetry, 0, classRetry, ReasonHandlerError},
		{"links not queued", result{status: 200, linksErr: errors.New("queue down")}, 0, frontier.OutcomeRetry, 0, classRetry, ReasonLinksPending},
		{"robots", result{gate: ReasonRobots}, 0, frontier.OutcomeFailed, 0, classNotFetched, ReasonRobots},
		{"guard", result{gate: ReasonGuard}, 0, frontier.OutcomeFailed, 0, classNotFetched, ReasonGuard},
		{"redirect out of scope", result{gate: ReasonScope, err: fetch.ErrDisallowed}, 0, frontier.OutcomeFailed, 0, classNotFetched, ReasonScope},
		{"robots unreachable", result{gate: ReasonRobotsUnreachable, robotsRetryAt: now.Add(time.Minute)}, 0, frontier.OutcomeRetry, time.Minute, classRetry, ReasonRobotsUnreachable},
		{"robots unreachable, retries spent", result{gate: ReasonRobotsUnreachable, robotsRetryAt: now.Add(time.Minute)}, 2, frontier.OutcomeFailed, 0, classNotFetched, ReasonRobotsUnreachable},
		{"robots unreachable for an hour", result{gate: ReasonRobotsUnreachable, robotsRetryAt: now.Add(time.Hour)}, 0, frontier.OutcomeFailed, 0, classNotFetched, ReasonMaxWait},
		{"not modified", result{err: fmt.Errorf("fetch: %w", fetch.ErrNotModified)}, 0, frontier.OutcomeNotModified, 0, classNotModified, reasonNone},
		{"guard on the page", result{err: fmt.Errorf("fetch: %w", fetch.ErrBlockedAddress)}, 0, frontier.OutcomeFailed, 0, classNotFetched, ReasonGuard},
		{"host blocked", result{err: &fetch.HostBlockedError{Host: "a.test", Until: now.Add(2 * time.Minute)}}, 0, frontier.OutcomeRetry, 2 * time.Minute, classRetry, ReasonRetryAfter},
		{"timeout", result{err: fmt.Errorf("fetch: %w", fetch.ErrTimeout)}, 0, frontier.OutcomeRetry, 0, classRetry, ReasonFetchError},
		{"network", result{err: netErr}, 0, frontier.OutcomeRetry, 0, classRetry, ReasonFetchError},
		{"body too large", result{err: fmt.Errorf("fetch: %w", fetch.ErrBodyTooLarge)}, 0, frontier.OutcomeFailed, 0, classFailed, ReasonFetchError},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := classify(&c.r, c.attempt, p, now)
			if d.outcome.Kind != c.kind || d.outcome.RetryAfter != c.after || d.class != c.class || d.reason != c.reason {
				t.Errorf("classify = kind %v after %v class %d reason %q; want kind %v after %v class %d reason %q",
					d.outcome.Kind, d.outcome.RetryAfter, d.class, d.reason, c.kind, c.after, c.class, c.reason)
			}
		})
	}
}

// Every reason has a name that reads back as itself.
func TestReasonNames(t *testing.T) {
	seen := map[string]bool{}
	for r := Reason(1); r < numReasons; r++ {
		name := r.String()
		if name == "" || seen[name] {
			t.Fatalf("reason %d: name %q empty or taken", r, name)
		}
		seen[name] = true
		var back Reason
		if err := back.UnmarshalText([]byte(name)); err != nil || back != r {
			t.Errorf("%q reads back as %v, %v", name, back, err)
		}
	}
}
