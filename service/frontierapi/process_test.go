package frontierapi_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/bloom"
	"github.com/crawlkit/crawlkit/crawltest"
	"github.com/crawlkit/crawlkit/extract"
	"github.com/crawlkit/crawlkit/frontier"
	"github.com/crawlkit/crawlkit/robots"
	"github.com/crawlkit/crawlkit/service/frontierapi"
	"github.com/crawlkit/crawlkit/simhash"
	ckpebble "github.com/crawlkit/crawlkit/storage/pebble"
	"github.com/crawlkit/crawlkit/trap"
	"github.com/crawlkit/crawlkit/urlnorm"
)

// helperEnv selects the role of a re-executed test binary.
const helperEnv = "CRAWLKIT_HTTPAPI_HELPER"

// TestHelperProcess is not a test: it is the body of the child processes the
// tests below start by re-executing the test binary.
func TestHelperProcess(t *testing.T) {
	switch os.Getenv(helperEnv) {
	case "":
		t.Skip("helper process only")
	case "server":
		if err := runServerProcess(os.Getenv("HELPER_DIR")); err != nil {
			fmt.Fprintln(os.Stderr, "server:", err)
			os.Exit(1)
		}
	case "worker":
		n, err := runWorkerProcess(os.Getenv("HELPER_SERVICE"), os.Getenv("HELPER_WEB"), os.Getenv("HELPER_WORKER"))
		fmt.Printf("FETCHED %d\n", n)
		if err != nil {
			fmt.Fprintln(os.Stderr, "worker:", err)
			os.Exit(1)
		}
	}
	os.Exit(0)
}

// child starts the test binary in a helper role.
func child(t *testing.T, role string, env ...string) (*exec.Cmd, *bufio.Reader) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), append([]string{helperEnv + "=" + role}, env...)...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	return cmd, bufio.NewReader(out)
}

// openService opens a durable service on the Pebble store in dir.
func openService(dir string, cfg frontierapi.Config) (*frontierapi.Server, *ckpebble.DB, error) {
	db, err := ckpebble.Open(dir, ckpebble.Config{})
	if err != nil {
		return nil, nil, err
	}
	seen, err := bloom.New(bloom.Config{Store: db.SeenStore()})
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	cfg.Token = token
	cfg.Seen = seen
	cfg.Frontier.Store = db.Frontier()
	s, err := frontierapi.New(cfg)
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	return s, db, nil
}

func runServerProcess(dir string) error {
	s, _, err := openService(dir, frontierapi.Config{Delay: -1})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	fmt.Printf("ADDR %s\n", ln.Addr())
	return http.Serve(ln, s) // until killed
}

