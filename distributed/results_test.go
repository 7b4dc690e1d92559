package distributed_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/crawlkit/crawlkit/distributed"
)

// crashingWriter is the "results-crash" role (args: NATS URL, crawl id,
// directory, n): a results writer that exits, without acknowledging the
// batch, once it has written n lines. The messages of that batch are in
// its files and still pending in the consumer: the next writer gets them
// again and must skip them.
func crashingWriter(ctx context.Context, args []string) error {
	if len(args) != 4 {
		return fmt.Errorf("results-crash: want URL, crawl, dir, n; got %q", args)
	}
	n, err := strconv.Atoi(args[3])
	if err != nil {
		return err
	}
	w, err := distributed.OpenResultsWriter(args[2])
	if err != nil {
		return err
	}
	nc, err := nats.Connect(args[0])
	if err != nil {
		return err
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	return distributed.ConsumeResults(ctx, js, args[1], distributed.ResultsConfig{}, func(lines [][]byte) error {
		err := w.Write(lines)
		if err == nil && w.Written >= n {
			fmt.Printf("crashing after %d lines\n", w.Written)
			os.Exit(3)
		}
		return err
	})
}

// resultLines counts the complete lines in dir's results files (a file
// being written may end in part of one).
func resultLines(t testing.TB, dir string) int {
	files, _ := filepath.Glob(filepath.Join(dir, "results-*.jsonl"))
	n := 0
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		n += bytes.Count(b, []byte{'\n'})
	}
	return n
}

// TestResultsExactlyOnceAfterKills runs three nodes that publish their
// pages' Results and a results writer, kills a node with SIGKILL after a
// quarter of the pages and the writer after it has written some, runs a
// writer that exits between a write and its ack, then a last writer on the
// same directory until the crawl is done, and checks that the last one
// skipped the redelivered batch and that every page of
// the truth is in the output exactly once, besides the usual checks of the
// crawl.
func TestResultsExactlyOnceAfterKills(t *testing.T) {
	web := killTestWeb(t)
	url := embeddedNATS(t)
	truth := web.TruthFor(testToken, 0).URLs()
	out := t.TempDir()
	resultsArgs := []string{"-nats", url, "-crawl", "results", "-out", out, "-until-done"}
	writer := startChild(t, "results1", "results", resultsArgs...)
	var nodes []*child
	for i := range 3 {
		id := "n" + string(rune('1'+i))
		nodes = append(nodes, startChild(t, id, "node", append(nodeArgs(t, web, url, "results", id, 1), "-results")...))
	}
	waitFetches(t, web, len(truth)/4, firstQuarterTimeout)
	victim := nodes[1]
	if err := victim.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-victim.exited
	t.Logf("killed %s at %d page fetches of ~%d", victim.name, pageFetches(web), len(truth))

	// Kill the writer once it has written a few hundred lines more.
	target := resultLines(t, out) + 300
	deadline := time.Now().Add(finishTimeout)
	for resultLines(t, out) < target && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if err := writer.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-writer.exited
	t.Logf("killed the writer at %d lines", resultLines(t, out))
	// A writer that dies between its write and its ack, for sure.
	crasher := startChild(t, "results-crash", "results-crash", url, "results", out, "200")
	select {
	case <-crasher.exited:
	case <-time.After(2 * time.Minute):
		t.Fatal("the crashing writer wrote no 200 lines within 2 minutes")
	}
	if _, ok := crasher.output("crashing after "); !ok {
		t.Fatalf("the crashing writer did not crash after a write (%v)", crasher.err)
	}
	t.Logf("a writer crashed after a write, before its ack, at %d lines", resultLines(t, out))
	writer = startChild(t, "results3", "results", resultsArgs...)

	for _, c := range []*child{nodes[0], nodes[2]} {
		c.wait(t, finishTimeout)
	}
	writer.wait(t, time.Minute)
	s, ok := writer.output("results ")
	t.Logf("last writer: %s", s)
	var written, skipped, total int
	if _, err := fmt.Sscanf(s, "written=%d skipped=%d total=%d", &written, &skipped, &total); !ok || err != nil {
		t.Errorf("last writer's summary %q: %v", s, err)
	} else if skipped == 0 {
		t.Error("the last writer skipped nothing: the crashed writer's unacknowledged batch was not delivered again")
	}
	logNodeStats(t, nodes[0], nodes[2])
	checkCrawl(t, web, 0.01)

	checkResultsOnce(t, out, truth)
}

// checkResultsOnce checks the results a writer put in out: every record
// id once, and a record for every page of the truth.
func checkResultsOnce(t *testing.T, out string, truth []string) {
	t.Helper()
	byID := map[string]int{}
	byURL := map[string]int{}
	for _, r := range readResults(t, out) {
		byID[r.ID]++
		byURL[r.URL]++
		if r.FinalURL != "" && r.FinalURL != r.URL {
			byURL[r.FinalURL] += 0 // present as a redirect target
		}
	}
	dups := 0
	for id, n := range byID {
		if n > 1 {
			dups++
			t.Errorf("id %s written %d times", id, n)
			if dups > 5 {
				break
			}
		}
	}
	var missing []string
	for _, u := range truth {
		if _, ok := byURL[u]; !ok {
			missing = append(missing, u)
		}
	}
	t.Logf("results: %d lines, %d distinct ids, %d distinct URLs; %d of %d truth pages missing",
		len(readResults(t, out)), len(byID), len(byURL), len(missing), len(truth))
	if len(missing) > 0 {
		t.Errorf("%d truth pages have no result, e.g. %v", len(missing), missing[:min(5, len(missing))])
	}
}
