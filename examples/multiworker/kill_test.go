package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	mrand "math/rand/v2"
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
	"github.com/crawlkit/crawlkit/storage/redis"
)

// killWebConfig is the web of the kill test: politeness judged by the
// server (MinGap, and a longer Crawl-delay on some hosts), traps on every
// host.
var killWebConfig = crawltest.Config{
	Hosts: 10, PagesPerHost: 16, Seed: 31, Agent: "crawlkit-mw",
	MinGap: 40 * time.Millisecond, MaxPerHost: 1, CrawlDelay: 150 * time.Millisecond,
}

// crew runs worker processes on one schema against web, one per slot of
// running, until all finish, starting a worker again whenever kill (called on every request
// the web serves) killed it. It returns how many processes ran.
type crew struct {
	t     *testing.T
	store []string // the flags naming the shared crawl: -db/-redis and -schema
	web   *crawltest.Web

	mu      sync.Mutex
	running []*exec.Cmd
	killed  int
}

func (c *crew) args() []string {
	args := []string{
		"-test-web", c.web.Addr(),
		"-user-agent", killWebConfig.Agent + "/1.0", "-workers", "4", "-delay", "40ms", "-lease-ttl", "2s",
	}
	for _, s := range c.web.Seeds() {
		args = append(args, "-seed", s)
	}
	return append(args, c.store...)
}

// kill kills one running worker chosen by rng, if any runs.
func (c *crew) kill(rng *mrand.Rand) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	var live []int
	for i, cmd := range c.running {
		if cmd != nil {
			live = append(live, i)
		}
	}
	if len(live) == 0 {
		return false
	}
	i := live[rng.IntN(len(live))]
	if c.running[i].Process.Kill() != nil {
		return false
	}
	c.running[i] = nil
	c.killed++
	return true
}

func (c *crew) run() (processes int) {
	var wg sync.WaitGroup
	var mu sync.Mutex
	for slot := range c.running {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				cmd := exec.Command(os.Args[0])
				cmd.Env = append(os.Environ(), argsEnv+"="+strings.Join(c.args(), "\n"))
				var out bytes.Buffer
				cmd.Stdout, cmd.Stderr = &out, &out
				c.mu.Lock()
				if err := cmd.Start(); err != nil {
					c.mu.Unlock()
					c.t.Error(err)
					return
				}
				c.running[slot] = cmd
				c.mu.Unlock()
				mu.Lock()
				processes++
				mu.Unlock()
				err := cmd.Wait()
				c.mu.Lock()
				if c.running[slot] == cmd {
					c.running[slot] = nil
				}
				c.mu.Unlock()
				var ee *exec.ExitError
				if errors.As(err, &ee) && !ee.Exited() {
					continue // killed: start it again
				}
				if err != nil {
					c.t.Errorf("worker: %v\n%s", err, lastLines(out.String(), 20))
				}
				return
			}
		}()
	}
	wg.Wait()
	return processes
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// sharedCrawl is a fresh shared crawl in one backend: the worker flags
// that name it, and its StateStore, to read what the workers kept.
type sharedCrawl struct {
	flags []string
	state crawlkit.StateStore
}

// backends open a fresh shared crawl in PostgreSQL or Redis, dropped at
// the end of the test; they skip the test when the server is missing
// (fail it with CI=true).
var backends = map[string]func(t *testing.T) sharedCrawl{
	"postgres": func(t *testing.T) sharedCrawl {
		var suffix [6]byte
		rand.Read(suffix[:])
		schema := "mwk_" + hex.EncodeToString(suffix[:])
		db := openDB(t, schema)
		t.Cleanup(func() {
			if err := db.DropSchema(context.Background()); err != nil {
				t.Errorf("dropping schema %s: %v", schema, err)
			}
			db.Close()
		})
		return sharedCrawl{flags: []string{"-db", dbURL(), "-schema", schema}, state: db.StateStore()}
	},
	"redis": func(t *testing.T) sharedCrawl {
		var suffix [6]byte
		rand.Read(suffix[:])
		crawl := "mwk_" + hex.EncodeToString(suffix[:])
		db := openRedisDB(t, crawl)
		t.Cleanup(func() {
			if err := db.Drop(context.Background()); err != nil {
				t.Errorf("dropping crawl %s: %v", crawl, err)
			}
			db.Close()
		})
		return sharedCrawl{flags: []string{"-redis", redisAddr(), "-schema", crawl}, state: db.StateStore()}
	},
}

func redisAddr() string { return envOr("CRAWLKIT_REDIS_ADDR", "127.0.0.1:6379") }

// openRedisDB opens crawl, skipping the test when no server answers (failing
// it when CI=true).
func openRedisDB(t *testing.T, crawl string) *redis.DB {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	db, err := redis.Open(ctx, redis.Config{Addr: redisAddr(), Crawl: crawl})
	if err == nil {
		err = db.Client().Ping(ctx).Err()
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("Redis at %s: %v (CI=true: not skipping)", redisAddr(), err)
		}
		t.Skipf("Redis at %s unavailable, skipping (set CRAWLKIT_REDIS_ADDR): %v", redisAddr(), err)
	}
	return db
}

