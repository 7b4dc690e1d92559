package frontierapi

import (
	"fmt"
	"runtime"
	"testing"
	"time"
)

func heapAlloc() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// The table of ended leases stays within its bounds in entries and in
// memory however many leases end, and holds nothing once their time has
// passed. Hosts here are distinct strings of 24 bytes (in the service they
// are shared with the frontier's host table).
func TestRecentLeasesMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("fills the table at its real bounds")
	}
	now := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	const perLease = maxRecentURLs / maxRecentLeases // both bounds reached together
	r := newRecentLeases()
	before := heapAlloc()
	fill := func(n, from int) {
		for i := range n {
			b := &batch{id: newLeaseID(), worker: "w1", hosts: make(map[uint64]string, perLease)}
			for j := range perLease {
				host := fmt.Sprintf("host-%08d.example.com", (from+i)*perLease+j)
				b.hosts[r.urlKey("https://"+host+"/some/path?q=1")] = host
			}
			r.addLocked(b, now.Add(5*time.Minute), now)
		}
	}
	fill(maxRecentLeases, 0)
	full := heapAlloc() - before
	if len(r.byID) != maxRecentLeases || r.urls != maxRecentURLs {
		t.Fatalf("%d leases, %d URLs", len(r.byID), r.urls)
	}
	fill(2*maxRecentLeases, maxRecentLeases)
	over := heapAlloc() - before
	if len(r.byID) != maxRecentLeases || r.urls != maxRecentURLs || len(r.order) != maxRecentLeases {
		t.Fatalf("past the bounds: %d leases, %d URLs", len(r.byID), r.urls)
	}
	t.Logf("full table: %d leases, %d URLs, %.1f MiB (%.0f bytes a URL); after 3x as many leases: %.1f MiB",
		maxRecentLeases, maxRecentURLs, float64(full)/(1<<20), float64(full)/maxRecentURLs, float64(over)/(1<<20))
	const limit = 32 << 20
	if full > limit || over > limit {
		t.Fatalf("table holds %d, then %d bytes; want at most %d", full, over, limit)
	}
	r.expireLocked(now.Add(5 * time.Minute))
	if len(r.byID) != 0 || r.urls != 0 || r.order != nil {
		t.Fatalf("after the window: %d leases, %d URLs, order %d", len(r.byID), r.urls, len(r.order))
	}
	if left := int64(heapAlloc()) - int64(before); left > 1<<20 {
		t.Fatalf("after the window the table still holds %d bytes", left)
	}
	runtime.KeepAlive(r)
}
