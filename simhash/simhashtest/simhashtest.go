// Package simhashtest is the conformance kit for simhash.TableStore
// implementations, the stores that keep a simhash.Index's tables outside
// the process's memory (storage/pebble's FingerprintTables, or a user's
// own). A store proves itself by passing Run in its tests:
//
//	func TestTableStore(t *testing.T) {
//		simhashtest.Run(t, func(t *testing.T, dir string) simhashtest.Store {
//			db, err := mydb.Open(dir) // or a table or key prefix derived from dir
//			if err != nil {
//				t.Fatal(err)
//			}
//			return simhashtest.Store{Tables: db.Tables(), Close: db.Close, ErrClosed: mydb.ErrClosed}
//		})
//	}
//
// Run calls the Opener with a fresh dir for every scenario and subtest
// (and a second one in Rows, to check that stores are independent). To
// check that rows outlive the value that wrote them, it calls Store.Close
// and then the Opener again with the same dir, and expects to find what
// was written there. A store that does not live in a directory (a database
// server, process memory) uses dir only as a name: stores opened under
// different dirs must be independent, and opening a dir again must see its
// earlier rows. A store that lives in process memory can return the same
// value for the same dir and leave Close nil; ExampleOpener shows one.
//
// What it checks, only from what simhash.TableStore and simhash.Index
// document (scenario names in parentheses):
//
//   - The store directly (Rows, ScanStop): an empty store counts 0 and
//     finds nothing; a row stored twice (in one PutRows or two) is stored
//     and reported once; PutRows returns the number of new rows of table
//     0, the amount Count grows by, and rows of other tables never count;
//     ScanRows reports, for each probe in order, exactly the rows of its
//     table and key, with the probe's index, also for tables 0 and 255
//     and keys 0 and 2^64-1, for a probe repeated in one call and for
//     probes with no rows; it stops at the call where fn returns false
//     (and that is not an error); it does not call fn after it returns;
//     neither method depends on the caller's slices after returning;
//     stores under different dirs are independent; rows and Count survive
//     Close and open.
//   - An Index on the store (IndexExact, IndexAdversarial) agrees exactly
//     with a linear scan (LinearNear) for K from 1 to 4 and 16 block
//     layouts, on clusters of near-duplicates, random fingerprints and
//     edge cases (one large bucket of identical fingerprints, all-zero and
//     all-one patterns, ids up to 2^64-1), as it grows, and again after
//     Close and open; and on the Adversarial data set for K=3 and K=4.
//     Has agrees too.
//   - Set semantics and the recorded layout through an Index
//     (IndexReopen): a pair added twice counts once in Len, before and
//     after reopening; an Index with another K or Blocks is refused
//     (simhash.ErrInvalidConfig) once the store has been opened with a
//     layout.
//   - Near and Has run concurrently with Add from two goroutines
//     (IndexConcurrent): every match is real, and an entry is found as
//     soon as its Add returns.
//   - After Close, if Store.ErrClosed is set (AfterClose): every method
//     fails with an error matching it, and an Index on the store returns
//     it wrapped from Add, AppendNearErr, Err and NewIndex.
//
// RunStore is the same kit for simhash.Store, the fingerprint store an
// Index rebuilds its tables from (Options.Store), with the same kind of
// opener (EntryOpener).
//
// The helpers the scenarios are built from are exported for tests of an
// Index or of code built on it: LinearNear, SortMatches and FlipBits,
// CheckExact and CheckQueries to compare an Index with a linear scan,
// CheckConcurrent to query an Index while it grows, and the data builders Clusters, AddClusters and Adversarial. The scenarios
// use fixed random seeds, so a failure repeats.
package simhashtest

import (
	"cmp"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/crawlkit/crawlkit/internal/kitrun"

	"github.com/crawlkit/crawlkit/simhash"
)

// Opener opens the table store kept under dir (see the package
// documentation). It reports failures through t.
type Opener func(t *testing.T, dir string) Store

