package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		in   []float64
		want float64
	}{
		{nil, 0},
		{[]float64{3}, 3},
		{[]float64{5, 1, 3}, 3},
		{[]float64{4, 1, 3, 2}, 2.5},
	} {
		if got := median(c.in); got != c.want {
			t.Errorf("median(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}

func TestWriteSectionKeepsTheRest(t *testing.T) {
	path := filepath.Join(t.TempDir(), "B.md")
	before := "## a\nkeep\n" + beginMark + "\nold\n" + endMark + "\n## b\nkeep too\n"
	if err := os.WriteFile(path, []byte(before), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := writeSection(path, "new table\n"); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	want := "## a\nkeep\n" + beginMark + "\nnew table\n" + endMark + "\n## b\nkeep too\n"
	if string(b) != want {
		t.Errorf("got\n%s\nwant\n%s", b, want)
	}
	os.WriteFile(path, []byte("no markers"), 0o644)
	if err := writeSection(path, "x"); err == nil || !strings.Contains(err.Error(), "no") {
		t.Errorf("missing markers: err = %v", err)
	}
}
