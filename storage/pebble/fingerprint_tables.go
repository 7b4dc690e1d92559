package pebble

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"

	cpebble "github.com/cockroachdb/pebble"

	"github.com/crawlkit/crawlkit/simhash"
)

// prefixFingerprintTables is the key prefix of FingerprintTables. Like the
// prefixes in pebble.go it is part of the on-disk format and never
// changes.
const prefixFingerprintTables byte = 0x31

// tableRowKeyLen is the length of a row key: prefix, table, key,
// fingerprint, id.
const tableRowKeyLen = 1 + 1 + 8 + 8 + 8

// tableCountKey holds the number of rows of table 0 (the index's entry
// count), an 8-byte big-endian value. It is the bare prefix, so it sorts
// before every row and lies outside every row scan.
var tableCountKey = []byte{prefixFingerprintTables}

// fingerprintTablesMu serializes PutRows, which reads the entry count and
// writes it back in the same batch. It is one lock for every DB of the
// process, so that all views of a DB (FingerprintTables returns a new one
// per call) share it; an Index serializes its writes anyway.
var fingerprintTablesMu sync.Mutex

// FingerprintTables keeps a simhash.Index's tables on disk
// (simhash.Config.Tables), so that the index's memory does not grow with
// the number of fingerprints.
//
// Each row is one Pebble key with an empty value: the prefix 0x31, the
// table number (one byte), the row's table key, fingerprint and document
// id (8 bytes big-endian each), 26 bytes in all. A row written twice is
// stored once. The key 0x31 alone holds the number of rows of table 0
// (8 bytes big-endian), updated in the same batch as the rows, so Count is
// one point read; PutRows checks each row of table 0 with a point read to
// count only new ones.
//
// Each PutRows is one batch, committed without waiting for a WAL sync: the
// rows are an index of pages already fetched, not acknowledged crawl state,
// and the WAL is sequential, so they become durable with the next synced
// write to the DB (the frontier and the seen set sync theirs). A crash can
// lose only rows written since that sync, all or none of each batch, and
// the count stays consistent with the rows. An Index holds its lock
// during PutRows, so a synced commit would make every Add wait for the
// disk. Each ScanRows is one iterator, bounded to one
// probe's rows at a time, so a query sees one consistent state of the DB.
// With the default index layout an Add writes 6 rows (about 160 bytes of
// keys before compression) and a Near seeks 6 times.
type FingerprintTables struct {
	db *DB
}

var _ simhash.TableStore = (*FingerprintTables)(nil)

// FingerprintTables returns the DB's fingerprint tables. It is cheap;
// every call returns a view of the same rows.
func (db *DB) FingerprintTables() *FingerprintTables { return &FingerprintTables{db: db} }

func checkTable(t int) error {
	if t < 0 || t > 255 {
		return fmt.Errorf("table %d outside 0..255", t)
	}
	return nil
}

// PutRows implements simhash.TableStore: all rows go in one batch.
func (s *FingerprintTables) PutRows(rows []simhash.Row) (int, error) {
	if len(rows) == 0 {
		return 0, nil
	}
	if !s.db.begin() {
		return 0, ErrClosed
	}
	defer s.db.end()
	for _, r := range rows {
		if err := checkTable(r.Table); err != nil {
			return 0, fmt.Errorf("pebble: fingerprint tables put: %w", err)
		}
	}
	fingerprintTablesMu.Lock()
	defer fingerprintTablesMu.Unlock()
	count, err := s.readCount()
	if err != nil {
		return 0, fmt.Errorf("pebble: fingerprint tables put: %w", err)
	}
	// An indexed batch, so that the existence checks also see the rows
	// earlier in the same batch.
	b := s.db.pdb.NewIndexedBatch()
	defer b.Close()
	var k [tableRowKeyLen]byte
	k[0] = prefixFingerprintTables
	added := 0
	for _, r := range rows {
		k[1] = byte(r.Table)
		binary.BigEndian.PutUint64(k[2:], r.Key)
		binary.BigEndian.PutUint64(k[10:], r.Fingerprint)
		binary.BigEndian.PutUint64(k[18:], r.ID)
		if r.Table == 0 {
			_, closer, err := b.Get(k[:])
			switch {
			case errors.Is(err, cpebble.ErrNotFound):
				added++
			case err != nil:
				return 0, fmt.Errorf("pebble: fingerprint tables put: %w", err)
			default:
				closer.Close()
			}
		}
		if err := b.Set(k[:], nil, nil); err != nil {
			return 0, fmt.Errorf("pebble: fingerprint tables put: %w", err)
		}
	}
	if added > 0 {
		var v [8]byte
		binary.BigEndian.PutUint64(v[:], uint64(count+added))
		if err := b.Set(tableCountKey, v[:], nil); err != nil {
			return 0, fmt.Errorf("pebble: fingerprint tables put: %w", err)
		}
	}
	if err := b.Commit(cpebble.NoSync); err != nil {
		return 0, fmt.Errorf("pebble: fingerprint tables put: %w", err)
	}
	return added, nil
}

