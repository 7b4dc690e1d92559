package distributed_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/distributed"
)

func resultLine(t testing.TB, id, url string) []byte {
	b, err := json.Marshal(distributed.Result{ID: id, Node: "n", PageRecord: crawlkit.PageRecord{URL: url, Status: 200}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// readResults returns the Results in dir's files, in file order.
func readResults(t testing.TB, dir string) []distributed.Result {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "results-*.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var out []distributed.Result
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range splitLines(b) {
			var r distributed.Result
			if err := json.Unmarshal(line, &r); err != nil {
				t.Fatalf("%s: %v in %q", name, err, line)
			}
			out = append(out, r)
		}
	}
	return out
}

func splitLines(b []byte) [][]byte {
	var out [][]byte
	for len(b) > 0 {
		i := 0
		for i < len(b) && b[i] != '\n' {
			i++
		}
		if i > 0 {
			out = append(out, b[:i])
		}
		b = b[min(i+1, len(b)):]
	}
	return out
}

// TestResultsWriterWritesEachIDOnce checks the writer's side of
// exactly-once: a batch repeating an ID, a redelivery after a restart, and
// a line cut short by a crash (cut off at Open, written again when it is
// redelivered).
func TestResultsWriterWritesEachIDOnce(t *testing.T) {
	dir := t.TempDir()
	w, err := distributed.OpenResultsWriter(dir)
	if err != nil {
		t.Fatal(err)
	}
	a, b, c := resultLine(t, "a", "http://x.test/a"), resultLine(t, "b", "http://x.test/b"), resultLine(t, "c", "http://x.test/c")
	if err := w.Write([][]byte{a, b, a}); err != nil {
		t.Fatal(err)
	}
	if w.Written != 2 || w.Skipped != 1 {
		t.Errorf("written %d, skipped %d; want 2, 1", w.Written, w.Skipped)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	// A crash in the middle of writing c: half a line, never acknowledged.
	torn := filepath.Join(dir, "results-00001.jsonl")
	f, err := os.OpenFile(torn, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write(c[:len(c)/2])
	f.Close()

	w, err = distributed.OpenResultsWriter(dir)
	if err != nil {
		t.Fatal(err)
	}
	if w.Len() != 2 || !w.Has("a") || !w.Has("b") || w.Has("c") {
		t.Fatalf("reopened: %d IDs (a %v, b %v, c %v), want a and b", w.Len(), w.Has("a"), w.Has("b"), w.Has("c"))
	}
	// The redeliveries of everything unacknowledged, and then some.
	if err := w.Write([][]byte{b, c, a}); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if w.Written != 1 || w.Skipped != 2 {
		t.Errorf("after restart: written %d, skipped %d; want 1, 2", w.Written, w.Skipped)
	}
	got := map[string]int{}
	for _, r := range readResults(t, dir) {
		got[r.ID]++
	}
	if len(got) != 3 || got["a"] != 1 || got["b"] != 1 || got["c"] != 1 {
		t.Errorf("files hold %v, want a, b and c once each", got)
	}
	if err := w.Write([][]byte{[]byte("{}")}); err == nil {
		t.Error("a line without an id was accepted")
	}
}
