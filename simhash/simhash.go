// Package simhash computes 64-bit SimHash fingerprints of text and finds
// near-duplicates among millions of them.
//
// # Fingerprints
//
// A fingerprint is Charikar's similarity hash ("Similarity Estimation
// Techniques from Rounding Algorithms", STOC 2002) over the text's
// features: each feature hashes to 64 bits, every bit position sums +w for
// features with that bit set and -w for the others (w is the feature's
// weight, 1 by default, so a repeated feature counts once per repetition),
// and bit i of the fingerprint is 1 where the sum is positive. For two
// feature vectors at angle θ each bit differs with probability θ/π, so
// similar texts get fingerprints a small Hamming distance apart.
//
// Features are word shingles. The text is split into tokens, maximal runs
// of Unicode letters and digits (a combining mark continues a token),
// lower-cased rune by rune with unicode.ToLower; everything else
// separates tokens. A number (a token of digits only) is a feature of its
// own, and "#" in the shingles around it: a catalogue's prices and SKUs
// and a manual's section numbers tell its pages apart, while a changed
// date or counter changes one feature, not Shingle of them
// (Fingerprinter.FoldNumbers drops the number features, as Version 1
// did). Each window of Shingle consecutive tokens (default 3) is one
// feature, and a feature counts once however often the text repeats it,
// so that a phrase repeated down a page (a row label, a numbering) cannot
// outvote the rest of it. FingerprintPage and FingerprintHTML also take
// the page's title, weighing as much as the text, because pages of one
// template differ mostly in their titles while copies of one page share
// theirs. All hashes are fixed and documented, so fingerprints are stable
// across processes and platforms, and change only with Version:
//
//   - a token hashes to FNV-1a 64 of its lower-cased UTF-8 bytes (the
//     number placeholder to FNV-1a 64 of "#"), and a number's own feature
//     is FeatureHash of its digits;
//   - a shingle of tokens t1..tn hashes to fmix64(g) where g starts at the
//     FNV-64 offset basis and g = (g XOR h(ti)) · FNV-64 prime for each
//     token in order, and fmix64 is MurmurHash3's 64-bit finalizer (so
//     every input bit affects every output bit).
//
// Shingle size and short texts: one changed word alters up to Shingle
// features, so larger shingles make a fingerprint more sensitive to small
// edits and less to word-order-preserving vocabulary overlap. Long pages
// have hundreds of features and a one-word edit moves a handful of bits
// whatever the shingle size, but in a short text it is a large share of
// the features: in the nine-word "The quick brown fox jumps over the lazy
// dog", replacing one word changes 3 of 7 trigram features but only 1 of 9
// unigram features. With this package's hashes that pair is 22 bits apart
// at Shingle 3 and 8 bits at Shingle 1; over 100 000 other well-mixed
// feature hashes the mean is 19.0 and 7.5 bits, and a distance of 3 bits or
// less occurs for 0% and 4.9% of them: a one-word edit of a nine-word text
// is not within the usual 3-bit threshold for any unbiased SimHash, except
// by the luck of the hash. Use Shingle 1 for short texts (titles, snippets),
// and a threshold that suits their length. A
// text with fewer tokens than Shingle is one feature of all its tokens; a
// text with no tokens has fingerprint 0.
//
// # Near-duplicate search
//
// [Index] stores (fingerprint, document id) pairs and returns every stored
// fingerprint within K bits of a query (K ≤ 3 by default; Google used 3 for
// 8 billion pages), using the permuted-table scheme of Manku, Jain and Das
// Sarma ("Detecting Near-Duplicates for Web Crawling", WWW 2007); see
// Index for the layout.
package simhash

import (
	"math/bits"
	"sync"
	"unicode"
	"unicode/utf8"
	"unsafe"
)

// Version identifies the features and weights of Fingerprint,
// FingerprintPage and FingerprintHTML with default options. Fingerprints
// of different versions are not comparable: a store that keeps
// fingerprints records the Version it was written with and does not
// compare them with fingerprints of another (see Config.Tables and the
// storage packages). It changes whenever the features do.
//
//   - 1: numbers folded into one placeholder, a repeated feature counted
//     each time, no title.
//   - 2: numbers are features, each distinct feature counts once, and
//     the title weighs as much as the text (FingerprintPage,
//     FingerprintHTML).
const Version = 2

// DefaultShingle is the number of tokens per feature when
// Config.Shingle is zero.
const DefaultShingle = 3

