package settle

import (
	"errors"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/frontier"
)

func TestPlan(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	p := Policy{MaxAttempts: 3, RetryBase: 10 * time.Second, RetryMax: 25 * time.Second}
	sched := Policy{MaxAttempts: 3, RetryBase: time.Second, RetryMax: time.Minute, Schedule: frontier.FixedInterval(time.Hour)}
	lease := &frontier.Lease{URL: "http://a.test/", Attempt: 0, Fingerprint: 7, Interval: 2 * time.Hour}

	for _, tc := range []struct {
		name   string
		policy Policy
		lease  frontier.Lease
		o      frontier.Outcome
		want   Settlement
		result frontier.Settlement // what Done reports
	}{
		{"failed", p, *lease, frontier.Failed(), Settlement{State: Failed, Fingerprint: 7, Interval: 2 * time.Hour}, frontier.Settlement{Kind: frontier.SettlementFailed}},
		{"first retry waits the base", p, *lease, frontier.Retry(0),
			Settlement{State: Queued, Next: now.Add(10 * time.Second), Attempts: 1, Fingerprint: 7, Interval: 2 * time.Hour}, frontier.Settlement{Kind: frontier.SettlementRetrying, At: now.Add(10 * time.Second), Attempt: 1}},
		{"Retry-After longer than the backoff wins", p, *lease, frontier.Retry(time.Minute),
			Settlement{State: Queued, Next: now.Add(time.Minute), Attempts: 1, Fingerprint: 7, Interval: 2 * time.Hour}, frontier.Settlement{Kind: frontier.SettlementRetrying, At: now.Add(time.Minute), Attempt: 1}},
		{"backoff doubles and is capped", p, frontier.Lease{Attempt: 1}, frontier.Retry(0),
			Settlement{State: Queued, Next: now.Add(20 * time.Second), Attempts: 2}, frontier.Settlement{Kind: frontier.SettlementRetrying, At: now.Add(20 * time.Second), Attempt: 2}},
		{"last attempt is dropped", p, frontier.Lease{Attempt: 2}, frontier.Retry(0),
			Settlement{State: Failed, Attempts: 3, Dropped: true}, frontier.Settlement{Kind: frontier.SettlementGivenUp, Attempt: 3}},
		{"success without a schedule is done", p, *lease, frontier.Success(9),
			Settlement{State: Done, Fingerprint: 9, Interval: 2 * time.Hour, Fetched: true}, frontier.Settlement{Kind: frontier.SettlementFinished}},
		{"success with a schedule is queued again", sched, frontier.Lease{Attempt: 2, Fingerprint: 7}, frontier.Success(9),
			Settlement{State: Queued, Next: now.Add(time.Hour), Fingerprint: 9, Interval: time.Hour, Fetched: true, Recrawl: true}, frontier.Settlement{Kind: frontier.SettlementRecrawl, At: now.Add(time.Hour)}},
		{"RecrawlAt overrides", p, *lease, frontier.Outcome{Kind: frontier.OutcomeSuccess, RecrawlAt: now.Add(3 * time.Hour)},
			Settlement{State: Queued, Next: now.Add(3 * time.Hour), Fingerprint: 7, Interval: 3 * time.Hour, Fetched: true, Recrawl: true}, frontier.Settlement{Kind: frontier.SettlementRecrawl, At: now.Add(3 * time.Hour)}},
	} {
		got, err := tc.policy.Plan(&tc.lease, tc.o, now)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if got != tc.want {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.name, got, tc.want)
		}
		if r := got.Result(); r != tc.result {
			t.Errorf("%s: result %+v, want %+v", tc.name, r, tc.result)
		}
	}

	// Adaptive recrawl: an unchanged page (304) lengthens its interval.
	ad := Policy{MaxAttempts: 3, Schedule: frontier.Adaptive{}}
	got, err := ad.Plan(&frontier.Lease{Interval: 10 * time.Hour}, frontier.NotModified(), now)
	if err != nil || got.State != Queued || got.Interval <= 10*time.Hour {
		t.Errorf("not modified with Adaptive: %+v, %v; want a longer interval than 10h", got, err)
	}

	if _, err := p.Plan(lease, frontier.Outcome{Kind: 99}, now); !errors.Is(err, frontier.ErrInvalidOutcome) {
		t.Errorf("unknown kind: %v", err)
	}
}
