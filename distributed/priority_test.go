package distributed

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/frontier"
)

// TestPriorityBandsWithinPartition publishes a partition's low-priority
// URLs (depth 3, the default breadth-first Prioritizer's band 3) before its
// high-priority ones (depth 0, band 0), lets the owner take them all into
// its prefetch window, and checks that it leases by band, not in stream
// order: a host's band-0 URLs first, and across hosts band 0 in the
// frontier's weighted share (8 of every 9 leases against band 3).
func TestPriorityBandsWithinPartition(t *testing.T) {
	url := embeddedServer(t, "priority")
	q := snapshotQueue(t, url, "priority", -1)
	ctx := context.Background()
	p := q.parts[0]
	if err := q.acquire(ctx, p); err != nil {
		t.Fatal(err)
	}
	defer q.release(ctx, p)
	var low, high []frontier.Entry
	for i := range 20 {
		// One host with many URLs, and many hosts with one.
		low = append(low, frontier.Entry{URL: fmt.Sprintf("http://one.test/deep-%d", i), Depth: 3},
			frontier.Entry{URL: fmt.Sprintf("http://h%02d.test/deep", i), Depth: 3})
		high = append(high, frontier.Entry{URL: fmt.Sprintf("http://one.test/top-%d", i)},
			frontier.Entry{URL: fmt.Sprintf("http://g%02d.test/top", i)})
	}
	if err := q.Add(low...); err != nil {
		t.Fatal(err)
	}
	if err := q.Add(high...); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		q.mu.Lock()
		ready := len(q.held) == len(low)+len(high) && !p.confirmed.IsZero()
		q.mu.Unlock()
		if ready {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the owner holds %d of %d URLs (pin confirmed: %v)", q.QueueStats().Held, len(low)+len(high), !p.confirmed.IsZero())
		}
		time.Sleep(10 * time.Millisecond)
	}
	depth := map[string]int{}
	for _, e := range append(low, high...) {
		depth[e.URL] = e.Depth
	}
	leased := settle(t, q, len(low)+len(high))
	var oneHost []int // depths of one.test's URLs in lease order
	highInFirst := 0
	for i, u := range leased {
		if strings.HasPrefix(u, "http://one.test/") {
			oneHost = append(oneHost, depth[u])
		}
		if i < 18 && depth[u] == 0 {
			highInFirst++
		}
	}
	if !slices.IsSorted(oneHost) || len(oneHost) != 40 {
		t.Errorf("one.test leased in depth order %v, want its 20 depth-0 URLs first", oneHost)
	}
	if highInFirst < 16 {
		t.Errorf("%d band-0 URLs among the first 18 leases, want at least 16 (weights 8:1); order %v", highInFirst, leased[:18])
	}
}