// MaxShingle is the largest supported shingle size.
const MaxShingle = 8

// FNV-1a 64 parameters (http://www.isthe.com/chongo/tech/comp/fnv/).
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// Distance returns the Hamming distance between two fingerprints: the
// number of bit positions in which they differ.
func Distance(a, b uint64) int { return bits.OnesCount64(a ^ b) }

// Fingerprint returns the fingerprint of text with the default options
// (3-word shingles, unit weights). It does not allocate.
func Fingerprint(text string) uint64 {
	var f Fingerprinter
	return f.Fingerprint(text)
}

// Fingerprinter computes fingerprints with a chosen shingle size. The zero
// value uses DefaultShingle. A Fingerprinter has no state between calls
// and is safe for concurrent use.
type Fingerprinter struct {
	// Shingle is the number of consecutive tokens per feature, 1 to
	// MaxShingle; zero means DefaultShingle and larger values are clamped
	// to MaxShingle.
	Shingle int
	// FoldNumbers replaces every token of digits only ("2024", "17") by
	// one placeholder, as Version 1 always did. It is off by default:
	// folded, the prices and SKUs of a catalogue or the section numbers
	// of documentation become one token, and pages made mostly of them
	// look alike.
	FoldNumbers bool
}

func (f *Fingerprinter) shingle() int {
	switch {
	case f == nil || f.Shingle <= 0:
		return DefaultShingle
	case f.Shingle > MaxShingle:
		return MaxShingle
	}
	return f.Shingle
}

// Fingerprint returns the fingerprint of text. It does not allocate.
func (f *Fingerprinter) Fingerprint(text string) uint64 {
	var st textState
	st.init(f)
	st.writeString(text)
	return st.sum()
}

// FingerprintPage returns the fingerprint of a page's title and text with
// the default options. See Fingerprinter.FingerprintPage.
func FingerprintPage(title, text string) uint64 {
	var f Fingerprinter
	return f.FingerprintPage(title, text)
}

// FingerprintPage returns the fingerprint of a page's text together with
// its title (the HTML <title>), the two weighing the same: each part's
// vector of ±1 per feature is scaled to unit length before they are
// added. The title is what a site says a page is about, and the part that
// tells apart the pages of one template (product pages, documentation
// sections) whose texts differ in a few names and numbers: titles with no
// feature in common put two pages about 21 bits apart on average even if
// their texts are identical, while copies of one page (same title, text
// differing in a date, a counter or an ad) come out closer than their
// texts alone. With an empty title it is Fingerprint(text). It does not
// allocate once warm (the feature sets are pooled).
func (f *Fingerprinter) FingerprintPage(title, text string) uint64 {
	var st, tt textState
	st.init(f)
	tt.init(f)
	st.writeString(text)
	tt.writeString(title)
	return st.sumTitled(&tt)
}

// FingerprintBytes is Fingerprint for a byte slice.
func (f *Fingerprinter) FingerprintBytes(text []byte) uint64 {
	var st textState
	st.init(f)
	st.writeBytes(text)
	return st.sum()
}

// textState is a streaming fingerprint of text: tokens may span several
// write calls. It lives on the caller's stack.
type textState struct {
	acc         counter
	last        [MaxShingle]uint64 // hashes of the last tokens: token j is at j % MaxShingle
	w           int                // shingle size
	n           int                // tokens completed
	h           uint64             // hash of the token being read
	inToken     bool
	alpha       bool // the token has a character that is not a digit
	foldNumbers bool
	utf8Tail    [utf8.UTFMax]byte // a rune split across writeBytes calls
	tailLen     int
	set         *featureSet // features seen, taken from the pool at the first
	trace       *[]uint64   // tests: records token hashes when not nil
}

func (st *textState) init(f *Fingerprinter) {
	st.w = f.shingle()
	st.foldNumbers = f != nil && f.FoldNumbers
	st.h = fnvOffset
}

// asciiClass maps an ASCII byte to its lower-case form if it is a letter
// or digit, and to 0 if it separates tokens.
var asciiClass = func() (t [128]byte) {
	for c := byte('0'); c <= '9'; c++ {
		t[c] = c
	}
	for c := byte('a'); c <= 'z'; c++ {
		t[c] = c
		t[c-'a'+'A'] = c
	}
	return t
}()