// Store is a table store opened for the kit.
type Store struct {
	// Tables is the store under test.
	Tables simhash.TableStore
	// Close, if not nil, releases Tables (and whatever it belongs to) so
	// that its dir can be opened again. The kit calls it once for every
	// Store an Opener returned: before opening the same dir again, or
	// when the scenario ends.
	Close func() error
	// ErrClosed, if not nil, is the error that every method of Tables
	// returns (errors.Is) once Close has returned. The AfterClose
	// scenario runs only when Close and ErrClosed are both set.
	ErrClosed error
}

// Run runs every conformance scenario against the stores open returns,
// each as a subtest.
func Run(t *testing.T, open Opener) {
	t.Helper()
	scenarios := []struct {
		name string
		fn   func(t *testing.T, open Opener)
	}{
		{"Rows", testRows},
		{"ScanStop", testScanStop},
		{"IndexExact", testIndexExact},
		{"IndexAdversarial", testIndexAdversarial},
		{"IndexReopen", testIndexReopen},
		{"IndexConcurrent", testIndexConcurrent},
		{"AfterClose", testAfterClose},
	}
	for _, s := range scenarios {
		t.Run(s.name, func(t *testing.T) { s.fn(t, open) })
	}
}

// opened is a Store the kit has not closed yet.
type opened struct {
	Store
	closer *kitrun.Closer
}

// openStore opens dir and arranges for the store to be closed when the
// test ends, if the test does not close it first.
func openStore(t *testing.T, open Opener, dir string) *opened {
	t.Helper()
	s := &opened{Store: open(t, dir)}
	if s.Tables == nil {
		t.Fatal("Opener returned a Store with nil Tables")
	}
	s.closer = kitrun.NewCloser(t, s.Close)
	return s
}

func (s *opened) close(t *testing.T) {
	t.Helper()
	s.closer.Close(t)
}

// reopen closes s and opens its dir again.
func reopen(t *testing.T, open Opener, dir string, s *opened) *opened {
	t.Helper()
	s.close(t)
	return openStore(t, open, dir)
}

func newIndex(t *testing.T, opts simhash.Config) *simhash.Index {
	t.Helper()
	ix, err := simhash.NewIndex(opts)
	if err != nil {
		t.Fatalf("NewIndex(K=%d, Blocks=%d): %v", opts.K, opts.Blocks, err)
	}
	return ix
}

func checkCount(t *testing.T, ts simhash.TableStore, want int) {
	t.Helper()
	n, err := ts.Count()
	if err != nil {
		t.Fatalf("Count: %v", err)
	}
	if n != want {
		t.Fatalf("Count = %d, want %d", n, want)
	}
}

// checkLen checks that ix and its store hold n entries.
func checkLen(t *testing.T, ix *simhash.Index, ts simhash.TableStore, n int) {
	t.Helper()
	if ix.Len() != n {
		t.Fatalf("Len = %d, want %d", ix.Len(), n)
	}
	checkCount(t, ts, n)
}

func checkNoErr(t *testing.T, ix *simhash.Index) {
	t.Helper()
	if err := ix.Err(); err != nil {
		t.Fatalf("Err = %v", err)
	}
}

// model is what a store should hold: a set of rows.
type model map[simhash.Row]bool

// put stores a copy of rows in ts and in m, checks the number PutRows
// reports, and then overwrites the copy, which the store must not have
// kept.
func (m model) put(t *testing.T, ts simhash.TableStore, rows []simhash.Row) {
	t.Helper()
	want := 0
	for _, r := range rows {
		if !m[r] {
			m[r] = true
			if r.Table == 0 {
				want++
			}
		}
	}
	arg := slices.Clone(rows)
	added, err := ts.PutRows(arg)
	if err != nil {
		t.Fatalf("PutRows(%d rows): %v", len(rows), err)
	}
	if added != want {
		t.Fatalf("PutRows(%d rows) = %d, want %d (the rows of table 0 not stored before, each counted once)", len(rows), added, want)
	}
	for i := range arg {
		arg[i] = clobbered
	}
}

