package main

import (
	"bufio"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A real-site crawl must say who runs it: -seed without -user-agent is
// refused before anything is fetched or written, instead of sending
// crawlkit's own project page as the contact.
func TestSeedNeedsUserAgent(t *testing.T) {
	data := filepath.Join(t.TempDir(), "crawl-data")
	err := run(context.Background(), []string{"-seed", "http://127.0.0.1:1/", "-data-dir", data}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "-user-agent") {
		t.Fatalf("run -seed without -user-agent: %v, want an error about -user-agent", err)
	}
	if _, err := os.Stat(data); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the refused run created %s", data)
	}
}

// A crawl stopped part way resumes from its data directory: the second run
// fetches the rest, and no page is fetched (archived) twice.
func TestResume(t *testing.T) {
	dir := t.TempDir()
	args := func(extra ...string) []string {
		return append([]string{"-web-hosts", "3", "-web-pages", "6", "-delay", "5ms",
			"-data-dir", filepath.Join(dir, "crawl-data")}, extra...)
	}
	if err := run(context.Background(), args("-max-pages", "5"), io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	first := warcResponses(t, filepath.Join(dir, "crawl-data", "warc"))
	if err := run(context.Background(), args(), io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	resumed := warcResponses(t, filepath.Join(dir, "crawl-data", "warc"))

	full := filepath.Join(t.TempDir(), "crawl-data")
	if err := run(context.Background(), []string{"-web-hosts", "3", "-web-pages", "6", "-delay", "5ms", "-data-dir", full}, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	want := warcResponses(t, filepath.Join(full, "warc"))

	t.Logf("first run %d, resumed %d, uninterrupted %d URLs", len(first), len(resumed), len(want))
	if len(first) == 0 || len(first) >= len(want) {
		t.Fatalf("the first run archived %d pages of %d; want some, not all", len(first), len(want))
	}
	for u, n := range resumed {
		if n > 1 {
			t.Errorf("%s archived %d times", u, n)
		}
	}
	if len(resumed) != len(want) {
		t.Errorf("stopped and resumed crawl archived %d URLs, an uninterrupted one %d", len(resumed), len(want))
	}
}

// warcResponses counts the response and revisit records of the WARC files
// in dir by target URI, reading every file to its end (so that a file left
// unclosed fails the gzip check).
func warcResponses(t *testing.T, dir string) map[string]int {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.warc.gz"))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		zr, err := gzip.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(zr)
		sc.Buffer(nil, 16<<20)
		typ := ""
		for sc.Scan() {
			l := strings.TrimSpace(sc.Text())
			if v, ok := strings.CutPrefix(l, "WARC-Type: "); ok {
				typ = v
			}
			if v, ok := strings.CutPrefix(l, "WARC-Target-URI: "); ok && (typ == "response" || typ == "revisit") {
				got[v]++
				typ = ""
			}
		}
		if err := sc.Err(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		f.Close()
	}
	return got
}

// The summary says in words how the crawl ended, and a run on a finished
// crawl says it is complete with the crawl's totals, not zeros.
func TestSummary(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "crawl-data")
	args := []string{"-web-hosts", "3", "-web-pages", "6", "-delay", "0", "-data-dir", dir}
	var out strings.Builder
	if err := run(context.Background(), args, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Crawl complete in", "Pages: ", "fetched (", "Not fetched: ", "Links not followed: ", "Crawl state: " + dir} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("first run's summary lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	if err := run(context.Background(), args, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "is complete: nothing was left to fetch") || !strings.Contains(out.String(), "Over its 2 runs") ||
		strings.Contains(out.String(), "Over its 2 runs since 0001") || strings.Contains(out.String(), " 0 pages fetched") {
		t.Errorf("second run's summary:\n%s", out.String())
	}
}
