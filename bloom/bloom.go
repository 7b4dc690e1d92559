// Package bloom is crawlkit's seen-URL set: a scalable Bloom filter that
// answers "has this normalized URL been seen before?" in constant memory per
// URL, optionally backed by an exact store that removes false positives.
//
// # Model
//
// A [Set] is sized from the number of URLs the caller expects and the
// false-positive rate it tolerates, the two knobs of the Bloom formula
// (m = -n·ln p / ln²2 bits, k = ⌈ln 2·m/n⌉ hash functions; sizing is done by
// github.com/bits-and-blooms/bloom/v3's EstimateParameters, and every filter
// stage is a bits-and-blooms bit set). [Set.Stats] reports the derived bits
// and hash counts.
//
// Each URL is hashed once, with XXH64 (seed 0, the reference xxHash64 of
// its UTF-8 bytes; see [Key]), to a 64-bit key. All filter positions are
// derived from that key by double hashing (Kirsch and Mitzenmacher, "Less
// Hashing, Same Performance", ESA 2006), so the cost per operation does not
// grow with URL length, and a caller that already holds the key can pass
// it directly with [Set.TestAndAddKey]. urlnorm.Key is the same function,
// so TestAndAdd(u) and TestAndAddKey(urlnorm.Key(u)) are interchangeable.
//
// # Guarantees
//
// Without a store a Set never reports a URL it has been given as new (no
// false negatives) and reports a URL it has not been given as seen with
// probability at most the configured rate, including after more URLs than
// expected have arrived: when a stage reaches its capacity a larger,
// tighter stage is added, as in Almeida, Baquero, Preguiça and Hutchison,
// "Scalable Bloom Filters" (Information Processing Letters 101(6), 2007).
// The first stage gets 90% of the error budget (so its size stays within a
// few percent of the Bloom formula for the configured rate); stage i ≥ 1
// holds twice as many keys as stage i-1 and gets 0.1·p·2^-i, so the rates
// sum to at most p however far the set grows.
//
// With a [Store] the filter is only a fast path: a "maybe seen" answer is
// confirmed in the store, so the set has no false positives beyond 64-bit
// key collisions (see [Store]).
//
// TestAndAdd is atomic: of several goroutines adding the same URL at the
// same time, exactly one is told it is new. A Set is split into shards by
// key, each with its own lock and its own stages. A URL already present is
// answered without taking the lock (bits only ever go from 0 to 1), so the
// common case in a crawl, a link to a page already seen, scales across
// cores. A new URL takes its shard's lock, checks again and sets its bits.
// The lock and the counters a new URL updates are on a cache line of their
// own, apart from the stage list and stage headers every lookup reads, so
// insertions on one core do not invalidate those in the other cores' caches.
// New URLs scale less well than lookups: each sets about k bits in k
// cache lines that other cores may be writing too (see BENCHMARKS.md).
//
// # Snapshots
//
// [Set.WriteTo] writes a versioned, checksummed snapshot that [Load]
// restores, so a node restarts without re-reading every URL. A damaged or
// foreign snapshot is reported as an error wrapping [ErrCorrupt].
package bloom

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"sync"
	"sync/atomic"
	"unsafe"

	bbloom "github.com/bits-and-blooms/bloom/v3"
	"github.com/cespare/xxhash/v2"
)

// Defaults used when Config leaves a field zero.
const (
	// DefaultExpected is the expected number of URLs when Config.Expected
	// is zero.
	DefaultExpected = 1 << 20
	// DefaultFalsePositiveRate is the false-positive bound when
	// Config.FalsePositiveRate is zero.
	DefaultFalsePositiveRate = 0.01
)

// Stage error budget (see the package comment): the first stage gets
// firstStageShare·p, stage i ≥ 1 gets (1-firstStageShare)·p·2^-i.
const firstStageShare = 0.9

