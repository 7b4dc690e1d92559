package bloom

import (
	"encoding/binary"
	"strconv"
	"sync/atomic"
	"testing"

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
// expensive case: a new URL stops at its first unset bit).
func BenchmarkTestAndAdd(b *testing.B) {
	if testing.Short() {
		b.Skip("10M-key fixture")
	}
	urls := benchURLs(1 << 20)
	set, err := New(Options{Expected: benchN, FalsePositiveRate: 0.01})
	if err != nil {
		b.Fatal(err)
	}
	bf := bbloom.NewWithEstimates(benchN, 0.01)
	var kb [8]byte
	for i := uint64(0); i < benchN-uint64(len(urls)); i++ {
		set.TestAndAddKey(i + 1<<40)
		binary.LittleEndian.PutUint64(kb[:], i)
		bf.Add(kb[:])
	}
	for _, u := range urls {
		set.TestAndAdd(u)
		bf.AddString(u)
	}
	st := set.Stats()
	b.Logf("crawlkit: %d shards, stage bits %v, hashes %v, %.2f bits/key; bits-and-blooms: m=%d k=%d (%.2f bits/key)",
		st.Shards, st.StageBits, st.StageHashes, float64(st.Bits)/benchN, bf.Cap(), bf.K(), float64(bf.Cap())/benchN)

	b.Run("crawlkit", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			set.TestAndAdd(urls[i&(1<<20-1)])
		}
	})
	b.Run("crawlkit-key", func(b *testing.B) {
		keys := make([]uint64, len(urls))
		for i, u := range urls {
			keys[i] = Key(u)
		}
		b.ResetTimer()
		for i := 0; b.Loop(); i++ {
			set.TestAndAddKey(keys[i&(1<<20-1)])
		}
	})
	b.Run("crawlkit-parallel", func(b *testing.B) {
		var next atomic.Uint64
		b.RunParallel(func(pb *testing.PB) {
			i := next.Add(1 << 19)
			for pb.Next() {
				set.TestAndAdd(urls[i&(1<<20-1)])
				i++
			}
		})
	})
	b.Run("crawlkit-key-parallel", func(b *testing.B) {
		keys := make([]uint64, len(urls))
		for i, u := range urls {
			keys[i] = Key(u)
		}
		var next atomic.Uint64
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			i := next.Add(1 << 19)
			for pb.Next() {
				set.TestAndAddKey(keys[i&(1<<20-1)])
				i++
			}
		})
	})
	// New keys: every operation takes the shard lock and sets bits, in a
	// fresh set sized for 10M. Run with -benchtime=5000000x (or less) so
	// that the set stays below its capacity.
	b.Run("crawlkit-new-key", func(b *testing.B) {
		fresh, _ := New(Options{Expected: benchN})
		for i := uint64(0); b.Loop(); i++ {
			fresh.TestAndAddKey(i)
		}
	})
	b.Run("crawlkit-new-key-parallel", func(b *testing.B) {
		fresh, _ := New(Options{Expected: benchN})
		var next atomic.Uint64
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			i := next.Add(1 << 40)
			for pb.Next() {
				fresh.TestAndAddKey(i)
				i++
			}
		})
	})
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
	b.Run("bits-and-blooms-string", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			bf.TestAndAddString(urls[i&(1<<20-1)])
		}
	})
}
