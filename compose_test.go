package crawlkit_test

import (
	"errors"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/fetch"
	"github.com/crawlkit/crawlkit/frontier"
)

func TestOutcomeOf(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	resp := func(status int, retryAfter string) *fetch.Response {
		h := http.Header{}
		if retryAfter != "" {
			h.Set("Retry-After", retryAfter)
		}
		return &fetch.Response{StatusCode: status, Header: h}
	}
	for _, c := range []struct {
		name  string
		resp  *fetch.Response
		err   error
		kind  frontier.OutcomeKind
		after time.Duration
	}{
		{"200", resp(200, ""), nil, frontier.OutcomeSuccess, 0},
		{"404 is final", resp(404, ""), nil, frontier.OutcomeFailed, 0},
		{"410 is final", resp(410, ""), nil, frontier.OutcomeFailed, 0},
		{"503 retried", resp(503, ""), nil, frontier.OutcomeRetry, 0},
		{"429 after Retry-After", resp(429, "120"), nil, frontier.OutcomeRetry, 2 * time.Minute},
		{"503 after an HTTP-date", resp(503, now.Add(time.Minute).Format(http.TimeFormat)), nil, frontier.OutcomeRetry, time.Minute},
		{"Retry-After beyond the wait cap fails", resp(429, "86400"), nil, frontier.OutcomeFailed, 0},
		{"304", nil, fetch.ErrNotModified, frontier.OutcomeNotModified, 0},
		{"timeout retried", nil, fetch.ErrTimeout, frontier.OutcomeRetry, 0},
		{"dropped connection retried", nil, &url.Error{Op: "Get", URL: "http://a.test/", Err: errors.New("connection reset by peer")}, frontier.OutcomeRetry, 0},
		{"private address fails", nil, fetch.ErrBlockedAddress, frontier.OutcomeFailed, 0},
	} {
		o := crawlkit.OutcomeOf(c.resp, c.err, now)
		if o.Kind != c.kind || o.RetryAfter != c.after {
			t.Errorf("%s: OutcomeOf = %v after %v, want %v after %v", c.name, o.Kind, o.RetryAfter, c.kind, c.after)
		}
	}
}
