package crawltest_test

import (
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/crawltest"
)

// fetch GETs u with the given User-Agent and returns the status.
func fetch(t *testing.T, web *crawltest.Web, agent, u string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("User-Agent", agent)
	resp, err := web.Client().Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	return resp.StatusCode
}

// pageIn returns a page URL of the truth on host whose path starts with
// prefix.
func pageIn(t *testing.T, web *crawltest.Web, host, prefix string) string {
	t.Helper()
	truth := web.TruthFor("somebot", 0)
	for _, u := range append(truth.URLs(), truth.Blocked...) {
		if strings.HasPrefix(u, "http://"+host+prefix) && !strings.Contains(u, "print=") {
			return u
		}
	}
	t.Fatalf("no page under %s%s", host, prefix)
	return ""
}

func TestReportCountsRequestsAndDuplicates(t *testing.T) {
	clock := newFakeClock()
	web, err := crawltest.NewWeb(crawltest.Config{Hosts: 2, PagesPerHost: 20, Now: clock.Now, NoTraps: true})
	if err != nil {
		t.Fatal(err)
	}
	defer web.Close()
	const ua = "crawlkit/1.0"
	page := pageIn(t, web, "h0000.test", "/docs/")
	step := func(u string) int {
		clock.Advance(5 * time.Second)
		return fetch(t, web, ua, u)
	}
	step("http://h0000.test/robots.txt")
	step("http://h0000.test/")
	step("http://h0000.test/")                                   // exact repeat
	step("http://H0000.TEST:80/?utm_source=feed#top")            // same page, another spelling
	step("http://h0000.test/index.html")                         // exact duplicate content
	step(page)                                                   // new page
	step(strings.Replace(page, "/docs/", "/docs/./x/../", 1))    // another spelling
	step("http://h0000.test/docs/no-such-page-999.html")         // 404
	if got := step("http://h0000.test/robots.txt"); got != 200 { // robots again
		t.Fatalf("robots.txt: %d", got)
	}

	rep := web.Report()
	check := func(name string, got, want int) {
		t.Helper()
		if got != want {
			t.Errorf("%s = %d, want %d", name, got, want)
		}
	}
	check("Requests", rep.Requests, 9)
	check("RobotsFetches", rep.RobotsFetches["h0000.test"], 2)
	check("ExactRepeats", rep.ExactRepeats, 1)
	check("SpellingRepeats", rep.SpellingRepeats, 2)
	check("ContentRepeats", rep.ContentRepeats, 1)
	check("DuplicateFetches", rep.DuplicateFetches(), 3)
	check("NotFound", rep.NotFound, 1)
	check("PerURL[/]", rep.PerURL["http://h0000.test/"], 2)
	check("PerPage[/]", rep.PerPage["http://h0000.test/"], 3)
	check("PerPage[page]", rep.PerPage[page], 2)
	check("RobotsViolations", rep.RobotsViolations, 0)
	check("BeforeRobots", rep.BeforeRobots, 0)
	check("PolitenessViolations", rep.PolitenessViolations(), 0)
	check("Hosts.Requests", rep.Hosts["h0000.test"].Requests, 9)
	check("Hosts.Gaps", rep.Hosts["h0000.test"].Gaps, 6)
	if g := rep.Hosts["h0000.test"].MinGap; g != 5*time.Second {
		t.Errorf("MinGap = %v, want 5s", g)
	}

	// The snapshot is a copy; ResetReport clears the live counts.
	rep.PerURL["x"] = 1
	web.ResetReport()
	if r := web.Report(); r.Requests != 0 || len(r.PerURL) != 0 {
		t.Errorf("after ResetReport: %+v", r)
	}
}

