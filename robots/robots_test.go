package robots_test

import (
	"errors"
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/robots"
)

func mustAllowed(t *testing.T, p *robots.Policy, agent, target string) robots.Decision {
	t.Helper()
	d, err := p.Allowed(agent, target)
	if err != nil {
		t.Fatalf("Allowed(%q, %q): %v", agent, target, err)
	}
	return d
}

func TestDecisionReportsDecidingRule(t *testing.T) {
	p := robots.ParseString("User-agent: *\nDisallow: /private/\nAllow: /private/open\n# c\nDisallow: /*.pdf$\n")
	tests := []struct {
		target  string
		allowed bool
		reason  robots.Reason
		line    int
	}{
		{"/private/x", false, robots.ReasonRule, 2},
		{"https://example.com/private/open/1", true, robots.ReasonRule, 3},
		{"/docs/a.pdf", false, robots.ReasonRule, 5},
		{"/docs/a.pdf?x=1", true, robots.ReasonNoRule, 0},
		{"/public", true, robots.ReasonNoRule, 0},
		{"/robots.txt", true, robots.ReasonRobotsTxt, 0},
	}
	for _, tt := range tests {
		d := mustAllowed(t, p, "ExampleBot", tt.target)
		if d.Allowed != tt.allowed || d.Reason != tt.reason || d.Rule.Line != tt.line {
			t.Errorf("%s: got %+v, want allowed=%v reason=%v line=%d", tt.target, d, tt.allowed, tt.reason, tt.line)
		}
	}
	d := mustAllowed(t, p, "ExampleBot", "/private/open")
	if want := (robots.Rule{Allow: true, Pattern: "/private/open", Line: 3}); d.Rule != want {
		t.Errorf("rule = %+v, want %+v", d.Rule, want)
	}
}

func TestNoGroupAllowsEverything(t *testing.T) {
	p := robots.ParseString("User-agent: OtherBot\nDisallow: /\n")
	if d := mustAllowed(t, p, "ExampleBot", "/x"); !d.Allowed || d.Reason != robots.ReasonNoGroup {
		t.Errorf("got %+v, want allowed by ReasonNoGroup", d)
	}
	if d := mustAllowed(t, p, "otherbot", "/x"); d.Allowed {
		t.Errorf("otherbot allowed: %+v", d)
	}
}

func TestInvalidProductToken(t *testing.T) {
	p := robots.ParseString("User-agent: *\nDisallow: /\n")
	for _, tok := range []string{"", "Foo Bar", "Foo/1.0", "bot1", "*"} {
		_, err := p.Allowed(tok, "/")
		if !errors.Is(err, robots.ErrInvalidAgent) {
			t.Errorf("Allowed(%q) error = %v, want ErrInvalidAgent", tok, err)
		}
		if robots.ValidProductToken(tok) {
			t.Errorf("ValidProductToken(%q) = true", tok)
		}
	}
	for _, tok := range []string{"ExampleBot", "my-bot", "my_bot"} {
		if !robots.ValidProductToken(tok) {
			t.Errorf("ValidProductToken(%q) = false", tok)
		}
	}
	// With the Google extensions an invalid token gets the "*" group.
	g := robots.Config{GoogleExtensions: true}.Parse([]byte("User-agent: *\nDisallow: /\nUser-agent: Foo\nAllow: /\n"))
	d, err := g.Allowed("Foo Bar", "/x")
	if err != nil || d.Allowed {
		t.Errorf("google extension: got %+v, %v; want disallowed by the * group", d, err)
	}
}