func (st *textState) writeString(s string) {
	// The token state lives in locals in the ASCII loop and is synced
	// with st around the rarer calls that need it.
	h, in, alpha := st.h, st.inToken, st.alpha
	numbers := numberHash()
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			i++
			if l := asciiClass[c]; l != 0 {
				h = (h ^ uint64(l)) * fnvPrime
				in = true
				alpha = alpha || l > '9'
			} else if in {
				if st.trace == nil {
					// endToken, inlined for the common case.
					if !alpha {
						if !st.foldNumbers {
							st.feature(fmix64((fnvOffset ^ h) * fnvPrime))
						}
						h = numbers
					}
					st.last[uint(st.n)%MaxShingle] = h
					st.n++
					if st.n >= st.w {
						st.feature(st.shingleHash(st.w))
					}
				} else {
					st.h, st.alpha = h, alpha
					st.endToken()
				}
				h, in, alpha = fnvOffset, false, false
			}
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		st.h, st.inToken, st.alpha = h, in, alpha
		st.rune(r)
		h, in, alpha = st.h, st.inToken, st.alpha
	}
	st.h, st.inToken, st.alpha = h, in, alpha
}

func (st *textState) writeBytes(b []byte) {
	// Complete a rune split by the previous call. If the bytes turn out
	// not to be one valid rune, the bytes after the first are processed
	// again, exactly as a whole-string decode would see them.
	for st.tailLen > 0 && len(b) > 0 {
		st.utf8Tail[st.tailLen] = b[0]
		st.tailLen++
		b = b[1:]
		if utf8.FullRune(st.utf8Tail[:st.tailLen]) {
			var rest [utf8.UTFMax]byte
			r, size := utf8.DecodeRune(st.utf8Tail[:st.tailLen])
			n := copy(rest[:], st.utf8Tail[size:st.tailLen])
			st.tailLen = 0
			st.rune(r)
			if n > 0 {
				st.writeBytes(rest[:n]) // at most 3 bytes: bounded recursion
			}
		}
	}
	if st.tailLen > 0 {
		return // b was used up completing the tail, which is still open
	}
	// Hold back an incomplete rune at the end.
	end := len(b)
	for j := len(b) - 1; j >= 0 && j >= len(b)-utf8.UTFMax; j-- {
		if utf8.RuneStart(b[j]) {
			if !utf8.FullRune(b[j:]) {
				end = j
			}
			break
		}
	}
	st.writeString(unsafeString(b[:end]))
	st.tailLen = copy(st.utf8Tail[:], b[end:])
}

// rune handles one non-ASCII rune.
func (st *textState) rune(r rune) {
	if digit := unicode.IsDigit(r); digit || unicode.IsLetter(r) || (st.inToken && unicode.IsMark(r)) {
		var buf [utf8.UTFMax]byte
		n := utf8.EncodeRune(buf[:], unicode.ToLower(r))
		h := st.h
		for _, b := range buf[:n] {
			h = (h ^ uint64(b)) * fnvPrime
		}
		st.h, st.inToken, st.alpha = h, true, st.alpha || !digit
		return
	}
	if st.inToken {
		st.endToken()
	}
}

// numberHash is the hash of every all-digit token in shingles: FNV-1a 64
// of "#", which no token can be.
func numberHash() uint64 {
	h := uint64(fnvOffset)
	return (h ^ '#') * fnvPrime
}

// endToken completes the token whose hash is st.h, emits the shingle it
// completes, and resets the token state.
func (st *textState) endToken() {
	if !st.alpha {
		if !st.foldNumbers {
			st.feature(fmix64((fnvOffset ^ st.h) * fnvPrime))
		}
		st.h = numberHash()
	}
	st.inToken, st.alpha = false, false
	if st.trace != nil {
		*st.trace = append(*st.trace, st.h)
	}
	st.last[uint(st.n)%MaxShingle] = st.h
	st.n++
	st.h = fnvOffset
	if st.n >= st.w {
		st.feature(st.shingleHash(st.w))
	}
}

// feature counts feature h unless the text had it already.
func (st *textState) feature(h uint64) {
	if st.set == nil {
		st.set = featureSets.Get().(*featureSet)
	}
	if st.set.insert(h) {
		st.acc.add(h)
	}
}

// shingleHash combines the last k token hashes, oldest first.
func (st *textState) shingleHash(k int) uint64 {
	g := uint64(fnvOffset)
	for j := st.n - k; j < st.n; j++ {
		g = (g ^ st.last[uint(j)%MaxShingle]) * fnvPrime
	}
	return fmix64(g)
}

