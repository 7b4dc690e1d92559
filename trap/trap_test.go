package trap

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// now is the fixed clock of the tests.
var now = time.Date(2025, time.November, 21, 12, 0, 0, 0, time.UTC)

// The URL-only rules, hop depth, switching rules off, calendar walks and
// the bare dates of the calendar rule are cases in testdata/rules.txt and
// testdata/calendar.txt (TestVerdictTable).

// TestForumPagesAreNoCalendarWalk: the posts of forum topics and the pages
// of a product link to each other; they are no calendar walk, whatever the
// limits.
func TestForumPagesAreNoCalendarWalk(t *testing.T) {
	for i, cfg := range []Config{{}, {YearsAhead: -1, YearsBehind: -1}, {MaxCalendarSteps: 1}} {
		d := New(cfg)
		for _, item := range []string{
			"http://forum.example/t/some-topic/2841", "http://forum.example/t/other-topic/1234",
			"http://forum.example/t/third-topic/2010", "http://shop.example/product/2003", "http://shop.example/product/2004",
		} {
			src := item
			for p := 1; p <= 12; p++ {
				u := fmt.Sprintf("%s/%d", item, p)
				if v := d.JudgeAt(now, Candidate{URL: u, Source: src}); v.Rejected() {
					t.Fatalf("config %d: %s from %s: %v", i, u, src, v)
				}
				src = u
			}
		}
	}
}

// TestCalendarWalkBare checks that a walk through bare dates (a calendar
// without a calendar word) is limited once it crossed a year.
func TestCalendarWalkBare(t *testing.T) {
	walk := func(d *Detector, start time.Time, months int) (accepted int, last Verdict) {
		src := "http://cal.example/veranstaltungen/" + start.Format("2006/01") + "/"
		for m := start; ; {
			m = m.AddDate(0, months, 0)
			u := "http://cal.example/veranstaltungen/" + m.Format("2006/01") + "/"
			if last = d.JudgeAt(now, Candidate{URL: u, Source: src}); last.Rejected() {
				return accepted, last
			}
			accepted++
			src = u
		}
	}
	// Forward from November, the walk crosses a year at its second step
	// and is stopped at the limit.
	d := New(Config{})
	start := time.Date(2025, time.November, 1, 0, 0, 0, 0, time.UTC)
	n, v := walk(d, start, 1)
	if want := "calendar: 7 dates reached by walking /veranstaltungen/{date}/, limit 6"; n != DefaultMaxCalendarSteps || v.Reason != want {
		t.Errorf("forward: %d steps, then %q; want %d, then %q", n, v.Reason, DefaultMaxCalendarSteps, want)
	}
	// Backward, it goes on to January and is stopped when it crosses
	// into December.
	d = New(Config{})
	if n, v = walk(d, start, -1); n != 10 || v.Rule != RuleCalendar {
		t.Errorf("backward: %d steps, then %v; want 10, then the calendar rule", n, v)
	}
	// A calendar with "next year" links crosses a year at once.
	d = New(Config{MaxCalendarSteps: 1})
	if n, v = walk(d, time.Date(2000, time.March, 1, 0, 0, 0, 0, time.UTC), 12); n != 1 || v.Rule != RuleCalendar {
		t.Errorf("by year: %d steps, then %v; want 1, then the calendar rule", n, v)
	}
}

