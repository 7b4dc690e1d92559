package crawlkit_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/crawltest"
	"github.com/crawlkit/crawlkit/simhash"
	"github.com/crawlkit/crawlkit/storage/pebble"
)

// TestDataDirNearDuplicatesAcrossRuns checks the near-duplicate index of a
// data directory: fingerprints an older data directory kept in its
// fingerprint store are imported into the on-disk index, and a page whose
// content was indexed before is flagged even though nothing names it.
func TestDataDirNearDuplicatesAcrossRuns(t *testing.T) {
	web := newWeb(t, crawltest.Config{Hosts: 5, PagesPerHost: 10, Seed: 11, Agent: "crawlkit-test", NoTraps: true, CrawlDelay: 10 * time.Millisecond})

	// A crawl in memory tells which pages are not near-duplicates of
	// anything fetched before them, and their fingerprints.
	var first pageLog
	c, err := crawlkit.New(crawlConfig(web, &first))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	var originals []*crawlkit.Page
	for _, p := range first.pages {
		if p.Fingerprint != 0 && p.DuplicateOf == "" {
			originals = append(originals, p)
		}
	}
	if len(originals) < 10 {
		t.Fatalf("only %d original pages", len(originals))
	}
	target := originals[len(originals)/2]

	// A data directory whose fingerprint store (the layout before the
	// on-disk index) holds the target's fingerprint under another id.
	dir := filepath.Join(t.TempDir(), "state")
	db, err := pebble.Open(dir, pebble.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.FingerprintStore().Put([]simhash.Entry{{Fingerprint: target.Fingerprint, ID: 42}}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	var second pageLog
	cfg := crawlConfig(web, &second)
	cfg.DataDir = dir
	c, err = crawlkit.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, p := range second.pages {
		if p.URL != target.URL {
			continue
		}
		found = true
		if p.DuplicateOf != "(forgotten)" || p.Distance != 0 {
			t.Errorf("%s: DuplicateOf %q at %d bits, want the imported fingerprint (forgotten, 0 bits)", p.URL, p.DuplicateOf, p.Distance)
		}
	}
	if !found {
		t.Fatalf("%s not fetched by the second crawl", target.URL)
	}
	// Other duplicates name a page of this crawl, read back from the name
	// store on disk.
	fetched := map[string]bool{}
	for _, p := range second.pages {
		fetched[p.URL] = true
	}
	named := 0
	for _, p := range second.pages {
		if p.DuplicateOf == "" || p.DuplicateOf == "(forgotten)" {
			continue
		}
		named++
		if !fetched[p.DuplicateOf] || p.DuplicateOf == p.URL {
			t.Errorf("%s: DuplicateOf %q is not another page of the crawl", p.URL, p.DuplicateOf)
		}
	}
	if named == 0 {
		t.Error("no duplicate named its original")
	}
}
