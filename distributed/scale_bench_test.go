package distributed_test

import (
	"cmp"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/crawltest"
	"github.com/crawlkit/crawlkit/distributed"
)

// Latency-bound scaling: every response of the web waits 100–200 ms before
// it is written, as a remote server's would, so a node's pages per second
// are bounded by its workers (Workers / mean latency), not by the
// machine's two cores, and N nodes should crawl about N times as fast.
const (
	scaleHosts        = 640
	scalePagesPerHost = 20
	scaleWorkers      = 16
	scalePartitions   = 64
	scaleMinLatency   = 100 * time.Millisecond
	scaleLatencySpan  = 100 * time.Millisecond
)

// latencyWeb is a crawltest web whose every response (robots.txt
// included) is delayed by responseDelay, and which records when each page
// request arrived.
type latencyWeb struct {
	*crawltest.Web
	mu       sync.Mutex
	arrivals []arrival // page requests (not robots.txt), in arrival order
}

// arrival is a page request's arrival time and host.
type arrival struct {
	at   time.Time
	host string
}

// line describes a: seconds since start, host and partition.
func (a arrival) line(start time.Time) string {
	return fmt.Sprintf("%.3f %s %d", a.at.Sub(start).Seconds(), a.host, distributed.PartitionOf(a.host, scalePartitions))
}

// responseDelay is a request's delay: uniform in [100 ms, 200 ms), drawn
// from an FNV-1a hash of the seed, the host and the request target, so
// the same request is delayed alike in every run and under every setup.
func responseDelay(seed uint64, r *http.Request) time.Duration {
	h := fnv.New64a()
	_ = binary.Write(h, binary.LittleEndian, seed)
	h.Write([]byte(r.Host))
	h.Write([]byte{0})
	h.Write([]byte(r.URL.RequestURI()))
	return scaleMinLatency + time.Duration(h.Sum64()%uint64(scaleLatencySpan))
}

// newLatencyWeb serves the scaling web: scaleHosts hosts (or
// DISTRIBUTED_TEST_SCALE_HOSTS), so that even three nodes of scaleWorkers
// workers use few of the hosts at once and politeness is not what limits
// them.
func newLatencyWeb(b *testing.B) *latencyWeb {
	lw := &latencyWeb{}
	const seed = 28
	hosts := scaleHosts
	if v := os.Getenv("DISTRIBUTED_TEST_SCALE_HOSTS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			b.Fatalf("DISTRIBUTED_TEST_SCALE_HOSTS: %q is not a host count", v)
		}
		hosts = n
	}
	lw.Web = newWeb(b, crawltest.Config{Hosts: hosts, PagesPerHost: scalePagesPerHost, Seed: seed, Agent: testToken,
		MinGap: 50 * time.Millisecond, CrawlDelay: 300 * time.Millisecond,
		// OnRequest runs on the handler's goroutine after the request
		// is accounted and before the response is ready, so its wait is
		// the response's latency, counted as in flight by the
		// politeness accounting (as Config.Latency is).
		OnRequest: func(r *http.Request) {
			if r.URL.Path != "/robots.txt" {
				lw.mu.Lock()
				lw.arrivals = append(lw.arrivals, arrival{time.Now(), r.Host})
				lw.mu.Unlock()
			}
			t := time.NewTimer(responseDelay(seed, r))
			defer t.Stop()
			select {
			case <-t.C:
			case <-r.Context().Done():
			}
		}})
	return lw
}

// sortedArrivals returns the page requests so far, by arrival time.
func (lw *latencyWeb) sortedArrivals() []arrival {
	lw.mu.Lock()
	ts := slices.Clone(lw.arrivals)
	lw.mu.Unlock()
	slices.SortFunc(ts, func(a, b arrival) int { return a.at.Compare(b.at) })
	return ts
}

// steadyRate is the rate of page requests between the arrival of the
// tenth and of the ninetieth percentile request of ts (sorted): the crawl
// with its setup (connecting, creating the stream and consumers, the first
// assignment), its start (a robots.txt for every host, each followed by
// the host's politeness wait) and its tail (the last pages of the last
// hosts, fetched one after the other; the end-of-crawl check; leaving)
// cut off.
func steadyRate(ts []arrival) float64 {
	if len(ts) < 10 {
		return 0
	}
	lo, hi := len(ts)/10, len(ts)*9/10
	return float64(hi-lo) / ts[hi].at.Sub(ts[lo].at).Seconds()
}

