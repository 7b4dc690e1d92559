package pebble

import (
	"bufio"
	"container/heap"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/frontier"
)

const (
	benchHosts   = 100_000
	benchWorkers = 256
)

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkFrontierPebble runs URLs through Add, Next and Done on a durable
// frontier (every acknowledgement synced to the write-ahead log): 4 adders
// adding pages of 50 links spread over 100k hosts, and workers leasing and
// settling them (benchWorkers concurrent fetches). One op is one URL. The naive baseline in the same run is
// an in-memory container/heap Push and Pop per URL.
func BenchmarkFrontierPebble(b *testing.B) {
	b.Run("pebble-synced", func(b *testing.B) {
		db, err := Open(filepath.Join(b.TempDir(), "db"), Config{})
		if err != nil {
			b.Fatal(err)
		}
		defer db.Close()
		f, err := frontier.New(frontier.Config{Store: db.Frontier(), Politeness: frontier.FixedDelay(0)})
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var added, settled atomic.Int64
		var wg sync.WaitGroup
		b.ResetTimer()
		start := cpuTime()
		for a := 0; a < 4; a++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := rand.New(rand.NewPCG(uint64(a), 7))
				for {
					n := added.Add(50)
					if n-50 >= int64(b.N) {
						return
					}
					k := min(50, int64(b.N)-(n-50))
					es := make([]frontier.Entry, k)
					for i := range es {
						h := r.IntN(benchHosts)
						es[i] = frontier.Entry{URL: fmt.Sprintf("http://h%06d.test/%d/%d", h, a, n+int64(i)), Host: fmt.Sprintf("h%06d.test", h)}
					}
					if err := f.Add(es...); err != nil {
						b.Error(err)
						return
					}
				}
			}()
		}
		for w := 0; w < benchWorkers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					l, err := f.Next(ctx)
					if err != nil {
						return
					}
					if _, err := f.Done(l, frontier.Success(0)); err != nil {
						b.Error(err)
						return
					}
					if settled.Add(1) == int64(b.N) {
						cancel()
					}
				}
			}()
		}
		wg.Wait()
		b.StopTimer()
		used := cpuTime() - start
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "URLs/s")
		b.ReportMetric(float64(used.Nanoseconds())/float64(b.N), "cpu-ns/URL")
	})
	b.Run("naive-heap", func(b *testing.B) {
		q := &naiveQueue{}
		start := cpuTime()
		for i := 0; i < b.N; i++ {
			heap.Push(q, naiveItem{url: fmt.Sprintf("http://h%06d.test/%d", i%benchHosts, i), seq: uint64(i)})
			_ = heap.Pop(q)
		}
		used := cpuTime() - start
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "URLs/s")
		b.ReportMetric(float64(used.Nanoseconds())/float64(b.N), "cpu-ns/URL")
	})
}

type naiveItem struct {
	url string
	seq uint64
}

type naiveQueue []naiveItem

func (q naiveQueue) Len() int           { return len(q) }
func (q naiveQueue) Less(i, j int) bool { return q[i].seq < q[j].seq }
func (q naiveQueue) Swap(i, j int)      { q[i], q[j] = q[j], q[i] }
func (q *naiveQueue) Push(x any)        { *q = append(*q, x.(naiveItem)) }
func (q *naiveQueue) Pop() any {
	old := *q
	x := old[len(old)-1]
	*q = old[:len(old)-1]
	return x
}

// procStatus returns a field of /proc/self/status in bytes (VmRSS, VmHWM).
func procStatus(field string) int64 {
	fh, err := os.Open("/proc/self/status")
	if err != nil {
		return -1
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb << 10
		}
	}
	return -1
}

// BenchmarkFrontierPebbleQueuedRSS queues FRONTIER_RSS_URLS URLs (default
// 1M; the figure in BENCHMARKS.md is for 10M) across 100k hosts on a durable
// frontier, reopens it (as after a restart), leases one URL of every host
// so that every host's window is loaded, and reports the process's peak
// resident set size. Run it alone (-run XXX -bench QueuedRSS): the peak
// covers the whole process.
func BenchmarkFrontierPebbleQueuedRSS(b *testing.B) {
	n := 1_000_000
	if s := os.Getenv("FRONTIER_RSS_URLS"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil {
			b.Fatal(err)
		}
	}
	for i := 0; i < b.N; i++ {
		dir := filepath.Join(b.TempDir(), "db")
		db, err := Open(dir, Config{})
		if err != nil {
			b.Fatal(err)
		}
		f, err := frontier.New(frontier.Config{Store: db.Frontier(), Politeness: frontier.FixedDelay(0)})
		if err != nil {
			b.Fatal(err)
		}
		const batch = 10_000
		es := make([]frontier.Entry, 0, batch)
		for j := 0; j < n; j++ {
			h := j % benchHosts
			es = append(es, frontier.Entry{URL: fmt.Sprintf("http://h%06d.test/page/%d", h, j), Host: fmt.Sprintf("h%06d.test", h)})
			if len(es) == batch || j == n-1 {
				if err := f.Add(es...); err != nil {
					b.Fatal(err)
				}
				es = es[:0]
			}
		}
		addRSS := procStatus("VmHWM")
		f.Close()
		db.Close()

		db, err = Open(dir, Config{})
		if err != nil {
			b.Fatal(err)
		}
		f, err = frontier.New(frontier.Config{Store: db.Frontier(), Politeness: frontier.FixedDelay(0)})
		if err != nil {
			b.Fatal(err)
		}
		leased := 0
		for {
			l, _, err := f.NextAt(time.Now())
			if err != nil {
				b.Fatal(err)
			}
			if l == nil {
				break
			}
			leased++
		}
		if leased != min(n, benchHosts) {
			b.Fatalf("leased %d, want one per host (%d)", leased, min(n, benchHosts))
		}
		st := f.Stats()
		b.ReportMetric(float64(n), "queued")
		b.ReportMetric(float64(addRSS)/(1<<20), "peakRSS-MiB-adding")
		b.ReportMetric(float64(procStatus("VmHWM"))/(1<<20), "peakRSS-MiB")
		b.ReportMetric(float64(procStatus("VmRSS"))/(1<<20), "RSS-MiB-after-reopen")
		b.ReportMetric(float64(st.InMemory), "URLs-in-memory")
		f.Close()
		db.Close()
	}
}
