package trap

import (
	"strings"
	"testing"
)

// FuzzJudge feeds arbitrary URLs, sources and fingerprints to a detector
// with small limits: it must never panic, every rejection must carry a
// reason that starts with its rule's name, and a URL accepted once must be
// accepted again while nothing else was learned in between.
func FuzzJudge(f *testing.F) {
	for _, s := range []string{
		"http://example.com/",
		"https://a.example/calendar/2031/01/?date=2031-01-01&month=13&year=2031",
		"http://x.example/a/b/a/b/a/b;jsessionid=1?PHPSESSID=2&t=1763726400",
		"http://[::1]:8080/(S(abc))/x?q=a+b+c",
		"http://u1.farm.example:80/%zz?&&=&a==b",
		"HTTP://EXAMPLE.COM:443/..//./?",
	} {
		f.Add(s, "http://a.example/2025/11/", uint64(0))
	}
	f.Fuzz(func(t *testing.T, raw, source string, fp uint64) {
		d := New(Config{MaxHosts: 4, MaxTrackedURLs: 8, HostBudget: 5, PatternBudget: 3, MaxPathDepth: 40})
		for i := 0; i < 3; i++ {
			v := d.JudgeAt(now, Candidate{URL: raw, Source: source, Depth: i})
			if v.Rejected() && !strings.HasPrefix(v.Reason, string(v.Rule)+": ") {
				t.Fatalf("reason %q does not start with rule %q", v.Reason, v.Rule)
			}
			if !v.Rejected() && v.Reason != "" {
				t.Fatalf("accepted with reason %q", v.Reason)
			}
			if i > 0 && !v.Rejected() {
				if again := d.JudgeAt(now, Candidate{URL: raw, Source: source, Depth: i}); again.Rejected() {
					t.Fatalf("accepted, then %v", again)
				}
			}
			d.Observe(raw, fp)
			d.Observe(source, fp^uint64(i))
		}
	})
}
