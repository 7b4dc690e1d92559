package crawlkit

import (
	"testing"
	"time"
)

// Stats.Waiting counts the waits in force at now and forgets those over.
func TestWaitsSnapshot(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var w waits
	w.setDelay("slow.test", 5*time.Second)
	w.setDelay("slower.test", 9*time.Second)
	w.set("down.test", waitRobots, now.Add(time.Minute))
	w.set("down2.test", waitRobots, now.Add(30*time.Second))
	w.set("busy.test", waitRetryAfter, now.Add(2*time.Minute))
	w.set("was-busy.test", waitRetryAfter, now.Add(-time.Second))
	s := w.snapshot(now)
	want := WaitStats{CrawlDelayHosts: 2, LongestCrawlDelay: 9 * time.Second, RobotsRetryHosts: 2,
		NextRobotsRetry: now.Add(30 * time.Second), RetryAfterHosts: 1, RetryAfterUntil: now.Add(2 * time.Minute)}
	if s != want {
		t.Errorf("snapshot = %+v, want %+v", s, want)
	}
	// Past their end, the robots and Retry-After waits are forgotten.
	if s := w.snapshot(now.Add(time.Hour)); s.RobotsRetryHosts != 0 || s.RetryAfterHosts != 0 || s.CrawlDelayHosts != 2 {
		t.Errorf("an hour later: %+v", s)
	}
}
