package frontier

import (
	"container/heap"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// naiveQueue is the baseline: one container/heap of every queued URL,
// ordered by band and then arrival, with no per-host structure and no
// politeness at all.
type naiveItem struct {
	url  string
	host string
	band uint8
	seq  uint64
}

type naiveQueue []naiveItem

func (q naiveQueue) Len() int { return len(q) }
func (q naiveQueue) Less(i, j int) bool {
	if q[i].band != q[j].band {
		return q[i].band < q[j].band
	}
	return q[i].seq < q[j].seq
}
func (q naiveQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *naiveQueue) Push(x any)   { *q = append(*q, x.(naiveItem)) }
func (q *naiveQueue) Pop() any {
	old := *q
	x := old[len(old)-1]
	*q = old[:len(old)-1]
	return x
}

const benchHosts = 100_000

// cpuTime is the CPU time (user and system) the process has used. The
// machine the benchmarks run on is shared, so wall-clock ns/op depends on the
// neighbours; CPU time per operation does not, and with -cpu 1 it is the
// cost on one core, garbage collection included.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU reports CPU nanoseconds per operation and operations per CPU
// second since start.
func reportCPU(b *testing.B, start time.Duration, unit string) {
	used := cpuTime() - start
	if used <= 0 {
		return
	}
	b.ReportMetric(float64(used.Nanoseconds())/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(b.N)/used.Seconds(), unit+"/cpu-s")
}

func benchURLs(n int) []string {
	urls := make([]string, n)
	for i := range urls {
		urls[i] = fmt.Sprintf("http://h%06d.test/page/%d", i%benchHosts, i)
	}
	return urls
}

func benchHostNames() []string {
	hs := make([]string, benchHosts)
	for i := range hs {
		hs[i] = fmt.Sprintf("h%06d.test", i)
	}
	return hs
}

// BenchmarkCycle measures one Add+Next+Done cycle of an in-memory frontier
// holding 10 URLs for each of 100k hosts (one band, no politeness delay, so
// every host is always ready), against the naive heap (one Push and one Pop
// per cycle) in the same run.
func BenchmarkCycle(b *testing.B) {
	const queued = 10 * benchHosts
	urls := benchURLs(queued + 1<<20)
	hosts := benchHostNames()
	b.Run("frontier", func(b *testing.B) {
		f, err := New(Config{Politeness: FixedDelay(0)})
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		now := t0
		for i := 0; i < queued; i++ {
			if err := f.AddAt(now, Entry{URL: urls[i], Host: hosts[i%benchHosts]}); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportAllocs()
		b.ResetTimer()
		start := cpuTime()
		for i := 0; i < b.N; i++ {
			j := queued + i&(1<<20-1)
			if err := f.AddAt(now, Entry{URL: urls[j], Host: hosts[j%benchHosts]}); err != nil {
				b.Fatal(err)
			}
			l, _, err := f.NextAt(now)
			if err != nil || l == nil {
				b.Fatalf("NextAt: %v %v", l, err)
			}
			if _, err := f.DoneAt(now, l, Success(0)); err != nil {
				b.Fatal(err)
			}
		}
		reportCPU(b, start, "cycles")
	})
	b.Run("naive-heap", func(b *testing.B) {
		q := make(naiveQueue, 0, queued+1)
		var seq uint64
		for i := 0; i < queued; i++ {
			seq++
			heap.Push(&q, naiveItem{url: urls[i], host: hosts[i%benchHosts], seq: seq})
		}
		b.ReportAllocs()
		b.ResetTimer()
		start := cpuTime()
		for i := 0; i < b.N; i++ {
			j := queued + i&(1<<20-1)
			seq++
			heap.Push(&q, naiveItem{url: urls[j], host: hosts[j%benchHosts], seq: seq})
			_ = heap.Pop(&q).(naiveItem)
		}
		reportCPU(b, start, "cycles")
	})
}

// benchQueued is the number of URLs for BenchmarkMemoryPerURL:
// FRONTIER_BENCH_QUEUED overrides the default of 1M (10M needs about 3 GB).
func benchQueued(b *testing.B) int {
	if s := os.Getenv("FRONTIER_BENCH_QUEUED"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			b.Fatal(err)
		}
		return n
	}
	return 1_000_000
}

func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// BenchmarkMemoryPerURL reports the heap bytes an in-memory frontier uses
// per queued URL beyond the URL string itself, with the URLs spread over
// 100k hosts, against the naive heap.
func BenchmarkMemoryPerURL(b *testing.B) {
	n := benchQueued(b)
	hosts := benchHostNames()
	urls := benchURLs(n)
	b.Run("frontier", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			before := heapInUse()
			f, err := New(Config{Politeness: FixedDelay(0)})
			if err != nil {
				b.Fatal(err)
			}
			for j := range urls {
				if err := f.AddAt(t0, Entry{URL: urls[j], Host: hosts[j%benchHosts], Depth: j % 4}); err != nil {
					b.Fatal(err)
				}
			}
			after := heapInUse()
			// The URL strings are shared with the caller's slice, which
			// is live on both sides, so the difference is the
			// frontier's own structures.
			b.ReportMetric(float64(after-before)/float64(n), "B/URL")
			runtime.KeepAlive(f)
			f.Close()
		}
	})
	b.Run("naive-heap", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			before := heapInUse()
			q := naiveQueue{}
			for j := range urls {
				heap.Push(&q, naiveItem{url: urls[j], host: hosts[j%benchHosts], band: uint8(j % 4), seq: uint64(j)})
			}
			after := heapInUse()
			b.ReportMetric(float64(after-before)/float64(n), "B/URL")
			runtime.KeepAlive(q)
		}
	})
}