// clobbered overwrites the caller's slices after a call returns; probes
// for its table and key must find nothing.
var clobbered = simhash.Row{Table: 0, Key: 0x5eed5eed5eed5eed, Fingerprint: 0x5eed, ID: 0x5eed}

func (m model) count() int {
	n := 0
	for r := range m {
		if r.Table == 0 {
			n++
		}
	}
	return n
}

// rows returns the rows of m that probe p finds, sorted.
func (m model) rows(p simhash.Probe) []simhash.Row {
	var out []simhash.Row
	for r := range m {
		if r.Table == p.Table && r.Key == p.Key {
			out = append(out, r)
		}
	}
	return sortRows(out)
}

func sortRows(rows []simhash.Row) []simhash.Row {
	slices.SortFunc(rows, func(a, b simhash.Row) int {
		return cmp.Or(cmp.Compare(a.Table, b.Table), cmp.Compare(a.Key, b.Key),
			cmp.Compare(a.Fingerprint, b.Fingerprint), cmp.Compare(a.ID, b.ID))
	})
	return rows
}

// scan calls ScanRows with a copy of probes and returns the rows reported
// for each probe. It checks that the probe index is in range and never
// goes back, and that fn is not called once ScanRows has returned; it
// then overwrites the copy of probes.
func scan(t *testing.T, ts simhash.TableStore, probes []simhash.Probe) [][]simhash.Row {
	t.Helper()
	arg := slices.Clone(probes)
	found := make([][]simhash.Row, len(probes))
	var returned atomic.Bool
	last := 0
	var bad error
	err := ts.ScanRows(arg, func(i int, fp, id uint64) bool {
		switch {
		case returned.Load():
			t.Errorf("ScanRows called fn(%d, %016x, %d) after it returned", i, fp, id)
			return false
		case bad != nil:
		case i < 0 || i >= len(probes):
			bad = fmt.Errorf("fn called with probe index %d, outside 0..%d", i, len(probes)-1)
		case i < last:
			bad = fmt.Errorf("fn called for probe %d after probe %d: probes must be scanned in order", i, last)
		default:
			last = i
			found[i] = append(found[i], simhash.Row{Table: probes[i].Table, Key: probes[i].Key, Fingerprint: fp, ID: id})
		}
		return true
	})
	returned.Store(true)
	if err != nil {
		t.Fatalf("ScanRows(%d probes): %v", len(probes), err)
	}
	if bad != nil {
		t.Fatalf("ScanRows(%d probes): %v", len(probes), bad)
	}
	for i := range arg {
		arg[i] = simhash.Probe{Table: clobbered.Table, Key: clobbered.Key}
	}
	return found
}

// checkScan checks that ts holds the rows of m: each probe alone, and all
// of them in one ScanRows, in a shuffled order with one probe repeated.
func checkScan(t *testing.T, ts simhash.TableStore, m model, probes []simhash.Probe, r *rand.Rand) {
	t.Helper()
	check := func(ps []simhash.Probe) {
		t.Helper()
		for i, rows := range scan(t, ts, ps) {
			got, want := sortRows(rows), m.rows(ps[i])
			if !slices.Equal(got, want) {
				t.Fatalf("ScanRows, probe %d of %d (table %d, key %016x): %d rows %s, want %d %s",
					i, len(ps), ps[i].Table, ps[i].Key, len(got), showRows(got), len(want), showRows(want))
			}
		}
	}
	for _, p := range probes {
		check([]simhash.Probe{p})
	}
	all := slices.Clone(probes)
	r.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
	all = slices.Insert(all, len(all)/2, all[0])
	check(all)
}

// showRows formats the first few rows, in hexadecimal.
func showRows(rows []simhash.Row) string {
	var b strings.Builder
	b.WriteString("[")
	for i, r := range rows {
		if i == 6 {
			b.WriteString(" ...")
			break
		}
		if i > 0 {
			b.WriteString(" ")
		}
		fmt.Fprintf(&b, "{table %d key %x fp %x id %x}", r.Table, r.Key, r.Fingerprint, r.ID)
	}
	b.WriteString("]")
	return b.String()
}

