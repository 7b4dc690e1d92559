package robots_test

import (
	"os"
	"strings"
	"testing"

	"github.com/crawlkit/crawlkit/robots"
)

// TestContentUsageConformance walks testdata/usage/content-usage.txt: the
// examples of draft-ietf-aipref-attach and contentsignals.org, and the
// grouping rules the extension lines follow.
func TestContentUsageConformance(t *testing.T) {
	data, err := os.ReadFile("testdata/usage/content-usage.txt")
	if err != nil {
		t.Fatal(err)
	}
	cases := 0
	for _, block := range strings.Split(string(data), "\n@@ robots.txt ")[1:] {
		head, rest, _ := strings.Cut(block, "\n")
		body, caseLines, ok := strings.Cut(rest, "@@ cases\n")
		if !ok {
			t.Fatalf("%s: no cases", head)
		}
		p := robots.ParseString(body)
		for _, line := range strings.Split(strings.TrimRight(caseLines, "\n"), "\n") {
			if line == "" {
				continue
			}
			lhs, want, ok := strings.Cut(line, " =>")
			if !ok {
				t.Fatalf("%s: bad case %q", head, line)
			}
			want = strings.TrimPrefix(want, " ")
			f := strings.Fields(lhs)
			var got []string
			if f[0] == "signals" {
				sigs, err := p.ContentSignals(f[1])
				if err != nil {
					t.Fatal(err)
				}
				for _, s := range sigs {
					got = append(got, s.Value)
				}
			} else {
				rules, err := p.ContentUsage(f[0], f[1])
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range rules {
					got = append(got, r.Preference)
				}
			}
			g := strings.Join(got, " | ")
			if got == nil {
				g = "-"
			}
			if g != want {
				t.Errorf("%s\n%s: got %q, want %q", head, lhs, g, want)
			}
			cases++
		}
	}
	t.Logf("%d cases", cases)
	if cases < 20 {
		t.Fatalf("only %d cases read", cases)
	}
}

// TestContentUsageLeavesMatching checks that the extension lines change no
// Allow/Disallow decision: the same file with them removed decides the same.
func TestContentUsageLeavesMatching(t *testing.T) {
	with := "User-agent: a\nContent-Usage: train-ai=n\nUser-agent: b\nContent-Signal: search=no\nDisallow: /x\nContent-Usage: /y train-ai=y\nAllow: /x/y\n"
	var kept []string
	for _, l := range strings.Split(with, "\n") {
		if !strings.HasPrefix(l, "Content-") {
			kept = append(kept, l)
		}
	}
	p1, p2 := robots.ParseString(with), robots.ParseString(strings.Join(kept, "\n"))
	for _, agent := range []string{"a", "b", "c"} {
		for _, path := range []string{"/", "/x", "/x/y", "/y"} {
			d1, _ := p1.Allowed(agent, path)
			d2, _ := p2.Allowed(agent, path)
			if d1.Allowed != d2.Allowed || d1.Reason != d2.Reason {
				t.Errorf("%s %s: %+v with the extension lines, %+v without", agent, path, d1, d2)
			}
		}
	}
}

func TestMatchPattern(t *testing.T) {
	for _, c := range []struct {
		pattern, target string
		want            bool
	}{
		{"/", "https://example.com/", true},
		{"/directory-a/", "/directory-a/x.pdf", true},
		{"/directory-b/images/*.jpg", "/directory-b/images/a/b.jpg", true},
		{"/directory-b/images/*.jpg", "/directory-b/html/b.jpg", false},
		{"/this/path/exactly$", "/this/path/exactly", true},
		{"/this/path/exactly$", "/this/path/exactly/not", false},
		{"/this/*/then", "/this/a/b/then/x", true},
		{"/path/foo-%24", "https://provider.com/path/foo-$", true},
		{"/%7Ea", "/~a", true},
		{"", "/", false},
		{"x", "/x", true},
	} {
		if got := robots.MatchPattern(c.pattern, c.target); got != c.want {
			t.Errorf("MatchPattern(%q, %q) = %v, want %v", c.pattern, c.target, got, c.want)
		}
	}
}

// FuzzContentUsage checks that no file or URL makes the extension lines
// panic, and that a URL robots.txt disallows has no preferences.
func FuzzContentUsage(f *testing.F) {
	f.Add("User-agent: *\nContent-Usage: /a*b$ train-ai=n\nContent-Signal: search=yes\nDisallow: /x\n", "/a/b")
	f.Add("Content-Usage: /\nUser-agent: x\ncontent-usage:\t/%zz\t\nContent-Usage: *\n", "/%zz")
	f.Fuzz(func(t *testing.T, body, path string) {
		p := (robots.Config{MaxFileBytes: 4096}).Parse([]byte(body))
		a, err := p.Agent("ExampleBot")
		if err != nil {
			t.Fatal(err)
		}
		path = "/" + strings.ReplaceAll(path, "#", "")
		rules := a.ContentUsage(path)
		if len(rules) > 0 && !a.Allowed(path).Allowed {
			t.Fatalf("%q is disallowed but has preferences %v", path, rules)
		}
		for _, r := range rules {
			if r.Path != "" && !robots.MatchPattern(r.Path, path) {
				t.Fatalf("rule %+v returned for %q", r, path)
			}
		}
		_ = a.ContentSignals()
	})
}
