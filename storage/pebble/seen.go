package pebble

import (
	"encoding/binary"
	"errors"
	"fmt"

	cpebble "github.com/cockroachdb/pebble"

	"github.com/crawlkit/crawlkit/bloom"
)

// SeenStore is the exact store behind a bloom.Set: the set of 64-bit URL
// keys seen so far (bloom.Key values or urlnorm keys), one Pebble key per
// URL under the seen-set prefix: 0x20 followed by the 8-byte big-endian
// key, with an empty value. Every Add is committed with a synced WAL
// unless the DB was opened with NoSync.
type SeenStore struct {
	db *DB
}

var _ bloom.Store = (*SeenStore)(nil)

// SeenStore returns the DB's seen-URL store. It is cheap; every call
// returns a view of the same keys.
func (db *DB) SeenStore() *SeenStore { return &SeenStore{db: db} }

func seenKey(key uint64) []byte {
	var k [9]byte
	k[0] = prefixSeen
	binary.BigEndian.PutUint64(k[1:], key)
	return k[:]
}

// Contains implements bloom.Store.
func (s *SeenStore) Contains(key uint64) (bool, error) {
	if !s.db.begin() {
		return false, ErrClosed
	}
	defer s.db.end()
	_, closer, err := s.db.pdb.Get(seenKey(key))
	if errors.Is(err, cpebble.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("pebble: seen lookup: %w", err)
	}
	closer.Close()
	return true, nil
}

// Add implements bloom.Store.
func (s *SeenStore) Add(key uint64) error {
	if !s.db.begin() {
		return ErrClosed
	}
	defer s.db.end()
	if err := s.db.pdb.Set(seenKey(key), nil, s.db.writeOpts); err != nil {
		return fmt.Errorf("pebble: seen add: %w", err)
	}
	return nil
}

// AddBatch records several keys in one synced write: one fsync instead of
// one per key, for a page's worth of links.
func (s *SeenStore) AddBatch(keys []uint64) error {
	return s.addBatch(keys, s.db.writeOpts)
}

// AddLazy records keys without waiting for them to reach the disk. Pebble
// writes its log in order, so they become durable with the next synced
// write to the DB, by any of its stores (a frontier settlement, say); a
// crash before that loses them. It is for keys whose loss costs a
// duplicate fetch, not a missed URL.
func (s *SeenStore) AddLazy(keys []uint64) error {
	return s.addBatch(keys, cpebble.NoSync)
}

func (s *SeenStore) addBatch(keys []uint64, wo *cpebble.WriteOptions) error {
	if len(keys) == 0 {
		return nil
	}
	if !s.db.begin() {
		return ErrClosed
	}
	defer s.db.end()
	b := s.db.pdb.NewBatch()
	defer b.Close()
	for _, k := range keys {
		if err := b.Set(seenKey(k), nil, nil); err != nil {
			return fmt.Errorf("pebble: seen batch: %w", err)
		}
	}
	if err := b.Commit(wo); err != nil {
		return fmt.Errorf("pebble: seen batch: %w", err)
	}
	return nil
}

// ForEach implements bloom.Store: it calls fn for every stored key in
// ascending order. It does not hold the DB while fn runs, so fn may use
// the store or close the DB (ForEach then returns ErrClosed); keys added
// during the walk may or may not be visited.
func (s *SeenStore) ForEach(fn func(key uint64) error) error {
	return s.db.forEachKey([]byte{prefixSeen}, prefixUpperBound(prefixSeen), 9, "seen scan", func(k []byte) error {
		return fn(binary.BigEndian.Uint64(k[1:]))
	})
}