// Bounds that keep a Set's shape sane; a snapshot outside them is corrupt.
const (
	maxShards   = 1 << 12
	maxStages   = 48
	maxHashes   = 64
	maxExpected = 1 << 40
	// Keys per shard below which sharding is not worth its variance: a
	// shard expecting c keys receives c ± √c of them, and its filter is
	// sized with a 3σ allowance, which is under 1.2% from 2^16 keys up.
	minKeysPerShard = 1 << 16
)

// ErrInvalidConfig is returned by New and Load for options outside their
// documented ranges.
var ErrInvalidConfig = errors.New("bloom: invalid config")

// Config configures a Set. The zero value expects 2^20 URLs at a 1%
// false-positive rate, with no store.
type Config struct {
	// Expected is the number of URLs the first filter stage is sized for.
	// More may be added: the set grows in stages and keeps the
	// false-positive bound. Zero means DefaultExpected.
	Expected uint64
	// FalsePositiveRate is the bound on the probability that a URL never
	// added is reported as seen, in (0, 0.5]. Zero means
	// DefaultFalsePositiveRate.
	FalsePositiveRate float64
	// Store, if not nil, is consulted whenever the filter answers "maybe
	// seen", and records every new key. See Store for what it guarantees.
	Store Store
}

func (o Config) withDefaults() (Config, error) {
	if o.Expected == 0 {
		o.Expected = DefaultExpected
	}
	if o.FalsePositiveRate == 0 {
		o.FalsePositiveRate = DefaultFalsePositiveRate
	}
	if o.Expected > maxExpected {
		return o, fmt.Errorf("%w: Expected %d exceeds %d", ErrInvalidConfig, o.Expected, uint64(maxExpected))
	}
	if !(o.FalsePositiveRate > 0 && o.FalsePositiveRate <= 0.5) {
		return o, fmt.Errorf("%w: FalsePositiveRate %v outside (0, 0.5]", ErrInvalidConfig, o.FalsePositiveRate)
	}
	return o, nil
}

// Key returns the 64-bit key the string methods of Set use for s: XXH64
// with seed 0 over the bytes of s (https://xxhash.com, the reference
// algorithm; stable across processes, platforms and releases).
func Key(s string) uint64 { return xxhash.Sum64String(s) }

// Set is a concurrent seen-URL set. Create one with New or Load.
type Set struct {
	opts   Config
	shards []shard
	// shardCap is the number of keys the first stage of each shard is
	// sized for: its share of Expected plus a 3σ allowance for the
	// unevenness of the split.
	shardCap uint64
	params   []stageParams // shapes of stages 0, 1, ...; fixed at creation
}

// stageParams is the shape of stage i of every shard.
type stageParams struct {
	capacity uint64  // keys the stage is sized for
	limit    uint64  // keys the stage takes before the next stage is added (= capacity)
	rate     float64 // false-positive rate at capacity
	m        uint64  // bits, a multiple of 64
	k        uint32  // hash functions
}

// cacheLine is the coherence unit the shard layout is padded to: 64 bytes
// on amd64 and most arm64 cores (where lines are larger, neighbouring
// fields share a line again, which costs speed, not correctness).
const cacheLine = 64

// shard is one lock's worth of the set. Readers that only need a "seen"
// answer check the bits without the lock: bits only ever go from 0 to 1,
// so if all of a key's bits are set, the locked path would say the same.
// Bits are therefore read with atomic loads and set with atomic ORs (plain
// moves and one locked OR on amd64), and the stage list is replaced, never
// modified, when the shard grows.
//
// The fields every lookup reads (stage 0's probe and the stage list) and
// the fields every new key writes (the lock and the counters) are on
// separate cache lines, so that inserting on one core does not invalidate
// the former in the caches of the cores that are only looking keys up.
type shard struct {
	// first is stage 0's bits. Stage 0 is never replaced, so they are
	// copied here when the shard is set up, and a lookup, which starts
	// there, reaches them without going through the stage list.
	first  probe
	stages atomic.Pointer[[]*stage] // immutable list, replaced under mu
	_      [cacheLine - unsafe.Sizeof(probe{}) - 8]byte

	mu    sync.Mutex
	count atomic.Uint64 // keys recorded as new; written under mu
	fill  uint64        // keys added to the newest stage; guarded by mu
	_     [cacheLine - 8 - 8 - 8]byte
}

