package robots_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/robots"
)

// TestTruncationKeepsLineEndingAtLimit: a line whose every octet lies within
// MaxBytes is complete when the octet just past the limit ends it, so it
// must still apply (RFC 9309 §2.5: the first MaxBytes octets are parsed).
func TestTruncationKeepsLineEndingAtLimit(t *testing.T) {
	for _, eol := range []string{"\n", "\r\n", "\r"} {
		head := "User-agent: *" + eol + "Disallow: /a" + eol
		last := "Disallow: /b"
		body := head + last + eol + "Disallow: /c" + eol
		p := robots.Config{MaxFileBytes: len(head) + len(last)}.Parse([]byte(body))
		if !p.Truncated() || p.Size() != len(head)+len(last) {
			t.Errorf("eol %q: Truncated=%v Size=%d, want true and %d", eol, p.Truncated(), p.Size(), len(head)+len(last))
		}
		if d := mustAllowed(t, p, "bot", "/b"); d.Allowed {
			t.Errorf("eol %q: /b allowed; its line is complete within the limit", eol)
		}
		if d := mustAllowed(t, p, "bot", "/c"); !d.Allowed {
			t.Errorf("eol %q: /c disallowed by a line past the limit", eol)
		}
	}
	// One octet less and the line is cut: it must be dropped, not read as
	// "Disallow: /".
	head := "User-agent: *\nDisallow: /a\n"
	p := robots.Config{MaxFileBytes: len(head) + len("Disallow: /")}.Parse([]byte(head + "Disallow: /b\n"))
	if d := mustAllowed(t, p, "bot", "/x"); !d.Allowed || p.Size() != len(head) {
		t.Errorf("cut line applied: %+v, Size %d", d, p.Size())
	}
}

// TestRobotsTxtAlwaysAllowedWhenEscaped: RFC 9309 §2.2.2 makes /robots.txt
// implicitly allowed, and compares paths after decoding percent-encoded
// unreserved characters, so "/%72obots.txt" is that same URI.
func TestRobotsTxtAlwaysAllowedWhenEscaped(t *testing.T) {
	p := robots.ParseString("User-agent: *\nDisallow: /\n")
	for _, target := range []string{"/%72obots.txt", "/robots%2etxt", "http://h/%72%6F%62%6F%74%73%2E%74%78%74?x=1"} {
		if d := mustAllowed(t, p, "bot", target); !d.Allowed || d.Reason != robots.ReasonRobotsTxt {
			t.Errorf("%q: %+v, want allowed as robots.txt", target, d)
		}
	}
	for _, target := range []string{"/robots%2Etxt%2F", "/robots.txt%3F", "/robots.txt/x", "/%2Frobots.txt"} {
		if d := mustAllowed(t, p, "bot", target); d.Allowed {
			t.Errorf("%q allowed; it is not /robots.txt", target)
		}
	}
}

// TestCrawlDelayTooLargeToRepresent: a Crawl-delay too large for a float64
// is a very long delay, not no delay; it must be reported as Exceeded like
// any other value above the maximum.
func TestCrawlDelayTooLargeToRepresent(t *testing.T) {
	for _, v := range []string{"1e300", "1e400", "9e99999"} {
		p := robots.ParseString("User-agent: *\nCrawl-delay: " + v + "\n")
		d, err := p.CrawlDelay("bot")
		if err != nil {
			t.Fatal(err)
		}
		if !d.Set || !d.Exceeded || d.Capped() != robots.DefaultMaxCrawlDelay {
			t.Errorf("Crawl-delay %s: %+v, want set and exceeded", v, d)
		}
	}
	// Negative and unreadable values are still skipped.
	for _, v := range []string{"-1e400", "-1", "soon", "NaN"} {
		p := robots.ParseString("User-agent: *\nCrawl-delay: " + v + "\n")
		if d, _ := p.CrawlDelay("bot"); d.Set {
			t.Errorf("Crawl-delay %s: %+v, want unset", v, d)
		}
	}
}

// FuzzMatcherAgainstBruteForce gives the compiled matcher (radix tree,
// bigram filter, wildcard pruning, duplicate folding) an oracle: for rules
// and paths over a small alphabet without escapes, its answer must equal a
// direct reading of RFC 9309 §2.2.2–2.2.3 (refAllowed). FuzzParse only
// checks that matching does not panic and is self-consistent.
func FuzzMatcherAgainstBruteForce(f *testing.F) {
	f.Add([]byte("/a*b$\x00/a\x01*\x00/ab$"), []byte("/aab"))
	f.Add([]byte("*\x01/\x00/*a*a*b$"), []byte("/aaab?a"))
	f.Fuzz(func(t *testing.T, spec, rawPath []byte) {
		const alphabet = "ab/*$?"
		if len(spec) > 200 || len(rawPath) > 24 {
			return
		}
		// spec is rules separated by NUL; a rule starting with 0x01 is an
		// Allow. Octets map onto the alphabet.
		var rules []robots.Rule
		body := "User-agent: *\n"
		for _, r := range bytes.Split(spec, []byte{0}) {
			allow := len(r) > 0 && r[0] == 1
			if allow {
				r = r[1:]
			}
			if len(r) == 0 || len(r) > 12 {
				continue
			}
			pat := make([]byte, len(r))
			for i, c := range r {
				pat[i] = alphabet[int(c)%len(alphabet)]
			}
			if pat[0] != '*' {
				pat[0] = '/'
			}
			rules = append(rules, robots.Rule{Allow: allow, Pattern: string(pat)})
			kind := "Disallow: "
			if allow {
				kind = "Allow: "
			}
			body += kind + string(pat) + "\n"
		}
		path := []byte{'/'}
		for _, c := range rawPath {
			path = append(path, "ab/$?"[int(c)%5])
		}
		if string(path) == "/robots.txt" {
			return
		}
		a, err := robots.ParseString(body).Agent("bot")
		if err != nil {
			t.Fatal(err)
		}
		if got, want := a.Allowed(string(path)).Allowed, refAllowed(rules, string(path)); got != want {
			t.Fatalf("file:\n%spath %q: allowed=%v, brute force %v", body, path, got, want)
		}
	})
}

// TestHostileWildcardsStayLinear guards against a backtracking matcher:
// patterns of thousands of "*" whose segments nearly match a 100 KB path
// must be decided in about one pass over the path per rule (well under a
// millisecond each on a laptop; the bound here is only a generous guard).
func TestHostileWildcardsStayLinear(t *testing.T) {
	path := "/" + strings.Repeat("a", 100<<10)
	bodies := []string{
		"/" + strings.Repeat("*a", 20000) + "b",
		"/" + strings.Repeat("*a", 20000) + "$",
		"/" + strings.Repeat("*", 100000) + "b",
		"/*" + strings.Repeat("a", 1000) + "b*" + strings.Repeat("a", 1000) + "b$",
	}
	start := time.Now()
	for _, pat := range bodies {
		p := robots.ParseString("User-agent: *\nDisallow: " + pat + "\n")
		for i := 0; i < 10; i++ {
			mustAllowed(t, p, "bot", path)
		}
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("40 matches of hostile patterns against a 100 KB path took %v", d)
	}
}
