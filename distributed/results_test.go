package distributed_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"
)

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
// quarter of the pages and the writer after it has written some (then
// starts it again on the same directory), and checks that every page of
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
	writer = startChild(t, "results2", "results", resultsArgs...)

	for _, c := range []*child{nodes[0], nodes[2]} {
		c.wait(t, finishTimeout)
	}
	writer.wait(t, time.Minute)
	if s, ok := writer.output("results "); ok {
		t.Logf("second writer: %s", s)
	}
	logNodeStats(t, nodes[0], nodes[2])
	checkCrawl(t, web, 0.02)

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