// finish ends the text: it completes the last token and the short-text
// feature, flushes the counter and returns the feature set to the pool.
func (st *textState) finish() {
	if st.inToken {
		st.endToken()
	}
	if st.tailLen > 0 { // an incomplete rune at the very end separates
		st.tailLen = 0
	}
	if st.n > 0 && st.n < st.w {
		st.feature(st.shingleHash(st.n))
	}
	st.release()
	st.acc.flush()
}

// release returns the feature set to the pool.
func (st *textState) release() {
	if st.set != nil {
		st.set.reset()
		featureSets.Put(st.set)
		st.set = nil
	}
}

func (st *textState) sum() uint64 {
	st.finish()
	return st.acc.sum()
}

// sumTitled is the fingerprint of a text (st) and its title (title),
// each part's vector of ±1 per feature scaled to unit length, so that the
// two weigh the same however many features each has: with A = 2·ones − n
// of the text's n features and B that of the title's m features, bit i
// is 1 where A/√n + B/√m > 0. The sign is decided in integers (A and B
// of the same sign, else A²·m against B²·n), so it is exact on every
// platform. A part without features leaves the other's fingerprint.
func (st *textState) sumTitled(title *textState) uint64 {
	st.finish()
	title.finish()
	a, b := &st.acc, &title.acc
	if a.n == 0 || b.n == 0 {
		if a.n == 0 {
			return b.sum()
		}
		return a.sum()
	}
	var fp uint64
	n, m := int64(a.n), int64(b.n)
	for i := range a.ones {
		if positiveSum(2*int64(a.ones[i])-n, n, 2*int64(b.ones[i])-m, m) {
			fp |= 1 << i
		}
	}
	return fp
}

// positiveSum reports whether x/√n + y/√m > 0, for n, m > 0.
func positiveSum(x, n, y, m int64) bool {
	switch {
	case x >= 0 && y >= 0:
		return x > 0 || y > 0
	case x <= 0 && y <= 0:
		return false
	case x > 0: // y < 0
		return x*x*m > y*y*n
	default: // x < 0 < y
		return y*y*n > x*x*m
	}
}

// fmix64 is MurmurHash3's 64-bit finalizer.
func fmix64(x uint64) uint64 {
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	return x
}

// counter accumulates unit-weight features. Bit counts are kept eight to a
// word (one byte lane per bit position) and flushed to 32-bit totals every
// 255 features, so adding a feature costs eight table lookups and adds
// instead of 64 branches.
type counter struct {
	lanes  [8]uint64 // lanes[j] byte i counts ones of bit 8j+i
	ones   [64]int32
	n      int32 // features added
	inLane int32 // features in lanes since the last flush
}

// spread[b] has byte i equal to bit i of b.
var spread = func() (t [256]uint64) {
	for b := range t {
		for i := 0; i < 8; i++ {
			t[b] |= uint64(b>>i&1) << (8 * i)
		}
	}
	return t
}()

func (c *counter) add(h uint64) {
	c.lanes[0] += spread[byte(h)]
	c.lanes[1] += spread[byte(h>>8)]
	c.lanes[2] += spread[byte(h>>16)]
	c.lanes[3] += spread[byte(h>>24)]
	c.lanes[4] += spread[byte(h>>32)]
	c.lanes[5] += spread[byte(h>>40)]
	c.lanes[6] += spread[byte(h>>48)]
	c.lanes[7] += spread[byte(h>>56)]
	c.n++
	c.inLane++
	if c.inLane == 255 {
		c.flush()
	}
}

func (c *counter) flush() {
	for j, l := range c.lanes {
		for i := 0; i < 8; i++ {
			c.ones[8*j+i] += int32(byte(l >> (8 * i)))
		}
	}
	c.lanes = [8]uint64{}
	c.inLane = 0
}

// sum sets bit i where more than half of the features have bit i set
// (the sum of ±1 is positive).
func (c *counter) sum() uint64 {
	if c.inLane > 0 {
		c.flush()
	}
	var fp uint64
	for i, o := range c.ones {
		if 2*o > c.n {
			fp |= 1 << i
		}
	}
	return fp
}