// scaleRun is what one crawl of the scaling benchmark measured.
type scaleRun struct {
	nodes      int
	pages      int           // page requests the web answered
	wall       time.Duration // start of the nodes to the last exit
	steady     float64       // pages/s between the 10th and 90th percentile
	firstFetch time.Duration // start of the nodes to the first page request
	lastFetch  time.Duration // start of the nodes to the last page request
	// firstDone is the earliest of the last page requests of the hosts
	// of each node's partitions in the Owners assignment: from then on,
	// fewer nodes crawl, if no partition moved (balanced == 0).
	firstDone                time.Duration
	natsCPU, nodeCPU, webCPU time.Duration // CPU time of the server, all nodes and this process (the web) during the crawl; natsCPU < 0: not measured
	busiest                  float64       // page requests of the busiest node's partitions in the Owners assignment over the mean
	busiestFetched           float64       // page requests the busiest node made (its stats) over the mean
	balanced                 int64         // partitions moved to even the backlogs
	perNode                  []string
	timeline                 []int // page requests in each tenth of the wall time
}

func (r scaleRun) wallRate() float64 { return float64(r.pages) / r.wall.Seconds() }

// scaleRound counts the rounds of BenchmarkScaleLatency in this process;
// odd rounds run the setups in reverse order.
var scaleRound int

// BenchmarkScaleLatency crawls a latency-bound web (every response
// delayed 100–200 ms) with 1, 2 and 3 node processes of scaleWorkers
// workers each, one after the other in each iteration (in reverse order
// every other round, so that a drift in the machine's load hits every
// setup alike), each on a fresh web and a fresh NATS server process, and
// reports pages per second over the wall clock (start of the nodes to the
// last exit) and over the steady window (see steadyRate), their ratios to
// one node in the same iteration, and the server's CPU per 1,000 pages and
// per partition-hour (from /proc, Linux only). Every crawl is checked
// against the web's accounting: no page lost, no robots or politeness
// violation, under 1 % duplicate fetches. Run it with -benchtime 1x.
//
// DISTRIBUTED_TEST_SCALE_ARGS adds node flags (e.g. "-max-held 16");
// DISTRIBUTED_TEST_SCALE_NODES lists the setups (default "1 2 3");
// DISTRIBUTED_TEST_SCALE_HOSTS sets the web's hosts (default scaleHosts);
// DISTRIBUTED_TEST_SCALE_TAIL=1 logs the last 1 % of the page requests
// (seconds since the start, host, partition), to see which hosts make the
// tail;
// DISTRIBUTED_TEST_SCALE_DUMP=PATH writes every page request (seconds since
// the start, host, partition) to PATH.1n, PATH.2n, ...;
// DISTRIBUTED_TEST_NATS_PROF=PORT serves the server's pprof on PORT.
func BenchmarkScaleLatency(b *testing.B) {
	for range b.N {
		order := scaleSetups(b)
		if scaleRound%2 == 1 {
			slices.Reverse(order)
		}
		scaleRound++
		runs := map[int]scaleRun{}
		for _, n := range order {
			runs[n] = runScale(b, n, fmt.Sprintf("scale%d-%d", scaleRound, n))
			if b.Failed() {
				return
			}
		}
		one := runs[1]
		for _, n := range scaleSetups(b) {
			r := runs[n]
			b.ReportMetric(r.wallRate(), fmt.Sprintf("wall-pages/s-%dn", n))
			b.ReportMetric(r.steady, fmt.Sprintf("steady-pages/s-%dn", n))
			if n > 1 && one.nodes == 1 {
				b.ReportMetric(r.wallRate()/one.wallRate(), fmt.Sprintf("wall-ratio-%dn", n))
				b.ReportMetric(r.steady/one.steady, fmt.Sprintf("steady-ratio-%dn", n))
			}
			if r.natsCPU >= 0 {
				b.ReportMetric(r.natsCPU.Seconds()*1000/float64(r.pages), fmt.Sprintf("nats-cpu-s/1000pages-%dn", n))
				b.ReportMetric(r.natsCPU.Seconds()/(scalePartitions*r.wall.Hours()), fmt.Sprintf("nats-cpu-s/partition-hour-%dn", n))
			}
			b.ReportMetric(r.nodeCPU.Seconds()*1000/float64(r.pages), fmt.Sprintf("node-cpu-s/1000pages-%dn", n))
			b.Logf("%d node(s): %d pages in %v = %.1f pages/s (ratio %.2f); steady %.1f pages/s (ratio %.2f); "+
				"first fetch %v, first node done %v, last fetch %v; CPU: NATS %v, nodes %v, web %v; "+
				"busiest node's partitions in the Owners assignment %.3f × the mean; partitions moved to balance %d; "+
				"busiest node's fetches %.3f × the mean; page requests per tenth of the wall time %v; per node: %s",
				n, r.pages, r.wall.Round(time.Millisecond), r.wallRate(), r.wallRate()/one.wallRate(),
				r.steady, r.steady/one.steady, r.firstFetch.Round(time.Millisecond), r.firstDone.Round(time.Millisecond),
				r.lastFetch.Round(time.Millisecond), r.natsCPU.Round(time.Millisecond), r.nodeCPU.Round(time.Millisecond),
				r.webCPU.Round(time.Millisecond), r.busiest, r.balanced, r.busiestFetched, r.timeline, strings.Join(r.perNode, "; "))
			b.ReportMetric(r.busiestFetched, fmt.Sprintf("busiest-fetches/mean-%dn", n))
		}
	}
}

