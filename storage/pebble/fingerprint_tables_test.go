package pebble

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	cpebble "github.com/cockroachdb/pebble"

	"github.com/crawlkit/crawlkit/simhash"
)

func linearNear(entries []simhash.Entry, q uint64, k int) []simhash.Match {
	var out []simhash.Match
	for _, e := range entries {
		if d := bits.OnesCount64(e.Fingerprint ^ q); d <= k {
			out = append(out, simhash.Match{Entry: e, Distance: d})
		}
	}
	return sortMatches(out)
}

func sortMatches(ms []simhash.Match) []simhash.Match {
	slices.SortFunc(ms, func(a, b simhash.Match) int {
		if a.Fingerprint != b.Fingerprint {
			if a.Fingerprint < b.Fingerprint {
				return -1
			}
			return 1
		}
		if a.ID != b.ID {
			if a.ID < b.ID {
				return -1
			}
			return 1
		}
		return 0
	})
	return ms
}

func flipBits(r *rand.Rand, fp uint64, d int) uint64 {
	for _, i := range r.Perm(64)[:d] {
		fp ^= 1 << i
	}
	return fp
}

// checkExact compares Near with a linear scan for queries near stored
// fingerprints (at every distance up to k+1) and random ones.
func checkExact(t *testing.T, ix *simhash.Index, entries []simhash.Entry, r *rand.Rand, queries int) {
	t.Helper()
	k := ix.K()
	for qi := 0; qi < queries; qi++ {
		q := r.Uint64()
		if qi%3 != 0 {
			q = flipBits(r, entries[r.IntN(len(entries))].Fingerprint, r.IntN(k+2))
		}
		got, err := ix.AppendNearErr(nil, q)
		if err != nil {
			t.Fatal(err)
		}
		got = sortMatches(got)
		want := linearNear(entries, q, k)
		if !slices.Equal(got, want) {
			t.Fatalf("query %016x (k=%d, %d tables): Near %d matches, linear scan %d\n got %v\nwant %v",
				q, k, ix.Tables(), len(got), len(want), got, want)
		}
		if ix.Has(q) != (len(want) > 0) {
			t.Fatalf("query %016x: Has disagrees with the linear scan", q)
		}
	}
}

// clusteredEntries returns clusters of near-duplicates around random
// centres (each centre itself included, so exact duplicate fingerprints
// with other ids occur), with distinct ids.
func clusteredEntries(r *rand.Rand, clusters, k int) []simhash.Entry {
	var entries []simhash.Entry
	for c := 0; c < clusters; c++ {
		centre := r.Uint64()
		for j := 0; j < 1+r.IntN(8); j++ {
			fp := flipBits(r, centre, r.IntN(k+3))
			if j == 1 {
				fp = centre
			}
			entries = append(entries, simhash.Entry{Fingerprint: fp, ID: uint64(len(entries))})
		}
	}
	return entries
}

