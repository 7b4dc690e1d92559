package redis

import (
	"context"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/frontier"
)

// TestUnreadableRecordIsDropped checks that a URL record the queue cannot
// decode neither fails the lease call that meets it (losing the readable
// leases of the same call) nor comes back after its lease expires: it is
// settled as failed and counted in Stats.Corrupt.
func TestUnreadableRecordIsDropped(t *testing.T) {
	db := openTestDB(t)
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	q, err := db.Queue(QueueConfig{Now: clock, LeaseTTL: time.Minute, Politeness: frontier.FixedDelay(0)})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	ctx := context.Background()
	good, bad := "http://good.test/", "http://bad.test/"
	if _, err := q.AddAt(ctx, now, frontier.Entry{URL: good}, frontier.Entry{URL: bad}); err != nil {
		t.Fatal(err)
	}
	if err := db.client.HSet(ctx, db.key("u"), urlID(bad), "\xffnot a record").Err(); err != nil {
		t.Fatal(err)
	}

	ls, _, err := q.LeaseAt(ctx, now, 2)
	if err != nil {
		t.Fatalf("LeaseAt with one unreadable record: %v", err)
	}
	if len(ls) != 1 || ls[0].URL != good {
		t.Fatalf("leases %v, want only %s", leaseURLs(ls), good)
	}
	if got := q.Stats().Corrupt; got != 1 {
		t.Errorf("Stats.Corrupt = %d, want 1", got)
	}
	if _, err := q.DoneAt(ctx, now, ls[0], frontier.Outcome{Kind: frontier.OutcomeSuccess}); err != nil {
		t.Fatal(err)
	}

	// Past any lease's expiry nothing is left: the unreadable URL was
	// settled, not left to expire and be leased again.
	now = now.Add(time.Hour)
	ls, next, err := q.LeaseAt(ctx, now, 2)
	if err != nil || len(ls) != 0 || !next.IsZero() {
		t.Fatalf("after expiry: leases %v, next %v, err %v; want nothing queued or leased", leaseURLs(ls), next, err)
	}
	if got := q.Stats().Corrupt; got != 1 {
		t.Errorf("Stats.Corrupt after expiry = %d, want 1", got)
	}
}

func leaseURLs(ls []*frontier.Lease) []string {
	var us []string
	for _, l := range ls {
		us = append(us, l.URL)
	}
	return us
}
