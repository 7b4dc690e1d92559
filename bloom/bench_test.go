package bloom

import (
	"encoding/binary"
	"math/rand/v2"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	bbloom "github.com/bits-and-blooms/bloom/v3"
)

// benchURLs returns n distinct URL strings of crawl-like shape (60–80
// bytes).
func benchURLs(n int) []string {
	urls := make([]string, n)
	var b []byte
	for i := range urls {
		b = append(b[:0], "https://www.host-"...)
		b = strconv.AppendInt(b, int64(i%50021), 10)
		b = append(b, ".example.com/articles/2024/"...)
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, "/index.html?ref=feed&page="...)
		b = strconv.AppendInt(b, int64(i%97), 10)
		urls[i] = string(b)
	}
	return urls
}

const benchN = 10_000_000

// BenchmarkTestAndAdd measures TestAndAdd on a set sized for 10M URLs at
// 1% and holding 10M keys (the filter at its design load, about half its
// bits set), against bits-and-blooms' own TestAndAddString of the same URL
// strings in a filter of the same size and load. The timed operations
// cycle through 2^20 URLs that are among the 10M, so the load stays at
// the design point, and every operation probes all k bits (the most
// expensive case: a new URL stops at its first unset bit). The 10M-key
// fixture is built only if one of those rows runs; the new-key rows build
// their own sets (see runNewKeys).
func BenchmarkTestAndAdd(b *testing.B) {
	if testing.Short() {
		b.Skip("10M-key fixture")
	}
	type fixture struct {
		urls []string
		set  *Set
		bf   *bbloom.BloomFilter
	}
	build := sync.OnceValue(func() fixture {
		f := fixture{urls: benchURLs(1 << 20), bf: bbloom.NewWithEstimates(benchN, 0.01)}
		set, err := New(Config{Expected: benchN, FalsePositiveRate: 0.01})
		if err != nil {
			panic(err)
		}
		f.set = set
		var kb [8]byte
		for i := uint64(0); i < benchN-uint64(len(f.urls)); i++ {
			set.TestAndAddKey(i + 1<<40)
			binary.LittleEndian.PutUint64(kb[:], i)
			f.bf.Add(kb[:])
		}
		for _, u := range f.urls {
			set.TestAndAdd(u)
			f.bf.AddString(u)
		}
		st := set.Stats()
		b.Logf("crawlkit: %d shards, stage bits %v, hashes %v, %.2f bits/key; bits-and-blooms: m=%d k=%d (%.2f bits/key)",
			st.Shards, st.StageBits, st.StageHashes, float64(st.Bits)/benchN, f.bf.Cap(), f.bf.K(), float64(f.bf.Cap())/benchN)
		runtime.GC()
		return f
	})
	keys := func(urls []string) []uint64 {
		keys := make([]uint64, len(urls))
		for i, u := range urls {
			keys[i] = Key(u)
		}
		return keys
	}

	b.Run("crawlkit", func(b *testing.B) {
		f := build()
		for i := 0; b.Loop(); i++ {
			f.set.TestAndAdd(f.urls[i&(1<<20-1)])
		}
	})
	b.Run("crawlkit-key", func(b *testing.B) {
		f := build()
		keys := keys(f.urls)
		for i := 0; b.Loop(); i++ {
			f.set.TestAndAddKey(keys[i&(1<<20-1)])
		}
	})
	b.Run("crawlkit-parallel", func(b *testing.B) {
		f := build()
		var next atomic.Uint64
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			i := next.Add(1 << 19)
			for pb.Next() {
				f.set.TestAndAdd(f.urls[i&(1<<20-1)])
				i++
			}
		})
	})
	b.Run("crawlkit-key-parallel", func(b *testing.B) {
		f := build()
		keys := keys(f.urls)
		var next atomic.Uint64
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			i := next.Add(1 << 19)
			for pb.Next() {
				f.set.TestAndAddKey(keys[i&(1<<20-1)])
				i++
			}
		})
	})
	// New keys: every operation misses the filter and sets bits. See
	// runNewKeys for how both rows start from the same state.
	b.Run("crawlkit-new-key", func(b *testing.B) { runNewKeys(b, 1) })
	b.Run("crawlkit-new-key-parallel", func(b *testing.B) { runNewKeys(b, runtime.GOMAXPROCS(0)) })
	// Lookups of keys already present while another goroutine inserts new
	// keys, as in a crawl: the lookups share shards with the insertions.
	b.Run("crawlkit-seen-key-while-inserting", runLookupsDuringInserts)
	// Controls: pure computation, one goroutine and parallel, showing how
	// much parallelism the machine actually gave this run.
	var sink atomic.Uint64
	b.Run("control-cpu", func(b *testing.B) {
		x := uint64(1)
		for b.Loop() {
			for j := 0; j < 20; j++ {
				x = fmix64(x)
			}
		}
		sink.Add(x)
	})
	b.Run("control-cpu-parallel", func(b *testing.B) {
		b.RunParallel(func(pb *testing.PB) {
			x := uint64(1)
			for pb.Next() {
				for j := 0; j < 20; j++ {
					x = fmix64(x)
				}
			}
			sink.Add(x)
		})
	})
	// Control: one dependent load at a time from an array the size of the
	// filter (a random cyclic permutation, so each load's address comes
	// from the previous load and no two loads overlap). This is the
	// machine's latency for one uncached access to the filter's memory; a
	// TestAndAdd of a URL already present reads k such locations
	// (independently, so they may overlap), and cannot be much faster than
	// one of them.
	b.Run("control-memory-latency", func(b *testing.B) {
		st := build().set.Stats()
		chain := randomCycle(int(st.Bits / 64))
		x := uint64(0)
		for b.Loop() {
			x = chain[x]
		}
		sink.Add(x)
	})
	b.Run("bits-and-blooms-string", func(b *testing.B) {
		f := build()
		for i := 0; b.Loop(); i++ {
			f.bf.TestAndAddString(f.urls[i&(1<<20-1)])
		}
	})
	// The crawlkit and bits-and-blooms-string rows again, alternating in
	// short runs within one timed loop, so that both see the same memory
	// speed; on a shared host that speed can change by 2x from one row to
	// the next. Each op is one URL through each; the metrics split the time.
	b.Run("crawlkit-vs-bits-and-blooms", func(b *testing.B) {
		f := build()
		runAlternating(b, "crawlkit", func(i int) { f.set.TestAndAdd(f.urls[i&(1<<20-1)]) },
			"bits-and-blooms", func(i int) { f.bf.TestAndAddString(f.urls[i&(1<<20-1)]) })
	})
}