// ScanRows implements simhash.TableStore with one iterator for all probes.
// fn runs while the scan holds the DB, so DB.Close waits for it: fn must
// not call Close, and a store operation fn makes once Close has begun
// returns ErrClosed.
func (s *FingerprintTables) ScanRows(probes []simhash.Probe, fn func(i int, fp, id uint64) bool) (err error) {
	if len(probes) == 0 {
		return nil
	}
	if !s.db.begin() {
		return ErrClosed
	}
	defer s.db.end()
	for _, p := range probes {
		if err := checkTable(p.Table); err != nil {
			return fmt.Errorf("pebble: fingerprint tables scan: %w", err)
		}
	}
	// No bounds yet: SetBounds sets them for each probe (and copies them,
	// so lo and hi can be reused).
	it, err := s.db.pdb.NewIter(nil)
	if err != nil {
		return fmt.Errorf("pebble: fingerprint tables scan: %w", err)
	}
	defer func() {
		if cerr := it.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("pebble: fingerprint tables scan: %w", cerr)
		}
	}()
	bounds := scanBounds.Get().(*[2][10]byte)
	defer scanBounds.Put(bounds)
	lo, hi := &bounds[0], &bounds[1]
	for i, p := range probes {
		lo[0] = prefixFingerprintTables
		lo[1] = byte(p.Table)
		binary.BigEndian.PutUint64(lo[2:], p.Key)
		it.SetBounds(lo[:], upperBound(hi, lo))
		for ok := it.First(); ok; ok = it.Next() {
			k := it.Key()
			if len(k) != tableRowKeyLen {
				return fmt.Errorf("pebble: fingerprint tables scan: malformed key %x", k)
			}
			if !fn(i, binary.BigEndian.Uint64(k[10:]), binary.BigEndian.Uint64(k[18:])) {
				return nil
			}
		}
		if err := it.Error(); err != nil {
			return fmt.Errorf("pebble: fingerprint tables scan: %w", err)
		}
	}
	return nil
}

// scanBounds holds the bound buffers of ScanRows (which escape to the
// heap through the iterator), pooled to save an allocation per scan.
var scanBounds = sync.Pool{New: func() any { return new([2][10]byte) }}

// upperBound writes to hi the smallest key after every key that starts
// with lo (prefix, table and table key) and returns it.
func upperBound(hi, lo *[10]byte) []byte {
	*hi = *lo
	for j := len(hi) - 1; j >= 1; j-- {
		hi[j]++
		if hi[j] != 0 {
			return hi[:]
		}
	}
	hi[0]++ // table 255, key 2^64-1: the end of the prefix
	return hi[:1]
}

// Count implements simhash.TableStore: one point read.
func (s *FingerprintTables) Count() (int, error) {
	if !s.db.begin() {
		return 0, ErrClosed
	}
	defer s.db.end()
	n, err := s.readCount()
	if err != nil {
		return 0, fmt.Errorf("pebble: fingerprint tables count: %w", err)
	}
	return n, nil
}

func (s *FingerprintTables) readCount() (int, error) {
	v, closer, err := s.db.pdb.Get(tableCountKey)
	if errors.Is(err, cpebble.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	defer closer.Close()
	if len(v) != 8 {
		return 0, fmt.Errorf("malformed count %x", v)
	}
	return int(binary.BigEndian.Uint64(v)), nil
}
