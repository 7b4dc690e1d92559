package pebble

import (
	"bytes"
	"cmp"
	"errors"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"

	cpebble "github.com/cockroachdb/pebble"

	"github.com/crawlkit/crawlkit/simhash"
	"github.com/crawlkit/crawlkit/simhash/simhashtest"
)

func openTemp(t testing.TB, dir string) *DB {
	t.Helper()
	db, err := Open(dir, Config{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// TestFingerprintTablesKit runs the simhash.TableStore conformance kit:
// exactness of an Index against a linear scan, set semantics, reopening,
// concurrency and errors after Close. Each store owns its DB, so the kit's
// Close closes the DB and reopening opens the directory again.
func TestFingerprintTablesKit(t *testing.T) {
	simhashtest.Run(t, func(t *testing.T, dir string) simhashtest.Store {
		db, err := Open(filepath.Join(dir, "db"), Config{})
		if err != nil {
			t.Fatal(err)
		}
		return simhashtest.Store{Tables: db.FingerprintTables(), Close: db.Close, ErrClosed: ErrClosed}
	})
}

// TestFingerprintTablesKeyLayout pins the on-disk format.
func TestFingerprintTablesKeyLayout(t *testing.T) {
	db := openTemp(t, filepath.Join(t.TempDir(), "db"))
	defer db.Close()
	s := db.FingerprintTables()
	row := simhash.Row{Table: 3, Key: 0x0102030405060708, Fingerprint: 0x1112131415161718, ID: 0x2122232425262728}
	if n, err := s.PutRows([]simhash.Row{row, {Table: 0, Key: 1, Fingerprint: 2, ID: 3}}); err != nil || n != 1 {
		t.Fatalf("PutRows = %d, %v", n, err)
	}
	it, err := db.pdb.NewIter(&cpebble.IterOptions{LowerBound: []byte{prefixFingerprintTables}, UpperBound: prefixUpperBound(prefixFingerprintTables)})
	if err != nil {
		t.Fatal(err)
	}
	var keys, values [][]byte
	for it.First(); it.Valid(); it.Next() {
		keys = append(keys, slices.Clone(it.Key()))
		values = append(values, slices.Clone(it.Value()))
	}
	it.Close()
	want := [][]byte{
		{0x31},
		{0x31, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 3},
		{0x31, 3, 1, 2, 3, 4, 5, 6, 7, 8, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18, 0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x27, 0x28},
	}
	if !slices.EqualFunc(keys, want, bytes.Equal) {
		t.Fatalf("keys %x, want %x", keys, want)
	}
	if !bytes.Equal(values[0], []byte{0, 0, 0, 0, 0, 0, 0, 1}) || len(values[1]) != 0 || len(values[2]) != 0 {
		t.Fatalf("values %x", values)
	}
}

// TestFingerprintTablesScanBounds: a probe sees exactly its table and key,
// including at the ends of the key space, and stops when fn says so.
func TestFingerprintTablesScanBounds(t *testing.T) {
	db := openTemp(t, filepath.Join(t.TempDir(), "db"))
	defer db.Close()
	s := db.FingerprintTables()
	var rows []simhash.Row
	for _, tab := range []int{0, 1, 254, 255} {
		for _, key := range []uint64{0, 1, 1<<64 - 2, 1<<64 - 1} {
			for id := uint64(0); id < 3; id++ {
				rows = append(rows, simhash.Row{Table: tab, Key: key, Fingerprint: key ^ id, ID: uint64(tab)<<8 | id})
			}
		}
	}
	if _, err := s.PutRows(rows); err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		var got []simhash.Row
		err := s.ScanRows([]simhash.Probe{{Table: r.Table, Key: r.Key}}, func(i int, fp, id uint64) bool {
			got = append(got, simhash.Row{Table: r.Table, Key: r.Key, Fingerprint: fp, ID: id})
			return true
		})
		if err != nil {
			t.Fatal(err)
		}
		var want []simhash.Row
		for _, w := range rows {
			if w.Table == r.Table && w.Key == r.Key {
				want = append(want, w)
			}
		}
		byRow := func(a, b simhash.Row) int {
			return cmp.Or(cmp.Compare(a.Fingerprint, b.Fingerprint), cmp.Compare(a.ID, b.ID))
		}
		slices.SortFunc(want, byRow) // rows come in key order
		if !slices.Equal(got, want) {
			t.Fatalf("probe %d/%x: %v, want %v", r.Table, r.Key, got, want)
		}
	}
	calls := 0
	probes := []simhash.Probe{{Table: 0, Key: 0}, {Table: 1, Key: 0}}
	if err := s.ScanRows(probes, func(int, uint64, uint64) bool { calls++; return calls < 2 }); err != nil || calls != 2 {
		t.Fatalf("stop: %d calls, %v", calls, err)
	}
	if _, err := s.PutRows([]simhash.Row{{Table: 256}}); err == nil {
		t.Fatal("PutRows accepted table 256")
	}
	if err := s.ScanRows([]simhash.Probe{{Table: -1}}, func(int, uint64, uint64) bool { return true }); err == nil {
		t.Fatal("ScanRows accepted table -1")
	}
}

func TestFingerprintTablesClosed(t *testing.T) {
	db := openTemp(t, filepath.Join(t.TempDir(), "db"))
	s := db.FingerprintTables()
	ix, err := simhash.NewIndex(simhash.Config{Tables: s})
	if err != nil {
		t.Fatal(err)
	}
	if err := ix.Add(1, 1); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if _, err := s.PutRows([]simhash.Row{{Table: 0}}); !errors.Is(err, ErrClosed) {
		t.Fatalf("PutRows after Close: %v", err)
	}
	if err := s.ScanRows([]simhash.Probe{{}}, func(int, uint64, uint64) bool { return true }); !errors.Is(err, ErrClosed) {
		t.Fatalf("ScanRows after Close: %v", err)
	}
	if _, err := s.Count(); !errors.Is(err, ErrClosed) {
		t.Fatalf("Count after Close: %v", err)
	}
	if err := ix.Add(2, 2); !errors.Is(err, ErrClosed) {
		t.Fatalf("Index.Add after Close: %v", err)
	}
	if _, err := ix.AppendNearErr(nil, 1); !errors.Is(err, ErrClosed) {
		t.Fatalf("Index.AppendNearErr after Close: %v", err)
	}
	if ix.Has(1) || !errors.Is(ix.Err(), ErrClosed) {
		t.Fatalf("Has after Close: Err = %v", ix.Err())
	}
	if _, err := simhash.NewIndex(simhash.Config{Tables: s}); !errors.Is(err, ErrClosed) {
		t.Fatalf("NewIndex after Close: %v", err)
	}
}

// BenchmarkFingerprintTables measures a disk-backed Index at 1M random
// fingerprints (6 tables: 6M rows, about 110 MB of sstables) against the
// in-memory Index holding the same entries, in the same run, with the
// default 64 MiB block cache: Near for queries that miss, and Add of one
// new entry (rows are committed without a WAL sync, see PutRows).
func BenchmarkFingerprintTables(b *testing.B) {
	const n = 1_000_000
	r := rand.New(rand.NewPCG(42, 42))
	entries := make([]simhash.Entry, n)
	for i := range entries {
		entries[i] = simhash.Entry{Fingerprint: r.Uint64(), ID: uint64(i)}
	}
	queries := make([]uint64, 1<<16)
	for i := range queries {
		queries[i] = r.Uint64()
	}
	// The Go heap each index adds (Pebble's memtables and block cache are
	// allocated outside it, and bounded by its options).
	heap := func() int64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return int64(ms.HeapAlloc)
	}
	h0 := heap()
	mem, err := simhash.NewIndex(simhash.Config{})
	if err != nil {
		b.Fatal(err)
	}
	if err := mem.AddBatch(slices.Clone(entries)); err != nil {
		b.Fatal(err)
	}
	h1 := heap()
	dir := filepath.Join(b.TempDir(), "db")
	db := openTemp(b, dir)
	disk, err := simhash.NewIndex(simhash.Config{Tables: db.FingerprintTables()})
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	for i := 0; i < n; i += 10_000 {
		if err := disk.AddBatch(entries[i : i+10_000]); err != nil {
			b.Fatal(err)
		}
	}
	if err := db.pdb.Flush(); err != nil {
		b.Fatal(err)
	}
	b.Logf("loaded %d entries in %v; Go heap added: in-memory index %.1f MB, disk index %.1f MB",
		n, time.Since(start).Round(time.Millisecond), float64(h1-h0)/1e6, float64(heap()-h1)/1e6)

	near := func(ix *simhash.Index) func(b *testing.B) {
		return func(b *testing.B) {
			b.ReportAllocs()
			var dst []simhash.Match
			for i := 0; b.Loop(); i++ {
				var err error
				if dst, err = ix.AppendNearErr(dst[:0], queries[i&(len(queries)-1)]); err != nil || len(dst) != 0 {
					b.Fatal(err, dst)
				}
			}
		}
	}
	add := func(ix *simhash.Index) func(b *testing.B) {
		return func(b *testing.B) {
			b.ReportAllocs()
			id := uint64(1 << 40)
			for b.Loop() {
				id++
				if err := ix.Add(r.Uint64(), id); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	b.Run("near-miss/memory", near(mem))
	// Right after the bulk load, with compactions still running, and
	// once the rows are compacted into one level.
	b.Run("near-miss/pebble-loaded", near(disk))
	start = time.Now()
	if err := db.pdb.Compact([]byte{prefixFingerprintTables}, prefixUpperBound(prefixFingerprintTables), true); err != nil {
		b.Fatal(err)
	}
	b.Logf("compacted in %v", time.Since(start).Round(time.Millisecond))
	b.Run("near-miss/pebble-compacted", near(disk))
	b.Run("add/memory", add(mem))
	b.Run("add/pebble", add(disk))
}
