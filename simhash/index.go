package simhash

import (
	"errors"
	"fmt"
	"math/bits"
	"slices"
	"sync"
	"sync/atomic"
)

// Index limits.
const (
	// DefaultK is the distance Near searches when Config.K is zero.
	DefaultK = 3
	// MaxK is the largest supported distance.
	MaxK = 4
	// maxBlocks bounds Config.Blocks, and maxTables the tables any
	// allowed layout has (the most is 15: K=4, Blocks=6, all pairs of one
	// group; TestMaxTables checks every layout).
	maxBlocks = 12
	maxTables = 16
	// bufferSize is how many recent additions are kept unindexed (and
	// scanned linearly by Near) before they become a segment.
	bufferSize = 256
	// mergeRatio: a segment is merged into the one before it when it
	// holds at least 1/mergeRatio of its entries, so segment sizes fall
	// geometrically and a query visits O(log n) segments.
	mergeRatio = 4
)

// ErrInvalidConfig is returned by NewIndex for options outside their
// documented ranges.
var ErrInvalidConfig = errors.New("simhash: invalid config")

// Entry is a fingerprint and the document it belongs to.
type Entry struct {
	Fingerprint uint64
	ID          uint64
}

// Match is a stored entry near a query.
type Match struct {
	Entry
	Distance int
}

// Config configures an Index. The zero value searches within 3 bits with
// the default 6-table layout and no store.
type Config struct {
	// K is the largest Hamming distance Near reports, 1 to MaxK; zero
	// means DefaultK.
	K int
	// Blocks is the number of blocks the 64 bits are split into, which
	// sets the number of tables and so the memory/latency trade-off (see
	// Index). It must be at least K+1 and at most 12. Zero means 6 for
	// K ≤ 3 and 7 for K = 4.
	Blocks int
	// Store, if not nil, persists every entry added, and NewIndex loads
	// the entries already in it.
	Store Store
	// Tables, if not nil, holds the index's tables instead of memory (see
	// Index), and NewIndex opens the entries already in it. NewIndex
	// records K and Blocks in an empty table store and refuses one
	// recorded with other values (ErrInvalidConfig), whose tables would
	// not match. It records the fingerprint Version too, and refuses a
	// store of another version with a *VersionError
	// (ErrVersionMismatch). Store and Tables are exclusive.
	Tables TableStore
}

// Index finds stored fingerprints within K bits of a query.
//
// # Layout
//
// The 64 bits are split into B blocks. If two fingerprints differ in at
// most K bits, at least B-K blocks are identical in both (pigeonhole).
// Manku, Jain and Das Sarma keep one table per choice of B-K blocks,
// sorted by those blocks, and probe each table with the query's bits in
// them. This Index uses fewer tables for the same guarantee: the blocks
// are divided into B-K-1 groups, and there is one table per pair of blocks
// in the same group; any B-K intact blocks fall into B-K-1 groups, so two
// of them share a group and the table of that pair finds the match. With
// B = 6 and K = 3 that is two groups of three blocks and 6 tables keyed
// by about 21 leading bits, where the classic scheme needs 20 (choose 3
// of 6) or settles for 4 tables of 16 bits (B = 4) and ~600 candidates per
// query at 10 million fingerprints. With B = K+1 each table is keyed by a
// single block.
//
// Each table stores the fingerprints bucketed by the top d bits of its
// key (d about log2(n)-2) behind a directory of bucket offsets; the first
// table also stores the document ids. Memory is 8 bytes per fingerprint
// per table, 8 for the id and about 4·2^d/n per table for directories:
// under 62 bytes per fingerprint with the default layout (see Stats).
// Near reads one bucket per table, checks each candidate's distance, and
// reports a match only from the first table whose key blocks are intact
// for it, so every stored entry within K bits is reported exactly once.
//
// Additions go to a small buffer that Near scans linearly, then to
// immutable segments that are merged as they grow (each at most a quarter
// the size of the one before). Near reads a snapshot without locking, so
// it runs concurrently with Add; additions are serialized.
//
// # Tables outside memory
//
// With Config.Tables the index keeps no tables in memory, so its memory
// stays flat however many fingerprints it holds: the tables are rows of a
// TableStore (storage/pebble keeps them on disk). Each Add writes one row
// per table (6 with the default layout) in one PutRows; each Near is one
// ScanRows with a probe per table, whose rows are checked as above, each
// reported only from its first intact table. A TableStore is a set: adding
// a (fingerprint, id) pair that is already stored does not store it again,
// nor count it in Len. Lookup errors are returned by AppendNearErr and kept
// for Err.
type Index struct {
	sc    *scheme
	store Store

	tables TableStore            // nil: tables in memory
	n      atomic.Int64          // entries, with tables
	err    atomic.Pointer[error] // first lookup error, with tables
	rowBuf []Row                 // AddBatch scratch, under mu

	mu   sync.Mutex // serializes writers
	snap atomic.Pointer[indexSnapshot]
}