// sharedStateBytes is the size of the shared record name, read through the
// StateStore (written back unchanged).
func sharedStateBytes(t *testing.T, st crawlkit.StateStore, name string) int {
	var n int
	err := st.UpdateState(context.Background(), name, func(old []byte) ([]byte, error) {
		n = len(old)
		return old, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestWorkersKilledEightTimes runs two worker processes on one crawl
// shared through PostgreSQL, then through Redis, and kills one of them with SIGKILL at random moments, eight times,
// starting it again each time. Judged by the web's own accounting over
// every process: no page lost, no request sooner than the host allows
// (MinGap and Crawl-delay) and no robots violation, and no more trap
// fetches than two workers that were never killed, within 10 %: the
// workers keep what their trap detectors learn in the database, and a
// worker started again takes it up.
func TestWorkersKilledEightTimes(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process crawl skipped in -short mode")
	}
	for _, name := range []string{"postgres", "redis"} {
		t.Run(name, func(t *testing.T) { killEightTimes(t, backends[name]) })
	}
}

// refRuns is how many uninterrupted crawls killEightTimes measures the
// killed one against.
const refRuns = 3

func killEightTimes(t *testing.T, open func(t *testing.T) sharedCrawl) {
	// The reference: the same two workers, never killed, three times on
	// fresh stores. The uninterrupted crawl itself varies from run to run
	// (18 to 24 trap fetches), so the bound below takes the most trap
	// fetches of the three.
	var refRep crawltest.Report
	refTraps := make([]int, refRuns)
	for i := range refTraps {
		ref := &crew{t: t, store: open(t).flags, running: make([]*exec.Cmd, 2)}
		web, err := crawltest.NewWeb(killWebConfig)
		if err != nil {
			t.Fatal(err)
		}
		ref.web = web
		ref.run()
		rep := web.Report()
		web.Close()
		if rep.TrapFetches == 0 {
			t.Fatal("the uninterrupted crawl entered no trap; the test would show nothing")
		}
		refTraps[i] = rep.TrapFetches
		if i == 0 || rep.TrapFetches > refRep.TrapFetches {
			refRep = rep
		}
	}

	const kills = 8
	rng := mrand.New(mrand.NewPCG(uint64(time.Now().UnixNano()), 3))
	span := refRep.Requests * 9 / 10 / kills
	points := make([]int, kills)
	for i := range points {
		points[i] = 1 + i*span + span/3 + rng.IntN(span-span/3)
	}
	slices.Sort(points)
	sc := open(t)
	c := &crew{t: t, store: sc.flags, running: make([]*exec.Cmd, 2)}
	var (
		mu       sync.Mutex
		requests int
		next     int
		killedAt []int
	)
	cfg := killWebConfig
	cfg.OnRequest = func(*http.Request) {
		mu.Lock()
		defer mu.Unlock()
		requests++
		for next < len(points) && requests >= points[next] {
			if !c.kill(rng) {
				break // none runs: kill on the next request
			}
			next++
			killedAt = append(killedAt, requests)
		}
	}
	var err error
	c.web, err = crawltest.NewWeb(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.web.Close()
	processes := c.run()

	mu.Lock()
	defer mu.Unlock()
	rep := c.web.Report()
	t.Logf("%d processes, killed at requests %v; requests %d (uninterrupted %d), trap fetches %d (uninterrupted %v)",
		processes, killedAt, rep.Requests, refRep.Requests, rep.TrapFetches, refTraps)
	if len(killedAt) < kills {
		t.Errorf("only %d kills happened, want %d: the crawl ended first", len(killedAt), kills)
	}
	fetched := make([]string, 0, len(rep.PerPage))
	for u := range rep.PerPage {
		fetched = append(fetched, u)
	}
	if missing := c.web.TruthFor(cfg.Agent, 0).Missing(fetched); len(missing) > 0 {
		t.Errorf("%d pages never fetched over the kills, e.g. %v", len(missing), missing[:min(5, len(missing))])
	}
	if v := rep.PolitenessViolations(); v != 0 {
		t.Errorf("%d politeness violations over the kills (spacing %d, concurrency %d)", v, rep.SpacingViolations, rep.ConcurrencyViolations)
	}
	if rep.RobotsViolations != 0 || rep.BeforeRobots != 0 {
		t.Errorf("robots violations %d, requests before robots.txt %d", rep.RobotsViolations, rep.BeforeRobots)
	}
	if sharedStateBytes(t, sc.state, "crawlkit/trap/v1") == 0 {
		t.Error("the workers kept no spider-trap state in the shared store")
	}
	// Within 10 % of the most trap fetches of the uninterrupted runs, plus
	// what the kills cut from the shared learning: a worker merges it into
	// the shared record about once a second, and a kill loses what it
	// learned since; a kill also repeats the request it cut off. One trap
	// fetch in four kills is allowed. Without shared learning the kills
	// multiply trap fetches (30 against 15 for two processes,
	// trap.TestMergeSharesLearning).
	if float64(rep.TrapFetches) > 1.1*float64(refRep.TrapFetches)+1+float64(kills)/4 {
		t.Errorf("%d trap fetches over %d kills, %v uninterrupted", rep.TrapFetches, kills, refTraps)
	}
}
