package crawlkit_test

import (
	"bufio"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/crawltest"
)

// A crawl written as gzip-compressed JSON Lines, rotated every few
// records: every page of the web is there once, each file reads on its
// own, and a second sink on the same directory continues the numbering.
func TestJSONLSink(t *testing.T) {
	web := newWeb(t, crawltest.Config{Hosts: 2, PagesPerHost: 6, Seed: 5, Agent: "crawlkit-test", NoTraps: true, CrawlDelay: 10 * 1e6})
	dir := t.TempDir()
	sink, err := crawlkit.NewJSONLSink(crawlkit.JSONLConfig{Dir: dir, Gzip: true, MaxBytes: 4 << 10,
		Headers: []string{"Content-Type"}, Links: true})
	if err != nil {
		t.Fatal(err)
	}
	var log pageLog
	cfg := crawlConfig(web, &log)
	cfg.Sink = sink
	c, err := crawlkit.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "pages-*.jsonl.gz"))
	if len(files) < 2 {
		t.Fatalf("%d files; MaxBytes should have rotated them", len(files))
	}
	var urls []string
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		zr, err := gzip.NewReader(f)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		sc := bufio.NewScanner(zr)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var r crawlkit.PageRecord
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if r.Status == 200 && (r.Title == "" || r.Headers["Content-Type"] == "" || len(r.Links) == 0 || r.Fingerprint == "") {
				t.Errorf("record of %s lacks title, header, links or fingerprint: %+v", r.URL, r)
			}
			urls = append(urls, r.URL)
		}
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(io.Discard, zr); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		f.Close()
	}
	slices.Sort(urls)
	got := slices.Compact(slices.Clone(urls))
	if len(got) != len(urls) {
		t.Errorf("%d records for %d pages: some pages written twice", len(urls), len(got))
	}
	if want := log.urls(); len(urls) != len(want) {
		t.Errorf("%d records, the Handler saw %d pages", len(urls), len(want))
	}
	if missing := web.TruthFor("crawlkit-test", 0).Missing(urls); len(missing) > 0 {
		t.Errorf("pages missing from the records: %v", missing)
	}

	again, err := crawlkit.NewJSONLSink(crawlkit.JSONLConfig{Dir: dir, Gzip: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := again.Close(); err != nil {
		t.Fatal(err)
	}
	after, _ := filepath.Glob(filepath.Join(dir, "pages-*.jsonl.gz"))
	if len(after) != len(files)+1 {
		t.Errorf("a second sink left %d files, want %d: it must not overwrite", len(after), len(files)+1)
	}
}