// runAlternating runs b.N calls of x and of y, named xName and yName, in
// alternating runs of alternateRun calls (swapping which goes first), and
// reports the time per call of each and their ratio. x is passed the call's
// number and y the number plus 2^19 (half the benchmark's 2^20 URLs), so
// that neither finds the other's data fresh in the caches.
func runAlternating(b *testing.B, xName string, x func(i int), yName string, y func(i int)) {
	const alternateRun = 1 << 12
	var tx, ty time.Duration
	b.ResetTimer()
	for done := 0; done < b.N; done += alternateRun {
		n := min(alternateRun, b.N-done)
		first, second, t1, t2 := x, y, &tx, &ty
		offset1, offset2 := 0, 1<<19
		if (done/alternateRun)%2 == 1 {
			first, second, t1, t2 = y, x, &ty, &tx
			offset1, offset2 = offset2, offset1
		}
		start := time.Now()
		for i := done; i < done+n; i++ {
			first(i + offset1)
		}
		mid := time.Now()
		for i := done; i < done+n; i++ {
			second(i + offset2)
		}
		*t1 += mid.Sub(start)
		*t2 += time.Since(mid)
	}
	b.ReportMetric(float64(tx.Nanoseconds())/float64(b.N), xName+"-ns/op")
	b.ReportMetric(float64(ty.Nanoseconds())/float64(b.N), yName+"-ns/op")
	b.ReportMetric(float64(tx)/float64(ty), xName+"/"+yName)
}