type indexSnapshot struct {
	segs []*segment // largest first
	buf  []Entry    // at most bufferSize, unindexed
	n    int
}

// NewIndex returns an Index configured by opts, holding the entries of
// opts.Store if one is given (the tables are rebuilt in memory from them),
// or of opts.Tables.
func NewIndex(opts Config) (*Index, error) {
	if opts.Store != nil && opts.Tables != nil {
		return nil, fmt.Errorf("%w: Store and Tables are exclusive (a table store persists the tables themselves)", ErrInvalidConfig)
	}
	if opts.K == 0 {
		opts.K = DefaultK
	}
	if opts.K < 1 || opts.K > MaxK {
		return nil, fmt.Errorf("%w: K %d outside 1..%d", ErrInvalidConfig, opts.K, MaxK)
	}
	if opts.Blocks == 0 {
		opts.Blocks = 6
		if opts.K == 4 {
			opts.Blocks = 7
		}
	}
	if opts.Blocks < opts.K+1 || opts.Blocks > maxBlocks {
		return nil, fmt.Errorf("%w: Blocks %d outside %d..%d for K=%d", ErrInvalidConfig, opts.Blocks, opts.K+1, maxBlocks, opts.K)
	}
	sc, err := newScheme(opts.K, opts.Blocks)
	if err != nil {
		return nil, err
	}
	ix := &Index{sc: sc}
	ix.snap.Store(&indexSnapshot{})
	if opts.Tables != nil {
		if err := ix.openTables(opts.Tables); err != nil {
			return nil, err
		}
	}
	if opts.Store != nil {
		var all []Entry
		err := opts.Store.ForEach(func(e Entry) error {
			all = append(all, e)
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("simhash: loading index store: %w", err)
		}
		ix.addLocked(all)
		ix.store = opts.Store
	}
	return ix, nil
}

// K returns the distance the index searches.
func (ix *Index) K() int { return ix.sc.k }

// Tables returns the number of tables (the memory/latency knob).
func (ix *Index) Tables() int { return len(ix.sc.tables) }

// Len returns the number of entries stored.
func (ix *Index) Len() int {
	if ix.tables != nil {
		return int(ix.n.Load())
	}
	return ix.snap.Load().n
}

// Add stores fingerprint fp for document id. Adding the same pair twice
// stores it twice in memory, and once with a TableStore (Config.Tables),
// which keeps a set of rows.
func (ix *Index) Add(fp, id uint64) error {
	return ix.AddBatch([]Entry{{Fingerprint: fp, ID: id}})
}

// AddBatch stores several entries at once; it is much faster than Add in a
// loop for bulk loads. With a store, the entries are persisted first and
// nothing is added if that fails. With a table store, the batch is one
// PutRows: all of it is added or none.
func (ix *Index) AddBatch(entries []Entry) error {
	if len(entries) == 0 {
		return nil
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.tables != nil {
		return ix.addTables(entries)
	}
	if ix.store != nil {
		if err := ix.store.Put(entries); err != nil {
			return fmt.Errorf("simhash: index store: %w", err)
		}
	}
	ix.addLocked(entries)
	return nil
}

// addLocked adds entries; the caller holds ix.mu (or owns ix exclusively).
func (ix *Index) addLocked(entries []Entry) {
	old := ix.snap.Load()
	next := &indexSnapshot{segs: old.segs, n: old.n + len(entries)}
	if len(old.buf)+len(entries) <= bufferSize {
		// Appending past the old snapshot's length does not disturb its
		// readers, which never look beyond it.
		next.buf = append(old.buf, entries...)
		ix.snap.Store(next)
		return
	}
	all := make([]Entry, 0, len(old.buf)+len(entries))
	all = append(append(all, old.buf...), entries...)
	segs := append(slices.Clip(old.segs), ix.sc.build(all))
	// Merge while the newest segment is not much smaller than the one
	// before it.
	for len(segs) >= 2 && segs[len(segs)-1].n*mergeRatio >= segs[len(segs)-2].n {
		a, b := segs[len(segs)-2], segs[len(segs)-1]
		merged := ix.sc.build(append(a.entries(), b.entries()...))
		segs = append(segs[:len(segs)-2], merged)
	}
	next.segs = segs
	ix.snap.Store(next)
}

// Near returns every stored entry within K bits of fp, in no particular
// order. It allocates only for its result; see AppendNear.
func (ix *Index) Near(fp uint64) []Match { return ix.AppendNear(nil, fp) }

// AppendNear appends to dst every stored entry within K bits of fp and
// returns the extended slice. It is safe to call concurrently with Add.
// If the table store fails, it returns the matches found before the error
// and Err reports it; AppendNearErr returns it.
func (ix *Index) AppendNear(dst []Match, fp uint64) []Match {
	if ix.tables != nil {
		dst, _ = ix.nearTables(dst, fp, false)
		return dst
	}
	s := ix.snap.Load()
	for _, seg := range s.segs {
		dst = seg.near(dst, fp, ix.sc)
	}
	k := ix.sc.k
	for _, e := range s.buf {
		if d := bits.OnesCount64(e.Fingerprint ^ fp); d <= k {
			dst = append(dst, Match{Entry: e, Distance: d})
		}
	}
	return dst
}

// Has reports whether some stored fingerprint is within K bits of fp. It
// allocates only when several entries match. If the table store fails, it
// reports false unless a match was found before the error, and Err
// reports the error.
func (ix *Index) Has(fp uint64) bool {
	var buf [1]Match
	if ix.tables != nil {
		found, _ := ix.nearTables(buf[:0], fp, true)
		return len(found) > 0
	}
	return len(ix.AppendNear(buf[:0], fp)) > 0
}

// IndexStats describes an Index's memory.
type IndexStats struct {
	Len      int // entries stored
	Tables   int
	Segments int
	// Bytes is the memory held by tables, directories, ids and the
	// buffer; BytesPerEntry is Bytes / Len. Both are 0 with External.
	Bytes         int64
	BytesPerEntry float64
	// External is set when the tables are kept in Config.Tables.
	External bool
}

// Stats returns the index's size.
func (ix *Index) Stats() IndexStats {
	if ix.tables != nil {
		return IndexStats{Len: ix.Len(), Tables: len(ix.sc.tables), External: true}
	}
	s := ix.snap.Load()
	st := IndexStats{Len: s.n, Tables: len(ix.sc.tables), Segments: len(s.segs)}
	for _, seg := range s.segs {
		st.Bytes += seg.bytes()
	}
	st.Bytes += int64(cap(s.buf)) * 16
	if s.n > 0 {
		st.BytesPerEntry = float64(st.Bytes) / float64(s.n)
	}
	return st
}

// scheme is the block layout and the tables keyed on it.
type scheme struct {
	k      int
	blocks []block
	tables []tableSpec
}

type block struct {
	shift, width uint // bits [shift, shift+width) of the fingerprint
}

type tableSpec struct {
	lead []int // key blocks, most significant first (one or two)
	p    uint  // key bits
	mask uint64
}

func newScheme(k, b int) (*scheme, error) {
	sc := &scheme{k: k}
	// Block 0 is the most significant; widths differ by at most one.
	hi := uint(64)
	for j := 0; j < b; j++ {
		w := uint(64 / b)
		if j < 64%b {
			w++
		}
		hi -= w
		sc.blocks = append(sc.blocks, block{shift: hi, width: w})
	}
	add := func(lead ...int) {
		t := tableSpec{lead: lead}
		for _, j := range lead {
			t.p += sc.blocks[j].width
			t.mask |= (1<<sc.blocks[j].width - 1) << sc.blocks[j].shift
		}
		sc.tables = append(sc.tables, t)
	}
	if b == k+1 {
		for j := 0; j < b; j++ {
			add(j)
		}
	} else {
		// b-k-1 groups of consecutive blocks, sizes differing by one.
		g := b - k - 1
		start := 0
		for i := 0; i < g; i++ {
			size := b / g
			if i < b%g {
				size++
			}
			for x := start; x < start+size; x++ {
				for y := x + 1; y < start+size; y++ {
					add(x, y)
				}
			}
			start += size
		}
	}
	if !sc.covers() {
		return nil, fmt.Errorf("%w: %d blocks do not guarantee distance %d", ErrInvalidConfig, b, k)
	}
	return sc, nil
}

// covers checks the pigeonhole guarantee by enumeration: every way of
// spreading k differing bits over the blocks leaves some table's key
// blocks intact.
func (sc *scheme) covers() bool {
	b := len(sc.blocks)
	for dirty := 0; dirty < 1<<b; dirty++ {
		if bits.OnesCount(uint(dirty)) > sc.k {
			continue
		}
		found := false
		for _, t := range sc.tables {
			intact := true
			for _, j := range t.lead {
				if dirty>>j&1 != 0 {
					intact = false
				}
			}
			if intact {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// key returns table t's key of fp: its lead blocks' bits, concatenated.
func (sc *scheme) key(t int, fp uint64) uint64 {
	spec := &sc.tables[t]
	var key uint64
	for _, j := range spec.lead {
		bl := sc.blocks[j]
		key = key<<bl.width | (fp>>bl.shift)&(1<<bl.width-1)
	}
	return key
}

// canonical returns the first table whose key blocks are identical in two
// fingerprints differing in x.
func (sc *scheme) canonical(x uint64) int {
	for t := range sc.tables {
		if x&sc.tables[t].mask == 0 {
			return t
		}
	}
	return -1
}

// segment is an immutable set of entries indexed by every table.
type segment struct {
	n      int
	tables []table
	ids    []uint64 // parallel to tables[0].fps
}

type table struct {
	shift uint     // bucket = key >> shift
	fps   []uint64 // bucketed, and sorted by fingerprint within a bucket
	dir   []uint32 // bucket b is fps[dir[b]:dir[b+1]]
}

func (seg *segment) bytes() int64 {
	b := int64(len(seg.ids)) * 8
	for _, t := range seg.tables {
		b += int64(len(t.fps))*8 + int64(len(t.dir))*4
	}
	return b
}

// entries returns the segment's entries (a new slice).
func (seg *segment) entries() []Entry {
	out := make([]Entry, seg.n)
	for i := range out {
		out[i] = Entry{Fingerprint: seg.tables[0].fps[i], ID: seg.ids[i]}
	}
	return out
}

// bucketBits is the directory size for n entries: about n/4 buckets.
func bucketBits(n int) uint {
	d := bits.Len(uint(n))
	return uint(max(0, min(d-3, 28)))
}

// build indexes entries in a new segment. It takes ownership of entries.
func (sc *scheme) build(entries []Entry) *segment {
	n := len(entries)
	d := bucketBits(n)
	seg := &segment{n: n, tables: make([]table, len(sc.tables))}
	for t := range sc.tables {
		tab := &seg.tables[t]
		dt := min(d, sc.tables[t].p)
		tab.shift = sc.tables[t].p - dt
		tab.dir = make([]uint32, 1<<dt+1)
		for _, e := range entries {
			tab.dir[sc.key(t, e.Fingerprint)>>tab.shift+1]++
		}
		for b := 1; b < len(tab.dir); b++ {
			tab.dir[b] += tab.dir[b-1]
		}
		next := slices.Clone(tab.dir[:len(tab.dir)-1])
		if t == 0 {
			sorted := make([]Entry, n)
			for _, e := range entries {
				b := sc.key(0, e.Fingerprint) >> tab.shift
				sorted[next[b]] = e
				next[b]++
			}
			for b := 0; b+1 < len(tab.dir); b++ {
				sortEntries(sorted[tab.dir[b]:tab.dir[b+1]])
			}
			tab.fps = make([]uint64, n)
			seg.ids = make([]uint64, n)
			for i, e := range sorted {
				tab.fps[i], seg.ids[i] = e.Fingerprint, e.ID
			}
			continue
		}
		tab.fps = make([]uint64, n)
		for _, e := range entries {
			b := sc.key(t, e.Fingerprint) >> tab.shift
			tab.fps[next[b]] = e.Fingerprint
			next[b]++
		}
		for b := 0; b+1 < len(tab.dir); b++ {
			sortFingerprints(tab.fps[tab.dir[b]:tab.dir[b+1]])
		}
	}
	return seg
}

func sortEntries(es []Entry) {
	if len(es) <= 16 {
		for i := 1; i < len(es); i++ {
			for j := i; j > 0 && entryLess(es[j], es[j-1]); j-- {
				es[j], es[j-1] = es[j-1], es[j]
			}
		}
		return
	}
	slices.SortFunc(es, func(a, b Entry) int {
		switch {
		case entryLess(a, b):
			return -1
		case entryLess(b, a):
			return 1
		}
		return 0
	})
}

func entryLess(a, b Entry) bool {
	return a.Fingerprint < b.Fingerprint || a.Fingerprint == b.Fingerprint && a.ID < b.ID
}

func sortFingerprints(fps []uint64) {
	if len(fps) <= 16 {
		for i := 1; i < len(fps); i++ {
			for j := i; j > 0 && fps[j] < fps[j-1]; j-- {
				fps[j], fps[j-1] = fps[j-1], fps[j]
			}
		}
		return
	}
	slices.Sort(fps)
}

// near appends the segment's entries within sc.k of q.
func (seg *segment) near(dst []Match, q uint64, sc *scheme) []Match {
	k := sc.k
	// A query is two rounds of cache misses, one per table in each: the
	// directory entries, then the buckets. The loops below start all of
	// a round's misses before waiting for any, so that they overlap: the
	// first reads every directory entry, the second the first
	// fingerprint of every bucket (a bucket holds about four, mostly on
	// that one's cache line), and only the third compares.
	var spans [maxTables][2]uint32
	for t := range seg.tables {
		tab := &seg.tables[t]
		b := sc.key(t, q) >> tab.shift
		spans[t] = [2]uint32{tab.dir[b], tab.dir[b+1]}
	}
	var heads [maxTables]uint64
	for t := range seg.tables {
		if lo := spans[t][0]; lo < spans[t][1] {
			heads[t] = seg.tables[t].fps[lo]
		}
	}
	for t := range seg.tables {
		fps := seg.tables[t].fps[spans[t][0]:spans[t][1]]
		for i := range fps {
			f := heads[t] // fps[0], read by the second loop
			if i > 0 {
				f = fps[i]
			}
			d := bits.OnesCount64(f ^ q)
			if d > k {
				continue
			}
			if i > 0 && fps[i-1] == f {
				continue // equal fingerprints are reported together
			}
			if sc.canonical(f^q) != t {
				continue // reported by an earlier table
			}
			dst = seg.appendIDs(dst, f, d, sc)
		}
	}
	return dst
}

// appendIDs appends a match for every entry of the segment with
// fingerprint f, found through the first table.
func (seg *segment) appendIDs(dst []Match, f uint64, d int, sc *scheme) []Match {
	tab := &seg.tables[0]
	b := sc.key(0, f) >> tab.shift
	lo, hi := tab.dir[b], tab.dir[b+1]
	i, _ := slices.BinarySearch(tab.fps[lo:hi], f)
	for j := int(lo) + i; j < int(hi) && tab.fps[j] == f; j++ {
		dst = append(dst, Match{Entry: Entry{Fingerprint: f, ID: seg.ids[j]}, Distance: d})
	}
	return dst
}