func (sh *shard) list() []*stage { return *sh.stages.Load() }

// init gives a shard no one else sees yet its stages.
func (sh *shard) init(stages []*stage) {
	sh.first = stages[0].probe
	sh.stages.Store(&stages)
}

// stage is one filter of a shard. Its fields are read by every lookup and
// written only when the stage is created or sealed, so they stay in every
// core's cache; the count of the newest stage is kept in its shard (fill).
type stage struct {
	probe          // m and k, and the bits as lookups read them
	words []uint64 // the bits of a bits-and-blooms bit set, m/64 words
	count uint64   // keys added, once the stage is sealed (no longer the newest); guarded by the shard lock
	limit uint64
}

// makeStage returns a stage over words, which hold m bits (m/64 words;
// the caller checks).
func makeStage(words []uint64, m uint64, k uint32, count, limit uint64) *stage {
	return &stage{
		probe: probe{w: unsafe.Pointer(unsafe.SliceData(words)), m: m, k: k},
		words: words, count: count, limit: limit,
	}
}

// probe is what a lookup needs of a stage: where its bits start, how
// many there are and how many hash functions it uses.
type probe struct {
	w unsafe.Pointer // &words[0]; the stage's words keep the array alive
	m uint64         // bits
	k uint32         // hash functions
}

