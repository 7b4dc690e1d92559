package distributed_test

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/crawlkit/crawlkit/crawltest"
)

// child is a process running this test binary in a role.
type child struct {
	name   string
	cmd    *exec.Cmd
	logf   string
	lines  chan string // stdout, line by line
	exited chan struct{}
	err    error

	mu  sync.Mutex
	out []string
}

func startChild(t testing.TB, name, role string, args ...string) *child {
	t.Helper()
	b, _ := json.Marshal(args)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), roleEnv+"="+role, argsEnv+"="+string(b))
	dieWithParent(cmd)
	// DISTRIBUTED_TEST_LOGDIR keeps the children's logs there;
	// DISTRIBUTED_TEST_LOGLEVEL sets the nodes' -log-level (default info).
	dir := os.Getenv("DISTRIBUTED_TEST_LOGDIR")
	if dir == "" {
		dir = t.TempDir()
	}
	logf := filepath.Join(dir, name+".log")
	lf, err := os.Create(logf)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = lf
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &child{name: name, cmd: cmd, logf: logf, lines: make(chan string, 64), exited: make(chan struct{})}
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			c.mu.Lock()
			c.out = append(c.out, sc.Text())
			c.mu.Unlock()
			select {
			case c.lines <- sc.Text():
			default:
			}
		}
		c.err = cmd.Wait()
		lf.Close()
		close(c.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-c.exited:
		default:
			_ = cmd.Process.Kill()
			<-c.exited
		}
		if t.Failed() {
			b, _ := os.ReadFile(logf)
			lines := strings.Split(string(b), "\n")
			t.Logf("--- %s log (last 30 lines):\n%s", name, strings.Join(lines[max(0, len(lines)-30):], "\n"))
		}
	})
	return c
}

// waitLine waits for a stdout line with prefix and returns its rest.
func (c *child) waitLine(t testing.TB, prefix string, timeout time.Duration) string {
	t.Helper()
	deadline := time.After(timeout)
	for {
		select {
		case l := <-c.lines:
			if rest, ok := strings.CutPrefix(l, prefix); ok {
				return rest
			}
		case <-c.exited:
			t.Fatalf("%s exited (%v) before printing %q", c.name, c.err, prefix)
		case <-deadline:
			t.Fatalf("%s printed no %q within %v", c.name, prefix, timeout)
		}
	}
}

// output returns the stdout line with prefix, if any.
func (c *child) output(prefix string) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, l := range c.out {
		if rest, ok := strings.CutPrefix(l, prefix); ok {
			return rest, true
		}
	}
	return "", false
}

func (c *child) wait(t testing.TB, timeout time.Duration) {
	t.Helper()
	select {
	case <-c.exited:
		if c.err != nil {
			t.Errorf("%s: %v", c.name, c.err)
		}
	case <-time.After(timeout):
		t.Fatalf("%s did not finish within %v", c.name, timeout)
	}
}

// killTestWeb is the web of the kill tests (failoverWeb, seed 12).
func killTestWeb(t testing.TB) *crawltest.Web { return failoverWeb(t, 12, nil) }

// Bounds of the kill tests' phases. On the loaded 2-core machine a cluster
// of three server processes plus three -race node processes took over a
// minute just to set up the stream's 64 R3 consumers, and 2 minutes to the
// first quarter of the pages was once not enough.
const (
	firstQuarterTimeout = 4 * time.Minute // without a new fetch (see waitFetches)
	finishTimeout       = 5 * time.Minute // from the kill
)

