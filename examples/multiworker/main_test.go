package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/crawltest"
	"github.com/crawlkit/crawlkit/storage/postgres"
)

// argsEnv carries a child worker's arguments (separated by newlines): the test
// binary re-executed with it set runs one worker instead of the tests.
const argsEnv = "CRAWLKIT_MULTIWORKER_ARGS"

func TestMain(m *testing.M) {
	if args := os.Getenv(argsEnv); args != "" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		code := run(ctx, strings.Split(args, "\n"), os.Stdout, os.Stderr)
		stop()
		os.Exit(code)
	}
	os.Exit(m.Run())
}

func dbURL() string {
	return envOr("CRAWLKIT_POSTGRES_URL", "postgres://postgres@127.0.0.1:5432/test?sslmode=disable")
}

// openDB opens schema, skipping the test when no server answers (failing it
// when CI=true).
func openDB(t *testing.T, schema string) *postgres.DB {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	db, err := postgres.Open(ctx, dbURL(), postgres.Config{Schema: schema, MaxConns: 2})
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("PostgreSQL at %s: %v (CI=true: not skipping)", dbURL(), err)
		}
		t.Skipf("PostgreSQL at %s unavailable, skipping (set CRAWLKIT_POSTGRES_URL): %v", dbURL(), err)
	}
	return db
}

// worker is one child process and what it printed.
type worker struct {
	cmd    *exec.Cmd
	mu     sync.Mutex
	urls   []string
	stderr strings.Builder
	done   chan struct{} // closed when stdout is drained
}

func (w *worker) fetched() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.urls...)
}