// New returns an empty Set configured by opts. If opts.Store is not nil,
// New reads every key already in the store into the filter, so the filter
// and the store agree from the start.
func New(opts Config) (*Set, error) {
	s, err := newSet(opts)
	if err != nil {
		return nil, err
	}
	for i := range s.shards {
		s.shards[i].init([]*stage{s.newStage(0)})
	}
	if opts.Store != nil {
		err := opts.Store.ForEach(func(key uint64) error {
			s.addToFilter(key)
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("bloom: loading keys from store: %w", err)
		}
	}
	return s, nil
}

// newSet returns a set with its shape computed but no stages allocated.
func newSet(opts Config) (*Set, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	nShards := shardCount(opts.Expected)
	s := &Set{opts: opts, shards: make([]shard, nShards)}
	s.shardCap = (opts.Expected + nShards - 1) / nShards
	if nShards > 1 {
		// A shard receives c ± √c of the expected keys. Size the first
		// stage for 3σ more, so that at the expected load no shard has
		// grown yet and every stage stays at or below its design rate;
		// this costs 3/√c ≤ 1.2% more bits.
		s.shardCap += uint64(3 * math.Sqrt(float64(s.shardCap)))
	}
	for i := 0; i < maxStages; i++ {
		if s.shardCap > math.MaxUint64>>(i+16) {
			break // capacity would overflow; the set stops growing here
		}
		s.params = append(s.params, s.computeShape(i))
	}
	return s, nil
}

// shardCount picks a power-of-two shard count giving each shard at least
// minKeysPerShard keys of the expected load, at most maxShards.
func shardCount(expected uint64) uint64 {
	n := expected / minKeysPerShard
	if n <= 1 {
		return 1
	}
	p := uint64(1) << (63 - bits.LeadingZeros64(n))
	return min(p, maxShards)
}

// stageShape returns the parameters of stage i; every shard has the same
// stage shapes.
func (s *Set) stageShape(i int) stageParams { return s.params[i] }

func (s *Set) computeShape(i int) stageParams {
	p := s.opts.FalsePositiveRate
	c := s.shardCap << uint(i)
	rate := p * firstStageShare
	if i > 0 {
		rate = p * (1 - firstStageShare) * math.Ldexp(1, -i)
	}
	m, k := bbloom.EstimateParameters(uint(c), rate)
	m = (m + 63) &^ 63
	k = max(1, min(k, maxHashes))
	return stageParams{capacity: c, limit: c, rate: rate, m: uint64(m), k: uint32(k)}
}

func (s *Set) newStage(i int) *stage {
	sp := s.stageShape(i)
	bs := bbloom.New(uint(sp.m), uint(sp.k)).BitSet()
	return makeStage(bs.Words()[:sp.m/64], sp.m, sp.k, 0, sp.limit)
}

// hashes derives the two double-hashing values and the shard of key. The
// key is remixed (the murmur3 64-bit finalizer with two different seeds)
// so that keys which are not uniformly distributed, such as counters, still
// spread over the filter.
func hashes(key uint64) (h1, h2 uint64) {
	h1 = fmix64(key)
	h2 = fmix64(key^0x9e3779b97f4a7c15) | 1
	return h1, h2
}

func fmix64(x uint64) uint64 {
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	return x
}

func (s *Set) shardOf(h1, h2 uint64) *shard {
	// The low bits of h1^h2 barely influence positions (which come from
	// the high half of a 128-bit product), so they choose the shard.
	return &s.shards[(h1^h2)&uint64(len(s.shards)-1)]
}

// location returns the i-th bit position of a key in a stage of m bits:
// the high 64 bits of (h1 + i·h2 + seed)·m, Lemire's multiply-shift range
// reduction, which avoids a division per probe.
func location(h1, h2, seed uint64, i uint32, m uint64) uint64 {
	hi, _ := bits.Mul64(h1+uint64(i)*h2+seed, m)
	return hi
}

// stageSeed decorrelates the positions a key takes in different stages.
func stageSeed(j int) uint64 { return uint64(j) * 0x9e3779b97f4a7c15 }

// contains reports whether every bit of the key is set in the stage.
//
// This is the loop every lookup runs, and a lookup's time is mostly the
// cache misses of its probes, so it is written to let the processor start
// as many of them, for this and the next lookups, as it can: the position
// advances by one addition per probe, and the word is read without a
// bounds check. That is safe because location's multiply-shift returns a
// value below m, and m is 64·len(words).
func (p *probe) contains(h1, h2, seed uint64) bool {
	x, m, w := h1+seed, p.m, p.w
	for i := p.k; i > 0; i-- {
		l, _ := bits.Mul64(x, m)
		if atomic.LoadUint64((*uint64)(unsafe.Add(w, l>>6<<3)))&(1<<(l&63)) == 0 {
			return false
		}
		x += h2
	}
	return true
}

// testAndAdd sets the key's bits and reports whether all were already set.
// The caller holds the shard lock; lock-free readers may run concurrently.
func (st *stage) testAndAdd(h1, h2, seed uint64) bool {
	present := true
	w := st.words
	for i := uint32(0); i < st.k; i++ {
		l := location(h1, h2, seed, i, st.m)
		bit := uint64(1) << (l & 63)
		if atomic.LoadUint64(&w[l>>6])&bit == 0 {
			present = false
			atomic.OrUint64(&w[l>>6], bit)
		}
	}
	return present
}

// filterContains reports whether the key is in some stage of the shard.
// It needs no lock.
func filterContains(sh *shard, h1, h2 uint64) bool {
	if sh.first.contains(h1, h2, stageSeed(0)) {
		return true
	}
	stages := sh.list()
	for j := 1; j < len(stages); j++ {
		if stages[j].contains(h1, h2, stageSeed(j)) {
			return true
		}
	}
	return false
}

// filterTestAndAdd runs the filter half of TestAndAdd on a locked shard: it
// reports whether the key may have been added before (it is in some stage)
// and, if not, adds it to the newest stage, growing the shard when that
// stage is full. The caller holds sh.mu.
func (s *Set) filterTestAndAdd(sh *shard, h1, h2 uint64) (maybe bool) {
	stages := sh.list()
	last := len(stages) - 1
	for j := 0; j < last; j++ {
		if stages[j].contains(h1, h2, stageSeed(j)) {
			return true
		}
	}
	if stages[last].testAndAdd(h1, h2, stageSeed(last)) {
		return true
	}
	s.added(sh, stages)
	return false
}

// added records that a key was added to the newest stage of stages, the
// shard's current list, sealing that stage and adding the next when it is
// full. The caller holds sh.mu.
func (s *Set) added(sh *shard, stages []*stage) {
	sh.fill++
	last := len(stages) - 1
	if st := stages[last]; sh.fill >= st.limit && last+1 < len(s.params) {
		st.count = sh.fill
		sh.fill = 0
		grown := append(stages[:len(stages):len(stages)], s.newStage(last+1))
		sh.stages.Store(&grown)
	}
}

// testAndAddNoStore is TestAndAddKey without a store after stage 0 did not
// hold the key: a key found in a later stage is answered without the lock;
// otherwise lockedTestAndAdd decides.
func (s *Set) testAndAddNoStore(sh *shard, h1, h2 uint64) bool {
	stages := sh.list()
	for j := 1; j < len(stages); j++ {
		if stages[j].contains(h1, h2, stageSeed(j)) {
			return true
		}
	}
	return s.lockedTestAndAdd(sh, h1, h2)
}

// lockedTestAndAdd is the locked half of TestAndAddKey without a store.
// It does not rely on the lock-free checks that preceded it: between them
// and the lock, another adder of the same key may have added it, or the
// shard may have grown, so the check is redone in full under the lock.
// Every adder of a key sets its bits here (or in the store path), under the
// lock of the key's shard, so the first to take the lock is the only one
// told new.
func (s *Set) lockedTestAndAdd(sh *shard, h1, h2 uint64) bool {
	sh.mu.Lock()
	seen := s.filterTestAndAdd(sh, h1, h2)
	if !seen {
		sh.count.Add(1)
	}
	sh.mu.Unlock()
	return seen
}

func (s *Set) addToFilter(key uint64) {
	h1, h2 := hashes(key)
	sh := s.shardOf(h1, h2)
	sh.mu.Lock()
	s.filterTestAndAdd(sh, h1, h2)
	sh.count.Add(1) // every stored key counts, filter positive or not
	sh.mu.Unlock()
}

// TestAndAdd records url and reports whether it had been recorded before.
// It is equivalent to TestAndAddKey(Key(url)).
func (s *Set) TestAndAdd(url string) (seen bool, err error) {
	return s.TestAndAddKey(xxhash.Sum64String(url))
}

// TestAndAddKey records key and reports whether it had been recorded
// before. It is atomic: of concurrent calls with the same key exactly one
// reports false (unless the key was recorded earlier).
//
// Without a store, seen may be a false positive with at most the configured
// probability, and is never a false negative. With a store, a filter "maybe"
// is decided by the store, and every new key is added to it; an error from
// the store is returned wrapped, and then seen is false but the key may not
// have been recorded.
func (s *Set) TestAndAddKey(key uint64) (seen bool, err error) {
	h1, h2 := hashes(key)
	sh := s.shardOf(h1, h2)
	if s.opts.Store != nil {
		return s.testAndAddStore(sh, key, h1, h2)
	}
	// The common case in a crawl, a key already in stage 0, is answered
	// here, inlined, without the lock and without writes.
	if sh.first.contains(h1, h2, stageSeed(0)) {
		return true, nil
	}
	return s.testAndAddNoStore(sh, h1, h2), nil
}

// testAndAddStore is TestAndAddKey with a store.
func (s *Set) testAndAddStore(sh *shard, key, h1, h2 uint64) (seen bool, err error) {
	sh.mu.Lock()
	maybe := s.filterTestAndAdd(sh, h1, h2)
	// The shard lock is held across the store calls so that the
	// check-then-add below is atomic for this key.
	defer sh.mu.Unlock()
	if maybe {
		ok, err := s.opts.Store.Contains(key)
		if err != nil {
			return false, fmt.Errorf("bloom: store lookup: %w", err)
		}
		if ok {
			return true, nil
		}
	}
	if err := s.opts.Store.Add(key); err != nil {
		return false, fmt.Errorf("bloom: store add: %w", err)
	}
	sh.count.Add(1)
	return false, nil
}

// AddKeys records keys that the caller knows to be new (it tested them
// under a lock of its own that also covers this call), with one store
// write when the Store is a BatchStore: a durable store then commits a
// batch of URLs with one sync instead of one per URL. The keys are in the
// store before they are in the filter, so no reader is told a key is seen
// before it is recorded.
func (s *Set) AddKeys(keys []uint64) error {
	if len(keys) == 0 {
		return nil
	}
	switch st := s.opts.Store.(type) {
	case nil:
	case BatchStore:
		if err := st.AddBatch(keys); err != nil {
			return fmt.Errorf("bloom: store add: %w", err)
		}
	default:
		for _, k := range keys {
			if err := st.Add(k); err != nil {
				return fmt.Errorf("bloom: store add: %w", err)
			}
		}
	}
	for _, k := range keys {
		s.addToFilter(k)
	}
	return nil
}

// Contains reports whether url has been recorded, without recording it.
// It is equivalent to ContainsKey(Key(url)).
func (s *Set) Contains(url string) (bool, error) {
	return s.ContainsKey(xxhash.Sum64String(url))
}

// ContainsKey reports whether key has been recorded, without recording it.
// The answer has the same guarantees as TestAndAddKey's.
func (s *Set) ContainsKey(key uint64) (bool, error) {
	h1, h2 := hashes(key)
	maybe := filterContains(s.shardOf(h1, h2), h1, h2)
	if !maybe || s.opts.Store == nil {
		return maybe, nil
	}
	ok, err := s.opts.Store.Contains(key)
	if err != nil {
		return false, fmt.Errorf("bloom: store lookup: %w", err)
	}
	return ok, nil
}

// Len returns the number of keys recorded as new (with a store, the number
// of keys in the store). Without a store it underestimates the distinct
// keys offered by the number of false positives.
func (s *Set) Len() uint64 {
	var n uint64
	for i := range s.shards {
		n += s.shards[i].count.Load()
	}
	return n
}

// Stats describes a Set's shape and memory.
type Stats struct {
	Expected          uint64  // Config.Expected
	FalsePositiveRate float64 // the configured bound
	Shards            int
	Count             uint64 // keys recorded as new (Len)
	// Stages is the number of stages of the largest shard; StageBits and
	// StageHashes describe those stages (per shard: every shard's stage i
	// has the same shape).
	Stages      int
	StageBits   []uint64
	StageHashes []uint32
	// Bits is the total size of all filter stages of all shards.
	Bits uint64
	// BitsPerKey is Bits divided by the larger of Count and Expected.
	BitsPerKey float64
}

// Stats returns the set's current shape.
func (s *Set) Stats() Stats {
	st := Stats{
		Expected:          s.opts.Expected,
		FalsePositiveRate: s.opts.FalsePositiveRate,
		Shards:            len(s.shards),
		Count:             s.Len(),
	}
	for i := range s.shards {
		stages := s.shards[i].list()
		for _, sg := range stages {
			st.Bits += sg.m
		}
		st.Stages = max(st.Stages, len(stages))
	}
	for j := 0; j < st.Stages; j++ {
		sp := s.stageShape(j)
		st.StageBits = append(st.StageBits, sp.m)
		st.StageHashes = append(st.StageHashes, sp.k)
	}
	st.BitsPerKey = float64(st.Bits) / float64(max(st.Count, st.Expected))
	return st
}
