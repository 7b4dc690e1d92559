package crawlkit_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/crawltest"
)

// The kill test's child process: a Crawler on the parent's DataDir and
// web, run until it ends or the parent kills it.
const (
	killChildEnv = "CRAWLKIT_KILL_CHILD" // the web's address
	killDirEnv   = "CRAWLKIT_KILL_DIR"
	killSeedsEnv = "CRAWLKIT_KILL_SEEDS"
)

// killWeb is the web of the kill test: politeness judged by the server
// (MinGap and, on some hosts, a longer Crawl-delay), traps on every host.
var killWeb = crawltest.Config{
	Hosts: 10, PagesPerHost: 16, Seed: 23, Agent: "crawlkit-test",
	MinGap: 150 * time.Millisecond, MaxPerHost: 1, CrawlDelay: 400 * time.Millisecond,
}

// killConfig is the Crawler configuration of every process of the test.
func killConfig(dial func(context.Context, string, string) (net.Conn, error), seeds []string, dir string) crawlkit.Config {
	return crawlkit.Config{
		UserAgent: testAgent, Seeds: seeds, Scope: crawlkit.ScopeAny,
		Workers: 8, Delay: killWeb.MinGap, DialContext: dial, AllowPrivate: loopback,
		RobotsRetries: -1, DataDir: dir, MaxRetryWait: 30 * time.Second,
		Handler: func(context.Context, *crawlkit.Page) error { return nil },
	}
}

// killSeeds are the web's seeds plus a URL that answers 429 with
// Retry-After: 120 and another page on its host, which must wait.
func killSeeds(web *crawltest.Web) []string {
	return append(web.Seeds(),
		web.HostileURL(crawltest.HostileTooManyRequests),
		web.HostileURL("after-the-block"))
}

// TestKillChild is the child process of TestKillRestart; it does nothing
// in a normal test run.
func TestKillChild(t *testing.T) {
	addr := os.Getenv(killChildEnv)
	if addr == "" {
		t.Skip("the child process of TestKillRestart")
	}
	dial := func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}
	cfg := killConfig(dial, strings.Fields(os.Getenv(killSeedsEnv)), os.Getenv(killDirEnv))
	c, err := crawlkit.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestKillRestart kills a crawling process with SIGKILL at random moments,