// rowTables, rowKeys and rowIDs make the rows of the Rows scenario: the
// ends of the ranges of tables and keys and their neighbours, and ids with
// the top bit set.
var (
	rowTables = []int{0, 1, 254, 255}
	rowKeys   = []uint64{0, 1, 1<<64 - 2, 1<<64 - 1}
	rowIDs    = []uint64{0, 1<<63 | 5, 1<<64 - 1}
)

// testRows checks the store's set of rows directly: PutRows, Count and
// ScanRows.
func testRows(t *testing.T, open Opener) {
	r := rand.New(rand.NewPCG(1, 2))
	dir := t.TempDir()
	s := openStore(t, open, dir)
	ts := s.Tables
	m := model{}

	var rows []simhash.Row
	var probes []simhash.Probe
	for _, tab := range rowTables {
		for _, key := range rowKeys {
			probes = append(probes, simhash.Probe{Table: tab, Key: key})
			for _, id := range rowIDs {
				rows = append(rows, simhash.Row{Table: tab, Key: key, Fingerprint: key ^ id*0x9e3779b97f4a7c15, ID: id})
			}
		}
	}
	// Probes with no rows: other tables, keys next to the stored ones,
	// and the key the kit overwrites the caller's slices with.
	probes = append(probes,
		simhash.Probe{Table: 2, Key: 0}, simhash.Probe{Table: 253, Key: 1<<64 - 1},
		simhash.Probe{Table: 0, Key: 2}, simhash.Probe{Table: 255, Key: 1 << 63},
		simhash.Probe{Table: clobbered.Table, Key: clobbered.Key})

	// Empty.
	checkCount(t, ts, 0)
	checkScan(t, ts, m, probes, r)
	if err := ts.ScanRows(nil, func(int, uint64, uint64) bool {
		t.Error("ScanRows without probes called fn")
		return true
	}); err != nil {
		t.Fatalf("ScanRows without probes: %v", err)
	}
	m.put(t, ts, nil)
	checkCount(t, ts, 0)

	// Half of the rows, with a row of table 0 and one of table 1 twice.
	var half []simhash.Row
	for i, row := range rows {
		if i%2 == 0 {
			half = append(half, row)
		}
	}
	half = append(half, rows[0], rows[len(rowIDs)*len(rowKeys)])
	m.put(t, ts, half)
	checkCount(t, ts, m.count())
	checkScan(t, ts, m, probes, r)

	// All of them: only the new ones count. Then all again: none.
	m.put(t, ts, rows)
	checkCount(t, ts, m.count())
	m.put(t, ts, rows)
	checkCount(t, ts, m.count())
	checkScan(t, ts, m, probes, r)

	// Rows of other tables do not count; the same fingerprint with another
	// id is another row.
	m.put(t, ts, []simhash.Row{
		{Table: 1, Key: 7, Fingerprint: 7, ID: 1},
		{Table: 255, Key: 0, Fingerprint: 7, ID: 1},
	})
	m.put(t, ts, []simhash.Row{
		{Table: 0, Key: 7, Fingerprint: 7, ID: 1},
		{Table: 0, Key: 7, Fingerprint: 7, ID: 2},
		{Table: 0, Key: 7, Fingerprint: 7, ID: 1},
	})
	probes = append(probes, simhash.Probe{Table: 0, Key: 7}, simhash.Probe{Table: 1, Key: 7})
	want := m.count()
	checkCount(t, ts, want)
	checkScan(t, ts, m, probes, r)

	// Another dir is another store.
	other := openStore(t, open, t.TempDir())
	checkCount(t, other.Tables, 0)
	checkScan(t, other.Tables, model{}, probes, r)
	other.close(t)

	// Everything survives Close and open.
	s = reopen(t, open, dir, s)
	checkCount(t, s.Tables, want)
	checkScan(t, s.Tables, m, probes, r)
	m.put(t, s.Tables, rows)
	checkCount(t, s.Tables, want)
}

