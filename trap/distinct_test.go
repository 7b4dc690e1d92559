package trap

import (
	"fmt"
	"testing"
)

// TestDistinctCandidatesCountsWithoutKeys checks that with
// DistinctCandidates the budgets and the content rule work on counts alone:
// the same verdicts as with URL keys for a caller that judges each URL once,
// and no per-URL state however many URLs are judged.
func TestDistinctCandidatesCountsWithoutKeys(t *testing.T) {
	d := New(Config{HostBudget: 50, PatternBudget: 10, DistinctCandidates: true})
	var v Verdict
	n := 0
	for i := 0; i < 100; i++ {
		if v = d.JudgeAt(now, Candidate{URL: fmt.Sprintf("http://shop.example/item/%d", i)}); v.Rejected() {
			break
		}
		n++
	}
	if n != 10 || v.Reason != "pattern-budget: /item/{n} on shop.example reached its budget of 10 URLs" {
		t.Fatalf("accepted %d, last %v", n, v)
	}
	for i := 0; i < 45; i++ {
		v = d.JudgeAt(now, Candidate{URL: fmt.Sprintf("http://shop.example/p%c%c", 'a'+i%26, 'a'+i/26)})
	}
	if v.Reason != "host-budget: host shop.example reached its budget of 50 URLs" {
		t.Fatalf("host budget: %v", v)
	}

	// The caller's promise is what makes the count right: a URL judged
	// twice counts twice (the keyed detector would count it once).
	d = New(Config{HostBudget: 3, DistinctCandidates: true})
	for i := 0; i < 3; i++ {
		if v := d.JudgeAt(now, Candidate{URL: "http://a.example/same"}); v.Rejected() {
			t.Fatalf("judgement %d: %v", i, v)
		}
	}
	if v := d.JudgeAt(now, Candidate{URL: "http://a.example/other"}); v.Rule != RuleHostBudget {
		t.Fatalf("fourth judgement: %v, want host-budget", v)
	}

	// Many hosts, many URLs: no URL keys and no observed keys are kept.
	d = New(Config{DistinctCandidates: true})
	for i := 0; i < 20000; i++ {
		u := fmt.Sprintf("http://h%d.example/p/%d", i%50, i)
		if v := d.JudgeAt(now, Candidate{URL: u}); v.Rejected() {
			t.Fatalf("%s: %v", u, v)
		}
		d.Observe(u, uint64(i+1)*0x9e3779b97f4a7c15)
	}
	accepted := 0
	for i := range d.hosts {
		sh := &d.hosts[i]
		sh.mu.Lock()
		if sh.urls != 0 {
			t.Errorf("shard %d counts %d URL keys", i, sh.urls)
		}
		for _, hs := range sh.m {
			if len(hs.urls) != 0 || len(hs.observed) != 0 {
				t.Errorf("host %s keeps %d URL keys and %d observed keys", hs.name, len(hs.urls), len(hs.observed))
			}
			accepted += hs.acceptedURLs()
		}
		sh.mu.Unlock()
	}
	if accepted != 20000 {
		t.Fatalf("counted %d accepted URLs, want 20000", accepted)
	}
}

// TestDistinctCandidatesContentRepetition checks that the content rule
// still stops a soft-404 pattern when reports are counted, not keyed.
func TestDistinctCandidatesContentRepetition(t *testing.T) {
	d := New(Config{DistinctCandidates: true})
	const soft404 = 0x0123456789abcdef
	for i := 0; i < 20; i++ {
		d.Observe(fmt.Sprintf("http://s.example/docs/page-%c", 'a'+i), uint64(i+1)*0x9e3779b97f4a7c15)
	}
	var v Verdict
	for i := 0; i < DefaultContentRepeats; i++ {
		v = d.Observe(fmt.Sprintf("http://s.example/missing/x%c", 'a'+i), soft404)
	}
	if want := "content-repetition: 5 URLs under /missing/{*} served identical content (simhash 0x0123456789abcdef)"; v.Reason != want {
		t.Fatalf("got %q, want %q", v.Reason, want)
	}
	if v := d.JudgeAt(now, Candidate{URL: "http://s.example/missing/zz"}); v.Rule != RuleContentRepetition {
		t.Fatalf("stopped pattern: %v", v)
	}
	if v := d.JudgeAt(now, Candidate{URL: "http://s.example/docs/page-zz"}); v.Rejected() {
		t.Fatalf("other pattern: %v", v)
	}
}