// BenchmarkStoreCycle measures Next+Done on a frontier with a MemoryStore.
// queued: one Add+Next+Done cycle with 10 URLs queued for each of 10k
// hosts. recrawl: 20k hosts with one URL each, every success recrawled 10 ms
// later on a clock that advances 1 µs per cycle, so that half the URLs wait
// as delayed URLs (most of them in the store) and every lease is of a URL
// that came due.
func BenchmarkStoreCycle(b *testing.B) {
	const hosts = 10_000
	b.Run("queued", func(b *testing.B) {
		f, err := New(Config{Store: NewMemoryStore(), Politeness: FixedDelay(0)})
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		urls := make([]string, 10*hosts+1<<20)
		for i := range urls {
			urls[i] = fmt.Sprintf("http://h%05d.test/page/%d", i%hosts, i)
		}
		host := func(i int) string { return urls[i][len("http://") : len("http://")+len("h00000.test")] }
		for i := 0; i < 10*hosts; i++ {
			if err := f.AddAt(t0, Entry{URL: urls[i], Host: host(i)}); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportAllocs()
		b.ResetTimer()
		start := cpuTime()
		for i := 0; i < b.N; i++ {
			j := 10*hosts + i&(1<<20-1)
			if err := f.AddAt(t0, Entry{URL: urls[j], Host: host(j)}); err != nil {
				b.Fatal(err)
			}
			l, _, err := f.NextAt(t0)
			if err != nil || l == nil {
				b.Fatalf("NextAt: %v %v", l, err)
			}
			if _, err := f.DoneAt(t0, l, Success(0)); err != nil {
				b.Fatal(err)
			}
		}
		reportCPU(b, start, "cycles")
	})
	b.Run("recrawl", func(b *testing.B) {
		f, err := New(Config{Store: NewMemoryStore(), Politeness: FixedDelay(0)})
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		for i := 0; i < 2*hosts; i++ {
			if err := f.AddAt(t0, Entry{URL: fmt.Sprintf("http://r%05d.test/", i), Host: fmt.Sprintf("r%05d.test", i)}); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportAllocs()
		b.ResetTimer()
		start := cpuTime()
		for i := 0; i < b.N; i++ {
			now := t0.Add(time.Duration(i) * time.Microsecond)
			l, _, err := f.NextAt(now)
			if err != nil || l == nil {
				b.Fatalf("NextAt: %v %v", l, err)
			}
			if _, err := f.DoneAt(now, l, Outcome{Kind: OutcomeSuccess, RecrawlAt: now.Add(10 * time.Millisecond)}); err != nil {
				b.Fatal(err)
			}
		}
		reportCPU(b, start, "cycles")
	})
}