func TestReportCatchesRobotsIgnoringClient(t *testing.T) {
	web, err := crawltest.NewWeb(crawltest.Config{Hosts: 6, PagesPerHost: 20, NoTraps: true})
	if err != nil {
		t.Fatal(err)
	}
	defer web.Close()
	hosts := web.Hosts()
	if hosts[0].Robots != crawltest.RobotsDisallow || hosts[2].Robots != crawltest.RobotsUnavailable ||
		hosts[4].Robots != crawltest.RobotsAgentGroup || hosts[5].Robots != crawltest.RobotsWildcard {
		t.Fatalf("unexpected variants: %+v", hosts)
	}
	private0 := pageIn(t, web, "h0000.test", "/private/")
	news4 := pageIn(t, web, "h0004.test", "/news/")
	private4 := pageIn(t, web, "h0004.test", "/private/")
	private5 := pageIn(t, web, "h0005.test", "/private/")
	for _, c := range []struct {
		agent, url string
		violation  bool
	}{
		{"crawlkit/1.0", private0, true},
		{"crawlkit/1.0", "http://h0000.test/tmp-notes/x.html", true}, // "Disallow: /tmp" is a prefix
		{"crawlkit/1.0", "http://h0000.test/", false},
		{"crawlkit/1.0", "http://h0001.test/private/", false}, // robots.txt is 404: allow all
		{"crawlkit/1.0", "http://h0002.test/", true},          // robots.txt is 503: disallow all
		{"crawlkit/1.0", "http://h0002.test/robots.txt", false},
		{"crawlkit/1.0", news4, true},     // the agent's own group
		{"crawlkit/1.0", private4, false}, // …which replaces "*"
		{"Mozilla/5.0", private4, true},   // "*" group
		{"Mozilla/5.0", news4, false},     // "*" group
		{"otherbot/2", "http://h0004.test/", true},
		{"crawlkit", private5, false},         // Allow: /private/*.html$ is longer
		{"crawlkit", private5 + "?x=1", true}, // $ does not match before a query
		{"crawlkit", strings.Replace(pageIn(t, web, "h0005.test", "/docs/"), ".html", ".html?print=1", 1), true},
		{"crawlkit", "http://h0005.test/shop/item", true},
	} {
		web.ResetReport()
		fetch(t, web, c.agent, c.url)
		rep := web.Report()
		want := 0
		if c.violation {
			want = 1
		}
		if rep.RobotsViolations != want {
			t.Errorf("%s by %s: %d robots violations, want %d", c.url, c.agent, rep.RobotsViolations, want)
		}
		if want == 1 && (len(rep.RobotsViolationURLs) != 1 || !strings.EqualFold(rep.RobotsViolationURLs[0], c.url)) {
			t.Errorf("RobotsViolationURLs = %v", rep.RobotsViolationURLs)
		}
	}

	// A whole crawl that ignores robots.txt (it fetches it, then pays no
	// attention) is caught once per disallowed URL it fetches.
	web.ResetReport()
	c := &testCrawl{agent: "crawlkit", obey: false}
	c.run(t, web)
	rep := web.Report()
	if len(c.blocked) == 0 || rep.RobotsViolations != len(c.blocked) {
		t.Errorf("robots-ignoring crawl fetched %d disallowed URLs, report counts %d", len(c.blocked), rep.RobotsViolations)
	}
	if rep.BeforeRobots != 0 {
		t.Errorf("BeforeRobots = %d", rep.BeforeRobots)
	}
}

