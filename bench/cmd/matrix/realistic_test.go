package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crawlkit/crawlkit/bench/internal/harness"
)

// A "{tmpdir}" flag value becomes a new directory, removed by the cleanup.
func TestVariantTmpdir(t *testing.T) {
	v := variant{Name: "durable", Cmd: "crawlkit", Args: []string{"-data-dir", "{tmpdir}"}}
	args, cleanup, err := v.args()
	if err != nil {
		t.Fatal(err)
	}
	if len(args) != 2 || args[0] != "-data-dir" || args[1] == "{tmpdir}" {
		t.Fatalf("args %q", args)
	}
	if st, err := os.Stat(args[1]); err != nil || !st.IsDir() {
		t.Fatalf("%s: %v", args[1], err)
	}
	cleanup()
	if _, err := os.Stat(args[1]); !os.IsNotExist(err) {
		t.Fatalf("%s not removed: %v", args[1], err)
	}
}

// The realistic table ends with the crawlkit ÷ colly line, from pages per
// CPU-second; the durable one with the pages/s line.
func TestRealisticReportRatios(t *testing.T) {
	r := func(pages int, cpu, elapsed float64) harness.Result {
		return harness.Result{Pages: pages, CPUSeconds: cpu, ElapsedS: elapsed, PagesPerS: float64(pages) / elapsed}
	}
	res := map[string][]harness.Result{
		"crawlkit": {r(1000, 4, 10)},  // 250 pages per CPU-s
		"colly":    {r(1000, 16, 20)}, // 62.5
		"gocrawl":  {r(1000, 10, 20)},
	}
	s, _ := realisticSpecs("small")
	text := realisticReport(s["realistic"], []string{"crawlkit", "colly", "gocrawl"}, harness.WebInfo{Hosts: 1}, res, 1)
	if !strings.HasSuffix(text, "crawlkit ÷ colly per CPU-s: 4.00\n") {
		t.Fatalf("realistic report ends %q", text[max(0, len(text)-80):])
	}
	dres := map[string][]harness.Result{"memory": {r(1000, 4, 10)}, "durable": {r(1000, 5, 20)}}
	text = durableReport(s["durable"], []string{"memory", "durable"}, harness.WebInfo{}, dres, 1)
	if !strings.HasSuffix(text, "durable ÷ memory pages/s: 0.50\n") || !strings.Contains(text, "durable ÷ memory CPU-s per page: 1.25") {
		t.Fatalf("durable report: %q", text)
	}
}

// writeMarked replaces only the text between its markers.
func TestWriteMarked(t *testing.T) {
	p := filepath.Join(t.TempDir(), "B.md")
	os.WriteFile(p, []byte("a\n<!-- realistic:begin -->\nold\n<!-- realistic:end -->\nz\n"), 0o644)
	if err := writeMarked(p, "realistic", "new\n"); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	if string(b) != "a\n<!-- realistic:begin -->\nnew\n<!-- realistic:end -->\nz\n" {
		t.Fatalf("%q", b)
	}
	if err := writeMarked(p, "durable", "x"); err == nil {
		t.Fatal("no error for missing markers")
	}
}
