package pebble

import (
	"encoding/binary"
	"fmt"

	cpebble "github.com/cockroachdb/pebble"

	"github.com/crawlkit/crawlkit/simhash"
)

// FingerprintStore persists a simhash.Index's entries: one Pebble key per
// (fingerprint, document id) pair under the fingerprint prefix, 0x30
// followed by the 8-byte big-endian fingerprint and the 8-byte big-endian
// id, with an empty value. A pair added twice is stored once. Each Put is
// one batch, committed with a synced WAL unless the DB was opened with
// NoSync.
type FingerprintStore struct {
	db *DB
}

var _ simhash.Store = (*FingerprintStore)(nil)

// FingerprintStore returns the DB's fingerprint store.
func (db *DB) FingerprintStore() *FingerprintStore { return &FingerprintStore{db: db} }

// Put implements simhash.Store.
func (s *FingerprintStore) Put(entries []simhash.Entry) error {
	if s.db.isClosed() {
		return ErrClosed
	}
	b := s.db.pdb.NewBatch()
	defer b.Close()
	var k [17]byte
	k[0] = prefixFingerprints
	for _, e := range entries {
		binary.BigEndian.PutUint64(k[1:], e.Fingerprint)
		binary.BigEndian.PutUint64(k[9:], e.ID)
		if err := b.Set(k[:], nil, nil); err != nil {
			return fmt.Errorf("pebble: fingerprint put: %w", err)
		}
	}
	if err := b.Commit(s.db.writeOpts); err != nil {
		return fmt.Errorf("pebble: fingerprint put: %w", err)
	}
	return nil
}

// ForEach implements simhash.Store, in ascending fingerprint order.
func (s *FingerprintStore) ForEach(fn func(simhash.Entry) error) error {
	if s.db.isClosed() {
		return ErrClosed
	}
	it, err := s.db.pdb.NewIter(&cpebble.IterOptions{
		LowerBound: []byte{prefixFingerprints},
		UpperBound: prefixUpperBound(prefixFingerprints),
	})
	if err != nil {
		return fmt.Errorf("pebble: fingerprint scan: %w", err)
	}
	for it.First(); it.Valid(); it.Next() {
		k := it.Key()
		if len(k) != 17 {
			it.Close()
			return fmt.Errorf("pebble: fingerprint scan: malformed key %x", k)
		}
		e := simhash.Entry{Fingerprint: binary.BigEndian.Uint64(k[1:]), ID: binary.BigEndian.Uint64(k[9:])}
		if err := fn(e); err != nil {
			it.Close()
			return err
		}
	}
	if err := it.Close(); err != nil {
		return fmt.Errorf("pebble: fingerprint scan: %w", err)
	}
	return nil
}
