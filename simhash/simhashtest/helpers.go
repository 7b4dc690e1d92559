package simhashtest

import (
	"cmp"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/crawlkit/crawlkit/simhash"
)

// LinearNear is the reference answer to a query: every entry within k bits
// of q, found by comparing q with each entry, sorted as by SortMatches. An
// entry listed twice is reported twice.
func LinearNear(entries []simhash.Entry, q uint64, k int) []simhash.Match {
	var out []simhash.Match
	for _, e := range entries {
		if d := bits.OnesCount64(e.Fingerprint ^ q); d <= k {
			out = append(out, simhash.Match{Entry: e, Distance: d})
		}
	}
	return SortMatches(out)
}

// SortMatches sorts ms in place by fingerprint, then id, then distance,
// and returns it, so that the answers of Near (in no particular order) can
// be compared with slices.Equal.
func SortMatches(ms []simhash.Match) []simhash.Match {
	slices.SortFunc(ms, compareMatches)
	return ms
}

func compareMatches(a, b simhash.Match) int {
	return cmp.Or(cmp.Compare(a.Fingerprint, b.Fingerprint), cmp.Compare(a.ID, b.ID), cmp.Compare(a.Distance, b.Distance))
}

// FlipBits returns fp with d distinct bits, chosen with r, inverted: a
// fingerprint at distance exactly d from fp. d must be in 0..64.
func FlipBits(r *rand.Rand, fp uint64, d int) uint64 {
	for _, i := range r.Perm(64)[:d] {
		fp ^= 1 << i
	}
	return fp
}

// CheckExact compares ix with a linear scan of entries, which must be
// exactly what ix holds (with a table store, each fingerprint and id pair
// once), for the given number of queries, drawn with r: a third of them
// random, the others at a random distance from 0 to K+1 of a random entry,
// so that matches at every distance up to K and candidates just beyond it
// occur. For each query the matches of AppendNearErr must equal
// LinearNear's (in any order), with no error, and Has must report whether
// there is one.
func CheckExact(t testing.TB, ix *simhash.Index, entries []simhash.Entry, r *rand.Rand, queries int) {
	t.Helper()
	k := ix.K()
	for qi := 0; qi < queries; qi++ {
		q := r.Uint64()
		if qi%3 != 0 && len(entries) > 0 {
			q = FlipBits(r, entries[r.IntN(len(entries))].Fingerprint, r.IntN(k+2))
		}
		checkQuery(t, ix, entries, q)
	}
}

// CheckQueries is CheckExact for the given queries.
func CheckQueries(t testing.TB, ix *simhash.Index, entries []simhash.Entry, queries []uint64) {
	t.Helper()
	for _, q := range queries {
		checkQuery(t, ix, entries, q)
	}
}

func checkQuery(t testing.TB, ix *simhash.Index, entries []simhash.Entry, q uint64) {
	t.Helper()
	got, err := ix.AppendNearErr(nil, q)
	if err != nil {
		t.Fatalf("query %016x: AppendNearErr: %v", q, err)
	}
	SortMatches(got)
	want := LinearNear(entries, q, ix.K())
	if !slices.Equal(got, want) {
		t.Fatalf("query %016x (K=%d, %d tables): Near returned %d matches, the linear scan %d;%s",
			q, ix.K(), ix.Tables(), len(got), len(want), diffMatches(got, want))
	}
	if has := ix.Has(q); has != (len(want) > 0) {
		t.Fatalf("query %016x (K=%d, %d tables): Has = %v, the linear scan found %d matches", q, ix.K(), ix.Tables(), has, len(want))
	}
}

// diffMatches describes the first few differences between two sorted
// lists of matches.
func diffMatches(got, want []simhash.Match) string {
	const show = 5
	var missing, extra []simhash.Match
	i, j := 0, 0
	for i < len(got) || j < len(want) {
		c := 0
		switch {
		case i == len(got):
			c = 1
		case j == len(want):
			c = -1
		default:
			c = compareMatches(got[i], want[j])
		}
		switch {
		case c == 0:
			i++
			j++
		case c < 0:
			extra = append(extra, got[i])
			i++
		default:
			missing = append(missing, want[j])
			j++
		}
	}
	var b strings.Builder
	for _, d := range []struct {
		what string
		ms   []simhash.Match
	}{{"missing", missing}, {"unexpected", extra}} {
		if len(d.ms) > 0 {
			fmt.Fprintf(&b, "\n%s (%d): %v", d.what, len(d.ms), d.ms[:min(show, len(d.ms))])
			if len(d.ms) > show {
				b.WriteString(" ...")
			}
		}
	}
	return b.String()
}

// cluster returns 1 to 8 entries near a random centre, with ids from
// firstID on: the second is the centre itself, the others differ from it
// in 0 to k+2 bits, so that the cluster holds exact duplicates with other
// ids, pairs within k bits and pairs just beyond.
func cluster(r *rand.Rand, k int, firstID uint64) []simhash.Entry {
	centre := r.Uint64()
	n := 1 + r.IntN(8)
	out := make([]simhash.Entry, n)
	for j := range out {
		fp := FlipBits(r, centre, r.IntN(k+3))
		if j == 1 {
			fp = centre
		}
		out[j] = simhash.Entry{Fingerprint: fp, ID: firstID + uint64(j)}
	}
	return out
}