// TestKilledServiceLosesNothing submits URLs from several clients to a
// service in another process, kills it with SIGKILL in the middle, and
// checks that every URL it acknowledged (202) is queued when a new service
// opens the same store, and still known as seen.
func TestKilledServiceLosesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	dir := t.TempDir()
	cmd, out := child(t, "server", "HELPER_DIR="+dir)
	line, err := out.ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "ADDR ") {
		t.Fatalf("server did not start: %q %v", line, err)
	}
	c := frontierapi.NewClient("http://"+strings.TrimSpace(line[5:]), token, nil)

	var (
		mu    sync.Mutex
		acked []string
		wg    sync.WaitGroup
	)
	const clients, batches, perBatch = 4, 40, 25
	killAfter := make(chan struct{})
	// killed holds back each client's last batch until the kill was sent,
	// so that however fast the service runs (or slowly the test, on a
	// loaded machine), not every batch is acknowledged first.
	killed := make(chan struct{})
	var once sync.Once
	for ci := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range batches {
				if b == batches-1 {
					<-killed
				}
				req := frontierapi.SubmitRequest{}
				for i := range perBatch {
					req.URLs = append(req.URLs, frontierapi.SubmitURL{URL: fmt.Sprintf("http://h%d.test/c%d/b%d/%d", i%7, ci, b, i)})
				}
				resp, err := c.Submit(context.Background(), req)
				if err != nil {
					return // the service died: this batch was not acknowledged
				}
				mu.Lock()
				for _, r := range resp.Results {
					if r.Status == frontierapi.StatusAccepted {
						acked = append(acked, r.Normalized)
					}
				}
				n := len(acked)
				mu.Unlock()
				if n >= clients*batches*perBatch/4 {
					once.Do(func() { close(killAfter) })
				}
			}
		}()
	}
	<-killAfter
	err = cmd.Process.Signal(syscall.SIGKILL)
	close(killed)
	if err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	_ = cmd.Wait()
	if len(acked) == clients*batches*perBatch {
		t.Fatalf("every batch was acknowledged before the kill; the test proves nothing")
	}

	s, db, err := openService(dir, frontierapi.Config{Delay: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	defer s.Close()
	queued := map[string]bool{}
	for {
		l, err := s.Next(context.Background(), "drain", frontierapi.MaxBatchSize, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(l.URLs) == 0 {
			break
		}
		var rs []frontierapi.Result
		for _, u := range l.URLs {
			queued[u.URL] = true
			rs = append(rs, frontierapi.Result{URL: u.URL, Status: frontierapi.ResultSuccess, HTTPStatus: 200})
		}
		if _, err := s.Settle(frontierapi.ResultsRequest{LeaseID: l.LeaseID, Results: rs}); err != nil {
			t.Fatal(err)
		}
	}
	lost := 0
	for _, u := range acked {
		if !queued[u] {
			lost++
		}
	}
	if lost > 0 {
		t.Fatalf("%d of %d acknowledged URLs lost after kill -9", lost, len(acked))
	}
	// The seen set survived too: resubmitting acknowledged URLs finds
	// duplicates only.
	req := frontierapi.SubmitRequest{}
	for _, u := range acked[:min(len(acked), 500)] {
		req.URLs = append(req.URLs, frontierapi.SubmitURL{URL: u})
	}
	resp, err := s.Submit(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Duplicates != len(req.URLs) {
		t.Fatalf("resubmitted %d acknowledged URLs after restart: %d accepted, %d duplicates", len(req.URLs), resp.Accepted, resp.Duplicates)
	}
	t.Logf("%d acknowledged before kill -9, all %d queued after restart (%d queued in all)", len(acked), len(acked), len(queued))
}

// runWorkerProcess is a crawl worker: it leases URLs from the service,
// fetches them from the synthetic web at webAddr, extracts links, submits
// them and settles its leases, until the service has nothing queued or
// leased. It returns the number of pages it fetched.
func runWorkerProcess(service, webAddr, id string) (int, error) {
	dialer := &net.Dialer{}
	hc := &http.Client{
		Transport: &http.Transport{
			// Every virtual host of the synthetic web lives at webAddr.
			DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
				return dialer.DialContext(ctx, network, webAddr)
			},
			MaxIdleConnsPerHost: 4,
		},
		Timeout: 20 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse // redirects are links like any other
		},
	}
	c := frontierapi.NewClient(service, token, nil)
	ctx := context.Background()
	fetched, idle := 0, 0
	for idle < 3 {
		l, err := c.Next(ctx, id, 4, 200*time.Millisecond)
		if err != nil {
			return fetched, err
		}
		if len(l.URLs) == 0 {
			st, err := c.Stats(ctx)
			if err != nil {
				return fetched, err
			}
			if st.Frontier.InMemory == 0 && st.Leased == 0 {
				idle++
			} else {
				idle = 0
			}
			continue
		}
		idle = 0
		var results []frontierapi.Result
		for _, u := range l.URLs {
			res, links := fetchOne(ctx, hc, u)
			fetched++
			if len(links) > 0 {
				// Links first, then the result: the service then never
				// looks empty while this page's links are on their way.
				if _, err := c.Submit(ctx, frontierapi.SubmitRequest{URLs: links}); err != nil {
					return fetched, err
				}
			}
			results = append(results, res)
		}
		if _, err := c.Results(ctx, frontierapi.ResultsRequest{LeaseID: l.LeaseID, WorkerID: id, Results: results}); err != nil {
			return fetched, err
		}
	}
	return fetched, nil
}

func fetchOne(ctx context.Context, hc *http.Client, u frontierapi.LeasedURL) (frontierapi.Result, []frontierapi.SubmitURL) {
	start := time.Now()
	res := frontierapi.Result{URL: u.URL}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.URL, nil)
	if err != nil {
		res.Status, res.Error = frontierapi.ResultError, err.Error()
		return res, nil
	}
	req.Header.Set("User-Agent", "crawlkit/1.0 (+https://example.com/bot)")
	resp, err := hc.Do(req)
	if err != nil {
		res.Status, res.ErrorKind, res.Error = frontierapi.ResultError, frontierapi.KindNetwork, err.Error()
		return res, nil
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	res.HTTPStatus, res.DurationMS, res.Bytes = resp.StatusCode, time.Since(start).Milliseconds(), int64(len(body))
	if err != nil {
		res.Status, res.ErrorKind, res.Error = frontierapi.ResultError, frontierapi.KindNetwork, err.Error()
		return res, nil
	}
	var links []frontierapi.SubmitURL
	if loc := resp.Header.Get("Location"); resp.StatusCode/100 == 3 && loc != "" {
		if abs, err := urlnorm.ResolveString(u.URL, loc); err == nil {
			links = append(links, frontierapi.SubmitURL{URL: abs, SourceURL: u.URL, Depth: u.Depth + 1})
		}
	}
	if resp.StatusCode/100 != 2 && resp.StatusCode/100 != 3 {
		res.Status, res.ErrorKind, res.Error = frontierapi.ResultError, frontierapi.KindHTTP, resp.Status
		return res, links
	}
	res.Status = frontierapi.ResultSuccess
	sum := sha256.Sum256(body)
	res.ContentHash = "sha256:" + hex.EncodeToString(sum[:])
	doc, err := extract.ExtractBytes(body, u.URL, resp.Header)
	if err != nil {
		return res, links
	}
	res.SimHash = strconv.FormatUint(simhash.Fingerprint(doc.Text), 16)
	for _, ln := range doc.Links {
		if ln.Kind != extract.KindA || !ln.Follow {
			continue
		}
		// Scope: the synthetic web only.
		if h, err := urlnorm.HostOf(ln.URL); err != nil || !strings.HasSuffix(h, ".test") {
			continue
		}
		links = append(links, frontierapi.SubmitURL{URL: ln.URL, SourceURL: u.URL, Depth: u.Depth + 1})
	}
	res.LinksFound = len(links)
	return res, links
}

// TestTwoWorkerProcesses drains a crawl of the synthetic web through the
// service with two workers in separate processes, and checks the crawl
// against the web's ground truth and its server-side accounting.
func TestTwoWorkerProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	web, err := crawltest.NewWeb(crawltest.Config{Hosts: 8, PagesPerHost: 12, LinksPerPage: 6, Seed: 11, CrawlDelay: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer web.Close()
	// The web has a host whose robots.txt is always unavailable: its URLs
	// wait for the file until the cache gives up on it and its fallback
	// disallows them, which lets the crawl drain.
	cache := robots.NewCache(robots.Config{Client: web.Client(), UserAgent: "crawlkit/1.0", MinRetry: 20 * time.Millisecond, MaxRetry: 100 * time.Millisecond,
		UnreachableLimit: 300 * time.Millisecond, Fallback: robots.FallbackDisallowAll})
	s, err := frontierapi.New(frontierapi.Config{
		Token: token, Robots: cache, Traps: trap.New(trap.Config{}), Delay: -1,
		Frontier: frontier.Config{RetryBase: 20 * time.Millisecond, RetryMax: 100 * time.Millisecond},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ts := httptest.NewServer(s)
	defer ts.Close()
	var seeds []frontierapi.SubmitURL
	for _, u := range web.Seeds() {
		seeds = append(seeds, frontierapi.SubmitURL{URL: u})
	}
	if _, err := s.Submit(frontierapi.SubmitRequest{URLs: seeds}); err != nil {
		t.Fatal(err)
	}

	type worker struct {
		cmd *exec.Cmd
		out *bufio.Reader
	}
	var ws []worker
	for i := range 2 {
		cmd, out := child(t, "worker", "HELPER_SERVICE="+ts.URL, "HELPER_WEB="+web.Addr(), fmt.Sprintf("HELPER_WORKER=w%d", i))
		ws = append(ws, worker{cmd, out})
	}
	counts := make([]int, len(ws))
	for i, w := range ws {
		rest, _ := io.ReadAll(w.out)
		if err := w.cmd.Wait(); err != nil {
			t.Fatalf("worker %d: %v", i, err)
		}
		for _, line := range bytes.Split(rest, []byte("\n")) {
			if n, ok := strings.CutPrefix(string(line), "FETCHED "); ok {
				counts[i], _ = strconv.Atoi(n)
			}
		}
		if counts[i] == 0 {
			t.Errorf("worker %d fetched nothing", i)
		}
	}

	report := web.Report()
	var fetched []string
	for u := range report.PerPage {
		fetched = append(fetched, u)
	}
	truth := web.Truth()
	if missing := truth.Missing(fetched); len(missing) > 0 {
		t.Errorf("%d of %d unique truth pages not fetched, e.g. %v", len(missing), len(truth.Unique()), missing[:min(5, len(missing))])
	}
	if report.RobotsViolations != 0 || report.BeforeRobots != 0 {
		t.Errorf("robots violations %d (%v), requests before robots.txt %d", report.RobotsViolations, report.RobotsViolationURLs, report.BeforeRobots)
	}
	if v := report.PolitenessViolations(); v != 0 {
		t.Errorf("politeness violations: %d spacing, %d concurrency", report.SpacingViolations, report.ConcurrencyViolations)
	}
	if d := report.DuplicateFetches(); d != 0 {
		t.Errorf("%d duplicate fetches", d)
	}
	st := s.Stats()
	if st.Leased != 0 || st.Frontier.InMemory != 0 {
		t.Errorf("service not drained: %+v", st.Frontier)
	}
	t.Logf("workers fetched %v pages; truth has %d unique pages; %d requests; trap fetches %d; service: %d fetched, %d blocked by robots, %d trap-rejected, %d content duplicates reported",
		counts, len(truth.Unique()), report.Requests, report.TrapFetches, st.URLs.Fetched, st.URLs.BlockedByRobots, st.URLs.TrapRejected, st.URLs.Duplicates)
}
