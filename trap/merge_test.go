package trap

import (
	"bytes"
	"fmt"
	"testing"
	"time"
)

// Two processes crawling one web in turns, each merging the other's
// learning through a shared record as the Crawler does, admit no more trap
// URLs than one process alone (within 10 %), where two that share nothing
// each learn every trap.
func TestMergeSharesLearning(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cfg := Config{PatternBudget: 20, DistinctCandidates: true}
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

	var shared []byte // the record the processes share
	sync := func(d *Detector) {
		if shared != nil {
			if err := d.Merge(bytes.NewReader(shared)); err != nil {
				t.Fatal(err)
			}
		}
		var buf bytes.Buffer
		if err := d.Snapshot(&buf); err != nil {
			t.Fatal(err)
		}
		shared = buf.Bytes()
	}
	a, b := New(cfg), New(cfg)
	admitted := 0
	const turn = 15
	for i := 0; i < len(urls); i += turn {
		d := a
		if (i/turn)%2 == 1 {
			d = b
		}
		sync(d)
		admitted += feed(d, urls[i:min(i+turn, len(urls))])
		sync(d)
	}
	if admitted > whole+whole/10 {
		t.Errorf("two processes sharing their learning admitted %d URLs, one alone %d", admitted, whole)
	}
	alone := 0
	a, b = New(cfg), New(cfg)
	for i := 0; i < len(urls); i += turn {
		d := a
		if (i/turn)%2 == 1 {
			d = b
		}
		alone += feed(d, urls[i:min(i+turn, len(urls))])
	}
	if alone <= whole+whole/10 {
		t.Fatalf("the test does not tell sharing from none: %d without sharing, %d one alone", alone, whole)
	}
	t.Logf("admitted: one process %d, two sharing %d, two alone %d", whole, admitted, alone)

	// Merging is idempotent: a record merged again changes no verdict.
	before := feed(New(cfg), urls)
	c := New(cfg)
	for i := 0; i < 3; i++ {
		if err := c.Merge(bytes.NewReader(shared)); err != nil {
			t.Fatal(err)
		}
	}
	if got := feed(c, urls); got >= before {
		t.Errorf("a detector merged from the shared record admitted %d of the URLs, a fresh one %d", got, before)
	}
	if err := New(cfg).Merge(bytes.NewReader([]byte("junk"))); err == nil {
		t.Error("Merge of junk succeeded")
	}
}