// nodeArgs are the crawl node flags of the kill tests.
func nodeArgs(t testing.TB, web *crawltest.Web, natsURL, crawlID, id string, replicas int) []string {
	seeds := filepath.Join(t.TempDir(), "seeds.txt")
	if err := os.WriteFile(seeds, []byte(strings.Join(web.Seeds(), "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	return []string{
		"-nats", natsURL, "-id", id, "-crawl", crawlID, "-partitions", "64", "-replicas", strconv.Itoa(replicas),
		"-seeds-file", seeds, "-user-agent", testAgent, "-workers", "16",
		"-delay", "50ms", "-max-crawl-delay", "1s", "-handover-hold", "1s",
		"-member-ttl", "2s", "-ack-wait", "4s", "-retry-base", "200ms", "-robots-retries", "-1",
		"-allow-private", "127.0.0.0/8", "-route-tld", "test=" + web.Addr(), "-http", "127.0.0.1:0",
		"-log-level", cmp.Or(os.Getenv("DISTRIBUTED_TEST_LOGLEVEL"), "info"), "-dup-window", "1s",
		// Snapshots and purges while the nodes crawl and die: a partition
		// here gets tens of messages.
		"-snapshot-every", "20",
	}
}

// pageFetches is the number of page requests the web has answered.
func pageFetches(web *crawltest.Web) int {
	n := 0
	for _, c := range web.Report().PerPage {
		n += c
	}
	return n
}

// waitFetches polls the web's accounting until it has answered n page
// requests.
//
// It fails when no new page was fetched for timeout, or after three times
// timeout in all: the loaded machine can take minutes to set the cluster
// up, and a crawl that still advances is slow, not stuck.
func waitFetches(t *testing.T, web *crawltest.Web, n int, timeout time.Duration) {
	t.Helper()
	start := time.Now()
	last, lastAt := pageFetches(web), start
	for {
		got := pageFetches(web)
		if got >= n {
			return
		}
		now := time.Now()
		if got > last {
			last, lastAt = got, now
		}
		if now.Sub(lastAt) > timeout || now.Sub(start) > 3*timeout {
			t.Fatalf("only %d of %d page fetches after %v (the last new one %v ago)",
				got, n, now.Sub(start).Round(time.Second), now.Sub(lastAt).Round(time.Second))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func logNodeStats(t *testing.T, nodes ...*child) {
	for _, c := range nodes {
		if s, ok := c.output("stats "); ok {
			t.Logf("%s: %s", c.name, s)
		}
	}
}

// TestKillNode runs three node processes on an embedded server, kills one
// with SIGKILL after about a quarter of the pages, and checks the crawl
// against the ground truth.
func TestKillNode(t *testing.T) {
	web := killTestWeb(t)
	url := embeddedNATS(t)
	truthPages := len(web.TruthFor(testToken, 0).URLs())
	var nodes []*child
	for i := range 3 {
		id := fmt.Sprintf("n%d", i+1)
		nodes = append(nodes, startChild(t, id, "node", nodeArgs(t, web, url, "kill", id, 1)...))
	}
	waitFetches(t, web, truthPages/4, firstQuarterTimeout)
	victim := nodes[1]
	if err := victim.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-victim.exited
	killedAt := pageFetches(web)
	start := time.Now()
	for _, c := range []*child{nodes[0], nodes[2]} {
		c.wait(t, finishTimeout)
	}
	t.Logf("killed %s at %d page fetches of ~%d; the others finished %v later", victim.name, killedAt, truthPages, time.Since(start).Round(time.Millisecond))
	logNodeStats(t, nodes[0], nodes[2])
	checkCrawl(t, web, 0.01)
}

// freePorts returns n free loopback ports.
func freePorts(t testing.TB, n int) []int {
	var ls []net.Listener
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	for _, l := range ls {
		l.Close()
	}
	return ports
}

// TestKillStreamLeader runs three node processes on a three-server cluster
// (R3 stream and buckets), kills the server leading the URL stream with
// SIGKILL after about a quarter of the pages, and checks the crawl against
// the ground truth.
//
// It was opt-in for a while (it failed about one run in two on the loaded
// 2-core CI machine); README.md, "Fencing", says what was fixed.
func TestKillStreamLeader(t *testing.T) {
	web := killTestWeb(t)
	truthPages := len(web.TruthFor(testToken, 0).URLs())
	natsURL, servers := natsCluster(t)
	var nodes []*child
	for i := range 3 {
		id := fmt.Sprintf("n%d", i+1)
		nodes = append(nodes, startChild(t, id, "node", nodeArgs(t, web, natsURL, "leader", id, 0)...)) // replicas by the cluster: 3
	}
	waitFetches(t, web, truthPages/4, firstQuarterTimeout)
	leader := killStreamLeader(t, natsURL, "CRAWL_leader", servers)
	killedAt := pageFetches(web)
	start := time.Now()
	for _, c := range nodes {
		c.wait(t, finishTimeout)
	}
	t.Logf("killed stream leader %s at %d page fetches of ~%d; the nodes finished %v later", leader, killedAt, truthPages, time.Since(start).Round(time.Millisecond))
	logNodeStats(t, nodes...)
	checkCrawl(t, web, 0.01)
}

// natsCluster starts three server processes in one cluster and returns
// their client URLs, comma-separated, and the servers by name.
func natsCluster(t *testing.T) (string, map[string]*child) {
	ports := freePorts(t, 6)
	var routes, urls []string
	for i := range 3 {
		routes = append(routes, fmt.Sprintf("nats-route://127.0.0.1:%d", ports[3+i]))
		urls = append(urls, fmt.Sprintf("nats://127.0.0.1:%d", ports[i]))
	}
	servers := map[string]*child{}
	for i := range 3 {
		name := fmt.Sprintf("s%d", i+1)
		servers[name] = startChild(t, name, "natsd", "-name", name, "-port", strconv.Itoa(ports[i]),
			"-store", t.TempDir(), "-cluster", "crawl", "-cluster-port", strconv.Itoa(ports[3+i]),
			"-routes", strings.Join(routes, ","))
	}
	for _, s := range servers {
		s.waitLine(t, "ready ", time.Minute)
	}
	return strings.Join(urls, ","), servers
}

// killStreamLeader kills, with SIGKILL, the server leading stream (which
// must have 3 replicas), waits for it to exit and returns its name.
func killStreamLeader(t *testing.T, natsURL, stream string, servers map[string]*child) string {
	nc, err := nats.Connect(natsURL)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := js.Stream(ctx, stream)
	var leader string
	if err == nil {
		var info *jetstream.StreamInfo
		if info, err = s.Info(ctx); err == nil && info.Cluster != nil {
			leader = info.Cluster.Leader
			if info.Config.Replicas != 3 {
				t.Errorf("the nodes made the stream with %d replicas on a 3-server cluster, want 3", info.Config.Replicas)
			}
		}
	}
	if err != nil || servers[leader] == nil {
		t.Fatalf("stream leader %q: %v", leader, err)
	}
	nc.Close()
	t.Logf("killing the stream leader %s at %s", leader, time.Now().UTC().Format("15:04:05.000"))
	if err := servers[leader].cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-servers[leader].exited
	return leader
}

// TestGracefulLeave stops one of three nodes with SIGTERM mid-crawl: it
// must hand its partitions back and exit promptly, and the others must
// finish the crawl with the same checks (and no duplicate fetch beyond the
// ones a kill could cause).
func TestGracefulLeave(t *testing.T) {
	web := killTestWeb(t)
	url := embeddedNATS(t)
	truthPages := len(web.TruthFor(testToken, 0).URLs())
	var nodes []*child
	for i := range 3 {
		id := fmt.Sprintf("n%d", i+1)
		nodes = append(nodes, startChild(t, id, "node", nodeArgs(t, web, url, "leave", id, 1)...))
	}
	waitFetches(t, web, truthPages/4, firstQuarterTimeout)
	leaver := nodes[1]
	if err := leaver.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	leaver.wait(t, time.Minute)
	t.Logf("%s left %v after SIGTERM", leaver.name, time.Since(start).Round(time.Millisecond))
	s, ok := leaver.output("stats ")
	if !ok {
		t.Fatalf("%s printed no stats", leaver.name)
	}
	var st struct {
		Queue struct {
			Acquired, Released int64
			Owned              []int
		} `json:"queue"`
	}
	if err := json.Unmarshal([]byte(s), &st); err != nil {
		t.Fatal(err)
	}
	if st.Queue.Acquired == 0 || st.Queue.Released != st.Queue.Acquired || len(st.Queue.Owned) != 0 {
		t.Errorf("%s acquired %d partitions, released %d, still owns %v", leaver.name, st.Queue.Acquired, st.Queue.Released, st.Queue.Owned)
	}
	for _, c := range []*child{nodes[0], nodes[2]} {
		c.wait(t, finishTimeout)
	}
	checkCrawl(t, web, 0.01)
}
