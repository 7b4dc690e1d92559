package simhash

import (
	"errors"
	"fmt"
	"math/bits"
	"sync"
)

// Row is one row of an Index table kept in a TableStore: entry
// (Fingerprint, ID) filed in table Table under Key, the bits of Fingerprint
// that the table is keyed by. Table is in 0..255.
type Row struct {
	Table       int
	Key         uint64
	Fingerprint uint64
	ID          uint64
}

// Probe names the rows of one table with one key.
type Probe struct {
	Table int
	Key   uint64
}

// TableStore keeps an Index's tables outside memory (see Config.Tables),
// as a set of rows: a row stored twice is stored once.
//
// An Index writes one row per table for every entry it adds, in tables 0
// to Tables()-1, and one record of its layout (K and Blocks) in table 255
// the first time it opens an empty store. It reads rows only through
// ScanRows, with a probe per table. Its writes are serialized (one
// PutRows at a time per Index); ScanRows is called concurrently with
// other ScanRows and with PutRows, and must see every row of a PutRows
// that has returned. An Index assumes it is the only writer of its store.
type TableStore interface {
	// PutRows records rows durably, all or none, and returns how many
	// rows of table 0 were not stored before (the number of new entries).
	// It must not keep rows after it returns.
	PutRows(rows []Row) (added int, err error)
	// ScanRows calls fn for every stored row of table probes[i].Table
	// with key probes[i].Key, for each i in order, with that i and the
	// row's fingerprint and id, in any order within a probe. It stops
	// when fn returns false. It must not keep probes or fn after it
	// returns.
	ScanRows(probes []Probe, fn func(i int, fp, id uint64) bool) error
	// Count returns the number of rows of table 0, which is the number
	// of entries stored.
	Count() (int, error)
}

// layoutTable is the table that holds an Index's layout record: one row
// with key 0, fingerprint Version<<16 | K<<8 | Blocks and id
// layoutVersion. Records written before fingerprints had a Version have
// zero there, and hold Version 1 fingerprints.
const (
	layoutTable   = 255
	layoutVersion = 1
)

func (sc *scheme) layoutRow() Row {
	return Row{Table: layoutTable, Fingerprint: Version<<16 | uint64(sc.k)<<8 | uint64(len(sc.blocks)), ID: layoutVersion}
}

// recordedVersion is the fingerprint Version of a layout record.
func recordedVersion(layout Row) int {
	if v := int(layout.Fingerprint >> 16); v != 0 {
		return v
	}
	return 1
}

// ErrVersionMismatch is returned (wrapped in a *VersionError) by NewIndex
// for a table store written with fingerprints of another Version: the
// index would compare fingerprints of different features. The store's
// entries are only an index of pages seen, so the usual remedy is to
// empty it (storage/pebble does so itself when it opens a DB of another
// version).
var ErrVersionMismatch = errors.New("simhash: fingerprints of another version")

// VersionError reports the fingerprint Version a store was written with.
type VersionError struct {
	Stored, Current int
}

func (e *VersionError) Error() string {
	return fmt.Sprintf("simhash: store holds fingerprints of version %d, this is version %d", e.Stored, e.Current)
}

// Is makes a VersionError match ErrVersionMismatch.
func (e *VersionError) Is(target error) bool { return target == ErrVersionMismatch }

// openTables checks that ts was written with ix's layout (recording it if
// ts is empty) and loads the entry count.
func (ix *Index) openTables(ts TableStore) error {
	n, err := ts.Count()
	if err != nil {
		return fmt.Errorf("simhash: opening index tables: %w", err)
	}
	var layouts []Row
	err = ts.ScanRows([]Probe{{Table: layoutTable}}, func(_ int, fp, id uint64) bool {
		layouts = append(layouts, Row{Table: layoutTable, Fingerprint: fp, ID: id})
		return len(layouts) < 2
	})
	if err != nil {
		return fmt.Errorf("simhash: opening index tables: %w", err)
	}
	want := ix.sc.layoutRow()
	switch {
	case len(layouts) == 0 && n > 0:
		return fmt.Errorf("%w: table store holds %d entries but no layout record", ErrInvalidConfig, n)
	case len(layouts) == 0:
		if _, err := ts.PutRows([]Row{want}); err != nil {
			return fmt.Errorf("simhash: opening index tables: recording layout: %w", err)
		}
	case len(layouts) > 1 || layouts[0].ID != layoutVersion:
		return fmt.Errorf("%w: table store has an unknown layout record %+v", ErrInvalidConfig, layouts)
	case recordedVersion(layouts[0]) != Version:
		return &VersionError{Stored: recordedVersion(layouts[0]), Current: Version}
	case layouts[0] != want:
		fp := layouts[0].Fingerprint
		return fmt.Errorf("%w: table store was written with K=%d Blocks=%d, not K=%d Blocks=%d",
			ErrInvalidConfig, fp>>8&0xff, fp&0xff, ix.sc.k, len(ix.sc.blocks))
	}
	ix.tables = ts
	ix.n.Store(int64(n))
	return nil
}