// Clusters returns the entries of the given number of clusters of
// near-duplicates for an Index searching within k bits. Each cluster has 1
// to 8 entries around a random centre: the centre itself and fingerprints
// 0 to k+2 bits away from it, so that exact duplicates with other ids,
// matches and near misses all occur. Ids are 0, 1, 2, ... in order.
func Clusters(r *rand.Rand, clusters, k int) []simhash.Entry {
	var entries []simhash.Entry
	for c := 0; c < clusters; c++ {
		entries = append(entries, cluster(r, k, uint64(len(entries)))...)
	}
	return entries
}

// AddClusters adds clusters as built by Clusters (for ix.K()) to ix,
// alternately one entry at a time and one cluster per AddBatch, and checks
// ix with CheckExact (30 queries) every 50 clusters as it grows, so that
// the checks see ix at several sizes. It returns the entries added, in
// order; ids are 0, 1, 2, ...
func AddClusters(t testing.TB, ix *simhash.Index, r *rand.Rand, clusters int) []simhash.Entry {
	t.Helper()
	var entries []simhash.Entry
	for c := 0; c < clusters; c++ {
		batch := cluster(r, ix.K(), uint64(len(entries)))
		if c%2 == 0 {
			for _, e := range batch {
				if err := ix.Add(e.Fingerprint, e.ID); err != nil {
					t.Fatal(err)
				}
			}
		} else if err := ix.AddBatch(batch); err != nil {
			t.Fatal(err)
		}
		entries = append(entries, batch...)
		if c%50 == 0 {
			CheckExact(t, ix, entries, r, 30)
		}
	}
	return entries
}

// Adversarial returns a data set that is hard on an Index, and queries
// for it. The entries share long runs of bits: every fingerprint within 2
// bits of one base, and the base with 4 or 5 of its top 16 bits inverted
// (so many candidates lie just beyond distance 3 or 4); 3000 all-zero
// fingerprints (one large bucket in every table); and the all-one
// fingerprint, 1 and 1<<63. The queries differ from them within one block
// or across block boundaries. About 11,000 entries, with distinct ids.
func Adversarial() (entries []simhash.Entry, queries []uint64) {
	const base = uint64(0xdeadbeefcafef00d)
	add := func(fp uint64) {
		entries = append(entries, simhash.Entry{Fingerprint: fp, ID: uint64(len(entries))})
	}
	for i := 0; i < 64; i++ {
		for j := i; j < 64; j++ {
			add(base ^ 1<<i ^ 1<<j)
		}
	}
	for m := uint64(0); m < 1<<16; m++ {
		if c := bits.OnesCount64(m); c == 4 || c == 5 {
			add(base ^ m<<48)
		}
	}
	for i := 0; i < 3000; i++ {
		add(0)
	}
	entries = append(entries,
		simhash.Entry{Fingerprint: ^uint64(0), ID: 1 << 40},
		simhash.Entry{Fingerprint: 1, ID: 1 << 41},
		simhash.Entry{Fingerprint: 1 << 63, ID: 1 << 42})
	queries = []uint64{base, 0, ^uint64(0), 1, 7, base ^ 0xf, base ^ 0xf<<30, base ^ 1<<63 ^ 1<<10 ^ 1<<40}
	for b := 0; b < 64; b += 5 {
		queries = append(queries, base^(0b111<<b), base^(0b1111<<b), 0b111<<b)
	}
	return entries, queries
}

// CheckConcurrent adds fps to ix (fps[i] with id i) from two goroutines
// while three others query it. Every match a query returns must be a
// stored entry at its true distance, within ix.K(); an entry must be found
// by Has as soon as its Add returns, and by a query for its fingerprint
// once all are added. ix must start empty.
func CheckConcurrent(t testing.TB, ix *simhash.Index, fps []uint64) {
	t.Helper()
	var readers sync.WaitGroup
	done := make(chan struct{})
	for g := 0; g < 3; g++ {
		r := rand.New(rand.NewPCG(uint64(g), 2)) // one source per reader
		readers.Go(func() {
			var dst []simhash.Match
			for {
				select {
				case <-done:
					return
				default:
				}
				q := fps[r.IntN(len(fps))]
				var err error
				dst, err = ix.AppendNearErr(dst[:0], q)
				if err != nil {
					t.Error(err)
					return
				}
				// Anything found must be a real entry at its distance.
				for _, m := range dst {
					if m.ID >= uint64(len(fps)) || fps[m.ID] != m.Fingerprint || m.Distance != bits.OnesCount64(m.Fingerprint^q) || m.Distance > ix.K() {
						t.Errorf("query %016x: bad match %+v", q, m)
						return
					}
				}
			}
		})
	}
	var writers sync.WaitGroup
	for w := 0; w < 2; w++ { // two writers: the Index serializes their PutRows
		writers.Go(func() {
			for i := w; i < len(fps); i += 2 {
				if err := ix.Add(fps[i], uint64(i)); err != nil {
					t.Error(err)
					return
				}
				// Once Add has returned, the entry is visible.
				if !ix.Has(fps[i]) {
					t.Errorf("entry %d not found by Has after its Add returned", i)
					return
				}
			}
		})
	}
	writers.Wait()
	close(done)
	readers.Wait()
	if t.Failed() {
		return
	}
	for i, fp := range fps {
		ms, err := ix.AppendNearErr(nil, fp)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(ms, func(m simhash.Match) bool { return m.ID == uint64(i) && m.Distance == 0 }) {
			t.Fatalf("entry %d not found after the writers finished: %v", i, ms)
		}
	}
}
