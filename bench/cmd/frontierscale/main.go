// Command frontierscale measures the frontier and the seen set at crawl
// scale, opt-in (it writes gigabytes): it adds -urls URLs over -hosts
// hosts to a frontier on Pebble in batches, reports adds per second and
// peak resident memory, reopens the store and reports the time to the
// first lease, then fills a seen set (bloom) with as many URL keys and
// reports its memory and its measured false-positive rate.
//
//	cd bench && go run ./cmd/frontierscale -urls 10000000 -hosts 100000 -dir /var/tmp/fs
package main

import (
	"bufio"
	"flag"
	"fmt"
	"log"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/crawlkit/crawlkit/bloom"
	"github.com/crawlkit/crawlkit/frontier"
	"github.com/crawlkit/crawlkit/storage/pebble"
	"github.com/crawlkit/crawlkit/urlnorm"
)

func main() {
	urls := flag.Int("urls", 1_000_000, "URLs to add")
	hosts := flag.Int("hosts", 10_000, "hosts they spread over")
	batch := flag.Int("batch", 1000, "URLs per Add call")
	dir := flag.String("dir", "", "store directory (default a temporary one, removed at the end)")
	cache := flag.Int64("cache", 64<<20, "Pebble block cache bytes")
	maxMem := flag.Int("max-in-memory", 0, "frontier.Config.MaxInMemory (0: its default)")
	memprofile := flag.String("memprofile", "", "write a heap profile here after the adds")
	flag.Parse()
	d := *dir
	if d == "" {
		var err error
		if d, err = os.MkdirTemp("", "frontierscale"); err != nil {
			log.Fatal(err)
		}
		defer os.RemoveAll(d)
	}
	fmt.Printf("# %d URLs over %d hosts, batches of %d, Pebble cache %d MiB, %s, %d CPUs\n",
		*urls, *hosts, *batch, *cache>>20, runtime.Version(), runtime.NumCPU())

	db, err := pebble.Open(d, pebble.Config{CacheBytes: *cache})
	if err != nil {
		log.Fatal(err)
	}
	f, err := frontier.New(frontier.Config{Store: db.Frontier(), MaxInMemory: *maxMem})
	if err != nil {
		log.Fatal(err)
	}
	start := time.Now()
	entries := make([]frontier.Entry, 0, *batch)
	for i := 0; i < *urls; i++ {
		h := i % *hosts
		entries = append(entries, frontier.Entry{
			URL:  fmt.Sprintf("https://h%d.example/section/%d/page-%d.html", h, i%97, i),
			Host: fmt.Sprintf("h%d.example", h),
		})
		if len(entries) == *batch || i == *urls-1 {
			if err := f.Add(entries...); err != nil {
				log.Fatal(err)
			}
			entries = entries[:0]
		}
		if (i+1)%(*urls/10) == 0 {
			el := time.Since(start)
			fmt.Printf("added %d in %.1f s: %.0f URLs/s, RSS %d MiB\n", i+1, el.Seconds(), float64(i+1)/el.Seconds(), rssMiB("VmRSS"))
		}
	}
	addSecs := time.Since(start).Seconds()
	if *memprofile != "" {
		writeHeap(*memprofile)
	}
	if err := f.Close(); err != nil {
		log.Fatal(err)
	}
	if err := db.Close(); err != nil {
		log.Fatal(err)
	}
	size := dirBytes(d)

	start = time.Now()
	db, err = pebble.Open(d, pebble.Config{CacheBytes: *cache})
	if err != nil {
		log.Fatal(err)
	}
	f, err = frontier.New(frontier.Config{Store: db.Frontier(), MaxInMemory: *maxMem})
	if err != nil {
		log.Fatal(err)
	}
	l, _, err := f.NextAt(time.Now())
	if err != nil || l == nil {
		log.Fatalf("first lease after reopening: %v %v", l, err)
	}
	firstLease := time.Since(start)
	// The host index that recovery rebuilt, with every URL still on disk.
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	fmt.Fprintf(os.Stderr, "frontierscale: Go heap in use after reopening: %.1f MiB (%d hosts)\n", float64(ms.HeapInuse)/(1<<20), *hosts)
	f.Close()
	db.Close()

	set, err := bloom.New(bloom.Config{Expected: uint64(*urls)})
	if err != nil {
		log.Fatal(err)
	}
	for i := 0; i < *urls; i++ {
		if _, err := set.TestAndAddKey(urlnorm.Key("https://seen.example/" + strconv.Itoa(i))); err != nil {
			log.Fatal(err)
		}
	}
	probes, fp := 1_000_000, 0
	for i := 0; i < probes; i++ {
		if ok, _ := set.ContainsKey(urlnorm.Key("https://unseen.example/" + strconv.Itoa(i))); ok {
			fp++
		}
	}

	fmt.Println()
	fmt.Println("| URLs | hosts | adds/s | store on disk | peak RSS | first lease after reopening | seen-set filter | filter-alone false positives (the Crawler confirms every positive) |")
	fmt.Println("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	fmt.Printf("| %d | %d | %.0f | %d MiB | %d MiB | %v | %d MiB | %.2e (%d of %d) |\n",
		*urls, *hosts, float64(*urls)/addSecs, size>>20, rssMiB("VmHWM"), firstLease.Round(time.Millisecond),
		set.Stats().Bits>>23, float64(fp)/float64(probes), fp, probes)
}

// writeHeap writes a heap profile of the live objects to path.
func writeHeap(path string) {
	out, err := os.Create(path)
	if err != nil {
		log.Fatal(err)
	}
	runtime.GC()
	if err := pprof.WriteHeapProfile(out); err != nil {
		log.Fatal(err)
	}
	if err := out.Close(); err != nil {
		log.Fatal(err)
	}
}

// rssMiB reads a memory figure (VmRSS, VmHWM) of this process.
func rssMiB(field string) int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return -1
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb >> 10
		}
	}
	return -1
}

func dirBytes(dir string) int64 {
	var n int64
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if info, err := e.Info(); err == nil && !e.IsDir() {
			n += info.Size()
		}
	}
	return n
}
