package pebble

import (
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"

	cpebble "github.com/cockroachdb/pebble"

	"github.com/crawlkit/crawlkit/simhash"
)

// fingerprintVersionKey holds the simhash.Version of the fingerprints
// under prefixFingerprints and prefixFingerprintTables, 8 bytes
// big-endian. A DB written before it existed holds version 1.
var fingerprintVersionKey = []byte{prefixMeta, 'f', 'p', 'v'}

// checkFingerprintVersion runs at Open: if the DB holds fingerprints of
// another simhash.Version than this build's, it deletes them (both the
// FingerprintStore and the FingerprintTables), logs a warning and records
// the current version, all in one synced batch. The fingerprints are only
// an index of the pages seen, and comparing fingerprints of different
// features would report false near-duplicates or miss true ones;
// discarding them only costs duplicate detection against the pages
// fetched before the upgrade.
func (db *DB) checkFingerprintVersion(logger *slog.Logger) error {
	stored := 0
	v, closer, err := db.pdb.Get(fingerprintVersionKey)
	switch {
	case errors.Is(err, cpebble.ErrNotFound):
	case err != nil:
		return fmt.Errorf("reading the fingerprint version: %w", err)
	default:
		if len(v) == 8 {
			stored = int(binary.BigEndian.Uint64(v))
		}
		closer.Close()
		if stored == 0 {
			return fmt.Errorf("malformed fingerprint version %x", v)
		}
	}
	if stored == simhash.Version {
		return nil
	}
	lo, hi := []byte{prefixFingerprints}, prefixUpperBound(prefixFingerprintTables)
	if stored == 0 {
		// No record: an empty DB, or one written before versions (1).
		it, err := db.pdb.NewIter(&cpebble.IterOptions{LowerBound: lo, UpperBound: hi})
		if err != nil {
			return fmt.Errorf("checking the fingerprint version: %w", err)
		}
		if it.First() {
			stored = 1
		}
		if err := errors.Join(it.Error(), it.Close()); err != nil {
			return fmt.Errorf("checking the fingerprint version: %w", err)
		}
	}
	b := db.pdb.NewBatch()
	defer b.Close()
	if stored != 0 {
		if err := b.DeleteRange(lo, hi, nil); err != nil {
			return fmt.Errorf("discarding fingerprints of version %d: %w", stored, err)
		}
	}
	var buf [8]byte
	binary.BigEndian.PutUint64(buf[:], simhash.Version)
	if err := b.Set(fingerprintVersionKey, buf[:], nil); err != nil {
		return fmt.Errorf("recording the fingerprint version: %w", err)
	}
	if err := b.Commit(cpebble.Sync); err != nil {
		return fmt.Errorf("recording the fingerprint version: %w", err)
	}
	if stored != 0 {
		db.discardedVersion = stored
		logger.Warn("pebble: discarded the near-duplicate fingerprints of another simhash version",
			"dir", db.dir, "stored_version", stored, "version", simhash.Version)
	}
	return nil
}

// DiscardedFingerprints returns the simhash.Version of the fingerprints
// that Open deleted because they were of another version than this
// build's, or 0 if it deleted none. Pages fetched before are then not
// found as near-duplicates of later ones. Open also logs it, at Warn
// level, to Config.Logger.
func (db *DB) DiscardedFingerprints() int { return db.discardedVersion }

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
