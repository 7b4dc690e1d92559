package pebble

import (
	"encoding/binary"
	"fmt"

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
	if !s.db.begin() {
		return ErrClosed
	}
	defer s.db.end()
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

// ForEach implements simhash.Store, in ascending fingerprint order. It
// does not hold the DB while fn runs, so fn may use the store or close
// the DB (ForEach then returns ErrClosed); entries put during the walk may
// or may not be visited.
func (s *FingerprintStore) ForEach(fn func(simhash.Entry) error) error {
	return s.db.forEachKey([]byte{prefixFingerprints}, prefixUpperBound(prefixFingerprints), 17, "fingerprint scan", func(k []byte) error {
		return fn(simhash.Entry{Fingerprint: binary.BigEndian.Uint64(k[1:]), ID: binary.BigEndian.Uint64(k[9:])})
	})
}