// TestCalendarWalkFar checks walks through far bare dates: a link that is
// not one step out of the range (a year picker, a link from a page without
// a date) takes a calendar to a far bare date as an id, and the walk goes on
// from there; it is limited as any walk through bare dates.
func TestCalendarWalkFar(t *testing.T) {
	now := time.Date(2026, time.March, 1, 0, 0, 0, 0, time.UTC)
	judge := func(d *Detector, u, src string) Verdict {
		return d.JudgeAt(now, Candidate{URL: "http://blog.example" + u, Source: "http://blog.example" + src})
	}
	walk := func(d *Detector, src string, months int) (accepted int, last Verdict) {
		m, _ := time.Parse("/2006/01/", src)
		for i := 0; i < 200; i++ {
			m = m.AddDate(0, months, 0)
			u := m.Format("/2006/01/")
			if last = judge(d, u, src); last.Rejected() {
				return accepted, last
			}
			accepted++
			src = u
		}
		return accepted, last
	}

	// From a year picker on a page within the range, next-month links
	// are followed until they cross a year after the limit.
	d := New(Config{})
	if v := d.JudgeAt(now, Candidate{URL: "http://blog.example/2026/03/"}); v.Rejected() {
		t.Fatalf("/2026/03/: %v", v)
	}
	if v := judge(d, "/2035/03/", "/2026/03/"); v.Rejected() {
		t.Fatalf("/2035/03/ from /2026/03/: %v", v)
	}
	n, v := walk(d, "/2035/03/", 1)
	if want := "calendar: 7 dates reached by walking /{date}/, limit 6"; n != 9 || v.Reason != want {
		t.Errorf("forward from 2035-03: %d steps, then %q; want 9, then %q", n, v.Reason, want)
	}
	// The walk is stopped for the shape: other far dates are reached
	// only by a jump from the range, and not walked on from.
	for _, c := range []struct {
		url, source string
		rejected    bool
	}{
		{"/2035/02/", "/2035/03/", true},
		{"/2040/03/", "/2035/03/", true},
		{"/2040/03/", "/2026/03/", false},
		{"/2040/04/", "/2040/03/", true},
	} {
		if v := judge(d, c.url, c.source); v.Rejected() != c.rejected {
			t.Errorf("%s from %s: %v, want rejected %v", c.url, c.source, v, c.rejected)
		}
	}

	// From a page without a date, backward by month and by year.
	d = New(Config{})
	if v := judge(d, "/1990/05/", "/"); v.Rejected() {
		t.Fatalf("/1990/05/ from /: %v", v)
	}
	if n, v = walk(d, "/1990/05/", -1); n != 6 || v.Rule != RuleCalendar {
		t.Errorf("backward from 1990-05: %d steps, then %v; want 6, then the calendar rule", n, v)
	}
	d = New(Config{MaxCalendarSteps: 2})
	if n, v = walk(d, "/2035/03/", 12); n != 2 || v.Rule != RuleCalendar {
		t.Errorf("by year from 2035-03: %d steps, then %v; want 2, then the calendar rule", n, v)
	}
}

func TestGrowingParam(t *testing.T) {
	d := New(Config{})
	var v Verdict
	n := 0
	for i := 0; i < 20; i++ {
		u := fmt.Sprintf("http://g.example/page?sort=new&t=%d", 1763726400+i*17)
		v = d.JudgeAt(now, Candidate{URL: u, Source: "http://g.example/page?sort=new"})
		if v.Rejected() {
			break
		}
		n++
	}
	if n != DefaultMaxParamValues {
		t.Fatalf("accepted %d values, want %d", n, DefaultMaxParamValues)
	}
	if want := `growing-param: "t" took 9 values on /page?sort=new&t={v}, limit 8`; v.Reason != want {
		t.Fatalf("got %q, want %q", v.Reason, want)
	}
	// Pagination and vocabulary values are not volatile.
	for i := 0; i < 200; i++ {
		for _, u := range []string{
			fmt.Sprintf("http://g.example/list?page=%d", i),
			fmt.Sprintf("http://g.example/shop?color=c%s&size=%d", strings.Repeat("x", i%7), i),
			fmt.Sprintf("http://g.example/item?id=%d", 100000+i),
		} {
			if v := d.JudgeAt(now, Candidate{URL: u}); v.Rejected() {
				t.Fatalf("%s: %v", u, v)
			}
		}
	}
}