// featureSet is the set of feature hashes a text has produced, so that a
// repeated feature counts once: an open-addressing table of hashes (0
// marks a free slot, so hash 0 has a flag of its own), indexed by the low
// bits of the already well-mixed hash and at most half full.
type featureSet struct {
	// slots hold gen<<32 | the feature's low 32 bits; a slot of another
	// generation is empty, so emptying the set is gen++, not a clear of
	// a table that a long page grew. size is the part of slots in use.
	slots []uint64
	size  int
	n     int
	gen   uint64
	zero  bool
	spill []uint64 // grow's scratch
}

// Sizes of a featureSet's table: the first, and the largest kept in the
// pool (1 MiB, about the 128 KiB of text the crawler keeps per page).
const (
	minSetSlots  = 1 << 8
	maxPoolSlots = 1 << 17
)

var featureSets = sync.Pool{New: func() any { return &featureSet{slots: make([]uint64, minSetSlots), size: minSetSlots, gen: 1} }}

// insert adds h and reports whether it was new. Features are told apart
// by their low 32 bits: two of a text's features sharing them (about one
// page in a hundred at 10 000 features) count as one, which moves no
// fingerprint by more than that one feature's weight.
func (s *featureSet) insert(h uint64) bool {
	if h == 0 {
		if s.zero {
			return false
		}
		s.zero = true
		return true
	}
	if 2*(s.n+1) > s.size {
		s.grow()
	}
	v := s.gen<<32 | uint64(uint32(h))
	mask := uint64(s.size - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		switch x := s.slots[i]; {
		case x == v:
			return false
		case x>>32 != s.gen:
			s.slots[i] = v
			s.n++
			return true
		}
	}
}

// grow doubles the part of the table in use, moving the current
// generation's features into a new one.
func (s *featureSet) grow() {
	s.spill = s.spill[:0]
	for _, x := range s.slots[:s.size] {
		if x>>32 == s.gen {
			s.spill = append(s.spill, x)
		}
	}
	s.size *= 2
	if s.size > len(s.slots) {
		s.slots = make([]uint64, s.size)
		s.gen = 1
	} else {
		s.nextGen()
	}
	mask := uint64(s.size - 1)
	for _, x := range s.spill {
		low := uint64(uint32(x))
		i := low & mask
		for s.slots[i]>>32 == s.gen {
			i = (i + 1) & mask
		}
		s.slots[i] = s.gen<<32 | low
	}
}

// nextGen empties the table by starting a new generation.
func (s *featureSet) nextGen() {
	s.gen++
	if s.gen >= 1<<32 {
		clear(s.slots)
		s.gen = 1
	}
}

// reset empties the set, shrinking a table grown past maxPoolSlots.
func (s *featureSet) reset() {
	if len(s.slots) > maxPoolSlots {
		s.slots = make([]uint64, minSetSlots)
		s.size, s.gen = minSetSlots, 1
	} else {
		s.nextGen()
	}
	s.n, s.zero = 0, false
}

// Accumulator builds a fingerprint from caller-chosen features and
// weights, for callers with their own features (for example TF-IDF
// weighted terms). The zero value is empty and ready to use.
type Accumulator struct {
	v [64]int64
}

// Add adds a feature with 64-bit hash h and weight w. The hash should be
// well mixed (every bit equally likely); FeatureHash provides one for
// strings.
func (a *Accumulator) Add(h uint64, w int64) {
	for i := range a.v {
		if h>>i&1 != 0 {
			a.v[i] += w
		} else {
			a.v[i] -= w
		}
	}
}

// Sum returns the fingerprint of the features added: bit i is 1 where the
// weighted sum is positive.
func (a *Accumulator) Sum() uint64 {
	var fp uint64
	for i, s := range a.v {
		if s > 0 {
			fp |= 1 << i
		}
	}
	return fp
}

// Reset empties the accumulator.
func (a *Accumulator) Reset() { a.v = [64]int64{} }

// FeatureHash returns the hash this package uses for a one-token feature
// s (s should already be lower-cased): fmix64 of the shingle combination of
// FNV-1a 64 of s. Fingerprint(s) with Shingle 1 of a one-token text equals
// the fingerprint of an Accumulator holding only FeatureHash(s) with
// weight 1.
func FeatureHash(s string) uint64 {
	h := uint64(fnvOffset)
	for i := 0; i < len(s); i++ {
		h = (h ^ uint64(s[i])) * fnvPrime
	}
	return fmix64((fnvOffset ^ h) * fnvPrime)
}

// unsafeString views b as a string without copying; the result must not
// outlive the call that b was lent to.
func unsafeString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }
