package bloom

import "sync"

// Store is an exact set of 64-bit keys behind the filter. TestAndAdd calls
// it with the key's shard locked, so a Store need not make Contains-then-Add
// atomic itself. ContainsKey and Contains call Contains without that lock,
// so a Store must be safe for concurrent use, including a Contains of a key
// while that key is being added (which may answer either way).
//
// Exactness: keys are 64-bit hashes (see Key), so two distinct URLs can
// share one. With n keys stored, a URL never seen collides with one of them
// with probability n/2^64, and the expected number of colliding pairs over
// a whole crawl of n URLs is about n²/2^65: 2.7×10⁻⁶ for 10⁷ URLs, 0.027
// for 10⁹ and 2.7 for 10¹⁰. A collision makes a new URL look seen (a false
// positive); it can never make a seen URL look new.
//
// The filter must hold every key of the store: New reads the store's keys
// into a fresh filter, and a snapshot restored with Load over a store must
// have been written after the store's last Add (a clean shutdown). After a
// crash, rebuild with New.
type Store interface {
	// Contains reports whether key has been added.
	Contains(key uint64) (bool, error)
	// Add records key durably (as far as the store is durable). Adding a
	// key twice is harmless.
	Add(key uint64) error
	// ForEach calls fn for every key, in any order, stopping at the first
	// error, which it returns.
	ForEach(fn func(key uint64) error) error
}

// MemoryStore is an in-memory Store for tests and small crawls. The zero
// value is ready to use.
type MemoryStore struct {
	mu   sync.RWMutex
	keys map[uint64]struct{}
}

// NewMemoryStore returns an empty MemoryStore.
func NewMemoryStore() *MemoryStore { return &MemoryStore{} }

// Contains implements Store.
func (m *MemoryStore) Contains(key uint64) (bool, error) {
	m.mu.RLock()
	_, ok := m.keys[key]
	m.mu.RUnlock()
	return ok, nil
}

// Add implements Store.
func (m *MemoryStore) Add(key uint64) error {
	m.mu.Lock()
	if m.keys == nil {
		m.keys = make(map[uint64]struct{})
	}
	m.keys[key] = struct{}{}
	m.mu.Unlock()
	return nil
}

// ForEach implements Store. fn must not call Add on the same store.
func (m *MemoryStore) ForEach(fn func(key uint64) error) error {
	m.mu.RLock()
	defer m.mu.RUnlock()
	for k := range m.keys {
		if err := fn(k); err != nil {
			return err
		}
	}
	return nil
}

// Len returns the number of keys stored.
func (m *MemoryStore) Len() int {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return len(m.keys)
}

// BatchStore is a Store that records several keys in one write (one fsync
// for a durable store); Set.AddKeys uses it.
type BatchStore interface {
	Store
	AddBatch(keys []uint64) error
}
