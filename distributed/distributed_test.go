package distributed_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/crawltest"
	"github.com/crawlkit/crawlkit/distributed"
	"github.com/crawlkit/crawlkit/distributed/internal/natsd"
)

const (
	testToken = "crawlkit-dist"
	testAgent = testToken + "/1.0 (+http://example.test/bot)"
)

// Child processes of the kill tests are this test binary, re-executed with
// roleEnv set to "node", "natsd" or "results" and their arguments JSON-encoded in
// argsEnv.
const (
	roleEnv = "DISTRIBUTED_TEST_ROLE"
	argsEnv = "DISTRIBUTED_TEST_ARGS"
)

func TestMain(m *testing.M) {
	if role := os.Getenv(roleEnv); role != "" {
		os.Exit(runRole(role))
	}
	os.Exit(m.Run())
}

func runRole(role string) int {
	var args []string
	if err := json.Unmarshal([]byte(os.Getenv(argsEnv)), &args); err != nil {
		fmt.Fprintln(os.Stderr, "bad", argsEnv, err)
		return 2
	}
	ctx, stop := signalContext()
	defer stop()
	// DISTRIBUTED_TEST_CPUPROFILE names a directory for a CPU profile of
	// every child process (ROLE-PID.prof).
	if dir := os.Getenv("DISTRIBUTED_TEST_CPUPROFILE"); dir != "" {
		f, err := os.Create(filepath.Join(dir, fmt.Sprintf("%s-%d.prof", role, os.Getpid())))
		if err == nil && pprof.StartCPUProfile(f) == nil {
			defer f.Close()
			defer pprof.StopCPUProfile()
		}
	}
	var err error
	switch role {
	case "node":
		err = distributed.RunCommand(ctx, args, os.Stdout, os.Stderr)
	case "natsd":
		err = natsd.Run(ctx, args, os.Stdout, os.Stderr)
	case "results":
		err = distributed.RunResultsCommand(ctx, args, os.Stdout, os.Stderr)
	case "results-crash":
		err = crashingWriter(ctx, args)
	default:
		err = fmt.Errorf("unknown role %q", role)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, role+":", err)
		return 1
	}
	return 0
}

var loopback = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}

// embeddedNATS starts a JetStream server in the test process.
func embeddedNATS(t testing.TB) string {
	t.Helper()
	s, err := natsd.Start(natsd.Config{Name: "embedded", Port: -1, StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Shutdown(); s.WaitForShutdown() })
	return s.ClientURL()
}

