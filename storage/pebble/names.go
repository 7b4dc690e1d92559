package pebble

import (
	"encoding/binary"
	"errors"
	"fmt"

	cpebble "github.com/cockroachdb/pebble"
)

// prefixNames is the key prefix of the NameStore. Like the prefixes in
// pebble.go it is part of the on-disk format and never changes.
const prefixNames byte = 0x50

// MaxNameBytes is the longest name a NameStore accepts.
const MaxNameBytes = 64 << 10

// ErrNameTooLong is returned by NameStore.Put for a name longer than
// MaxNameBytes.
var ErrNameTooLong = errors.New("pebble: name too long")

// NameStore maps 64-bit document ids to names: the crawler keeps there the
// URL of every page it indexed for near-duplicate detection, so that a
// duplicate found later can name its original without the map living in
// memory. One Pebble key per id, 0x50 followed by the 8-byte big-endian
// id, with the name as value.
//
// Names are hints, not acknowledged state: Put writes without syncing the
// write-ahead log, so a crash can lose the last names written (a later
// duplicate of such a page cannot name it).
type NameStore struct {
	db *DB
}

// NameStore returns the DB's name store. It is cheap; every call returns a
// view of the same keys.
func (db *DB) NameStore() *NameStore { return &NameStore{db: db} }

func nameKey(id uint64) []byte {
	var k [9]byte
	k[0] = prefixNames
	binary.BigEndian.PutUint64(k[1:], id)
	return k[:]
}

// Put records name for id, replacing an earlier name.
func (s *NameStore) Put(id uint64, name string) error {
	if len(name) > MaxNameBytes {
		return fmt.Errorf("%w: %d bytes for id %016x, limit %d", ErrNameTooLong, len(name), id, MaxNameBytes)
	}
	if !s.db.begin() {
		return ErrClosed
	}
	defer s.db.end()
	if err := s.db.pdb.Set(nameKey(id), []byte(name), cpebble.NoSync); err != nil {
		return fmt.Errorf("pebble: name put: %w", err)
	}
	return nil
}

// Get returns the name recorded for id and whether there is one.
func (s *NameStore) Get(id uint64) (string, bool, error) {
	if !s.db.begin() {
		return "", false, ErrClosed
	}
	defer s.db.end()
	v, closer, err := s.db.pdb.Get(nameKey(id))
	if errors.Is(err, cpebble.ErrNotFound) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("pebble: name lookup: %w", err)
	}
	name := string(v)
	closer.Close()
	return name, true, nil
}
