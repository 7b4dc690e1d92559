package simhash

import (
	"fmt"
	"hash/fnv"
	"math/bits"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"
)

// benchText is ~64 KiB of mixed-case English-like text with punctuation
// and some non-ASCII words.
func benchText() string {
	r := rand.New(rand.NewPCG(1, 1))
	words := strings.Fields("the of and to in is was for on that with as by at from crawler page link " +
		"Fetch Robots politeness frontier duplicate content Straße café naïve résumé 2024 HTTP/1.1 index")
	var b strings.Builder
	for b.Len() < 64<<10 {
		b.WriteString(words[r.IntN(len(words))])
		if r.IntN(12) == 0 {
			b.WriteString(". ")
		} else {
			b.WriteByte(' ')
		}
	}
	return b.String()
}

func BenchmarkFingerprint(b *testing.B) {
	text := benchText()
	for _, w := range []int{1, 3} {
		b.Run(fmt.Sprintf("shingle%d", w), func(b *testing.B) {
			f := Fingerprinter{Shingle: w}
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			for b.Loop() {
				f.Fingerprint(text)
			}
		})
	}
	// The approach of the common Go simhash libraries, as a baseline in
	// the same run: lower-case the text, split it into words, hash each
	// feature with hash/fnv and add ±1 into 64 counters bit by bit.
	b.Run("baseline-naive", func(b *testing.B) {
		b.SetBytes(int64(len(text)))
		b.ReportAllocs()
		for b.Loop() {
			naiveSimhash(text)
		}
	})
	b.Run("html", func(b *testing.B) {
		page := "<html><body><p>" + strings.ReplaceAll(text, ". ", ".</p><p>") + "</p></body></html>"
		b.SetBytes(int64(len(page)))
		b.ReportAllocs()
		for b.Loop() {
			FingerprintHTML(strings.NewReader(page))
		}
	})
}

func naiveSimhash(text string) uint64 {
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	var v [64]int
	for i := 0; i+3 <= len(words); i++ {
		h := fnv.New64a()
		h.Write([]byte(strings.Join(words[i:i+3], " ")))
		x := h.Sum64()
		for j := 0; j < 64; j++ {
			if x>>j&1 == 1 {
				v[j]++
			} else {
				v[j]--
			}
		}
	}
	var fp uint64
	for j, c := range v {
		if c > 0 {
			fp |= 1 << j
		}
	}
	return fp
}

const nearN = 10_000_000

func randomEntries(n int) []Entry {
	r := rand.New(rand.NewPCG(42, 42))
	es := make([]Entry, n)
	for i := range es {
		es[i] = Entry{r.Uint64(), uint64(i)}
	}
	return es
}

// BenchmarkNear measures Near at 10M random stored fingerprints for
// queries that miss (random fingerprints: no stored one within 3 bits),
// for several block layouts, against a linear scan of the same
// fingerprints. It reports the index build time, the memory per entry and
// the median latency of single queries (timed individually, so it includes
// ~25 ns of clock reads) besides the mean (ns/op).
func BenchmarkNear(b *testing.B) {
	if testing.Short() {
		b.Skip("10M entries")
	}
	entries := randomEntries(nearN)
	r := rand.New(rand.NewPCG(7, 7))
	queries := make([]uint64, 1<<16)
	for i := range queries {
		queries[i] = r.Uint64()
	}
	for _, blocks := range []int{4, 8, 7, 6, 5} {
		var ix *Index
		b.Run(fmt.Sprintf("blocks%d", blocks), func(b *testing.B) {
			if ix == nil {
				runtime.GC()
				var err error
				ix, err = NewIndex(Config{K: 3, Blocks: blocks})
				if err != nil {
					b.Fatal(err)
				}
				start := time.Now()
				ix.AddBatch(slices.Clone(entries))
				build := time.Since(start)
				st := ix.Stats()
				b.Logf("blocks=%d tables=%d build=%v bytes/entry=%.1f", blocks, st.Tables, build.Round(time.Millisecond), st.BytesPerEntry)
			}
			st := ix.Stats()
			var dst []Match
			for i := 0; b.Loop(); i++ {
				dst = ix.AppendNear(dst[:0], queries[i&(len(queries)-1)])
			}
			b.ReportMetric(float64(st.Tables), "tables")
			b.ReportMetric(st.BytesPerEntry, "B/entry")
			b.ReportMetric(medianNs(ix, queries), "median-ns")
		})
		ix = nil
	}
	b.Run("linear-scan", func(b *testing.B) {
		fps := make([]uint64, len(entries))
		for i, e := range entries {
			fps[i] = e.Fingerprint
		}
		for i := 0; b.Loop(); i++ {
			q := queries[i&(len(queries)-1)]
			n := 0
			for _, f := range fps {
				if bits.OnesCount64(f^q) <= 3 {
					n++
				}
			}
			if n > 1<<20 {
				b.Fatal(n)
			}
		}
	})
}

func medianNs(ix *Index, queries []uint64) float64 {
	var dst []Match
	ts := make([]time.Duration, 20001)
	for i := range ts {
		q := queries[i&(len(queries)-1)]
		start := time.Now()
		dst = ix.AppendNear(dst[:0], q)
		ts[i] = time.Since(start)
	}
	slices.Sort(ts)
	return float64(ts[len(ts)/2].Nanoseconds())
}