// testScanStop checks that ScanRows stops at the call where fn returns
// false, within a probe and at the last row of one, without an error.
func testScanStop(t *testing.T, open Opener) {
	s := openStore(t, open, t.TempDir())
	ts := s.Tables
	probes := []simhash.Probe{{Table: 0, Key: 1}, {Table: 1, Key: 1}, {Table: 2, Key: 9}, {Table: 3, Key: 1}}
	var rows []simhash.Row
	for _, p := range probes {
		if p.Key == 9 {
			continue // a probe with no rows between others
		}
		for id := uint64(0); id < 3; id++ {
			rows = append(rows, simhash.Row{Table: p.Table, Key: p.Key, Fingerprint: 1<<40 | id, ID: id})
		}
	}
	if _, err := ts.PutRows(rows); err != nil {
		t.Fatal(err)
	}
	for stop := 1; stop <= len(rows); stop++ {
		calls := 0
		err := ts.ScanRows(probes, func(int, uint64, uint64) bool {
			calls++
			return calls < stop
		})
		if err != nil {
			t.Fatalf("ScanRows stopped by fn at call %d: %v", stop, err)
		}
		if calls != stop {
			t.Fatalf("fn returned false at call %d, but was called %d times", stop, calls)
		}
	}
}

// edgeBase is the fingerprint the edge entries and queries are built
// around.
const edgeBase = uint64(0xdeadbeefcafef00d)

// edgeEntries returns a small set of edge cases with ids from firstID on:
// 200 identical all-zero fingerprints, 64 fingerprints two adjacent bits
// from edgeBase, the all-one fingerprint, and 1<<63 with the largest id.
func edgeEntries(firstID uint64) []simhash.Entry {
	var es []simhash.Entry
	add := func(fp uint64) {
		es = append(es, simhash.Entry{Fingerprint: fp, ID: firstID + uint64(len(es))})
	}
	for i := 0; i < 200; i++ {
		add(0)
	}
	for i := 0; i < 64; i++ {
		add(edgeBase ^ 1<<i ^ 1<<((i+1)%64))
	}
	return append(es,
		simhash.Entry{Fingerprint: ^uint64(0), ID: 1 << 40},
		simhash.Entry{Fingerprint: 1 << 63, ID: 1<<64 - 1})
}

var edgeQueries = []uint64{0, 7, ^uint64(0), edgeBase, edgeBase ^ 0xf, edgeBase ^ 0b111<<30, 1 << 63, edgeBase ^ 1<<63 ^ 1<<10 ^ 1<<40}

// layouts are the index layouts of IndexExact: K from 1 to 4, with the
// default Blocks (0), the fewest (K+1, one block per table), and others.
var layouts = []struct{ k, blocks int }{
	{1, 0}, {1, 2}, {1, 5}, {2, 0}, {2, 3}, {2, 5}, {2, 8}, {3, 0}, {3, 4}, {3, 5}, {3, 7}, {3, 8},
	{4, 0}, {4, 5}, {4, 9}, {4, 12},
}

// testIndexExact checks an Index on the store against a linear scan for
// every layout, as it grows and after Close and open.
func testIndexExact(t *testing.T, open Opener) {
	for _, l := range layouts {
		t.Run(fmt.Sprintf("k%d-b%d", l.k, l.blocks), func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(l.k), uint64(l.blocks)+100))
			dir := t.TempDir()
			s := openStore(t, open, dir)
			opts := simhash.Config{K: l.k, Blocks: l.blocks, Tables: s.Tables}
			ix := newIndex(t, opts)
			entries := AddClusters(t, ix, r, 200)

			// Random fingerprints and edge cases, in batches of 1 to 20.
			var more []simhash.Entry
			for i := 0; i < 300; i++ {
				more = append(more, simhash.Entry{Fingerprint: r.Uint64(), ID: uint64(len(entries) + len(more))})
			}
			more = append(more, edgeEntries(uint64(len(entries)+len(more)))...)
			r.Shuffle(len(more), func(i, j int) { more[i], more[j] = more[j], more[i] })
			for i := 0; i < len(more); {
				n := min(1+r.IntN(20), len(more)-i)
				var err error
				if n == 1 {
					err = ix.Add(more[i].Fingerprint, more[i].ID)
				} else {
					err = ix.AddBatch(more[i : i+n])
				}
				if err != nil {
					t.Fatal(err)
				}
				i += n
			}
			entries = append(entries, more...)

			checkLen(t, ix, s.Tables, len(entries))
			CheckExact(t, ix, entries, r, 1000)
			CheckQueries(t, ix, entries, edgeQueries)
			checkNoErr(t, ix)

			s = reopen(t, open, dir, s)
			opts.Tables = s.Tables
			ix = newIndex(t, opts)
			checkLen(t, ix, s.Tables, len(entries))
			CheckExact(t, ix, entries, r, 300)
			CheckQueries(t, ix, entries, edgeQueries)
			checkNoErr(t, ix)
		})
	}
}

// testIndexAdversarial checks an Index on the store against a linear scan
// on the Adversarial data, added in one batch.
func testIndexAdversarial(t *testing.T, open Opener) {
	entries, queries := Adversarial()
	for _, k := range []int{3, 4} {
		t.Run(fmt.Sprintf("k%d", k), func(t *testing.T) {
			r := rand.New(rand.NewPCG(7, uint64(k)))
			s := openStore(t, open, t.TempDir())
			ix := newIndex(t, simhash.Config{K: k, Tables: s.Tables})
			if err := ix.AddBatch(entries); err != nil {
				t.Fatal(err)
			}
			checkLen(t, ix, s.Tables, len(entries))
			CheckQueries(t, ix, entries, queries)
			CheckExact(t, ix, entries, r, 300)
			checkNoErr(t, ix)
		})
	}
}

// testIndexReopen checks the set semantics and the recorded layout
// through an Index, across Close and open.
func testIndexReopen(t *testing.T, open Opener) {
	dir := t.TempDir()
	s := openStore(t, open, dir)
	ix := newIndex(t, simhash.Config{Tables: s.Tables})
	// The layout is recorded when the store is first opened, before any
	// entry.
	if _, err := simhash.NewIndex(simhash.Config{K: 2, Tables: s.Tables}); !errors.Is(err, simhash.ErrInvalidConfig) {
		t.Fatalf("NewIndex with K=2 on a store opened with K=3: err = %v, want ErrInvalidConfig", err)
	}
	// A pair added twice, in one batch and in two, counts once; the same
	// fingerprint with another id is another entry.
	batch := []simhash.Entry{{Fingerprint: 0xff00, ID: 1}, {Fingerprint: 0xff00, ID: 1}, {Fingerprint: 0xff00, ID: 2}}
	for i := 0; i < 2; i++ {
		if err := ix.AddBatch(batch); err != nil {
			t.Fatal(err)
		}
	}
	checkLen(t, ix, s.Tables, 2)
	got, err := ix.AppendNearErr(nil, 0xff01)
	if err != nil {
		t.Fatal(err)
	}
	want := []simhash.Match{
		{Entry: simhash.Entry{Fingerprint: 0xff00, ID: 1}, Distance: 1},
		{Entry: simhash.Entry{Fingerprint: 0xff00, ID: 2}, Distance: 1},
	}
	if !slices.Equal(SortMatches(got), want) {
		t.Fatalf("Near = %v, want %v", got, want)
	}
	if err := ix.Add(0xff01, 3); err != nil {
		t.Fatal(err)
	}
	checkLen(t, ix, s.Tables, 3)
	checkNoErr(t, ix)

	s = reopen(t, open, dir, s)
	for _, o := range []simhash.Config{{K: 4}, {K: 3, Blocks: 5}, {K: 2, Blocks: 6}} {
		o.Tables = s.Tables
		if _, err := simhash.NewIndex(o); !errors.Is(err, simhash.ErrInvalidConfig) {
			t.Fatalf("reopened with K=%d Blocks=%d (written with K=3 Blocks=6): err = %v, want ErrInvalidConfig", o.K, o.Blocks, err)
		}
	}
	// The defaults, left zero or spelt out, are the same layout.
	newIndex(t, simhash.Config{Tables: s.Tables})
	ix = newIndex(t, simhash.Config{K: 3, Blocks: 6, Tables: s.Tables})
	checkLen(t, ix, s.Tables, 3)
	got, err = ix.AppendNearErr(nil, 0xff00)
	if err != nil {
		t.Fatal(err)
	}
	want = []simhash.Match{
		{Entry: simhash.Entry{Fingerprint: 0xff00, ID: 1}},
		{Entry: simhash.Entry{Fingerprint: 0xff00, ID: 2}},
		{Entry: simhash.Entry{Fingerprint: 0xff01, ID: 3}, Distance: 1},
	}
	if !slices.Equal(SortMatches(got), want) {
		t.Fatalf("reopened: Near = %v, want %v", got, want)
	}
	if st := ix.Stats(); !st.External || st.Bytes != 0 || st.Len != 3 || st.Tables != 6 {
		t.Fatalf("Stats = %+v, want External, 0 bytes, 3 entries, 6 tables", st)
	}
	// Still a set after reopening.
	if err := ix.AddBatch(append(batch, simhash.Entry{Fingerprint: 0xff01, ID: 3})); err != nil {
		t.Fatal(err)
	}
	checkLen(t, ix, s.Tables, 3)
	checkNoErr(t, ix)
}

