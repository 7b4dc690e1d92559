package distributed_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/crawltest"
	"github.com/crawlkit/crawlkit/distributed"
	"github.com/crawlkit/crawlkit/service/dashboard"
)

// readStatus runs the crawlstats command with -json.
func readStatus(t *testing.T, natsURL, crawlID string) distributed.ClusterStatus {
	t.Helper()
	cs, err := tryReadStatus(natsURL, crawlID)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

func tryReadStatus(natsURL, crawlID string) (distributed.ClusterStatus, error) {
	var out, errOut bytes.Buffer
	var cs distributed.ClusterStatus
	if err := distributed.RunStatsCommand(context.Background(), []string{"-nats", natsURL, "-crawl", crawlID, "-json"}, &out, &errOut); err != nil {
		return cs, fmt.Errorf("crawlstats -json: %w\n%s", err, errOut.String())
	}
	if err := json.Unmarshal(out.Bytes(), &cs); err != nil {
		return cs, fmt.Errorf("crawlstats -json printed %q: %w", out.String(), err)
	}
	return cs, nil
}

// checkStatus checks what any reading of a cluster must satisfy: lag is
// the sum of the partitions', a partition's last message is not past the
// stream's, and the totals sum the nodes. (A partition's ack floor may be
// past its last message: with nothing pending the server moves it over
// the other partitions' messages.)
func checkStatus(t *testing.T, cs distributed.ClusterStatus) {
	t.Helper()
	var lag uint64
	for _, p := range cs.Partitions {
		if p.Error != "" {
			t.Errorf("partition %d: %s", p.ID, p.Error)
		}
		if p.Lag != p.Pending+uint64(p.AckPending) {
			t.Errorf("partition %d: lag %d, pending %d + ack pending %d", p.ID, p.Lag, p.Pending, p.AckPending)
		}
		if p.LastSeq > cs.LastSeq {
			t.Errorf("partition %d: last seq %d, stream last seq %d", p.ID, p.LastSeq, cs.LastSeq)
		}
		lag += p.Lag
	}
	if lag != cs.Lag {
		t.Errorf("lag %d, partitions sum to %d", cs.Lag, lag)
	}
	var fetched int64
	for _, n := range cs.Nodes {
		fetched += n.Fetched
	}
	if fetched != cs.Totals.URLs.Fetched {
		t.Errorf("totals: %d fetched, the nodes %d", cs.Totals.URLs.Fetched, fetched)
	}
}

// TestClusterView runs three nodes of one crawl in this process and reads
// the cluster with crawlstats (JSON, text and its dashboard) while they
// crawl and after they have finished.
func TestClusterView(t *testing.T) {
	web := newWeb(t, crawltest.Config{Hosts: 60, PagesPerHost: 8, Seed: 21, Agent: testToken,
		MinGap: 50 * time.Millisecond, CrawlDelay: 300 * time.Millisecond})
	url := embeddedNATS(t)
	const crawlID, partitions = "view", 12
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	ids := []string{"node-a", "node-b", "node-c"}
	var wg sync.WaitGroup
	errs := make([]error, len(ids))
	for i, id := range ids {
		node, err := distributed.NewNode(distributed.Config{
			NATSURL: url, NodeID: id, CrawlID: crawlID, Partitions: partitions,
			MemberTTL: 2 * time.Second, AckWait: 4 * time.Second, RetryBase: 200 * time.Millisecond, HandoverHold: time.Second,
			Crawler: crawlkit.Config{
				UserAgent: testAgent, Seeds: web.Seeds(), Workers: 8, Delay: 50 * time.Millisecond, MaxCrawlDelay: time.Second,
				DialContext: web.DialContext, AllowPrivate: loopback, RobotsRetries: -1,
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(node.Handler())
		defer srv.Close()
		node.SetHTTPAddr(srv.Listener.Addr().String())
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = node.Run(ctx) }()
	}

	// While they crawl: every node answers with fetches of its own, and
	// every partition has one owner.
	var during distributed.ClusterStatus
	sawLag := false
	for deadline := time.Now().Add(2 * time.Minute); ; {
		cs, err := tryReadStatus(url, crawlID)
		if err != nil {
			// The first node has not made the stream and buckets yet.
			if time.Now().After(deadline) {
				t.Fatal(err)
			}
			time.Sleep(200 * time.Millisecond)
			continue
		}
		checkStatus(t, cs)
		sawLag = sawLag || cs.Lag > 0
		ready := len(cs.Nodes) == len(ids) && len(cs.Partitions) == partitions
		owners := map[int]int{}
		for _, n := range cs.Nodes {
			ready = ready && n.Error == "" && n.Fetched > 0
			for _, p := range n.Owned {
				owners[p]++
			}
		}
		for _, p := range cs.Partitions {
			ready = ready && owners[p.ID] == 1 && p.Owner != ""
		}
		if ready {
			during = cs
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no reading with three nodes fetching and one owner per partition; last: %+v", cs)
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Logf("during the crawl: lag %d, fetched %d, stream last seq %d", during.Lag, during.Totals.URLs.Fetched, during.LastSeq)
	for _, n := range during.Nodes {
		t.Logf("node %s: %d partitions, %d held, %d fetched, %.1f pages/s", n.ID, len(n.Owned), n.Held, n.Fetched, n.Rate)
		if n.Stats.URLs.Fetched != n.Fetched || len(n.Owned) != len(n.Queue.Owned) {
			t.Errorf("node %s: fields disagree with its stats: %+v", n.ID, n)
		}
	}
	for _, p := range during.Partitions {
		found := false
		for _, n := range during.Nodes {
			for _, o := range n.Owned {
				found = found || (o == p.ID && n.ID == p.Owner)
			}
		}
		if !found {
			t.Errorf("partition %d: owner %q does not list it", p.ID, p.Owner)
		}
	}

	var text, errOut bytes.Buffer
	if err := distributed.RunStatsCommand(ctx, []string{"-nats", url, "-crawl", crawlID}, &text, &errOut); err != nil {
		t.Fatalf("crawlstats: %v\n%s", err, errOut.String())
	}
	if want := fmt.Sprintf("crawl %s: 3 nodes, %d partitions", crawlID, partitions); !strings.HasPrefix(text.String(), want) {
		t.Errorf("crawlstats text starts %q, want %q", firstLine(text.String()), want)
	}
	for _, id := range ids {
		if !strings.Contains(text.String(), "\n"+id+" ") {
			t.Errorf("crawlstats text has no line for %s:\n%s", id, text.String())
		}
	}

	// The dashboard of crawlstats -http shows the cluster.
	sctx, stopServe := context.WithCancel(ctx)
	pr, pw := io.Pipe()
	served := make(chan error, 1)
	go func() {
		served <- distributed.RunStatsCommand(sctx, []string{"-nats", url, "-crawl", crawlID, "-http", "127.0.0.1:0", "-interval", "200ms"}, pw, io.Discard)
		pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "http ") {
		t.Fatalf("crawlstats -http printed %q, %v", line, err)
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	base := "http://" + strings.TrimSpace(strings.TrimPrefix(line, "http "))
	var snap struct {
		Snapshot dashboard.Snapshot `json:"snapshot"`
	}
	getURLJSON(t, base+"/api/snapshot", &snap)
	if c := snap.Snapshot.Cluster; c == nil || len(c.Nodes) != 3 || len(c.Partitions) != partitions {
		t.Errorf("dashboard snapshot's cluster: %+v", c)
	}
	var served1 distributed.ClusterStatus
	getURLJSON(t, base+"/cluster", &served1)
	if len(served1.Nodes) != 3 {
		t.Errorf("/cluster: %d nodes, want 3", len(served1.Nodes))
	}
	stopServe()
	if err := <-served; err != nil {
		t.Errorf("crawlstats -http: %v", err)
	}

	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("%s: %v", ids[i], err)
		}
	}
	checkCrawl(t, web, 0.01)
	if !sawLag {
		t.Error("no reading during the crawl showed any lag")
	}
	// Finished: nothing lags, every partition is acknowledged up to its
	// last message, and the nodes have left.
	after := readStatus(t, url, crawlID)
	checkStatus(t, after)
	if after.Lag != 0 || len(after.Nodes) != 0 {
		t.Errorf("after the crawl: lag %d, %d nodes", after.Lag, len(after.Nodes))
	}
	for _, p := range after.Partitions {
		if p.AckFloor < p.LastSeq {
			t.Errorf("after the crawl: partition %d acknowledged up to %d of %d", p.ID, p.AckFloor, p.LastSeq)
		}
	}
}

func firstLine(s string) string { l, _, _ := strings.Cut(s, "\n"); return l }

func getURLJSON(t *testing.T, u string, v any) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s: %s", u, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("%s: %v", u, err)
	}
}
