package frontierapi

import (
	"hash/maphash"
	"time"
)

// Bounds of the table of recently ended leases (see recentLease).
const (
	maxRecentLeases = 10000  // lease IDs remembered
	maxRecentURLs   = 100000 // URLs of those leases, all together
)

// recentLease is a lease ID that is no longer live (every URL of it was
// settled, or it expired and the service forgot it), remembered for a while
// so that a 429 or 503 with Retry-After for one of its URLs still blocks
// that URL's host: a throttled fetch may outlast its lease. It keeps the
// hosts of the URLs that were handed out under the ID, and nothing else
// blocks a host through it.
//
// An ID is remembered for its lease duration (Frontier.LeaseTTL, default 5
// minutes) from when it expired, or from when its last URL was settled if
// that came first, and at most maxRecentLeases IDs holding maxRecentURLs
// URLs in all are kept, the oldest forgotten first. URLs are kept as 64-bit
// hashes, so the table's size does not depend on their length; a hash
// collision can only block a host that was in the lease.
type recentLease struct {
	id     string
	worker string
	until  time.Time
	hosts  map[uint64]string // urlKey of every handed-out URL -> its host
}

// recentLeases is the table of recentLease, guarded by Server.mu.
type recentLeases struct {
	seed    maphash.Seed
	byID    map[string]*recentLease
	order   []*recentLease // oldest first
	urls    int            // URLs held by order
	maxIDs  int
	maxURLs int
}

func newRecentLeases() *recentLeases {
	return &recentLeases{seed: maphash.MakeSeed(), byID: map[string]*recentLease{},
		maxIDs: maxRecentLeases, maxURLs: maxRecentURLs}
}

// urlKey is the key of a leased URL in batch.hosts and recentLease.hosts.
func (r *recentLeases) urlKey(u string) uint64 { return maphash.String(r.seed, u) }

// addLocked remembers batch b until until, unless that has passed.
// Requires Server.mu.
func (r *recentLeases) addLocked(b *batch, until, now time.Time) {
	r.expireLocked(now)
	if !until.After(now) || len(b.hosts) == 0 || r.maxIDs <= 0 || len(b.hosts) > r.maxURLs {
		return
	}
	e := &recentLease{id: b.id, worker: b.worker, until: until, hosts: b.hosts}
	r.byID[e.id] = e
	r.order = append(r.order, e)
	r.urls += len(e.hosts)
	for len(r.order) > r.maxIDs || r.urls > r.maxURLs {
		r.popLocked()
	}
}

// getLocked returns the remembered lease id, or nil. Requires Server.mu.
func (r *recentLeases) getLocked(id string, now time.Time) *recentLease {
	r.expireLocked(now)
	if e := r.byID[id]; e != nil && e.until.After(now) {
		return e
	}
	return nil
}

// expireLocked forgets the oldest leases whose time has passed. Every lease
// is remembered for at most its lease duration after it was added, so none
// stays in memory longer than that past its time. Requires Server.mu.
func (r *recentLeases) expireLocked(now time.Time) {
	for len(r.order) > 0 && !r.order[0].until.After(now) {
		r.popLocked()
	}
}

func (r *recentLeases) popLocked() {
	e := r.order[0]
	r.order[0] = nil
	r.order = r.order[1:]
	r.urls -= len(e.hosts)
	delete(r.byID, e.id)
	if len(r.order) == 0 {
		r.order = nil // let the backing array go
	}
}