func TestGoogleExtensionsAreOffByDefault(t *testing.T) {
	cases := []struct {
		body, target string
	}{
		{"user-agent: FooBot\ndissallow: /x/\n", "/x/y"},
		{"user agent: FooBot\ndisallow: /x/\n", "/x/y"},
		{"user-agent: FooBot\ndisallow /x/\n", "/x/y"},
		{"\xefuser-agent: FooBot\ndisallow: /x/\n", "/x/y"},
	}
	for _, c := range cases {
		if d := mustAllowed(t, robots.ParseString(c.body), "FooBot", c.target); !d.Allowed {
			t.Errorf("%q: disallowed by default (%+v); the leniency must need the option", c.body, d)
		}
		g := robots.Config{GoogleExtensions: true}.Parse([]byte(c.body))
		if d := mustAllowed(t, g, "FooBot", c.target); d.Allowed {
			t.Errorf("%q: allowed with GoogleExtensions", c.body)
		}
	}
	// index.html as a directory.
	body := []byte("User-agent: *\nAllow: /d/index.html\nDisallow: /\n")
	if d := mustAllowed(t, robots.Parse(body), "FooBot", "/d/"); d.Allowed {
		t.Error("/d/ allowed without GoogleExtensions")
	}
	d := mustAllowed(t, robots.Config{GoogleExtensions: true}.Parse(body), "FooBot", "/d/")
	if !d.Allowed || d.Rule.Pattern != "/d/$" || d.Rule.Line != 2 {
		t.Errorf("with GoogleExtensions: %+v, want allowed by /d/$ from line 2", d)
	}
}

func TestCrawlDelay(t *testing.T) {
	body := "User-Agent: bingbot\r\nCrawl-delay: 1\r\n\r\nUser-Agent: msnbot\r\nCrawl-delay: 2.5\r\n\r\n" +
		"User-agent: *\r\nDisallow: /login\r\n\r\nUser-agent: slowbot\r\nCrawl-delay: 120\r\n" +
		"User-agent: slowbot\r\nCrawl-delay: 90\r\nUser-agent: badbot\r\nCrawl-delay: soon\r\nDisallow: /\r\n"
	p := robots.ParseString(body)
	tests := []struct {
		agent    string
		set      bool
		seconds  float64
		exceeded bool
		capped   time.Duration
	}{
		{"bingbot", true, 1, false, time.Second},
		{"msnbot", true, 2.5, false, 2500 * time.Millisecond},
		{"anybot", false, 0, false, 0},
		{"slowbot", true, 120, true, robots.DefaultMaxCrawlDelay}, // largest of the merged groups
		{"badbot", false, 0, false, 0},
	}
	for _, tt := range tests {
		d, err := p.CrawlDelay(tt.agent)
		if err != nil {
			t.Fatal(err)
		}
		if d.Set != tt.set || d.Seconds != tt.seconds || d.Exceeded != tt.exceeded || d.Capped() != tt.capped {
			t.Errorf("%s: got %+v (capped %v), want set=%v seconds=%v exceeded=%v capped=%v",
				tt.agent, d, d.Capped(), tt.set, tt.seconds, tt.exceeded, tt.capped)
		}
	}
	// The unreadable Crawl-delay did not invalidate the group's rules.
	if d := mustAllowed(t, p, "badbot", "/x"); d.Allowed {
		t.Error("badbot allowed; the bad Crawl-delay line must not drop the group's rules")
	}
	// bingbot, msnbot and * form one group (Crawl-delay does not end a group).
	if d := mustAllowed(t, p, "bingbot", "/login"); d.Allowed {
		t.Error("bingbot allowed /login; it shares the * group's rules")
	}
	// A larger configured maximum is honoured.
	q := robots.Config{MaxCrawlDelay: 5 * time.Minute}.Parse([]byte(body))
	if d, _ := q.CrawlDelay("slowbot"); d.Exceeded || d.Capped() != 120*time.Second || d.Duration() != 120*time.Second {
		t.Errorf("with a 5 min maximum: %+v", d)
	}
}