// testIndexConcurrent runs Near and Has concurrently with Add from two
// writers (CheckConcurrent) on an Index with a table store.
func testIndexConcurrent(t *testing.T, open Opener) {
	s := openStore(t, open, t.TempDir())
	ix := newIndex(t, simhash.Config{Tables: s.Tables})
	r := rand.New(rand.NewPCG(9, 10))
	fps := make([]uint64, 2000)
	for i := range fps {
		fps[i] = r.Uint64()
	}
	CheckConcurrent(t, ix, fps)
	if t.Failed() {
		return
	}
	checkLen(t, ix, s.Tables, len(fps))
	checkNoErr(t, ix)
}

// testAfterClose checks that a closed store fails with Store.ErrClosed,
// and that an Index on it passes the error on.
func testAfterClose(t *testing.T, open Opener) {
	s := openStore(t, open, t.TempDir())
	if s.Close == nil || s.ErrClosed == nil {
		t.Skip("the Store has no Close or no ErrClosed")
	}
	ts, errClosed := s.Tables, s.ErrClosed
	ix := newIndex(t, simhash.Config{Tables: ts})
	if err := ix.Add(1, 1); err != nil {
		t.Fatal(err)
	}
	s.close(t)
	if _, err := ts.PutRows([]simhash.Row{{Table: 0, Key: 2, Fingerprint: 2, ID: 2}}); !errors.Is(err, errClosed) {
		t.Fatalf("PutRows after Close: err = %v, want %v", err, errClosed)
	}
	if err := ts.ScanRows([]simhash.Probe{{}}, func(int, uint64, uint64) bool { return true }); !errors.Is(err, errClosed) {
		t.Fatalf("ScanRows after Close: err = %v, want %v", err, errClosed)
	}
	if _, err := ts.Count(); !errors.Is(err, errClosed) {
		t.Fatalf("Count after Close: err = %v, want %v", err, errClosed)
	}
	if err := ix.Add(2, 2); !errors.Is(err, errClosed) {
		t.Fatalf("Index.Add after Close: err = %v, want %v", err, errClosed)
	}
	if _, err := ix.AppendNearErr(nil, 1); !errors.Is(err, errClosed) {
		t.Fatalf("Index.AppendNearErr after Close: err = %v, want %v", err, errClosed)
	}
	if ix.Has(1) || !errors.Is(ix.Err(), errClosed) {
		t.Fatalf("Index.Has after Close: Err = %v, want %v", ix.Err(), errClosed)
	}
	if _, err := simhash.NewIndex(simhash.Config{Tables: ts}); !errors.Is(err, errClosed) {
		t.Fatalf("NewIndex after Close: err = %v, want %v", err, errClosed)
	}
}