// scaleSetups returns the node counts BenchmarkScaleLatency runs, from
// DISTRIBUTED_TEST_SCALE_NODES (default 1, 2 and 3).
func scaleSetups(b *testing.B) []int {
	f := strings.Fields(os.Getenv("DISTRIBUTED_TEST_SCALE_NODES"))
	if len(f) == 0 {
		return []int{1, 2, 3}
	}
	var out []int
	for _, s := range f {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			b.Fatalf("DISTRIBUTED_TEST_SCALE_NODES: %q is not a node count", s)
		}
		out = append(out, n)
	}
	return out
}

// runScale crawls a fresh latency web with n node processes on a fresh
// NATS server process, checks the crawl and stops the server.
func runScale(b *testing.B, n int, crawlID string) scaleRun {
	web := newLatencyWeb(b)
	defer web.Close()
	srvArgs := []string{"-name", crawlID, "-port", "-1"}
	if p := os.Getenv("DISTRIBUTED_TEST_NATS_PROF"); p != "" {
		srvArgs = append(srvArgs, "-prof-port", p)
	}
	srv := startChild(b, crawlID+"-natsd", "natsd", srvArgs...)
	natsURL := strings.TrimSpace(srv.waitLine(b, "ready ", time.Minute))
	defer func() {
		_ = srv.cmd.Process.Signal(os.Interrupt)
		<-srv.exited
	}()
	nats0, natsErr := procCPU(srv.cmd.Process.Pid)
	self0, selfErr := procCPU(os.Getpid())

	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("n%d", i+1)
	}
	start := time.Now()
	cs := make([]*child, n)
	for i, id := range ids {
		cs[i] = startChild(b, crawlID+"-"+id, "node", scaleNodeArgs(b, web.Web, natsURL, crawlID, id)...)
	}
	var wg sync.WaitGroup
	for _, c := range cs {
		wg.Go(func() {
			select {
			case <-c.exited:
			case <-time.After(15 * time.Minute):
			}
		})
	}
	wg.Wait()
	r := scaleRun{nodes: n, wall: time.Since(start), natsCPU: -1}
	if nats1, err := procCPU(srv.cmd.Process.Pid); natsErr == nil && err == nil {
		r.natsCPU = nats1 - nats0
	} else {
		b.Logf("the server's CPU is not measured: %v", cmp.Or(natsErr, err))
	}
	if self1, err := procCPU(os.Getpid()); selfErr == nil && err == nil {
		r.webCPU = self1 - self0
	}
	for _, c := range cs {
		c.wait(b, time.Second)
		if c.cmd.ProcessState != nil {
			r.nodeCPU += c.cmd.ProcessState.UserTime() + c.cmd.ProcessState.SystemTime()
		}
	}
	if b.Failed() {
		return r
	}
	checkCrawl(b, web.Web, 0.01)
	rep := web.Report()
	arr := web.sortedArrivals()
	r.pages = len(arr)
	// The recorded requests are every request but robots.txt: the pages
	// and trap pages (the web's PerPage) and the broken links, answered
	// 404 (NotFound). Each takes a worker for its response's latency.
	if want := pageFetches(web.Web) + rep.NotFound; r.pages != want {
		b.Errorf("%d page requests recorded, the web's accounting has %d (%d pages and trap pages, %d not found)",
			r.pages, want, pageFetches(web.Web), rep.NotFound)
	}
	r.steady = steadyRate(arr)
	if os.Getenv("DISTRIBUTED_TEST_SCALE_TAIL") != "" {
		for _, a := range arr[len(arr)*99/100:] {
			b.Logf("tail: %s", a.line(start))
		}
	}
	if f := os.Getenv("DISTRIBUTED_TEST_SCALE_DUMP"); f != "" {
		var sb strings.Builder
		for _, a := range arr {
			sb.WriteString(a.line(start))
			sb.WriteByte('\n')
		}
		if err := os.WriteFile(fmt.Sprintf("%s.%dn", f, n), []byte(sb.String()), 0o644); err != nil {
			b.Errorf("writing the page requests: %v", err)
		}
	}
	r.firstFetch, r.lastFetch = arr[0].at.Sub(start), arr[len(arr)-1].at.Sub(start)
	r.timeline = make([]int, 10)
	owners := distributed.Owners(ids, scalePartitions)
	lastOf := map[string]time.Duration{}
	// Balance: the page requests (404s included, as in r.pages) of each
	// node's partitions (there is one assignment from the first to the
	// last fetch), against what each node says it did.
	load := map[string]int{}
	for _, a := range arr {
		at := a.at.Sub(start)
		r.timeline[min(9, int(10*at/r.wall))]++
		owner := owners[distributed.PartitionOf(a.host, scalePartitions)]
		lastOf[owner] = at
		load[owner]++
	}
	r.firstDone = r.lastFetch
	for _, at := range lastOf {
		r.firstDone = min(r.firstDone, at)
	}

	most, mostFetched, fetched := 0, 0, 0
	for i, id := range ids {
		most = max(most, load[id])
		var st struct {
			Crawl struct {
				URLs struct {
					Fetched int `json:"fetched"`
				} `json:"urls"`
			} `json:"crawl"`
			Queue distributed.QueueStats `json:"queue"`
		}
		if s, ok := cs[i].output("stats "); ok {
			_ = json.Unmarshal([]byte(s), &st)
		}
		q := st.Queue
		mostFetched = max(mostFetched, st.Crawl.URLs.Fetched)
		fetched += st.Crawl.URLs.Fetched
		r.balanced += q.Balanced
		r.perNode = append(r.perNode, fmt.Sprintf("%s %d partitions in the Owners assignment, %d page requests of them, last at %v; "+
			"fetched %d (page requests; robots.txt apart), published %d (%d dropped by the server), delivered %d (%d repeats), acked %d, acquired %d, released %d, moves planned %d",
			id, len(distributed.Assignment(ids, scalePartitions, id)), load[id], lastOf[id].Round(time.Millisecond),
			st.Crawl.URLs.Fetched, q.Published, q.PublishDuplicates, q.Delivered, q.Dropped, q.Acked, q.Acquired, q.Released, q.Balanced))
	}
	r.busiest = float64(most) * float64(n) / float64(max(r.pages, 1))
	r.busiestFetched = float64(mostFetched) * float64(n) / float64(max(fetched, 1))
	return r
}