// New-key rounds: each round takes a copy of one set sized for benchN and
// holding newKeyPrefill keys (built once, outside the timer), so its pages
// are mapped, the garbage of the previous round is collected, and its bits
// are as full as mid-way through a crawl; it then times up to newKeyRound
// insertions of keys the set has not seen. The set ends a round at 90% of
// its capacity, so no stage grows inside the timed loop, and the
// single-goroutine and parallel rows of the same -benchtime=Nx run insert
// the same keys into sets in the same state.
const (
	newKeyPrefill = benchN / 2
	newKeyRound   = benchN * 2 / 5
	newKeyGrain   = 1024 // keys a worker claims at a time
)

var newKeyBase = sync.OnceValue(func() *Set {
	set, err := New(Config{Expected: benchN, FalsePositiveRate: 0.01})
	if err != nil {
		panic(err)
	}
	for i := uint64(0); i < newKeyPrefill; i++ {
		set.TestAndAddKey(1<<62 + i)
	}
	return set
})

// cloneSet returns a deep copy of a set no one is writing.
func cloneSet(s *Set) *Set {
	c := *s
	c.shards = make([]shard, len(s.shards))
	for i := range s.shards {
		src, dst := &s.shards[i], &c.shards[i]
		var stages []*stage
		for _, st := range src.list() {
			stages = append(stages, makeStage(append([]uint64(nil), st.words...), st.m, st.k, st.count, st.limit))
		}
		dst.init(stages)
		dst.count.Store(src.count.Load())
		dst.fill = src.fill
	}
	return &c
}

// runNewKeys inserts b.N new keys with the given number of goroutines,
// which claim keys in grains from a shared counter as RunParallel does.
func runNewKeys(b *testing.B, workers int) {
	b.StopTimer()
	base := newKeyBase()
	for done := 0; done < b.N; {
		n := min(b.N-done, newKeyRound)
		set := cloneSet(base)
		runtime.GC()
		var next atomic.Int64
		work := func() {
			for {
				lo := int(next.Add(newKeyGrain)) - newKeyGrain
				if lo >= n {
					return
				}
				for i := lo; i < min(lo+newKeyGrain, n); i++ {
					set.TestAndAddKey(uint64(i))
				}
			}
		}
		var wg sync.WaitGroup
		b.StartTimer()
		for w := 1; w < workers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				work()
			}()
		}
		work()
		wg.Wait()
		b.StopTimer()
		done += n
	}
}

// runLookupsDuringInserts times b.N lookups of keys present in the set,
// made by one goroutine while another inserts new keys into the same set,
// in rounds as runNewKeys. The insertions are not timed; their number per
// lookup is reported. The inserter stops at newKeyRound keys, so that the
// set does not grow.
func runLookupsDuringInserts(b *testing.B) {
	b.StopTimer()
	base := newKeyBase()
	var inserted int64
	for done := 0; done < b.N; {
		n := min(b.N-done, newKeyRound)
		set := cloneSet(base)
		runtime.GC()
		var stop atomic.Bool
		ins := make(chan int64)
		go func() {
			i := uint64(0)
			for ; !stop.Load() && i < newKeyRound; i++ {
				set.TestAndAddKey(i)
			}
			ins <- int64(i)
		}()
		b.StartTimer()
		for i := 0; i < n; i++ {
			set.TestAndAddKey(1<<62 + fmix64(uint64(i))%newKeyPrefill)
		}
		b.StopTimer()
		stop.Store(true)
		inserted += <-ins
		done += n
	}
	b.ReportMetric(float64(inserted)/float64(b.N), "inserts/op")
}

// randomCycle returns a permutation of 0..n-1 that is one cycle (Sattolo's
// algorithm), so following it from any element visits every element.
func randomCycle(n int) []uint64 {
	p := make([]uint64, n)
	for i := range p {
		p[i] = uint64(i)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for i := n - 1; i > 0; i-- {
		j := r.IntN(i)
		p[i], p[j] = p[j], p[i]
	}
	return p
}