func TestBudgets(t *testing.T) {
	d := New(Config{HostBudget: 50, PatternBudget: 10, Trusted: map[string]Budgets{
		"big.example": {Host: 1000, Pattern: 500},
		"trusted.org": {Pattern: -1},
	}})
	var v Verdict
	n := 0
	for i := 0; i < 100; i++ {
		v = d.JudgeAt(now, Candidate{URL: fmt.Sprintf("http://shop.example/item/%d", i)})
		if v.Rejected() {
			break
		}
		n++
		// Judging an accepted URL again must not count it twice.
		if v2 := d.JudgeAt(now, Candidate{URL: fmt.Sprintf("http://shop.example/item/%d", i)}); v2.Rejected() {
			t.Fatalf("second judgement: %v", v2)
		}
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
	for i := 0; i < 600; i++ {
		v = d.JudgeAt(now, Candidate{URL: fmt.Sprintf("http://big.example/item/%d", i)})
		if v.Rejected() {
			if i != 500 {
				t.Fatalf("trusted host stopped at %d: %v", i, v)
			}
			break
		}
	}
	for i := 0; i < 45; i++ { // above the pattern budget, within the host budget
		if v := d.JudgeAt(now, Candidate{URL: fmt.Sprintf("http://www.trusted.org/item/%d", i)}); v.Rejected() {
			t.Fatalf("trusted domain: %v", v)
		}
	}
}

func TestDomainBudget(t *testing.T) {
	d := New(Config{DomainHostBudget: 20})
	var v Verdict
	n := 0
	for i := 0; i < 50; i++ {
		v = d.JudgeAt(now, Candidate{URL: fmt.Sprintf("http://u%d.farm.example/", i)})
		if v.Rejected() {
			break
		}
		n++
	}
	if n != DefaultMintedHostBudget || v.Reason != "domain-budget: u{n}.farm.example reached its budget of 8 minted hosts" {
		t.Fatalf("accepted %d hosts, last %v", n, v)
	}
	// Hosts already admitted stay admitted.
	if v := d.JudgeAt(now, Candidate{URL: "http://u3.farm.example/page"}); v.Rejected() {
		t.Fatalf("admitted host: %v", v)
	}
	// Named subdomains count against the domain's host budget only.
	n = 0
	for _, lang := range strings.Fields("en de fr es it nl pl ru ja zh pt sv uk vi ar fa ca sr id no ko fi hu cs tr ro") {
		v = d.JudgeAt(now, Candidate{URL: "http://" + lang + ".wiki.example/wiki/Main_Page"})
		if v.Rejected() {
			break
		}
		n++
	}
	if n != 20 || v.Reason != "domain-budget: wiki.example reached its budget of 20 hosts" {
		t.Fatalf("accepted %d, last %v", n, v)
	}
	// Public suffixes keep blog platforms' users apart.
	for i := 0; i < 50; i++ {
		if v := d.JudgeAt(now, Candidate{URL: fmt.Sprintf("http://user%d.blogspot.com/", i)}); v.Rejected() {
			t.Fatalf("blogspot user %d: %v", i, v)
		}
	}
}

func TestContentRepetition(t *testing.T) {
	d := New(Config{})
	const soft404 = 0x0123456789abcdef
	for i := 0; i < 20; i++ {
		// Distinct real pages on the same host.
		u := fmt.Sprintf("http://s.example/docs/page-%c", 'a'+i)
		if v := d.Observe(u, uint64(i)*0x9e3779b97f4a7c15); v.Rejected() {
			t.Fatalf("distinct content: %v", v)
		}
	}
	var v Verdict
	n := 0
	for i := 0; i < 10; i++ {
		u := fmt.Sprintf("http://s.example/missing/x%c", 'a'+i)
		if jv := d.JudgeAt(now, Candidate{URL: u}); jv.Rejected() {
			v = jv
			break
		}
		n++
		// Near-identical content (a bit or two differ) and the same
		// links: one "not found" template.
		v = d.ObservePage(Page{URL: u, Fingerprint: soft404 ^ uint64(1)<<(i%3), Links: []string{"http://s.example/"}})
	}
	if n != DefaultContentRepeats {
		t.Fatalf("fetched %d soft-404s, want %d", n, DefaultContentRepeats)
	}
	if want := "content-repetition: 5 URLs under /missing/{*} served the same page (simhash 0x0123456789abcdee, same links)"; v.Reason != want {
		t.Fatalf("got %q, want %q", v.Reason, want)
	}
	// The rest of the host is unaffected.
	if v := d.JudgeAt(now, Candidate{URL: "http://s.example/docs/page-z"}); v.Rejected() {
		t.Fatalf("other pattern: %v", v)
	}
	// A whole host answering everything alike is stopped.
	d = New(Config{})
	for i := 0; i < DefaultHostContentRepeats; i++ {
		v = d.Observe(fmt.Sprintf("http://same.example/%c/%c", 'a'+i, 'a'+i), soft404)
	}
	if want := "content-repetition: 5 URLs of same.example served identical content (simhash 0x0123456789abcdef)"; v.Reason != want {
		t.Fatalf("got %q, want %q", v.Reason, want)
	}
	if v := d.JudgeAt(now, Candidate{URL: "http://same.example/new"}); v.Rule != RuleContentRepetition {
		t.Fatalf("stopped host: %v", v)
	}
	// A few duplicates among many distinct pages are not a trap.
	d = New(Config{})
	for i := 0; i < 100; i++ {
		fp := uint64(i+1) * 0x9e3779b97f4a7c15
		if i%10 == 0 {
			fp = soft404
		}
		if v := d.Observe(fmt.Sprintf("http://real.example/item/%d", i), fp); v.Rejected() {
			t.Fatalf("page %d: %v", i, v)
		}
	}
}

func TestStateIsBounded(t *testing.T) {
	d := New(Config{MaxHosts: numShards, MaxTrackedURLs: 10 * numShards})
	for i := 0; i < 5000; i++ {
		d.JudgeAt(now, Candidate{URL: fmt.Sprintf("http://h%d.example/p/%d", i%500, i)})
	}
	hosts, urls := 0, 0
	for i := range d.hosts {
		sh := &d.hosts[i]
		sh.mu.Lock()
		hosts += len(sh.m)
		for _, hs := range sh.m {
			urls += len(hs.urls)
		}
		if sh.urls > sh.maxURLs+1 {
			t.Errorf("shard %d holds %d URL keys, cap %d", i, sh.urls, sh.maxURLs)
		}
		sh.mu.Unlock()
	}
	if hosts > numShards {
		t.Errorf("%d hosts kept, cap %d", hosts, numShards)
	}
	if urls > 10*numShards+numShards {
		t.Errorf("%d URL keys kept", urls)
	}
	doms := 0
	for i := range d.domains {
		doms += len(d.domains[i].m)
	}
	if doms > numShards {
		t.Errorf("%d domains kept, cap %d", doms, numShards)
	}
}

// TestConcurrent runs judgements and reports from many goroutines; run with
// -race. The host budget must hold exactly however the calls interleave.
func TestConcurrent(t *testing.T) {
	d := New(Config{HostBudget: 100})
	var wg sync.WaitGroup
	accepted := make([]int, 8)
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 500; i++ {
				u := fmt.Sprintf("http://c.example/w%d/p%d", w, i)
				if !d.JudgeAt(now, Candidate{URL: u}).Rejected() {
					accepted[w]++
				}
				d.Observe(u, uint64(i*8+w)*0x9e3779b97f4a7c15)
			}
		}()
	}
	wg.Wait()
	total := 0
	for _, n := range accepted {
		total += n
	}
	if total != 100 {
		t.Fatalf("accepted %d URLs, budget 100", total)
	}
}

// TestFirstVerdictOnce: however reports interleave, exactly one verdict
// establishes a stop, so a caller logs it once.
func TestFirstVerdictOnce(t *testing.T) {
	d := New(Config{})
	var wg sync.WaitGroup
	firsts := make([]int, 8)
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				u := fmt.Sprintf("http://s.example/missing/w%dp%d", w, i)
				v := d.ObservePage(Page{URL: u, Fingerprint: 0xbad, Links: []string{"http://s.example/"}})
				if v.First {
					firsts[w]++
				}
				if v := d.JudgeAt(now, Candidate{URL: u + "x"}); v.First {
					t.Errorf("judgement after the stop: %v marked first", v)
				}
			}
		}()
	}
	wg.Wait()
	total := 0
	for _, n := range firsts {
		total += n
	}
	if total != 1 {
		t.Fatalf("%d verdicts marked first, want 1", total)
	}
}