// scaleNodeArgs are the node flags of the scaling benchmark: the kill
// tests' politeness (nodeArgs), and the defaults for everything else (the
// kill tests' short timers, short duplicate window and tiny snapshot
// interval are not what a crawl runs with), then
// DISTRIBUTED_TEST_SCALE_ARGS.
func scaleNodeArgs(b *testing.B, web *crawltest.Web, natsURL, crawlID, id string) []string {
	seeds := filepath.Join(b.TempDir(), "seeds.txt")
	if err := os.WriteFile(seeds, []byte(strings.Join(web.Seeds(), "\n")), 0o644); err != nil {
		b.Fatal(err)
	}
	return append([]string{
		"-nats", natsURL, "-id", id, "-crawl", crawlID, "-partitions", strconv.Itoa(scalePartitions), "-replicas", "1",
		"-seeds-file", seeds, "-user-agent", testAgent, "-workers", strconv.Itoa(scaleWorkers),
		"-delay", "50ms", "-max-crawl-delay", "1s", "-retry-base", "200ms", "-robots-retries", "-1",
		"-allow-private", "127.0.0.0/8", "-route-tld", "test=" + web.Addr(), "-http", "127.0.0.1:0",
		"-log-level", cmp.Or(os.Getenv("DISTRIBUTED_TEST_LOGLEVEL"), "info"),
	}, strings.Fields(os.Getenv("DISTRIBUTED_TEST_SCALE_ARGS"))...)
}

// procCPU returns the CPU time (user and system) process pid has used,
// from /proc/PID/stat (Linux; clock ticks of 1/100 s, the USER_HZ of
// every Linux architecture Go supports).
func procCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name, in parentheses, may contain spaces: the fields
	// are counted from its closing parenthesis (field 2).
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f)+2)
	}
	// utime and stime are fields 14 and 15; f[0] is field 3.
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc/%d/stat: utime %q, stime %q", pid, f[11], f[12])
	}
	return time.Duration(utime+stime) * 10 * time.Millisecond, nil
}
