package trap

import (
	"bytes"
	"fmt"
	"testing"
	"time"
)

// A crawl interrupted halfway, whose detector is restored from a
// snapshot, admits no more trap URLs than one that ran through.
func TestSnapshotRestoreKeepsLearning(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cfg := Config{PatternBudget: 20, DistinctCandidates: true}
	// A pattern over its budget, a soft-404 maze serving one page, and a
	// growing query, as a crawl meets them.
	var urls []string
	for i := 0; i < 60; i++ {
		urls = append(urls, fmt.Sprintf("http://shop.test/item?id=%d", i))
		urls = append(urls, fmt.Sprintf("http://maze.test/missing/%d", i))
		urls = append(urls, "http://grow.test/search?q="+string(bytes.Repeat([]byte("ab+"), i+1)))
	}
	feed := func(d *Detector, urls []string) (admitted int) {
		for _, u := range urls {
			if d.JudgeAt(now, Candidate{URL: u, Source: "http://seed.test/"}).Rejected() {
				continue
			}
			admitted++
			d.ObservePage(Page{URL: u, Fingerprint: 0xfeedface, Links: []string{"http://maze.test/home"}})
		}
		return admitted
	}
	whole := feed(New(cfg), urls)

	first := New(cfg)
	half := len(urls) / 2
	admitted := feed(first, urls[:half])
	var buf bytes.Buffer
	if err := first.Snapshot(&buf); err != nil {
		t.Fatal(err)
	}
	second := New(cfg)
	if err := second.Restore(&buf); err != nil {
		t.Fatal(err)
	}
	admitted += feed(second, urls[half:])
	if admitted > whole+whole/10 {
		t.Errorf("interrupted crawl admitted %d URLs, uninterrupted %d", admitted, whole)
	}
	// Without the restore the second half starts from nothing.
	fresh := feed(New(cfg), urls[:half]) + feed(New(cfg), urls[half:])
	if fresh <= whole+whole/10 {
		t.Fatalf("the test does not tell a restore from none: %d fresh, %d whole", fresh, whole)
	}
	t.Logf("admitted: uninterrupted %d, restored %d, restarted empty %d", whole, admitted, fresh)

	if err := New(cfg).Restore(bytes.NewReader([]byte("junk"))); err == nil {
		t.Error("Restore of junk succeeded")
	}
}