// TestThreeWorkersOneKilled runs three worker processes on one PostgreSQL
// crawl state against a crawltest web served here, kills one with SIGKILL
// mid-crawl, and checks that the survivors finish the crawl: every page of
// the ground truth fetched, nothing left queued or leased, and no
// politeness violation in the server's accounting.
func TestThreeWorkersOneKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process crawl skipped in -short mode")
	}
	var suffix [6]byte
	rand.Read(suffix[:])
	schema := "mw_" + hex.EncodeToString(suffix[:])
	db := openDB(t, schema)
	t.Cleanup(func() {
		if err := db.DropSchema(context.Background()); err != nil {
			t.Errorf("dropping schema %s: %v", schema, err)
		}
	})

	const agent = "crawlkit-mw"
	web, err := crawltest.NewWeb(crawltest.Config{
		Hosts: 30, PagesPerHost: 20, Seed: 17, Agent: agent, NoTraps: true,
		MinGap: 20 * time.Millisecond, MaxPerHost: 1, CrawlDelay: 100 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer web.Close()

	args := []string{
		"-db", dbURL(), "-schema", schema, "-test-web", web.Addr(),
		"-user-agent", agent + "/1.0", "-workers", "4", "-delay", "40ms", "-lease-ttl", "5s",
	}
	for _, s := range web.Seeds() {
		args = append(args, "-seed", s)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	workers := make([]*worker, 3)
	for i := range workers {
		w := &worker{done: make(chan struct{})}
		w.cmd = exec.CommandContext(ctx, os.Args[0])
		w.cmd.Env = append(os.Environ(), argsEnv+"="+strings.Join(args, "\n"))
		w.cmd.Stderr = &lockedWriter{mu: &w.mu, b: &w.stderr}
		out, err := w.cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := w.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		go func() {
			defer close(w.done)
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				if u, ok := strings.CutPrefix(sc.Text(), "FETCHED "); ok {
					w.mu.Lock()
					w.urls = append(w.urls, u)
					w.mu.Unlock()
				}
			}
		}()
		workers[i] = w
	}

	// Kill the first worker once it is well into the crawl: it holds
	// leases, and some of its links are queued and some not.
	victim := workers[0]
	for len(victim.fetched()) < 25 {
		select {
		case <-victim.done:
			t.Fatalf("worker 0 ended after %d pages, before it could be killed; stderr:\n%s", len(victim.fetched()), victim.stderr.String())
		case <-time.After(5 * time.Millisecond):
		}
	}
	if err := victim.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killedAt := len(victim.fetched())
	var leased int
	if err := db.Pool().QueryRow(ctx, "SELECT count(*) FROM urls WHERE state = 1").Scan(&leased); err != nil {
		t.Fatal(err)
	}

	for i, w := range workers {
		<-w.done
		err := w.cmd.Wait()
		if i == 0 {
			continue
		}
		if err != nil {
			t.Fatalf("worker %d: %v; stderr:\n%s", i, err, w.stderr.String())
		}
	}

	var all []string
	count := map[string]int{}
	for i, w := range workers {
		urls := w.fetched()
		t.Logf("worker %d fetched %d pages", i, len(urls))
		all = append(all, urls...)
		for _, u := range urls {
			count[u]++
		}
	}
	t.Logf("worker 0 was killed after printing %d pages, with %d URLs leased by the workers", killedAt, leased)

	truth := web.TruthFor(agent, 0)
	if missing := truth.Missing(all); len(missing) > 0 {
		t.Errorf("coverage: %d of %d pages never fetched, e.g. %v", len(missing), len(truth.Unique()), missing[:min(5, len(missing))])
	}
	twice := 0
	for _, n := range count {
		if n > 1 {
			twice += n - 1
		}
	}
	// Only the pages the killed worker was fetching (at most its worker
	// count) may be fetched again.
	if twice > 4 {
		t.Errorf("%d pages fetched more than once, want at most the killed worker's 4 in flight", twice)
	}

	rep := web.Report()
	if v := rep.PolitenessViolations(); v != 0 {
		t.Errorf("%d politeness violations (spacing %d, concurrency %d)", v, rep.SpacingViolations, rep.ConcurrencyViolations)
	}
	// The workers share each robots.txt through the database: a host's
	// file is fetched about once, not once per process. A worker killed
	// mid-fetch, or two asking at once before either stored it, may fetch
	// it again, so allow one more.
	for host, n := range rep.RobotsFetches {
		if n > 2 {
			t.Errorf("%s: robots.txt fetched %d times by the workers, want it shared", host, n)
		}
	}
	if rep.RobotsViolations != 0 || rep.BeforeRobots != 0 {
		t.Errorf("%d robots violations, %d requests before robots.txt", rep.RobotsViolations, rep.BeforeRobots)
	}

	var open, finished int
	if err := db.Pool().QueryRow(context.Background(),
		"SELECT count(*) FILTER (WHERE state IN (0, 1)), count(*) FILTER (WHERE state IN (2, 3)) FROM urls").Scan(&open, &finished); err != nil {
		t.Fatal(err)
	}
	if open != 0 {
		t.Errorf("%d URLs still queued or leased after the workers finished", open)
	}
	t.Logf("%d URLs settled in the shared state; %d pages fetched in all, %d distinct; %d requests served",
		finished, len(all), len(count), rep.Requests)
}

// lockedWriter appends to a strings.Builder under a mutex.
type lockedWriter struct {
	mu *sync.Mutex
	b  *strings.Builder
}

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

// TestRunBadFlags checks that out-of-range flag values and stray arguments
// are refused as usage errors (exit code 2, naming the flag) before the
// database is opened, instead of being replaced by a default in silence:
// -workers 0 ran the default workers on a pool sized for 2, and a non-positive
// -lease-ttl ran with 5 minutes.
func TestRunBadFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-workers", "0"}, "-workers"},
		{[]string{"-workers", "-2"}, "-workers"},
		{[]string{"-delay", "0s"}, "-delay"},
		{[]string{"-delay", "-1s"}, "-delay"},
		{[]string{"-lease-ttl", "0s"}, "-lease-ttl"},
		{[]string{"-lease-ttl", "-5s"}, "-lease-ttl"},
		{[]string{"http://b.test/"}, "http://b.test/"},
	} {
		var stdout, stderr bytes.Buffer
		// Nothing listens on port 1: a run that got as far as the
		// database would fail there, with exit code 1.
		args := append([]string{"-db", "postgres://postgres@127.0.0.1:1/test?sslmode=disable&connect_timeout=2",
			"-seed", "http://a.test/"}, c.args...)
		code := run(context.Background(), args, &stdout, &stderr)
		if code != 2 || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("%q: exit code %d, stderr %q; want 2 and an error about %s", c.args, code, stderr.String(), c.want)
		}
	}
}