func TestReportCatchesImpoliteClient(t *testing.T) {
	clock := newFakeClock()
	web, err := crawltest.NewWeb(crawltest.Config{
		Hosts: 4, PagesPerHost: 10, NoTraps: true, Now: clock.Now,
		MinGap: 500 * time.Millisecond, CrawlDelay: 2 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer web.Close()
	const ua = "crawlkit/1.0"
	a := "http://h0000.test/"
	b := "http://h0000.test/index.html"
	d := "http://h0003.test/" // RobotsCrawlDelay: 2s

	fetch(t, web, ua, "http://h0000.test/robots.txt")
	fetch(t, web, ua, a)
	fetch(t, web, ua, b) // no time has passed
	clock.Advance(499 * time.Millisecond)
	fetch(t, web, ua, a) // just below MinGap
	clock.Advance(500 * time.Millisecond)
	fetch(t, web, ua, b)                    // exactly MinGap: fine
	fetch(t, web, ua, "http://h0001.test/") // another host: fine, but before its robots.txt

	fetch(t, web, ua, "http://h0003.test/robots.txt")
	fetch(t, web, ua, d)
	clock.Advance(time.Second) // MinGap is met, Crawl-delay is not
	fetch(t, web, ua, d)
	clock.Advance(2 * time.Second)
	fetch(t, web, ua, d)

	rep := web.Report()
	if rep.SpacingViolations != 3 || rep.ConcurrencyViolations != 0 {
		t.Errorf("spacing %d (want 3), concurrency %d (want 0)", rep.SpacingViolations, rep.ConcurrencyViolations)
	}
	if h := rep.Hosts["h0000.test"]; h.SpacingViolations != 2 || h.MinGap != 0 || h.Gaps != 3 {
		t.Errorf("h0000: %+v", h)
	}
	if h := rep.Hosts["h0003.test"]; h.SpacingViolations != 1 || h.MinGap != time.Second {
		t.Errorf("h0003: %+v", h)
	}
	if rep.BeforeRobots != 1 || rep.Hosts["h0001.test"].BeforeRobots != 1 {
		t.Errorf("BeforeRobots = %d", rep.BeforeRobots)
	}

	// Concurrent requests to one host: the first request is held on the
	// server until the second has been accounted.
	testConcurrency(t, clock, "http://h0001.test/", "http://h0001.test/index.html", 1)
	// Concurrent requests to different hosts are fine.
	testConcurrency(t, clock, "http://h0000.test/", "http://h0001.test/", 0)
}

func testConcurrency(t *testing.T, clock *fakeClock, first, second string, want int) {
	t.Helper()
	held := make(chan struct{})
	release := make(chan struct{})
	var once sync.Once
	web, err := crawltest.NewWeb(crawltest.Config{
		Hosts: 2, PagesPerHost: 10, NoTraps: true, Now: clock.Now,
		OnRequest: func(r *http.Request) {
			if r.URL.Path == "/" && r.Host == strings.TrimPrefix(strings.TrimSuffix(first, "/"), "http://") {
				once.Do(func() {
					close(held)
					<-release
				})
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer web.Close()
	done := make(chan int)
	go func() {
		resp, err := web.Client().Get(first)
		if err != nil {
			done <- 0
			return
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		done <- resp.StatusCode
	}()
	<-held
	fetch(t, web, "crawlkit", second)
	close(release)
	if status := <-done; status != http.StatusOK {
		t.Fatalf("held request: status %d", status)
	}
	rep := web.Report()
	if rep.ConcurrencyViolations != want {
		t.Errorf("%s while %s in flight: %d concurrency violations, want %d", second, first, rep.ConcurrencyViolations, want)
	}
	if want > 0 && rep.Hosts[strings.Split(second, "/")[2]].MaxInFlight != 2 {
		t.Errorf("MaxInFlight: %+v", rep.Hosts)
	}
}

func TestReportPoliteCrawlIsClean(t *testing.T) {
	clock := newFakeClock()
	web, err := crawltest.NewWeb(crawltest.Config{Hosts: 8, PagesPerHost: 20, Now: clock.Now, MinGap: time.Second, MaxDepth: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer web.Close()
	truth := web.Truth()
	c := &testCrawl{agent: "crawlkit", obey: true, maxDepth: 3, clock: clock, step: time.Second}
	c.run(t, web)
	rep := web.Report()
	if rep.RobotsViolations != 0 || rep.PolitenessViolations() != 0 || rep.BeforeRobots != 0 || rep.DuplicateFetches() != 0 {
		t.Errorf("a polite crawl was blamed: %d robots, %d politeness, %d before robots, %d duplicates",
			rep.RobotsViolations, rep.PolitenessViolations(), rep.BeforeRobots, rep.DuplicateFetches())
	}
	dups, traps := 0, 0
	for u := range rep.PerPage {
		if p, ok := truth.Pages[u]; ok && p.DuplicateOf != "" {
			dups++
		}
		if truth.IsTrap(u) {
			traps++
		}
	}
	if rep.ContentRepeats != dups || dups == 0 {
		t.Errorf("ContentRepeats = %d, the crawl fetched %d exact duplicates", rep.ContentRepeats, dups)
	}
	if rep.TrapFetches != traps || traps == 0 {
		t.Errorf("TrapFetches = %d, the crawl fetched %d trap pages", rep.TrapFetches, traps)
	}
	for _, h := range web.Hosts() {
		if rep.RobotsFetches[h.Name] != 1 {
			t.Errorf("%s: robots.txt fetched %d times", h.Name, rep.RobotsFetches[h.Name])
		}
	}
}

func TestLatencyAndOnRequest(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	web, err := crawltest.NewWeb(crawltest.Config{
		Hosts: 1, PagesPerHost: 3, Latency: time.Millisecond,
		OnRequest: func(r *http.Request) {
			mu.Lock()
			defer mu.Unlock()
			seen = append(seen, r.URL.Path)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer web.Close()
	if status := fetch(t, web, "crawlkit", "http://h0000.test/"); status != http.StatusOK {
		t.Fatalf("status %d", status)
	}
	fetch(t, web, "crawlkit", web.HostileURL(crawltest.HostileBinary))
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 2 || seen[0] != "/" || seen[1] != "/"+crawltest.HostileBinary {
		t.Errorf("OnRequest saw %v", seen)
	}
}

// A request is judged by the URL it actually sent as well as by the page it
// names: robots.txt rules are matched against the request target (RFC 9309
// §2.2.2, with "$" anchoring at the end of path and query), so a spelling
// that the rules disallow is a violation even where the canonical URL of
// the same page is allowed.
func TestReportJudgesRobotsOnRequestedSpelling(t *testing.T) {
	web, err := crawltest.NewWeb(crawltest.Config{Hosts: 6, PagesPerHost: 20, NoTraps: true})
	if err != nil {
		t.Fatal(err)
	}
	defer web.Close()
	if web.Hosts()[5].Robots != crawltest.RobotsWildcard {
		t.Fatalf("unexpected variants: %+v", web.Hosts())
	}
	private5 := pageIn(t, web, "h0005.test", "/private/") // allowed by Allow: /private/*.html$
	shopPrint := ""
	for _, u := range web.TruthFor("crawlkit", 0).URLs() {
		if strings.HasPrefix(u, "http://h0005.test/shop/item?") && strings.HasSuffix(u, "&print=1") {
			shopPrint = u
		}
	}
	if shopPrint == "" {
		t.Fatal("no allowed shop print page on h0005.test")
	}
	base, query, _ := strings.Cut(shopPrint, "?")
	reordered := base + "?print=1&" + strings.TrimSuffix(query, "&print=1") // matches Disallow: /*?print=
	for _, c := range []struct {
		url       string
		violation bool
	}{
		{private5, false},
		{private5 + "#top", false},
		{strings.Replace(private5, "/private/", "/%70rivate/", 1), false},
		{private5 + "?utm_source=feed&utm_medium=referral", true}, // "$" does not match before a query
		{private5 + "?", true},
		{shopPrint, false},
		{reordered, true},
		{strings.Replace(reordered, "?print", "?%70rint", 1), true}, // unreserved escapes are decoded first
	} {
		web.ResetReport()
		if status := fetch(t, web, "crawlkit/1.0", c.url); status != http.StatusOK {
			t.Fatalf("%s: status %d", c.url, status)
		}
		want := 0
		if c.violation {
			want = 1
		}
		if rep := web.Report(); rep.RobotsViolations != want {
			t.Errorf("%s: %d robots violations, want %d", c.url, rep.RobotsViolations, want)
		}
	}
}
