package crawlkit_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	_ "github.com/crawlkit/crawlkit/storage/datadir" // Config.DataDir on Pebble

	iawarc "github.com/internetarchive/gowarc"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/archive/warc"
	"github.com/crawlkit/crawlkit/crawltest"
	"github.com/crawlkit/crawlkit/frontier"
	"github.com/crawlkit/crawlkit/metrics/prometheus"
)

const testAgent = "crawlkit-test/1.0 (+http://example.test/bot)"

var loopback = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}

// pageLog records the pages a crawl handed to its Handler.
type pageLog struct {
	mu    sync.Mutex
	pages []*crawlkit.Page
}

func (l *pageLog) handle(_ context.Context, p *crawlkit.Page) error {
	l.mu.Lock()
	l.pages = append(l.pages, p)
	l.mu.Unlock()
	return nil
}

func (l *pageLog) urls() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]string, 0, len(l.pages))
	for _, p := range l.pages {
		out = append(out, p.URL)
	}
	return out
}

func newWeb(t *testing.T, cfg crawltest.Config) *crawltest.Web {
	t.Helper()
	web, err := crawltest.NewWeb(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(web.Close)
	return web
}

func crawlConfig(web *crawltest.Web, log *pageLog) crawlkit.Config {
	return crawlkit.Config{
		UserAgent:     testAgent,
		Seeds:         web.Seeds(),
		Scope:         crawlkit.ScopeAny,
		Workers:       32,
		Delay:         20 * time.Millisecond,
		DialContext:   web.DialContext,
		AllowPrivate:  loopback,
		RobotsRetries: -1,
		Handler:       log.handle,
	}
}

// TestCrawlMatchesGroundTruth crawls a synthetic web and checks the crawl
// against the web's ground truth and the server's own accounting, once with
// the crawl state in memory and once in a data directory (where the
// near-duplicate index and the duplicates' names live on disk).
func TestCrawlMatchesGroundTruth(t *testing.T) {
	t.Run("memory", func(t *testing.T) { crawlMatchesGroundTruth(t, "") })
	t.Run("datadir", func(t *testing.T) { crawlMatchesGroundTruth(t, t.TempDir()) })
}

func crawlMatchesGroundTruth(t *testing.T, dataDir string) {
	hosts, pages, depth := 120, 40, 4
	if testing.Short() {
		hosts, pages = 40, 20
	}
	web := newWeb(t, crawltest.Config{
		Hosts: hosts, PagesPerHost: pages, Seed: 7, Agent: "crawlkit-test",
		MinGap: 20 * time.Millisecond, MaxPerHost: 1, CrawlDelay: 50 * time.Millisecond,
	})
	var log pageLog
	cfg := crawlConfig(web, &log)
	cfg.MaxDepth = depth
	cfg.DataDir = dataDir
	c, err := crawlkit.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Run(context.Background()); err != nil {
		t.Fatal(err)
	}

	truth := web.TruthFor("crawlkit-test", depth)
	if missing := truth.Missing(log.urls()); len(missing) > 0 {
		t.Errorf("coverage: %d of %d unique pages within depth %d not fetched, e.g. %v",
			len(missing), len(truth.Unique()), depth, missing[:min(5, len(missing))])
	}
	rep := web.Report()
	if rep.RobotsViolations != 0 {
		t.Errorf("%d robots violations, e.g. %v", rep.RobotsViolations, rep.RobotsViolationURLs)
	}
	if rep.BeforeRobots != 0 {
		t.Errorf("%d requests before robots.txt was fetched", rep.BeforeRobots)
	}
	if v := rep.PolitenessViolations(); v != 0 {
		t.Errorf("%d politeness violations (spacing %d, concurrency %d)", v, rep.SpacingViolations, rep.ConcurrencyViolations)
	}
	for host, n := range rep.RobotsFetches {
		if n != 1 {
			t.Errorf("robots.txt of %s fetched %d times, want 1", host, n)
		}
	}
	if rep.ExactRepeats != 0 {
		t.Errorf("%d exact duplicate fetches", rep.ExactRepeats)
	}
	fetched := 0
	for _, n := range rep.PerPage {
		fetched += n
	}
	if limit := fetched / 100; rep.SpellingRepeats > limit {
		t.Errorf("%d fetches of a page under another spelling, over 1%% of %d", rep.SpellingRepeats, fetched)
	}
	for host, hr := range rep.Hosts {
		if hr.TrapFetches > 10 {
			t.Errorf("host %s: %d trap fetches, want at most 10", host, hr.TrapFetches)
		}
	}

	// Near-duplicate clusters: every fetched member but the first is
	// flagged as a duplicate of another member of its cluster.
	byURL := map[string]*crawlkit.Page{}
	for _, p := range log.pages {
		if cu, err := crawltest.Canonical(p.URL); err == nil {
			byURL[cu] = p
		}
	}
	clusters, flagged, members := 0, 0, 0
	for _, cl := range truth.Clusters() {
		var got []*crawlkit.Page
		for _, u := range cl {
			if p := byURL[u]; p != nil {
				got = append(got, p)
			}
		}
		if len(got) < 2 {
			continue
		}
		clusters++
		in := map[string]bool{}
		for _, u := range cl {
			in[u] = true
		}
		for _, p := range got {
			if p.DuplicateOf == "" {
				continue
			}
			members++
			if du, err := crawltest.Canonical(p.DuplicateOf); err != nil || !in[du] {
				t.Errorf("%s flagged as a duplicate of %s, outside its cluster %v", p.URL, p.DuplicateOf, cl)
			} else {
				flagged++
			}
		}
		if unflagged := len(got) - members; unflagged < 1 {
			t.Errorf("cluster %v: every member flagged, the first fetch should not be", cl)
		}
		members = 0
	}
	if clusters == 0 {
		t.Error("no near-duplicate cluster was fetched; the web should have some")
	}
	s := c.Stats()
	if s.URLs.Duplicates == 0 || int(s.URLs.Duplicates) < flagged {
		t.Errorf("Stats.Duplicates = %d, flagged pages %d", s.URLs.Duplicates, flagged)
	}
	if s.URLs.Fetched == 0 || s.URLs.BlockedByRobots == 0 || s.URLs.TrapRejected == 0 {
		t.Errorf("stats lack fetches, robots blocks or trap rejections: %+v", s.URLs)
	}
	t.Logf("fetched %d pages of %d unique; stats %+v; server: %d requests, %d spelling repeats, %d trap fetches",
		len(log.pages), len(truth.Unique()), s.URLs, rep.Requests, rep.SpellingRepeats, rep.TrapFetches)
}

// TestCancelAndResume interrupts a crawl and resumes it on the same data
// directory: together the two runs fetch every page once.
func TestCancelAndResume(t *testing.T) {
	web := newWeb(t, crawltest.Config{Hosts: 20, PagesPerHost: 15, Seed: 3, Agent: "crawlkit-test", NoTraps: true})
	dir := filepath.Join(t.TempDir(), "state")

	var first pageLog
	ctx, cancel := context.WithCancel(context.Background())
	cfg := crawlConfig(web, &first)
	cfg.DataDir = dir
	var once sync.Once
	cfg.Handler = func(hctx context.Context, p *crawlkit.Page) error {
		first.handle(hctx, p)
		first.mu.Lock()
		n := len(first.pages)
		first.mu.Unlock()
		if n == 60 {
			once.Do(cancel)
		}
		return nil
	}
	c1, err := crawlkit.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := c1.Run(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("first run: %v, want context.Canceled", err)
	}
	if len(first.pages) < 60 {
		t.Fatalf("first run fetched %d pages before the cancel took effect", len(first.pages))
	}

	var second pageLog
	cfg2 := crawlConfig(web, &second)
	cfg2.DataDir = dir
	c2, err := crawlkit.New(cfg2)
	if err != nil {
		t.Fatal(err)
	}
	if err := c2.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(second.pages) == 0 {
		t.Fatal("the resumed run fetched nothing")
	}

	all := append(first.urls(), second.urls()...)
	count := map[string]int{}
	for _, u := range all {
		count[u]++
	}
	for u, n := range count {
		if n > 1 {
			t.Errorf("%s fetched %d times across the two runs", u, n)
		}
	}
	truth := web.TruthFor("crawlkit-test", 0)
	if missing := truth.Missing(all); len(missing) > 0 {
		t.Errorf("%d pages missing from the union of both runs, e.g. %v", len(missing), missing[:min(5, len(missing))])
	}
	if rep := web.Report(); rep.ExactRepeats != 0 || rep.RobotsViolations != 0 {
		t.Errorf("server saw %d exact repeats and %d robots violations", rep.ExactRepeats, rep.RobotsViolations)
	}
	t.Logf("first run %d pages, second run %d pages", len(first.pages), len(second.pages))
}

// TestWARCReadBack archives a crawl and reads the files back with an
// independent WARC reader.
func TestWARCReadBack(t *testing.T) {
	web := newWeb(t, crawltest.Config{Hosts: 5, PagesPerHost: 10, Seed: 11, Agent: "crawlkit-test", NoTraps: true,
		CrawlDelay: 50 * time.Millisecond})
	dir := t.TempDir()
	sink, err := crawlkit.NewWARCSink(warc.Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	var log pageLog
	cfg := crawlConfig(web, &log)
	cfg.Sink = sink
	c, err := crawlkit.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Run(context.Background()); err != nil {
		t.Fatal(err)
	}

	bodies := map[string]string{} // final URL -> body, of every fetched page
	for _, p := range log.pages {
		bodies[p.FinalURL] = string(p.Body)
	}
	seen := map[string]bool{}
	robotsRecords := 0
	readWARC(t, dir, func(typ, target string, content []byte) {
		if typ != "response" && typ != "revisit" {
			return
		}
		if strings.HasSuffix(target, "/robots.txt") {
			// Archived by the sink, not handed to the Handler.
			robotsRecords++
			return
		}
		want, ok := bodies[target]
		if !ok {
			t.Errorf("WARC has a %s record for %s, which the handler never saw", typ, target)
			return
		}
		seen[target] = true
		if typ == "response" {
			i := strings.Index(string(content), "\r\n\r\n")
			if i < 0 || string(content[i+4:]) != want {
				t.Errorf("%s: archived body differs from the fetched page", target)
			}
		}
	})
	for u := range bodies {
		if !seen[u] {
			t.Errorf("%s fetched but not archived", u)
		}
	}
	if robotsRecords != 5 {
		t.Errorf("%d robots.txt response records, want one per host (5)", robotsRecords)
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	for name, cfg := range map[string]crawlkit.Config{
		"no user agent":    {Seeds: []string{"http://a.test/"}},
		"bad product":      {UserAgent: "/1.0", Seeds: []string{"http://a.test/"}},
		"no seeds":         {UserAgent: testAgent},
		"bad seed":         {UserAgent: testAgent, Seeds: []string{"http://[::1"}},
		"mailto seed":      {UserAgent: testAgent, Seeds: []string{"mailto:a@b.test"}},
		"negative depth":   {UserAgent: testAgent, Seeds: []string{"http://a.test/"}, MaxDepth: -1},
		"bits above 4":     {UserAgent: testAgent, Seeds: []string{"http://a.test/"}, NearDuplicateBits: 5},
		"bad media type":   {UserAgent: testAgent, Seeds: []string{"http://a.test/"}, MediaTypes: []string{"image"}},
		"unknown scope":    {UserAgent: testAgent, Seeds: []string{"http://a.test/"}, Scope: crawlkit.Scope(9)},
		"negative workers": {UserAgent: testAgent, Seeds: []string{"http://a.test/"}, Workers: -2},
		"negative cache":   {UserAgent: testAgent, Seeds: []string{"http://a.test/"}, DataDir: "x", DataDirCacheBytes: -1},
	} {
		if _, err := crawlkit.New(cfg); !errors.Is(err, crawlkit.ErrConfig) {
			t.Errorf("%s: New() error = %v, want ErrConfig", name, err)
		}
	}
	if _, err := crawlkit.ParseScope("planet"); !errors.Is(err, crawlkit.ErrConfig) {
		t.Errorf("ParseScope(planet) = %v", err)
	}
}

func TestRunTwiceAndStatsHandlers(t *testing.T) {
	web := newWeb(t, crawltest.Config{Hosts: 3, PagesPerHost: 5, Seed: 5, Agent: "crawlkit-test", NoTraps: true})
	var log pageLog
	c, err := crawlkit.New(crawlConfig(web, &log))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := c.Run(context.Background()); !errors.Is(err, crawlkit.ErrAlreadyRun) {
		t.Errorf("second Run: %v, want ErrAlreadyRun", err)
	}

	rec := httptest.NewRecorder()
	c.StatsHandler().ServeHTTP(rec, httptest.NewRequest("GET", "/stats", nil))
	var s crawlkit.Stats
	if err := json.Unmarshal(rec.Body.Bytes(), &s); err != nil {
		t.Fatalf("stats JSON: %v\n%s", err, rec.Body.String())
	}
	if s.URLs.Fetched != int64(len(log.pages)) || s.URLs.Fetched == 0 {
		t.Errorf("stats report %d fetched, handler saw %d", s.URLs.Fetched, len(log.pages))
	}
	rec = httptest.NewRecorder()
	c.StatsHandler().ServeHTTP(rec, httptest.NewRequest("POST", "/stats", nil))
	if rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST /stats = %d", rec.Code)
	}

	rec = httptest.NewRecorder()
	prometheus.Handler(c).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body := rec.Body.String()
	for _, want := range []string{`crawlkit_urls_total{outcome="fetched"}`, "crawlkit_queue_urls", `crawlkit_hosts{state="discovered"} 3`} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
}

func TestHandlerErrorRetriesThePage(t *testing.T) {
	web := newWeb(t, crawltest.Config{Hosts: 1, PagesPerHost: 3, Seed: 9, Agent: "crawlkit-test", NoTraps: true,
		RobotsVariants: []crawltest.RobotsVariant{crawltest.RobotsMissing}})
	var mu sync.Mutex
	calls := map[string]int{}
	var log pageLog
	cfg := crawlConfig(web, &log)
	cfg.MaxDepth = 0
	cfg.Handler = func(_ context.Context, p *crawlkit.Page) error {
		mu.Lock()
		defer mu.Unlock()
		calls[p.URL]++
		if calls[p.URL] == 1 {
			return errors.New("storage unavailable")
		}
		return nil
	}
	cfg.RetryBackoff = time.Millisecond
	c, err := crawlkit.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	seed := web.Seeds()[0]
	if calls[seed] != 2 {
		t.Errorf("handler calls per URL: %v; want the seed twice (failed, then retried)", calls)
	}
}

// flakyQueue fails its first Next calls, as a shared queue does while its
// database restarts.
type flakyQueue struct {
	*frontier.Frontier
	failures atomic.Int32
	served   atomic.Int32 // leases handed out by Next after the failures
}

// Deduplicates: in one Run the Crawler's own seen set drops the URLs it
// added before, which is all these tests need of a Queue.
func (*flakyQueue) Deduplicates() bool { return true }

func (q *flakyQueue) Next(ctx context.Context) (*frontier.Lease, error) {
	if q.failures.Add(-1) >= 0 {
		return nil, errors.New("queue unavailable")
	}
	l, err := q.Frontier.Next(ctx)
	if err == nil {
		q.served.Add(1)
	}
	return l, err
}

func TestWorkersSurviveQueueErrors(t *testing.T) {
	web := newWeb(t, crawltest.Config{Hosts: 4, PagesPerHost: 6, Seed: 17, Agent: "crawlkit-test", NoTraps: true,
		CrawlDelay: 20 * time.Millisecond})
	f, err := frontier.New(frontier.Config{Politeness: frontier.FixedDelay(20 * time.Millisecond)})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	q := &flakyQueue{Frontier: f}
	var log pageLog
	cfg := crawlConfig(web, &log)
	cfg.Workers = 2
	cfg.Queue = q
	cfg.Delay = 0       // the queue spaces hosts by its own politeness model
	q.failures.Store(4) // the first calls fail, as during a short outage
	c, err := crawlkit.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if q.failures.Load() > 0 {
		t.Fatal("the queue's failures were not all hit")
	}
	if q.served.Load() == 0 {
		t.Fatal("no worker leased anything after the queue's errors: the workers gave up")
	}
	if missing := web.TruthFor("crawlkit-test", 0).Missing(log.urls()); len(missing) > 0 {
		t.Errorf("%d pages missing after transient queue errors: %v", len(missing), missing)
	}
}

// failingAddQueue refuses its first Adds after the seeds, as a shared queue
// does while its database is away.
type failingAddQueue struct {
	*frontier.Frontier
	failures atomic.Int32
	refused  atomic.Int32
}

// Deduplicates: in one Run the Crawler's own seen set drops the URLs it
// added before, which is all these tests need of a Queue.
func (*failingAddQueue) Deduplicates() bool { return true }

func (q *failingAddQueue) Add(entries ...frontier.Entry) error {
	if entries[0].Depth > 0 && q.failures.Add(-1) >= 0 {
		q.refused.Add(int32(len(entries)))
		return errors.New("queue unavailable")
	}
	return q.Frontier.Add(entries...)
}

func TestRefusedLinksAreQueuedLater(t *testing.T) {
	web := newWeb(t, crawltest.Config{Hosts: 4, PagesPerHost: 8, Seed: 19, Agent: "crawlkit-test", NoTraps: true,
		CrawlDelay: 20 * time.Millisecond})
	f, err := frontier.New(frontier.Config{Politeness: frontier.FixedDelay(20 * time.Millisecond), RetryBase: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	q := &failingAddQueue{Frontier: f}
	q.failures.Store(3)
	var log pageLog
	cfg := crawlConfig(web, &log)
	cfg.Queue = q
	cfg.Delay = 0 // the queue spaces hosts by its own politeness model
	cfg.RetryBackoff = time.Millisecond
	c, err := crawlkit.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if q.refused.Load() == 0 {
		t.Fatal("no Add was refused; the test did not test anything")
	}
	if missing := web.TruthFor("crawlkit-test", 0).Missing(log.urls()); len(missing) > 0 {
		t.Errorf("%d pages lost after %d refused links: %v", len(missing), q.refused.Load(), missing)
	}
}

func TestMaxPagesCountsFetchesNotBlockedURLs(t *testing.T) {
	web := newWeb(t, crawltest.Config{Hosts: 6, PagesPerHost: 10, Seed: 23, Agent: "crawlkit-test", NoTraps: true,
		CrawlDelay: 20 * time.Millisecond})
	var log pageLog
	cfg := crawlConfig(web, &log)
	cfg.MaxPages = 25
	// A disallowed seed is leased among the first URLs of its host, so
	// that a URL robots.txt blocks is met before MaxPages, however the
	// workers are scheduled.
	for _, h := range web.Hosts() {
		if h.Robots == crawltest.RobotsDisallow {
			cfg.Seeds = append(cfg.Seeds, "http://"+h.Name+"/private/")
			break
		}
	}
	c, err := crawlkit.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	s := c.Stats()
	if s.URLs.Fetched != 25 || len(log.pages) != 25 {
		t.Errorf("MaxPages 25: fetched %d, handler saw %d", s.URLs.Fetched, len(log.pages))
	}
	if s.URLs.BlockedByRobots == 0 {
		t.Error("no URL was blocked by robots.txt, so the test does not show they are not counted")
	}
	if n := web.Report().Requests - len(web.Report().RobotsFetches); n != 25 {
		t.Errorf("server saw %d page requests, want 25", n)
	}
}

// nextAtFailingQueue fails its first NextAt calls, as a shared queue does
// during a short outage.
type nextAtFailingQueue struct {
	*frontier.Frontier
	failures atomic.Int32
	answered atomic.Int32 // NextAt calls answered after the failures
}

// Deduplicates: in one Run the Crawler's own seen set drops the URLs it
// added before, which is all these tests need of a Queue.
func (*nextAtFailingQueue) Deduplicates() bool { return true }

func (q *nextAtFailingQueue) NextAt(now time.Time) (*frontier.Lease, time.Time, error) {
	if q.failures.Add(-1) >= 0 {
		return nil, time.Time{}, errors.New("queue unavailable")
	}
	q.answered.Add(1)
	return q.Frontier.NextAt(now)
}

// TestMonitorSurvivesQueueErrors fails the NextAt calls by which Run learns
// that the crawl is drained: Run asks again and ends by itself.
func TestMonitorSurvivesQueueErrors(t *testing.T) {
	web := newWeb(t, crawltest.Config{Hosts: 2, PagesPerHost: 4, Seed: 29, Agent: "crawlkit-test", NoTraps: true,
		CrawlDelay: 20 * time.Millisecond})
	f, err := frontier.New(frontier.Config{Politeness: frontier.FixedDelay(20 * time.Millisecond)})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	q := &nextAtFailingQueue{Frontier: f}
	q.failures.Store(2)
	var log pageLog
	cfg := crawlConfig(web, &log)
	cfg.Queue = q
	cfg.Delay = 0 // the queue spaces hosts by its own politeness model
	c, err := crawlkit.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// A crawl whose end goes unnoticed runs until ctx ends: the deadline
	// only keeps such a failure from taking the whole test timeout.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.Run(ctx); err != nil {
		t.Fatalf("Run: %v, want the drained crawl to end by itself", err)
	}
	if q.failures.Load() > 0 || q.answered.Load() == 0 {
		t.Fatalf("%d NextAt failures left, %d calls answered after them", max(q.failures.Load(), 0), q.answered.Load())
	}
	if missing := web.TruthFor("crawlkit-test", 0).Missing(log.urls()); len(missing) > 0 {
		t.Errorf("%d pages missing: %v", len(missing), missing)
	}
}

// TestStatsWhileRunStarts reads Stats from another goroutine while Run sets
// the crawler up and crawls, as a dashboard started before Run does. The
// race detector (go test -race) checks the reads.
func TestStatsWhileRunStarts(t *testing.T) {
	web := newWeb(t, crawltest.Config{Hosts: 1, PagesPerHost: 3, Seed: 31, Agent: "crawlkit-test", NoTraps: true})
	var log pageLog
	c, err := crawlkit.New(crawlConfig(web, &log))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			_ = c.Stats()
			select {
			case <-done:
				return
			default:
			}
		}
	}()
	err = c.Run(context.Background())
	close(done)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if s := c.Stats(); s.URLs.Fetched == 0 || s.URLs.Queued != 0 {
		t.Errorf("stats after the crawl: %+v", s.URLs)
	}
}

// extendCounter is a frontier whose Extends and settlements a test can see.
type extendCounter struct {
	*frontier.Frontier
	extends atomic.Int32
	mu      sync.Mutex
	settled []error // what Done returned, in order
}

// Deduplicates: in one Run the Crawler's own seen set drops the URLs it
// added before, which is all these tests need of a Queue.
func (*extendCounter) Deduplicates() bool { return true }

func (q *extendCounter) Extend(l *frontier.Lease, ttl time.Duration) error {
	err := q.Frontier.Extend(l, ttl)
	if err == nil {
		q.extends.Add(1)
	}
	return err
}

func (q *extendCounter) Done(l *frontier.Lease, o frontier.Outcome) (frontier.Settlement, error) {
	s, err := q.Frontier.Done(l, o)
	q.mu.Lock()
	q.settled = append(q.settled, err)
	q.mu.Unlock()
	return s, err
}

// TestLeaseKeptAliveWhileWorking checks that the Crawler extends the lease
// of a URL it is still working on: a Handler that outlasts the lease several
// times over (it returns only once the lease was extended three times)
// still settles it, and no other worker is handed the URL meanwhile.
func TestLeaseKeptAliveWhileWorking(t *testing.T) {
	web := newWeb(t, crawltest.Config{Hosts: 1, PagesPerHost: 3, Seed: 3, Agent: "crawlkit-test", NoTraps: true})
	const ttl = 2 * time.Second
	f, err := frontier.New(frontier.Config{LeaseTTL: ttl, Politeness: frontier.FixedDelay(time.Millisecond)})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	q := &extendCounter{Frontier: f}
	seed := web.Seeds()[0]
	var mu sync.Mutex
	seen := map[string]int{}
	cfg := crawlConfig(web, &pageLog{})
	cfg.Workers = 4
	cfg.Queue = q
	cfg.Delay = 0 // the queue spaces hosts by its own politeness model
	cfg.Handler = func(ctx context.Context, p *crawlkit.Page) error {
		mu.Lock()
		seen[p.URL]++
		again := seen[p.URL] > 1
		mu.Unlock()
		if p.URL != seed || again {
			return nil
		}
		// Hold the seed until its lease was extended three times, that
		// is for one and a half of its durations at least; give up (and
		// fail below) if that does not happen in three durations.
		give := time.NewTimer(3 * ttl)
		defer give.Stop()
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for q.extends.Load() < 3 {
			select {
			case <-give.C:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			case <-tick.C:
			}
		}
		return nil
	}
	c, err := crawlkit.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if n := q.extends.Load(); n < 3 {
		t.Fatalf("the seed's lease was extended %d times while its Handler ran past the lease's %v", n, ttl)
	}
	if n := seen[seed]; n != 1 {
		t.Errorf("the seed was handed to the Handler %d times, want 1", n)
	}
	if st := f.Stats(); st.Expired != 0 {
		t.Errorf("%d leases expired while being worked on", st.Expired)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, err := range q.settled {
		if err != nil {
			t.Errorf("settling a lease: %v", err)
		}
	}
}

// TestWARCArchivesRedirects checks that a page reached through a redirect
// is archived with the redirect: a response record for the requested URL
// holding its 301 and Location, then the page under the URL that answered.
func TestWARCArchivesRedirects(t *testing.T) {
	s := serveSite(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		switch r.URL.Path {
		case "/old":
			http.Redirect(w, r, "/new", http.StatusMovedPermanently)
		case "/new":
			writeHTML(w, "<html><title>new</title><body>moved here</body></html>")
		default:
			http.NotFound(w, r)
		}
	})
	srv := s.srv
	dir := t.TempDir()
	sink, err := crawlkit.NewWARCSink(warc.Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	s.crawl(t, func(c *crawlkit.Config) {
		c.Seeds = []string{srv.URL + "/old"}
		c.Sink = sink
	})

	type record struct{ target, status, location, body string }
	var got []record
	robotsRecords := 0
	readWARC(t, dir, func(typ, target string, content []byte) {
		if typ != "response" {
			return
		}
		if strings.HasSuffix(target, "/robots.txt") {
			robotsRecords++
			return
		}
		head, body, _ := strings.Cut(string(content), "\r\n\r\n")
		status, _, _ := strings.Cut(head, "\r\n")
		var location string
		for _, line := range strings.Split(head, "\r\n") {
			if v, ok := strings.CutPrefix(line, "Location: "); ok {
				location = v
			}
		}
		got = append(got, record{target, status, location, body})
	})
	want := []record{
		{srv.URL + "/old", "HTTP/1.1 301 Moved Permanently", "/new", ""},
		{srv.URL + "/new", "HTTP/1.1 200 OK", "", "<html><title>new</title><body>moved here</body></html>"},
	}
	if len(got) != len(want) || robotsRecords != 1 {
		t.Fatalf("response records %+v and %d for robots.txt, want %+v and 1", got, robotsRecords, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("record %d: %+v, want %+v", i, got[i], want[i])
		}
	}
}

// readWARC calls fn with the type, target URI and block of every record of
// the WARC files in dir, in order; it fails the test if there are none or
// one cannot be read.
func readWARC(t *testing.T, dir string, fn func(typ, target string, content []byte)) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*.warc.gz"))
	if len(files) == 0 {
		t.Fatal("no WARC file written")
	}
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		r, err := iawarc.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		for {
			rec, err := r.ReadRecord()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			content, _ := io.ReadAll(rec.Content)
			rec.Content.Close()
			fn(rec.Header.Get("WARC-Type"), rec.Header.Get("WARC-Target-URI"), content)
		}
		r.Close()
		f.Close()
	}
}