// eight times, restarting it each time on the same DataDir, and lets the
// ninth run finish. Judged by the server's accounting over all nine
// processes: no page lost, no request sooner than the host allows (MinGap,
// Crawl-delay, and a 429's Retry-After of 120 s), and no more distinct
// trap pages fetched than by an uninterrupted crawl, within 10 %. No kill
// falls within half a second of the 429: the block holds from when it is
// saved.
func TestKillRestart(t *testing.T) {
	if os.Getenv(killChildEnv) != "" {
		t.Skip("in the child process")
	}
	if testing.Short() {
		t.Skip("starts ten processes")
	}
	// The reference: one uninterrupted crawl of the same web, in process.
	t0ref := time.Now()
	whole := newWeb(t, killWeb)
	ref, err := crawlkit.New(killConfig(whole.DialContext, killSeeds(whole), t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	if err := ref.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	delayed := 0
	for _, h := range whole.Hosts() {
		if h.CrawlDelay > killWeb.MinGap {
			delayed++
		}
	}
	if delayed == 0 {
		t.Fatal("no host of the web asks for a Crawl-delay; the test would not check it")
	}
	refRep := whole.Report()
	t.Logf("reference crawl took %v", time.Since(t0ref))
	if refRep.TrapFetches == 0 {
		t.Fatal("the uninterrupted crawl entered no trap; the test would show nothing")
	}

	// The killed crawl: kill points drawn over the reference's request
	// count, so that they fall all along the crawl.
	const kills = 8
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	// Each process makes at least a few requests of its own.
	points := make([]int, kills)
	span := refRep.Requests * 9 / 10 / kills
	for i := range points {
		points[i] = 1 + i*span + span/3 + rng.IntN(span-span/3)
	}
	var (
		mu       sync.Mutex
		requests int
		next     int // index into points, sorted
		child    *exec.Cmd
		killedAt []int
		busy     []time.Time // requests to the hostile host
		// holdKills defers kills for half a second after a request to
		// the hostile host: a kill before the crawler has the 429 and its
		// block on disk would repeat it lawfully (the block was never
		// learned), and the test is of what a saved block survives. Half
		// a second, not more: the crawler saves a block as it learns it,
		// and the periodic save comes only every second, so a kill after
		// the hold still finds a block that only the periodic save would
		// have kept.
		holdKills time.Time
		events    []string
		t0        = time.Now()
	)
	slices.Sort(points)
	webCfg := killWeb
	webCfg.OnRequest = func(r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if r.Host == crawltest.HostileHost && r.URL.Path != "/robots.txt" {
			busy = append(busy, time.Now())
			holdKills = time.Now().Add(500 * time.Millisecond)
		}
		requests++
		events = append(events, fmt.Sprintf("%8.3f req %s%s", time.Since(t0).Seconds(), r.Host, r.URL.Path))
		// Kill the running child on the request that reaches a point;
		// a point a restart already passed kills on its first request.
		for next < len(points) && requests >= points[next] && child != nil && time.Now().After(holdKills) {
			next++
			events = append(events, fmt.Sprintf("%8.3f KILL", time.Since(t0).Seconds()))
			if child.Process.Kill() == nil {
				killedAt = append(killedAt, requests)
			}
			child = nil
		}
	}
	web := newWeb(t, webCfg)
	dir := t.TempDir()
	runChild := func() (killed bool, out string) {
		cmd := exec.Command(os.Args[0], "-test.run=^TestKillChild$", "-test.v")
		cmd.Env = append(os.Environ(), killChildEnv+"="+web.Addr(), killDirEnv+"="+dir,
			killSeedsEnv+"="+strings.Join(killSeeds(web), " "))
		var buf bytes.Buffer
		cmd.Stdout, cmd.Stderr = &buf, &buf
		mu.Lock()
		if err := cmd.Start(); err != nil {
			mu.Unlock()
			t.Fatal(err)
		}
		child = cmd
		events = append(events, fmt.Sprintf("%8.3f START", time.Since(t0).Seconds()))
		mu.Unlock()
		err := cmd.Wait()
		mu.Lock()
		child = nil
		mu.Unlock()
		var ee *exec.ExitError
		if errors.As(err, &ee) && !ee.Exited() {
			return true, buf.String()
		}
		if err != nil {
			t.Fatalf("child process: %v\n%s", err, buf.String())
		}
		return false, buf.String()
	}
	runs := 0
	for {
		runs++
		killed, out := runChild()
		if !killed {
			if !strings.Contains(out, "PASS") {
				t.Fatalf("the last process did not pass:\n%s", out)
			}
			break
		}
		if runs > 3*kills {
			t.Fatal("the crawl never finished")
		}
	}
	mu.Lock()
	defer mu.Unlock()
	rep := web.Report()
	t.Logf("%d processes, killed at requests %v; requests %d (uninterrupted %d), trap fetches %d (uninterrupted %d), distinct trap pages %d (%d)",
		runs, killedAt, rep.Requests, refRep.Requests, rep.TrapFetches, refRep.TrapFetches,
		trapPages(web, rep), trapPages(whole, refRep))
	if len(killedAt) < kills {
		t.Errorf("only %d kills happened, want %d: the crawl ended first", len(killedAt), kills)
	}

	fetched := make([]string, 0, len(rep.PerPage))
	for u := range rep.PerPage {
		fetched = append(fetched, u)
	}
	if missing := web.TruthFor(killWeb.Agent, 0).Missing(fetched); len(missing) > 0 {
		t.Errorf("%d pages never fetched over the restarts, e.g. %v", len(missing), missing[:min(5, len(missing))])
	}
	if os.Getenv("KILL_EVENTS") != "" {
		os.WriteFile(os.Getenv("KILL_EVENTS"), []byte(strings.Join(events, "\n")), 0o644)
	}
	if v := rep.PolitenessViolations(); v != 0 {
		t.Errorf("%d politeness violations over the restarts (spacing %d, concurrency %d)", v, rep.SpacingViolations, rep.ConcurrencyViolations)
		for h, hr := range rep.Hosts {
			if hr.SpacingViolations+hr.ConcurrencyViolations > 0 {
				t.Logf("  %s: spacing %d, concurrency %d", h, hr.SpacingViolations, hr.ConcurrencyViolations)
			}
		}
	}
	if rep.RobotsViolations != 0 || rep.BeforeRobots != 0 {
		t.Errorf("robots violations %d, requests before robots.txt %d", rep.RobotsViolations, rep.BeforeRobots)
	}
	if len(busy) != 1 {
		t.Errorf("the host that answered 429 with Retry-After: 120 got %d requests within %v, want 1", len(busy), describeGaps(busy))
	}
	// The trap protection survives the kills: the distinct trap pages
	// fetched stay within 10 % of the uninterrupted crawl's, plus what the
	// kills cut from the detector's learning: it is saved up to four times
	// a second, and a kill loses what it learned since, one trap page in
	// four kills at most as measured at a load average of 16 on two cores.
	// (Without saved learning the kills multiply the trap pages.) A kill
	// also repeats the requests it cut off (at most Workers per kill),
	// trap pages among them.
	distinct, refDistinct := trapPages(web, rep), trapPages(whole, refRep)
	if float64(distinct) > 1.1*float64(refDistinct)+1+float64(kills)/4 {
		t.Errorf("%d distinct trap pages fetched over %d kills, %d uninterrupted", distinct, kills, refDistinct)
	}
	if repeats := rep.TrapFetches - distinct; repeats > kills*killConfig(nil, nil, "").Workers {
		t.Errorf("%d repeated trap requests over %d kills", repeats, kills)
	}
}

func describeGaps(ts []time.Time) string {
	var b strings.Builder
	for i := 1; i < len(ts); i++ {
		fmt.Fprintf(&b, "%v ", ts[i].Sub(ts[i-1]).Round(time.Millisecond))
	}
	return "gaps " + b.String()
}

// TestLongRetryAfterEndsCrawl: a host that asks for a wait longer than
// MaxRetryWait ends the crawl when only its URLs are left, counted as
// max-wait, instead of idling until the block ends.
func TestLongRetryAfterEndsCrawl(t *testing.T) {
	web := newWeb(t, crawltest.Config{Hosts: 1, PagesPerHost: 2, NoTraps: true})
	blocked := []string{web.HostileURL(crawltest.HostileTooManyRequests), web.HostileURL("after-the-block")}
	cfg := killConfig(web.DialContext, append(web.Seeds(), blocked...), "")
	cfg.Workers = 1
	// The deadline only turns a hang into a failure; the crawl ends long
	// before the host's Retry-After of 120 s.
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Second)
	defer cancel()
	c, err := crawlkit.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	s := c.Stats()
	if s.Ended != "max-wait" || s.URLs.NotFetched[crawlkit.ReasonMaxWait] != 2 {
		t.Errorf("ended %q with %d URLs not fetched for max-wait, want \"max-wait\" and 2 (the 429 and the URL behind it)",
			s.Ended, s.URLs.NotFetched[crawlkit.ReasonMaxWait])
	}
	if n := web.Report().PerURL[blocked[1]]; n != 0 {
		t.Errorf("the URL behind the block was requested %d times", n)
	}
}

// trapPages counts the distinct trap pages the server served.
func trapPages(web *crawltest.Web, rep crawltest.Report) int {
	truth := web.TruthFor(killWeb.Agent, 0)
	n := 0
	for u := range rep.PerPage {
		if truth.IsTrap(u) {
			n++
		}
	}
	return n
}