func TestSitemapsAndRules(t *testing.T) {
	p := robots.ParseString("Sitemap: https://example.com/a.xml\nUser-agent: *\nDisallow: /x # why\n" +
		"sitemap : https://example.com/b.xml\nAllow:\n")
	want := []string{"https://example.com/a.xml", "https://example.com/b.xml"}
	if got := p.Sitemaps(); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("Sitemaps = %q, want %q", got, want)
	}
	rules := p.Rules()
	if len(rules) != 1 || rules[0] != (robots.Rule{Pattern: "/x", Line: 3}) {
		t.Errorf("Rules = %+v, want the one Disallow /x of line 3", rules)
	}
}

func TestTruncationDropsPartialLine(t *testing.T) {
	head := "User-agent: *\nDisallow: /a\n"
	body := head + "Disallow: /b\n"
	// Cut inside "Disallow: /b": that line must not become "Disallow: /".
	p := robots.Config{MaxFileBytes: len(head) + 11}.Parse([]byte(body))
	if !p.Truncated() || p.Size() != len(head) {
		t.Fatalf("Truncated=%v Size=%d, want true and %d", p.Truncated(), p.Size(), len(head))
	}
	if d := mustAllowed(t, p, "bot", "/b"); !d.Allowed {
		t.Errorf("/b disallowed by a partial line: %+v", d)
	}
	if d := mustAllowed(t, p, "bot", "/a"); d.Allowed {
		t.Error("/a allowed; the complete line must apply")
	}
	if p := robots.ParseString(body); p.Truncated() {
		t.Error("short body reported as truncated")
	}
}

func TestTargets(t *testing.T) {
	p := robots.ParseString("User-agent: *\nDisallow: /$\nDisallow: /a%2Fb\nDisallow: /~x\nDisallow: /*?q=\n")
	tests := []struct {
		target  string
		allowed bool
	}{
		{"https://example.com", false},        // empty path is "/"
		{"https://example.com#frag", false},   // fragment ignored
		{"https://example.com/#frag", false},  //
		{"?q=1", false},                       // query only: path "/?q=1"
		{"http://example.com/a%2fb", false},   // hex case does not matter
		{"https://example.com/a/b", true},     // %2F is not "/"
		{"https://example.com/%7Ex/1", false}, // %7E is "~"
		{"https://user@example.com:8080/?q=", false},
		{"/page?q=1", false},
		{"/page?r=1", true},
	}
	for _, tt := range tests {
		if d := mustAllowed(t, p, "bot", tt.target); d.Allowed != tt.allowed {
			t.Errorf("%q: allowed=%v, want %v (%+v)", tt.target, d.Allowed, tt.allowed, d)
		}
	}
}

func TestAllowAllDisallowAll(t *testing.T) {
	a, d := robots.AllowAll(), robots.DisallowAll()
	if got := mustAllowed(t, a, "bot", "/x"); !got.Allowed || got.Reason != robots.ReasonUnavailable {
		t.Errorf("AllowAll: %+v", got)
	}
	if got := mustAllowed(t, d, "bot", "/x"); got.Allowed || got.Reason != robots.ReasonUnreachable {
		t.Errorf("DisallowAll: %+v", got)
	}
	if got := mustAllowed(t, d, "bot", "/robots.txt"); !got.Allowed {
		t.Errorf("DisallowAll must still allow /robots.txt: %+v", got)
	}
	if a.Source() != robots.SourceUnavailable || d.Source() != robots.SourceUnreachable || robots.ParseString("").Source() != robots.SourceFile {
		t.Error("wrong Source")
	}
}