func newWeb(t testing.TB, cfg crawltest.Config) *crawltest.Web {
	t.Helper()
	web, err := crawltest.NewWeb(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(web.Close)
	return web
}

// fetchedPages returns the canonical URLs the web served at least once.
func fetchedPages(rep crawltest.Report) []string {
	out := make([]string, 0, len(rep.PerPage))
	for u, n := range rep.PerPage {
		if n > 0 {
			out = append(out, u)
		}
	}
	return out
}

// checkCrawl compares a finished crawl with the truth and the server's
// accounting: every page of the truth fetched, duplicates under maxDup of
// the fetches, no robots or politeness violation.
func checkCrawl(t testing.TB, web *crawltest.Web, maxDup float64) crawltest.Report {
	t.Helper()
	truth := web.TruthFor(testToken, 0)
	rep := web.Report()
	fetched := fetchedPages(rep)
	if missing := truth.Missing(fetched); len(missing) > 0 {
		t.Errorf("coverage: %d of %d unique pages not fetched, e.g. %v", len(missing), len(truth.Unique()), missing[:min(5, len(missing))])
	}
	got := map[string]bool{}
	for _, u := range fetched {
		got[u] = true
	}
	var lost []string
	for _, u := range truth.URLs() {
		if !got[u] {
			lost = append(lost, u)
		}
	}
	if len(lost) > 0 {
		t.Errorf("%d of %d reachable pages (duplicates included) never fetched, e.g. %v", len(lost), len(truth.URLs()), lost[:min(5, len(lost))])
	}
	total := 0
	for _, n := range rep.PerPage {
		total += n
	}
	dups := rep.DuplicateFetches()
	t.Logf("pages in truth %d, page fetches %d, duplicate fetches %d (exact %d, spelling %d) = %.3f%%, trap fetches %d",
		len(truth.URLs()), total, dups, rep.ExactRepeats, rep.SpellingRepeats, 100*float64(dups)/float64(max(total, 1)), rep.TrapFetches)
	if dups > 0 {
		// Named, so that a run's node logs (DISTRIBUTED_TEST_LOGDIR) can
		// say how each came about.
		var twice []string
		for u, n := range rep.PerPage {
			if n > 1 {
				twice = append(twice, fmt.Sprintf("%s ×%d", u, n))
			}
		}
		slices.Sort(twice)
		t.Logf("fetched more than once (first 10): %v", twice[:min(10, len(twice))])
	}
	if float64(dups) > maxDup*float64(total) {
		t.Errorf("%d duplicate fetches of %d, over %.1f%%", dups, total, 100*maxDup)
	}
	if rep.RobotsViolations != 0 {
		t.Errorf("%d robots violations, e.g. %v", rep.RobotsViolations, rep.RobotsViolationURLs)
	}
	if rep.BeforeRobots != 0 {
		t.Errorf("%d requests before robots.txt", rep.BeforeRobots)
	}
	if v := rep.PolitenessViolations(); v != 0 {
		t.Errorf("%d politeness violations (spacing %d, concurrency %d)", v, rep.SpacingViolations, rep.ConcurrencyViolations)
		for name, h := range rep.Hosts {
			if h.SpacingViolations+h.ConcurrencyViolations > 0 {
				t.Logf("host %s: spacing %d, concurrency %d, shortest gap %v, requests %d",
					name, h.SpacingViolations, h.ConcurrencyViolations, h.MinGap, h.Requests)
			}
		}
	}
	return rep
}

// TestOneNodeEmbedded crawls a small web with one in-process node on an
// embedded server.
func TestOneNodeEmbedded(t *testing.T) {
	web := newWeb(t, crawltest.Config{Hosts: 30, PagesPerHost: 10, Seed: 3, Agent: testToken,
		MinGap: 20 * time.Millisecond, CrawlDelay: 100 * time.Millisecond})
	url := embeddedNATS(t)
	node, err := distributed.NewNode(distributed.Config{
		NATSURL: url, NodeID: "solo", CrawlID: "t1", Partitions: 8,
		MemberTTL: 2 * time.Second, AckWait: 5 * time.Second, RetryBase: 100 * time.Millisecond,
		Crawler: crawlkit.Config{
			UserAgent: testAgent, Seeds: web.Seeds(), Workers: 8, Delay: 20 * time.Millisecond,
			DialContext: web.DialContext, AllowPrivate: loopback, RobotsRetries: -1,
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := node.Run(ctx); err != nil {
		t.Fatal(err)
	}
	checkCrawl(t, web, 0)
	qs := node.QueueStats()
	t.Logf("queue: %+v", qs)
	if qs.Acquired != 8 || qs.Released != 8 {
		t.Errorf("acquired %d and released %d partitions, want 8 and 8", qs.Acquired, qs.Released)
	}

	// The stats the node serves are what the aggregator reads.
	srv := httptest.NewServer(node.Handler())
	defer srv.Close()
	st, err := distributed.FetchStats(ctx, srv.Client(), srv.URL+"/stats")
	if err != nil {
		t.Fatal(err)
	}
	if want := node.Crawler().Stats().URLs.Fetched; st.URLs.Fetched != want || want == 0 {
		t.Errorf("served stats say %d fetched, the crawler %d", st.URLs.Fetched, want)
	}
	if sum := distributed.SumStats(st, st); sum.URLs.Fetched != 2*st.URLs.Fetched {
		t.Errorf("sum of two copies: %d fetched, want %d", sum.URLs.Fetched, 2*st.URLs.Fetched)
	}
	if _, err := distributed.FetchStats(ctx, srv.Client(), srv.URL+"/nope"); err == nil {
		t.Error("FetchStats of a 404 succeeded")
	}
}
