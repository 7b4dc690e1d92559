package simhash

import "sync"

// Store persists an Index's entries. The index keeps its tables in memory
// and rebuilds them from the store when it is created, so a store only
// needs to append and to list. Put is called with the index's write lock
// held, one call at a time per index.
type Store interface {
	// Put records entries durably (as far as the store is durable).
	Put(entries []Entry) error
	// ForEach calls fn for every entry recorded, in any order, stopping at
	// the first error, which it returns.
	ForEach(fn func(Entry) error) error
}

// MemoryStore is an in-memory Store, for tests and for handing entries
// from one index to another. The zero value is ready to use.
type MemoryStore struct {
	mu      sync.Mutex
	entries []Entry
}

// Put implements Store.
func (m *MemoryStore) Put(entries []Entry) error {
	m.mu.Lock()
	m.entries = append(m.entries, entries...)
	m.mu.Unlock()
	return nil
}

// ForEach implements Store.
func (m *MemoryStore) ForEach(fn func(Entry) error) error {
	m.mu.Lock()
	es := m.entries[:len(m.entries):len(m.entries)]
	m.mu.Unlock()
	for _, e := range es {
		if err := fn(e); err != nil {
			return err
		}
	}
	return nil
}
