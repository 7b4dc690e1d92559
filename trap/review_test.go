package trap

import (
	"fmt"
	"testing"
)

// TestRepeatingPathCountsPaths: the learned repeated-segments rule limits
// the paths made of one set of segments ("3 paths made of {docs}"); query
// variants of one such path (its pages, its languages) are one path, not
// a branching loop.
func TestRepeatingPathCountsPaths(t *testing.T) {
	d := New(Config{})
	prev := "https://ex.example/docs/docs/"
	if v := d.JudgeAt(now, Candidate{URL: prev}); v.Rejected() {
		t.Fatalf("%s: %v", prev, v)
	}
	for p := 2; p <= 30; p++ {
		u := fmt.Sprintf("https://ex.example/docs/docs/?page=%d", p)
		if v := d.JudgeAt(now, Candidate{URL: u, Source: prev}); v.Rejected() {
			t.Fatalf("%s: %v", u, v)
		}
		prev = u
	}
	for _, l := range []string{"en", "fr", "de", "es", "it"} {
		u := "https://ex.example/blog/category/blog/?lang=" + l
		if v := d.JudgeAt(now, Candidate{URL: u, Source: "https://ex.example/"}); v.Rejected() {
			t.Fatalf("%s: %v", u, v)
		}
	}
	// The loop itself is still stopped at the third path.
	for i, p := range []string{"/loop/a/b/a/", "/loop/a/b/a/b/", "/loop/b/a/b/a/loop/"} {
		v := d.JudgeAt(now, Candidate{URL: "https://ex.example" + p})
		if want := i == 2; v.Rejected() != want {
			t.Fatalf("%s: %v, want rejected %v", p, v, want)
		}
	}
}

// TestBudgetsBeyondMaxTrackedURLs: MaxTrackedURLs bounds the URL keys kept
// over all hosts, but "a single host may exceed it up to its own budget",
// and the budgets must keep counting whatever the bound.
func TestBudgetsBeyondMaxTrackedURLs(t *testing.T) {
	count := func(cfg Config, url func(i int) string) int {
		d := New(cfg)
		n := 0
		for i := 0; i < 500; i++ {
			if !d.JudgeAt(now, Candidate{URL: url(i)}).Rejected() {
				n++
			}
		}
		return n
	}
	distinctPaths := func(i int) string { return fmt.Sprintf("https://big.example/%c%c/x", 'a'+i%26, 'a'+i/26) }
	items := func(i int) string { return fmt.Sprintf("https://big.example/item/%d", i) }
	if n := count(Config{MaxTrackedURLs: 64, HostBudget: 100, PatternBudget: -1}, distinctPaths); n != 100 {
		t.Errorf("host budget 100 with MaxTrackedURLs 64: accepted %d", n)
	}
	if n := count(Config{MaxTrackedURLs: 64, HostBudget: -1, PatternBudget: 80}, items); n != 80 {
		t.Errorf("pattern budget 80 with MaxTrackedURLs 64 and no host budget: accepted %d", n)
	}
	// Within the budget, an accepted URL is still remembered and accepted
	// again without counting twice.
	d := New(Config{MaxTrackedURLs: 4, HostBudget: 10})
	for i := 0; i < 10; i++ {
		if v := d.JudgeAt(now, Candidate{URL: items(i)}); v.Rejected() {
			t.Fatalf("%d: %v", i, v)
		}
	}
	for i := 0; i < 10; i++ {
		if v := d.JudgeAt(now, Candidate{URL: items(i)}); v.Rejected() {
			t.Fatalf("again %d: %v", i, v)
		}
	}
	if v := d.JudgeAt(now, Candidate{URL: items(10)}); v.Rule != RuleHostBudget {
		t.Fatalf("11th URL: %v", v)
	}
}

// TestDomainStateBounded: with no domain host budget, a domain that mints
// hosts of ever new shapes must not grow its state without bound.
func TestDomainStateBounded(t *testing.T) {
	d := New(Config{DomainHostBudget: -1, MintedHostBudget: 1 << 30, MaxHosts: numShards})
	for i := 0; i < maxDomainHostKeys+2000; i++ {
		sub := ""
		for x := i; ; x /= 26 {
			sub += string(rune('a' + x%26))
			if x < 26 {
				break
			}
		}
		d.JudgeAt(now, Candidate{URL: "https://" + sub + "1.farm.example/"})
	}
	sh := &d.domains[shardOf("farm.example")]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	ds := sh.m["farm.example"]
	if ds == nil {
		t.Fatal("domain not tracked")
	}
	if len(ds.minted) > maxDomainHostKeys || len(ds.hosts) > maxDomainHostKeys {
		t.Fatalf("domain holds %d minted patterns and %d host keys, cap %d", len(ds.minted), len(ds.hosts), maxDomainHostKeys)
	}
}