func TestAgentRulesAreSharedAndConcurrent(t *testing.T) {
	p := robots.ParseString(genRobots(10<<10, 3))
	a1, _ := p.Agent("ExampleBot")
	a2, _ := p.Agent("EXAMPLEBOT")
	if a1 != a2 || a1.Agent() != "*" {
		t.Errorf("Agent lookups differ or wrong group: %q %q", a1.Agent(), a2.Agent())
	}
	g, _ := p.Agent("googlebot")
	if g.Agent() != "googlebot" {
		t.Errorf("Agent(googlebot).Agent() = %q", g.Agent())
	}
	// Concurrent first use compiles once and answers consistently.
	urls := genURLs(200, 4)
	ref, _ := robots.ParseString(genRobots(10<<10, 3)).Agent("ExampleBot")
	want := make([]bool, len(urls))
	disallowed := 0
	for i, u := range urls {
		want[i] = ref.Allowed(u).Allowed
		if !want[i] {
			disallowed++
		}
	}
	if disallowed == 0 || disallowed == len(urls) {
		t.Fatalf("%d of %d URLs disallowed; the test needs both answers", disallowed, len(urls))
	}
	done := make(chan []bool)
	for w := 0; w < 8; w++ {
		go func() {
			got := make([]bool, len(urls))
			for i, u := range urls {
				got[i] = a1.Allowed(u).Allowed
			}
			done <- got
		}()
	}
	for w := 0; w < 8; w++ {
		got := <-done
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("concurrent Allowed(%q) = %v, sequential %v", urls[i], got[i], want[i])
			}
		}
	}
}

// refMatch is a direct reading of RFC 9309 §2.2.2–2.2.3 for patterns and
// paths without escapes: "*" matches any sequence, a final "$" the end, and
// the pattern is anchored at the start of the path.
func refMatch(pat, path string) bool {
	if pat == "" {
		return true
	}
	if pat == "$" {
		return path == ""
	}
	if pat[0] == '*' {
		for i := 0; i <= len(path); i++ {
			if refMatch(pat[1:], path[i:]) {
				return true
			}
		}
		return false
	}
	return path != "" && path[0] == pat[0] && refMatch(pat[1:], path[1:])
}

// refAllowed is the brute-force decision: the longest matching pattern
// wins, Allow wins a tie, no match allows.
func refAllowed(rules []robots.Rule, path string) bool {
	best, allowed := -1, true
	for _, r := range rules {
		if !refMatch(r.Pattern, path) {
			continue
		}
		if n := len(r.Pattern); n > best || n == best && r.Allow {
			best, allowed = n, r.Allow
		}
	}
	return allowed
}

// TestCompiledMatcherAgreesWithBruteForce checks the radix tree, the bigram
// filter, duplicate folding and the pruning of wildcard rules against a
// brute-force reading of the RFC on random files, with few and with many
// wildcard rules per tree node.
func TestCompiledMatcherAgreesWithBruteForce(t *testing.T) {
	r := rand.New(rand.NewSource(2022))
	pick := func(alphabet string, n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[r.Intn(len(alphabet))]
		}
		return string(b)
	}
	disallowed, total := 0, 0
	for iter := 0; iter < 400; iter++ {
		var body strings.Builder
		body.WriteString("User-agent: *\n")
		nrules := 1 + r.Intn(6)
		if iter%4 == 0 {
			nrules = 20 + r.Intn(40) // many wildcard rules share nodes
		}
		for i := 0; i < nrules; i++ {
			pat := "/" + pick("ab/*", r.Intn(6))
			if r.Intn(4) == 0 {
				pat += "$"
			}
			kind := "Disallow"
			if r.Intn(2) == 0 {
				kind = "Allow"
			}
			fmt.Fprintf(&body, "%s: %s\n", kind, pat)
		}
		p := robots.ParseString(body.String())
		a, err := p.Agent("bot")
		if err != nil {
			t.Fatal(err)
		}
		for j := 0; j < 40; j++ {
			path := "/" + pick("ab/", r.Intn(9))
			if path == "/robots.txt" {
				continue
			}
			got, want := a.Allowed(path).Allowed, refAllowed(p.Rules(), path)
			if got != want {
				t.Fatalf("file:\n%s\npath %q: allowed=%v, brute force %v (%+v)", body.String(), path, got, want, a.Allowed(path))
			}
			total++
			if !want {
				disallowed++
			}
		}
	}
	if disallowed == 0 || disallowed == total {
		t.Fatalf("%d of %d disallowed; the comparison needs both answers", disallowed, total)
	}
}
