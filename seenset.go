package crawlkit

import (
	"sync"

	"github.com/crawlkit/crawlkit/bloom"
)

// The seen set answers "was this URL queued before?" for every link of
// every page. Its Bloom filter alone would answer "yes" wrongly for up to
// Options.FalsePositiveRate of new URLs, and the crawl would drop them
// without a word; so every "maybe" of the filter is decided by an exact
// store behind it (bloom.Store). In memory that is a set of keys; with a
// DataDir it is claimedStore: the keys claimed but not yet on disk, a
// bounded cache of keys found on disk, and the disk.

// recentSeen bounds claimedStore's cache of keys found on disk: most links
// of a crawl point to the same navigation pages, which the cache answers
// without a disk read.
const recentSeen = 1 << 16

// claimedStore is the seen set's exact store with a DataDir. A key is
// claimed in memory when admitted (Add) and written to disk only once its
// URL is durably queued (enqueue), so that a crash never records a URL as
// seen that is not queued; durable removes it from the claims then.
type claimedStore struct {
	disk SeenStore

	mu      sync.Mutex
	claimed map[uint64]struct{}
	recent  map[uint64]struct{} // found on disk; cleared when full
}

func newClaimedStore(disk SeenStore) *claimedStore {
	return &claimedStore{disk: disk, claimed: map[uint64]struct{}{}, recent: map[uint64]struct{}{}}
}

var _ bloom.Store = (*claimedStore)(nil)

func (s *claimedStore) Contains(key uint64) (bool, error) {
	s.mu.Lock()
	_, c := s.claimed[key]
	_, r := s.recent[key]
	s.mu.Unlock()
	if c || r {
		return true, nil
	}
	ok, err := s.disk.Contains(key)
	if ok {
		s.mu.Lock()
		if len(s.recent) >= recentSeen {
			clear(s.recent)
		}
		s.recent[key] = struct{}{}
		s.mu.Unlock()
	}
	return ok, err
}

// Add claims key; the bloom.Set calls it for a new key.
func (s *claimedStore) Add(key uint64) error {
	s.mu.Lock()
	s.claimed[key] = struct{}{}
	s.mu.Unlock()
	return nil
}

// ForEach yields the keys on disk, to build the filter at open.
func (s *claimedStore) ForEach(fn func(uint64) error) error { return s.disk.ForEach(fn) }

// durable records keys on disk (synced when lazy is false) and drops
// their claims.
func (s *claimedStore) durable(keys []uint64, lazy bool) error {
	add := s.disk.AddBatch
	if lazy {
		add = s.disk.AddLazy
	}
	if err := add(keys); err != nil {
		// Claimed they stay: they are queued, and a rediscovery in this
		// Run must not queue them again.
		return err
	}
	s.mu.Lock()
	for _, k := range keys {
		delete(s.claimed, k)
	}
	s.mu.Unlock()
	return nil
}