// panickingQueue panics in its first calls of each method, as a user's
// Queue with a bug might.
type panickingQueue struct {
	*frontier.Frontier
	next, add, done, stats atomic.Int32
}

func (*panickingQueue) Deduplicates() bool { return true }

func (q *panickingQueue) Next(ctx context.Context) (*frontier.Lease, error) {
	if q.next.Add(-1) >= 0 {
		panic("next")
	}
	return q.Frontier.Next(ctx)
}

func (q *panickingQueue) Add(entries ...frontier.Entry) error {
	if entries[0].Depth > 0 && q.add.Add(-1) >= 0 {
		panic("add")
	}
	return q.Frontier.Add(entries...)
}

func (q *panickingQueue) Done(l *frontier.Lease, o frontier.Outcome) (frontier.Settlement, error) {
	if q.done.Add(-1) >= 0 {
		panic("done")
	}
	return q.Frontier.Done(l, o)
}

func (q *panickingQueue) Stats() frontier.Stats {
	if q.stats.Add(-1) >= 0 {
		panic("stats")
	}
	return q.Frontier.Stats()
}

// TestQueuePanicsAreRecovered: a user's Queue that panics in Next, Add,
// Done and Stats does not take the crawl down; its panics are handled as
// its errors would be, and no page is lost (the lease whose Done panicked
// expires and is fetched again).
func TestQueuePanicsAreRecovered(t *testing.T) {
	web := newWeb(t, crawltest.Config{Hosts: 3, PagesPerHost: 6, Seed: 29, Agent: "crawlkit-test", NoTraps: true,
		CrawlDelay: 20 * time.Millisecond})
	f, err := frontier.New(frontier.Config{Politeness: frontier.FixedDelay(20 * time.Millisecond), LeaseTTL: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	q := &panickingQueue{Frontier: f}
	for _, n := range []*atomic.Int32{&q.next, &q.add, &q.done, &q.stats} {
		n.Store(2)
	}
	var log pageLog
	cfg := crawlConfig(web, &log)
	cfg.Workers = 2
	cfg.Queue = q
	cfg.Delay = 0 // the queue spaces hosts by its own politeness model
	cfg.RetryBackoff = time.Millisecond
	c, err := crawlkit.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	for name, n := range map[string]*atomic.Int32{"Next": &q.next, "Add": &q.add, "Done": &q.done, "Stats": &q.stats} {
		if n.Load() > 0 {
			t.Errorf("%s never panicked; the test did not test it", name)
		}
	}
	if missing := web.TruthFor("crawlkit-test", 0).Missing(log.urls()); len(missing) > 0 {
		t.Errorf("%d pages lost to the Queue's panics: %v", len(missing), missing)
	}
}
