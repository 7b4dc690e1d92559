package frontierapi

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/frontier"
)

// fillWorkers fills c's worker table with maxWorkers workers holding one
// lease each, seen at now.
func fillWorkers(c *counters, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := range maxWorkers {
		c.workers[fmt.Sprintf("w%d", i)] = &workerState{leased: 1, lastSeen: now}
	}
}

func TestWorkerTableFullOfLeases(t *testing.T) {
	now := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	c := newCounters(4, now)
	fillWorkers(c, now)

	// No worker can be evicted: the new one is not tracked.
	c.seen("new", now)
	if !c.mu.TryLock() {
		t.Fatal("counters mutex held after seen")
	}
	c.mu.Unlock()
	if _, ok := c.workers["new"]; ok || len(c.workers) != maxWorkers {
		t.Fatalf("full table of busy workers: new worker tracked %v, %d workers", ok, len(c.workers))
	}
	// Its leases count all the same.
	b := &batch{items: map[string]*frontier.Lease{"http://a.test/": {URL: "http://a.test/", Host: "a.test"}}}
	c.leasedTo("new", b, now)
	if c.leased != 1 || c.activeHosts["a.test"] != 1 || len(c.workers) != maxWorkers {
		t.Fatalf("leases of an untracked worker: leased %d, active hosts %v, %d workers", c.leased, c.activeHosts, len(c.workers))
	}

	// With idle workers, the least recently seen half of them (rounded
	// up) make room; busy workers stay.
	for id, seen := range map[string]time.Time{"w0": now.Add(-time.Minute), "w1": now.Add(-time.Second), "w2": now} {
		c.workers[id].leased = 0
		c.workers[id].lastSeen = seen
	}
	c.seen("new", now)
	_, w0 := c.workers["w0"]
	_, w1 := c.workers["w1"]
	_, w2 := c.workers["w2"]
	_, w3 := c.workers["w3"]
	if _, ok := c.workers["new"]; !ok || w0 || w1 || !w2 || !w3 || len(c.workers) != maxWorkers-1 {
		t.Fatalf("after pruning: new %v, w0 %v, w1 %v, w2 %v, w3 %v, %d workers", ok, w0, w1, w2, w3, len(c.workers))
	}
}

// A worker arriving when every tracked worker holds a lease is served, and
// the service keeps answering.
func TestNextWithWorkerTableFullOfLeases(t *testing.T) {
	now := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	s, err := New(Config{Token: "x", Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	fillWorkers(s.stats, now)
	if _, err := s.Submit(SubmitRequest{URLs: []SubmitURL{{URL: "http://a.test/"}}}); err != nil {
		t.Fatal(err)
	}
	r, err := s.Next(context.Background(), "new", 1, 0)
	if err != nil || len(r.URLs) != 1 {
		t.Fatalf("Next: %v %+v", err, r)
	}
	st := s.Stats()
	if st.Leased != 1 || st.Workers.Active != maxWorkers {
		t.Fatalf("stats: leased %d, active workers %d", st.Leased, st.Workers.Active)
	}
	if _, err := s.Settle(ResultsRequest{LeaseID: r.LeaseID, Results: []Result{{URL: "http://a.test/", Status: ResultSuccess, HTTPStatus: 200}}}); err != nil {
		t.Fatal(err)
	}
	if st := s.Stats(); st.Leased != 0 || st.URLs.Successful != 1 {
		t.Fatalf("stats after settling: leased %d, successful %d", st.Leased, st.URLs.Successful)
	}
}
