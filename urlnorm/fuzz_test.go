package urlnorm

import (
	"errors"
	"net/url"
	"testing"

	"github.com/crawlkit/crawlkit/internal/urlcorpus"
)

var fuzzSeeds = []string{
	"HTTP://Example.COM:80/a/./b/../c?b=2&a=1#f",
	"example.com/x", "//x/y", `http:\\x\y`, "http://[::1]:8080/", "http://0x7f.1/",
	"http://bücher.de/ü?ü#ü", "http://a/%2e%2E/%zz%", "http://u:p@h/;jsessionid=1?utm_source=x",
	"http://h/b/..;jsessionid=1/a",
	"http://host/%2525252525252525", "http://x/index.html/", "mailto:x", "\x00http://x/\t\n ",
	"http://xn--bcher-kva.de./", "http://1.2.3.4.5/", "http://a..b.../", "http://[::ffff:1.2.3.4]/",
	".[", "http://..[x/", "http://www.[x/",
}

// FuzzNormalize checks that Normalize never panics, that its errors match
// a sentinel, and that every profile is idempotent.
func FuzzNormalize(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	for _, s := range urlcorpus.Generate(3, 50) {
		f.Add(s)
	}
	profiles := []*Config{profile(Safe()), profile(Crawler()), profile(Aggressive()), profile(SafeBrowsing())}
	f.Fuzz(func(t *testing.T, raw string) {
		for i, o := range profiles {
			n1, err := o.Normalize(raw)
			if err != nil {
				if !errors.Is(err, ErrInvalid) && !errors.Is(err, ErrUnsupportedScheme) {
					t.Fatalf("profile %d: Normalize(%q) error %v matches no sentinel", i, raw, err)
				}
				continue
			}
			n2, err := o.Normalize(n1)
			if err != nil {
				t.Fatalf("profile %d: Normalize(%q) = %q, which is rejected: %v", i, raw, n1, err)
			}
			if n1 != n2 {
				t.Fatalf("profile %d: not idempotent: %q -> %q -> %q", i, raw, n1, n2)
			}
		}
	})
}

// FuzzResolve checks that Resolve never panics and returns an absolute URL
// or an error, and that ResolveString agrees with it.
func FuzzResolve(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add("http://example.org/a/b?q#f", s)
	}
	f.Add("https://u:p@[::1]:8443/x/", "../../y")
	f.Add("http://example.org/", "///example.org/../path")
	f.Fuzz(func(t *testing.T, base, ref string) {
		bu, err := url.Parse(base)
		if err != nil {
			bu = nil
		}
		u, err := Resolve(bu, ref)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("Resolve(%q, %q) error %v does not match ErrInvalid", base, ref, err)
			}
			return
		}
		if u == nil || !u.IsAbs() {
			t.Fatalf("Resolve(%q, %q) = %v, not absolute", base, ref, u)
		}
		s, err := ResolveString(base, ref)
		if err != nil {
			return // base may differ: url.Parse and ResolveString read it differently
		}
		if u.Scheme == "http" || u.Scheme == "https" {
			// The standard serialization parses back to itself.
			again, err := ResolveString("", s)
			if err != nil || again != s {
				t.Fatalf("ResolveString(%q, %q) = %q, which re-resolves to %q (%v)", base, ref, s, again, err)
			}
		}
	})
}