// addTables writes entries to the table store; the caller holds ix.mu.
func (ix *Index) addTables(entries []Entry) error {
	nt := len(ix.sc.tables)
	rows := ix.rowBuf[:0]
	for _, e := range entries {
		for t := 0; t < nt; t++ {
			rows = append(rows, Row{Table: t, Key: ix.sc.key(t, e.Fingerprint), Fingerprint: e.Fingerprint, ID: e.ID})
		}
	}
	if cap(rows) <= 64*maxTables {
		ix.rowBuf = rows // keep small buffers for the next Add
	}
	added, err := ix.tables.PutRows(rows)
	if err != nil {
		return fmt.Errorf("simhash: index tables: %w", err)
	}
	ix.n.Add(int64(added))
	return nil
}

// tableScan is the state of one query against a TableStore, pooled so
// that a query allocates nothing but its result.
type tableScan struct {
	sc     *scheme
	q      uint64
	first  bool // stop at the first match (Has)
	dst    []Match
	probes [maxTables]Probe
	visit  func(i int, fp, id uint64) bool // s.row, bound once
}

var tableScans = sync.Pool{New: func() any {
	s := new(tableScan)
	s.visit = s.row
	return s
}}

// row keeps a candidate if it is within k bits of the query and probe i
// is the first table whose key blocks it shares with the query, so that
// each stored row is reported from exactly one table.
func (s *tableScan) row(i int, fp, id uint64) bool {
	x := fp ^ s.q
	d := bits.OnesCount64(x)
	if d > s.sc.k || s.sc.canonical(x) != i {
		return true
	}
	s.dst = append(s.dst, Match{Entry: Entry{Fingerprint: fp, ID: id}, Distance: d})
	return !s.first
}

// nearTables appends the stored entries within k bits of q, or the first
// one only if first is set.
func (ix *Index) nearTables(dst []Match, q uint64, first bool) ([]Match, error) {
	s := tableScans.Get().(*tableScan)
	s.sc, s.q, s.first, s.dst = ix.sc, q, first, dst
	nt := len(ix.sc.tables)
	for t := 0; t < nt; t++ {
		s.probes[t] = Probe{Table: t, Key: ix.sc.key(t, q)}
	}
	err := ix.tables.ScanRows(s.probes[:nt], s.visit)
	dst = s.dst
	s.dst = nil
	tableScans.Put(s)
	if err != nil {
		return dst, ix.lookupFailed(err)
	}
	return dst, nil
}

// lookupFailed wraps a lookup error and keeps it for Err if it is the
// first.
func (ix *Index) lookupFailed(err error) error {
	err = fmt.Errorf("simhash: index tables: %w", err)
	ix.err.CompareAndSwap(nil, &err)
	return err
}

// AppendNearErr is AppendNear that also returns the error of the table
// store (Config.Tables), if any; dst then holds the matches found before
// the error. Without a table store the error is always nil. It is safe to
// call concurrently with Add.
func (ix *Index) AppendNearErr(dst []Match, fp uint64) ([]Match, error) {
	if ix.tables != nil {
		return ix.nearTables(dst, fp, false)
	}
	return ix.AppendNear(dst, fp), nil
}

// Err returns the first error that the table store (Config.Tables)
// returned to a lookup, through any of Near, AppendNear, Has and
// AppendNearErr, or nil. A lookup that fails returns the matches found
// before the error (so Has may report false); Err tells that this
// happened. Once set, Err stays set.
func (ix *Index) Err() error {
	if p := ix.err.Load(); p != nil {
		return *p
	}
	return nil
}

// MemoryTables is an in-memory TableStore, for tests and examples: it
// keeps the rows in maps, so it uses more memory than an Index without a
// table store. The zero value is ready to use; it is safe for concurrent
// use.
type MemoryTables struct {
	mu      sync.RWMutex
	rows    map[Row]struct{}
	buckets map[Probe][]Entry // append-only
	count   int
}

// PutRows implements TableStore.
func (m *MemoryTables) PutRows(rows []Row) (int, error) {
	for _, r := range rows {
		if r.Table < 0 || r.Table > 255 {
			return 0, fmt.Errorf("simhash: memory tables: table %d outside 0..255", r.Table)
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.rows == nil {
		m.rows = make(map[Row]struct{})
		m.buckets = make(map[Probe][]Entry)
	}
	added := 0
	for _, r := range rows {
		if _, ok := m.rows[r]; ok {
			continue
		}
		m.rows[r] = struct{}{}
		p := Probe{Table: r.Table, Key: r.Key}
		// Appending past a slice that a scan copied does not disturb the
		// scan, which never looks beyond its length.
		m.buckets[p] = append(m.buckets[p], Entry{Fingerprint: r.Fingerprint, ID: r.ID})
		if r.Table == 0 {
			added++
		}
	}
	m.count += added
	return added, nil
}

// ScanRows implements TableStore. It sees the rows stored when it starts.
func (m *MemoryTables) ScanRows(probes []Probe, fn func(i int, fp, id uint64) bool) error {
	var small [maxTables][]Entry
	found := small[:0]
	if len(probes) > len(small) {
		found = make([][]Entry, 0, len(probes))
	}
	m.mu.RLock()
	for _, p := range probes {
		found = append(found, m.buckets[p])
	}
	m.mu.RUnlock()
	for i, es := range found {
		for _, e := range es {
			if !fn(i, e.Fingerprint, e.ID) {
				return nil
			}
		}
	}
	return nil
}

// Count implements TableStore.
func (m *MemoryTables) Count() (int, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.count, nil
}