func openTemp(t testing.TB, dir string) *DB {
	t.Helper()
	db, err := Open(dir, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// TestFingerprintTablesExact checks a disk-backed Index against a linear
// scan for K=1..4 and several layouts, on clustered and adversarial data,
// then again after the DB is closed and reopened.
func TestFingerprintTablesExact(t *testing.T) {
	for _, tc := range []struct{ k, blocks int }{{1, 0}, {2, 0}, {2, 5}, {3, 0}, {3, 4}, {3, 8}, {4, 0}, {4, 9}} {
		t.Run(fmt.Sprintf("k%d-b%d", tc.k, tc.blocks), func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(tc.k), uint64(tc.blocks)))
			dir := filepath.Join(t.TempDir(), "db")
			db := openTemp(t, dir)
			opts := simhash.Options{K: tc.k, Blocks: tc.blocks, Tables: db.FingerprintTables()}
			ix, err := simhash.NewIndex(opts)
			if err != nil {
				t.Fatal(err)
			}
			entries := clusteredEntries(r, 150, tc.k)
			// Adversarial: one bucket of identical fingerprints, all-zero
			// and all-one patterns, differences within one block.
			for i := 0; i < 200; i++ {
				entries = append(entries, simhash.Entry{Fingerprint: 0, ID: uint64(len(entries))})
			}
			base := uint64(0xdeadbeefcafef00d)
			for i := 0; i < 64; i++ {
				entries = append(entries, simhash.Entry{Fingerprint: base ^ 1<<i ^ 1<<((i+1)%64), ID: uint64(len(entries))})
			}
			entries = append(entries, simhash.Entry{Fingerprint: ^uint64(0), ID: 1 << 40}, simhash.Entry{Fingerprint: 1 << 63, ID: 1<<64 - 1})
			for i := 0; i < len(entries); {
				n := min(1+r.IntN(20), len(entries)-i)
				if n == 1 {
					err = ix.Add(entries[i].Fingerprint, entries[i].ID)
				} else {
					err = ix.AddBatch(entries[i : i+n])
				}
				if err != nil {
					t.Fatal(err)
				}
				i += n
			}
			if ix.Len() != len(entries) {
				t.Fatalf("Len %d, want %d", ix.Len(), len(entries))
			}
			checkExact(t, ix, entries, r, 400)
			for _, q := range []uint64{0, 7, ^uint64(0), base, base ^ 0xf, base ^ 0b111<<30, 1 << 63} {
				got, _ := ix.AppendNearErr(nil, q)
				if want := linearNear(entries, q, tc.k); !slices.Equal(sortMatches(got), want) {
					t.Fatalf("query %016x: Near %d matches, linear scan %d", q, len(got), len(want))
				}
			}
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}

			db = openTemp(t, dir)
			defer db.Close()
			opts.Tables = db.FingerprintTables()
			ix, err = simhash.NewIndex(opts)
			if err != nil {
				t.Fatal(err)
			}
			if ix.Len() != len(entries) {
				t.Fatalf("reopened: Len %d, want %d", ix.Len(), len(entries))
			}
			checkExact(t, ix, entries, r, 200)
			if err := ix.Err(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestFingerprintTablesReopen: writes survive Close and Open, a
// pair added twice (in one batch or two) counts once, and reopening with
// another layout is refused.
func TestFingerprintTablesReopen(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	db, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ix, err := simhash.NewIndex(simhash.Options{Tables: db.FingerprintTables()})
	if err != nil {
		t.Fatal(err)
	}
	batch := []simhash.Entry{{Fingerprint: 0xff00, ID: 1}, {Fingerprint: 0xff00, ID: 1}, {Fingerprint: 0xff00, ID: 2}}
	for i := 0; i < 2; i++ {
		if err := ix.AddBatch(batch); err != nil {
			t.Fatal(err)
		}
	}
	if err := ix.Add(0xff01, 3); err != nil {
		t.Fatal(err)
	}
	if ix.Len() != 3 {
		t.Fatalf("Len %d, want 3", ix.Len())
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	db, err = Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := simhash.NewIndex(simhash.Options{K: 4, Tables: db.FingerprintTables()}); !errors.Is(err, simhash.ErrInvalidOptions) {
		t.Fatalf("reopen with K=4: err = %v", err)
	}
	ix, err = simhash.NewIndex(simhash.Options{Tables: db.FingerprintTables()})
	if err != nil {
		t.Fatal(err)
	}
	if ix.Len() != 3 {
		t.Fatalf("reopened: Len %d, want 3", ix.Len())
	}
	got := sortMatches(ix.Near(0xff00))
	want := []simhash.Match{
		{Entry: simhash.Entry{Fingerprint: 0xff00, ID: 1}},
		{Entry: simhash.Entry{Fingerprint: 0xff00, ID: 2}},
		{Entry: simhash.Entry{Fingerprint: 0xff01, ID: 3}, Distance: 1},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("Near = %v, want %v", got, want)
	}
	if st := ix.Stats(); !st.External || st.Bytes != 0 || st.Len != 3 {
		t.Fatalf("Stats = %+v", st)
	}
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

func TestFingerprintTablesConcurrentNearAndAdd(t *testing.T) {
	db := openTemp(t, filepath.Join(t.TempDir(), "db"))
	defer db.Close()
	ix, err := simhash.NewIndex(simhash.Options{Tables: db.FingerprintTables()})
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(9, 9))
	fps := make([]uint64, 600)
	for i := range fps {
		fps[i] = r.Uint64()
	}
	var wg sync.WaitGroup
	done := make(chan struct{})
	for g := 0; g < 3; g++ {
		wg.Add(1)
		r := rand.New(rand.NewPCG(uint64(g), 3))
		go func() {
			defer wg.Done()
			var dst []simhash.Match
			for {
				select {
				case <-done:
					return
				default:
				}
				var err error
				dst, err = ix.AppendNearErr(dst[:0], fps[r.IntN(len(fps))])
				if err != nil {
					t.Error(err)
					return
				}
				for _, m := range dst {
					if m.Distance > 3 || fps[m.ID] != m.Fingerprint {
						t.Errorf("bad match %+v", m)
						return
					}
				}
			}
		}()
	}
	var wwg sync.WaitGroup
	wwg.Add(2)
	for w := 0; w < 2; w++ { // two writers: AddBatch serializes them
		go func() {
			defer wwg.Done()
			for i := w; i < len(fps); i += 2 {
				if err := ix.Add(fps[i], uint64(i)); err != nil {
					t.Error(err)
					return
				}
				// Once Add has returned, the entry is visible.
				if !ix.Has(fps[i]) {
					t.Errorf("entry %d not found after Add", i)
					return
				}
			}
		}()
	}
	wwg.Wait()
	close(done)
	wg.Wait()
	if ix.Len() != len(fps) {
		t.Fatalf("Len %d, want %d", ix.Len(), len(fps))
	}
}

func TestFingerprintTablesClosed(t *testing.T) {
	db := openTemp(t, filepath.Join(t.TempDir(), "db"))
	s := db.FingerprintTables()
	ix, err := simhash.NewIndex(simhash.Options{Tables: s})
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
	if _, err := simhash.NewIndex(simhash.Options{Tables: s}); !errors.Is(err, ErrClosed) {
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
	mem, err := simhash.NewIndex(simhash.Options{})
	if err != nil {
		b.Fatal(err)
	}
	if err := mem.AddBatch(slices.Clone(entries)); err != nil {
		b.Fatal(err)
	}
	h1 := heap()
	dir := filepath.Join(b.TempDir(), "db")
	db := openTemp(b, dir)
	disk, err := simhash.NewIndex(simhash.Options{Tables: db.FingerprintTables()})
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
