package urlnorm

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/internal/urlcorpus"
)

type normCase struct {
	in, want string
}

func checkNormalize(t *testing.T, o *Config, cases []normCase) {
	t.Helper()
	for _, c := range cases {
		got, err := o.Normalize(c.in)
		if err != nil {
			t.Errorf("Normalize(%q): unexpected error %v", c.in, err)
			continue
		}
		if got != c.want {
			t.Errorf("Normalize(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestCrawlerProfile(t *testing.T) {
	checkNormalize(t, profile(Crawler()), []normCase{
		// Tracking and session parameters, in the query and as path parameters.
		{"http://example.com/a?x=1&utm_source=news&UTM_Medium=mail&gclid=abc", "http://example.com/a?x=1"},
		{"http://example.com/a;jsessionid=0AB12?PHPSESSID=9&sid=3&page=2", "http://example.com/a?page=2"},
		{"http://example.com/a;v=1;JSESSIONID=0AB12/b", "http://example.com/a;v=1/b"},
		// A segment that is a dot segment once its parameter is gone is
		// one: the output must not change when normalized again.
		{"http://example.com/x/..;jsessionid=1/a", "http://example.com/a"},
		{"http://example.com/b/..;jsessionid=1", "http://example.com/"},
		{"http://example.com/.;jsessionid=1/a", "http://example.com/a"},
		{"http://example.com/x/..;v=1/a", "http://example.com/x/..;v=1/a"},
		{"http://example.com/?utm_source=x", "http://example.com/"},
		// Names that merely contain a listed name stay.
		{"http://example.com/?side=1&usid=2&utm=3", "http://example.com/?side=1&usid=2&utm=3"},
		// Path case, trailing slashes and index files are kept.
		{"http://example.com/Docs/Index.html", "http://example.com/Docs/Index.html"},
		{"http://example.com/Docs/", "http://example.com/Docs/"},
		// Scheme-less input, host:port without a scheme.
		{"example.com/a", "http://example.com/a"},
		{"//example.com/a", "http://example.com/a"},
		{"example.com:8080/x", "http://example.com:8080/x"},
		{"localhost:3000", "http://localhost:3000/"},
		// URL Standard parsing: slashes after the scheme, backslashes.
		{"http:example.com", "http://example.com/"},
		{`http:\\example.com\a\b`, "http://example.com/a/b"},
		{"  http://example.com/a\tb\n  ", "http://example.com/ab"},
		// IP address forms.
		{"http://0x7f.1/", "http://127.0.0.1/"},
		{"http://2130706433/", "http://127.0.0.1/"},
		{"http://0177.0.0.01/", "http://127.0.0.1/"},
		{"http://[0:0::1]:8080/", "http://[::1]:8080/"},
		{"http://[2001:DB8:0:0:0:0:0:1]/", "http://[2001:db8::1]/"},
		// Host escapes, IDN, trailing dot, default and padded ports.
		{"http://ex%41mple.com/", "http://example.com/"},
		{"http://Bücher.DE./", "http://xn--bcher-kva.de/"},
		{"https://example.com:0443/", "https://example.com/"},
		{"http://example.com:08080/", "http://example.com:8080/"},
		// Escapes: "%2e" segments are dot segments once decoded.
		{"http://example.com/a/%2E%2e/b", "http://example.com/b"},
		{"http://example.com/%7euser/%e6%97%a5", "http://example.com/~user/%E6%97%A5"},
		{"http://example.com/?q=%7e%2f", "http://example.com/?q=~%2F"},
		{"http://example.com/日本?q=ü", "http://example.com/%E6%97%A5%E6%9C%AC?q=%C3%BC"},
		// Sorting is by name, then value, and keeps '+' and escapes as they are.
		{"http://example.com/?b=2&a=2&a=1&c", "http://example.com/?a=1&a=2&b=2&c"},
		{"http://example.com/?a.b=1&a=2", "http://example.com/?a=2&a.b=1"},
	})
}

func TestAggressiveProfile(t *testing.T) {
	checkNormalize(t, profile(Aggressive()), []normCase{
		{"HTTP://Example.COM:80/Page/", "http://example.com/page"},
		{"http://example.com/Docs/Index.HTML", "http://example.com/docs"},
		{"http://example.com/a/index.html/", "http://example.com/a"},
		{"http://example.com/a/index.html/index.php", "http://example.com/a"},
		{"http://example.com/index.html", "http://example.com/"},
		{"http://example.com/%41B/", "http://example.com/ab"},
		{"http://example.com/indexes.html", "http://example.com/indexes.html"},
		{"http://example.com/index.shtml5", "http://example.com/index.shtml5"},
	})
}

func TestSafeProfile(t *testing.T) {
	checkNormalize(t, profile(Safe()), []normCase{
		{"HTTP://User:Pw@Example.COM:80/a/../B/?#Frag", "http://User:Pw@example.com/B/?#Frag"},
		{"http://example.com/?b=1&a=2&utm_source=x", "http://example.com/?b=1&a=2&utm_source=x"},
		{"http://example.com//a//", "http://example.com//a//"},
		{"http://example.com./", "http://example.com./"},
		{"FTP://Example.com:21/a/./b", "ftp://example.com/a/b"},
		{"http://example.com/a b#c d", "http://example.com/a%20b#c%20d"},
	})
	if _, err := profile(Safe()).Normalize("example.com/a"); !errors.Is(err, ErrInvalid) {
		t.Errorf("Safe accepted a URL without a scheme (err %v)", err)
	}
}

func TestSafeBrowsingProfile(t *testing.T) {
	// From Google Safe Browsing "URLs and Hashing", canonicalization
	// examples not in the shared suite.
	checkNormalize(t, profile(SafeBrowsing()), []normCase{
		{"http://host/%25%32%35", "http://host/%25"},
		{"http://host/%25%32%35%25%32%35", "http://host/%25%25"},
		{"http://host/%2525252525252525", "http://host/%25"},
		{"http://www.google.com/blah/..", "http://www.google.com/"},
		{"http://www.GOOgle.com/", "http://www.google.com/"},
		{"http://3279880203/blah", "http://195.127.0.11/blah"},
		{"http://www.evil.com/blah#frag", "http://www.evil.com/blah"},
		{"http://\x01\x80.com/", "http://%01%80.com/"},
		{"http://www.google.com/q?", "http://www.google.com/q?"},
		{"http://www.google.com/%2E/a", "http://www.google.com/a"},
	})
}

func TestErrors(t *testing.T) {
	cases := []struct {
		in       string
		sentinel error
		reason   string
	}{
		{"mailto:someone@example.com", ErrUnsupportedScheme, "unsupported scheme"},
		{"javascript:void(0)", ErrUnsupportedScheme, "unsupported scheme"},
		{"data:text/plain,hi", ErrUnsupportedScheme, "unsupported scheme"},
		{"ftp://example.com/", ErrUnsupportedScheme, "unsupported scheme"},
		{"", ErrInvalid, "empty URL"},
		{"/relative/path", ErrInvalid, "without a host"},
		{"http://", ErrInvalid, "empty host"},
		{"http:///", ErrInvalid, "empty host"},
		{"http://user@/", ErrInvalid, "missing host"},
		{"http://example.com:99999/", ErrInvalid, "port out of range"},
		{"http://example.com:80a/", ErrInvalid, "invalid port"},
		{"http://[::1/", ErrInvalid, "unterminated IPv6"},
		{"http://[::1]x/", ErrInvalid, "after IPv6"},
		{"http://[fe80::1%25eth0]/", ErrInvalid, "zone identifier"},
		{"http://[1.2.3.4]/", ErrInvalid, "invalid IPv6"},
		{"http://exa mple.com/", ErrInvalid, "forbidden character"},
		{"http://a%2Fb.com/", ErrInvalid, "forbidden character"},
		{"http://abc%FEdef.org/", ErrInvalid, "not valid UTF-8"},
		{"http://xn--a.com/", ErrInvalid, "internationalized host"},
		{"http://999.1.1.1/", ErrInvalid, "invalid IPv4"},
		{"http://example.com/" + strings.Repeat("a", DefaultMaxLength), ErrTooLong, "longer than 8192"},
	}
	for _, c := range cases {
		_, err := Normalize(c.in)
		if err == nil {
			t.Errorf("Normalize(%.60q) succeeded, want %v", c.in, c.sentinel)
			continue
		}
		if !errors.Is(err, c.sentinel) {
			t.Errorf("Normalize(%.60q) = %v, want it to match %v", c.in, err, c.sentinel)
		}
		if !strings.Contains(err.Error(), c.reason) {
			t.Errorf("Normalize(%.60q) error %q does not say %q", c.in, err, c.reason)
		}
		var ue *Error
		if !errors.As(err, &ue) || ue.Input == "" && c.in != "" {
			t.Errorf("Normalize(%.60q) error %v is not an *Error with the input", c.in, err)
		}
		if len(ue.Input) > maxErrorInput+3 {
			t.Errorf("error keeps %d bytes of input", len(ue.Input))
		}
	}
	if !errors.Is(ErrTooLong, ErrInvalid) {
		t.Error("ErrTooLong does not match ErrInvalid")
	}
	if errors.Is(ErrUnsupportedScheme, ErrInvalid) {
		t.Error("ErrUnsupportedScheme matches ErrInvalid")
	}
}

func TestMaxLength(t *testing.T) {
	long := "http://example.com/" + strings.Repeat("a", 100)
	o := Crawler()
	o.MaxLength = 50
	if _, err := o.Normalize(long); !errors.Is(err, ErrTooLong) {
		t.Errorf("MaxLength 50: err = %v, want ErrTooLong", err)
	}
	// The limit also applies to the output, which escaping can lengthen.
	o.MaxLength = 40
	if _, err := o.Normalize("http://example.com/" + strings.Repeat("ü", 10)); !errors.Is(err, ErrTooLong) {
		t.Errorf("output over MaxLength: err = %v, want ErrTooLong", err)
	}
	o.MaxLength = -1
	huge := "http://example.com/" + strings.Repeat("a", 3*DefaultMaxLength)
	if got, err := o.Normalize(huge); err != nil || got != huge {
		t.Errorf("MaxLength -1: got %d bytes, err %v", len(got), err)
	}
}

// TestDotSegmentsBeforeDuplicateSlashes checks that ".." removes the empty
// segment before it, as RFC 3986 §5.2.4 and the URL Standard's path state
// do ("/a//../b" is "/a/b", the page a browser requests), and that runs of
// slashes collapse only afterwards. Collapsing first let ".." remove "a"
// too, folding the link into the different page "/b". Safe Browsing keeps
// the order of its reference implementation (Go's path.Clean).
func TestDotSegmentsBeforeDuplicateSlashes(t *testing.T) {
	checkNormalize(t, profile(Crawler()), []normCase{
		{"http://example.com/a//../b", "http://example.com/a/b"},
		{`http://example.com/a\\..\b`, "http://example.com/a/b"},
		{"http://example.com/a/b//../../c", "http://example.com/a/c"},
		{"http://example.com/a//..", "http://example.com/a/"},
		{"http://example.com/a/;jsessionid=1/../b", "http://example.com/a/b"},
		{"http://example.com/a/..//b", "http://example.com/b"},
		{"http://example.com/a//./b//", "http://example.com/a/b/"},
		{"http://example.com//a", "http://example.com/a"},
	})
	checkNormalize(t, profile(Aggressive()), []normCase{
		{"http://example.com/A//../B/", "http://example.com/a/b"},
	})
	checkNormalize(t, profile(SafeBrowsing()), []normCase{
		{"http://example.com/a//../b", "http://example.com/b"},
	})
	// A link normalizes to the same key whether or not it was resolved
	// first.
	for _, in := range []string{"http://example.com/a//../b", "http://example.com/x/y//z/../../c"} {
		r, err := ResolveString("", in)
		if err != nil {
			t.Fatal(err)
		}
		n1, err1 := Normalize(in)
		n2, err2 := Normalize(r)
		if err1 != nil || err2 != nil || n1 != n2 {
			t.Errorf("Normalize(%q) = %q, %v but Normalize(ResolveString(%q) = %q) = %q, %v", in, n1, err1, in, r, n2, err2)
		}
	}
}

// TestHostBracketAfterDots checks that removing a host's leading dots (or
// "www.") cannot leave a host that starts with '[' and so reads back as an
// IPv6 literal: Safe Browsing turned ".[" into "http://[/", which it then
// rejected.
func TestHostBracketAfterDots(t *testing.T) {
	www := Config{RemoveWWW: true}
	for _, c := range []struct {
		o  *Config
		in string
	}{
		{profile(SafeBrowsing()), ".["},
		{profile(SafeBrowsing()), "http://..[x/"},
		{&www, "http://www.[x/"},
	} {
		if got, err := c.o.Normalize(c.in); !errors.Is(err, ErrInvalid) {
			t.Errorf("Normalize(%q) = %q, %v; want ErrInvalid", c.in, got, err)
		}
	}
	if got, err := profile(SafeBrowsing()).Normalize("http://.[::1]/"); err == nil {
		if again, err := profile(SafeBrowsing()).Normalize(got); err != nil || again != got {
			t.Errorf("%q -> %q -> %q, %v", "http://.[::1]/", got, again, err)
		}
	}
}

// TestBackslashPathLinear checks that a path separated by backslashes, or
// by slashes with a backslash somewhere, is split in linear time: looking
// for the next '/' and the next '\\' from every segment scanned the rest of
// the path each time, quadratic in its length (seconds for 1 MiB, with
// MaxLength -1 or a long base URL in Resolve).
func TestBackslashPathLinear(t *testing.T) {
	o := Crawler()
	o.MaxLength = -1
	inputs := map[string]func(n int) string{
		"backslashes":      func(n int) string { return "http://h" + strings.Repeat(`\`, n) },
		"slashes then one": func(n int) string { return "http://h" + strings.Repeat("/", n) + `\` },
		"segments":         func(n int) string { return "http://h/" + strings.Repeat(`a\`, n/2) },
	}
	// The fastest of five runs, so a busy machine's pauses do not count.
	cost := func(in string) time.Duration {
		best := time.Duration(math.MaxInt64)
		for range 5 {
			start := time.Now()
			if _, err := o.Normalize(in); err != nil {
				t.Fatal(err)
			}
			if _, err := ResolveString(in, "x"); err == nil {
				t.Fatalf("ResolveString accepted a %d-byte result", len(in))
			}
			best = min(best, time.Since(start))
		}
		return best
	}
	// Sixteen times the input costs about sixteen times as much in
	// linear time, 256 times in quadratic: a ratio, not a wall-clock
	// bound, so that a loaded machine slows both sides alike (it measured
	// 37 for eight times with a busy loop beside the race detector).
	const n = 1 << 18
	for name, in := range inputs {
		small, large := cost(in(n/16)), cost(in(n))
		if large > 64*small+20*time.Millisecond {
			t.Errorf("%s: %d bytes took %v, %d bytes %v: more than linear", name, n, large, n/16, small)
		}
	}
}

func TestDropParamsConfigurable(t *testing.T) {
	o := Crawler()
	o.DropParams = []string{"ref", "track_*"}
	got, err := o.Normalize("http://example.com/?ref=a&track_id=1&utm_source=x&q=1")
	if err != nil {
		t.Fatal(err)
	}
	if want := "http://example.com/?q=1&utm_source=x"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got, c := DefaultDropParams(), Crawler(); &got[0] == &c.DropParams[0] {
		t.Error("DefaultDropParams returns the Crawler profile's slice")
	}
}

func TestExplicitTransforms(t *testing.T) {
	cases := []struct {
		opts    Config
		in, out string
	}{
		{Config{RemoveWWW: true}, "http://www.example.com/", "http://example.com/"},
		{Config{RemoveWWW: true}, "http://www./", "http://www./"},
		{Config{AddWWW: true}, "http://example.com/", "http://www.example.com/"},
		{Config{AddWWW: true}, "http://10.0.0.1/", "http://10.0.0.1/"},
		{Config{ForceHTTP: true, RemoveDefaultPort: true}, "https://example.com:443/", "http://example.com/"},
		{Config{RemovePort: true}, "http://example.com:8080/", "http://example.com/"},
		{Config{AddTrailingSlash: true}, "http://example.com/a?q", "http://example.com/a/?q"},
		{Config{RemoveDuplicateSlashes: true}, "http://example.com//a///b//", "http://example.com/a/b/"},
		{Config{RemoveEmptyParams: true}, "http://example.com/?&a=1&&=2&", "http://example.com/?a=1"},
		{Config{RemoveEmptyParamValue: true}, "http://example.com/?a=&b==", "http://example.com/?a&b=="},
		{Config{RemoveUnnecessaryHostDots: true}, "http://..www..example.com../", "http://www.example.com/"},
		{Config{EscapeStrayPercent: true}, "http://example.com/100%/%zz%4", "http://example.com/100%25/%25zz%254"},
		{Config{LowercasePath: true, UppercaseEscapes: true}, "http://example.com/A%2fB", "http://example.com/a%2Fb"},
		{Config{}, "HTTP://Example.COM:80/%7e/./?#", "http://Example.COM:80/%7e/./?#"},
	}
	for _, c := range cases {
		got, err := c.opts.Normalize(c.in)
		if err != nil || got != c.out {
			t.Errorf("%+v.Normalize(%q) = %q, %v; want %q", c.opts, c.in, got, err, c.out)
		}
	}
}

// TestIdempotent checks Normalize(Normalize(x)) == Normalize(x) for every
// profile over the generated corpus.
func TestIdempotent(t *testing.T) {
	corpus := urlcorpus.Generate(42, 10000)
	for name, o := range map[string]*Config{"Safe": profile(Safe()), "Crawler": profile(Crawler()), "Aggressive": profile(Aggressive()), "SafeBrowsing": profile(SafeBrowsing())} {
		failed := 0
		for _, u := range corpus {
			n1, err := o.Normalize(u)
			if err != nil {
				continue
			}
			n2, err := o.Normalize(n1)
			if err != nil || n1 != n2 {
				failed++
				if failed <= 5 {
					t.Errorf("%s: %q -> %q -> %q (%v)", name, u, n1, n2, err)
				}
			}
		}
		if failed > 0 {
			t.Errorf("%s: %d URLs not idempotent", name, failed)
		}
	}
}

// TestCorpusAccepted checks that the generated corpus, all of it valid
// URLs, normalizes without errors under the Crawler profile.
func TestCorpusAccepted(t *testing.T) {
	for _, u := range urlcorpus.Generate(1, 10000) {
		if _, err := Normalize(u); err != nil {
			t.Errorf("Normalize(%q): %v", u, err)
		}
	}
}

// TestConcurrentUse runs the profiles and Resolve from several goroutines
// at once; with -race it checks that they share no mutable state.
func TestConcurrentUse(t *testing.T) {
	corpus := urlcorpus.Generate(9, 400)
	want := make([]string, len(corpus))
	for i, u := range corpus {
		want[i], _ = Normalize(u)
	}
	done := make(chan struct{})
	for g := 0; g < 4; g++ {
		go func() {
			defer func() { done <- struct{}{} }()
			for i, u := range corpus {
				if got, _ := Normalize(u); got != want[i] {
					t.Errorf("concurrent Normalize(%q) = %q, want %q", u, got, want[i])
				}
				_, _ = profile(SafeBrowsing()).Normalize(u)
				_, _ = ResolveString("http://example.org/a/", u)
			}
		}()
	}
	for g := 0; g < 4; g++ {
		<-done
	}
}

// profile returns a pointer to its own copy of o, for tables of profiles.
func profile(o Config) *Config { return &o }

// TestProfilesAreValues checks that a profile is the caller's own value:
// changing one, DropParams included, changes neither a later call's
// profile nor what Normalize does.
func TestProfilesAreValues(t *testing.T) {
	const in = "http://example.com/?utm_source=x&q=1"
	want, err := Normalize(in)
	if err != nil || want != "http://example.com/?q=1" {
		t.Fatalf("Normalize(%q) = %q, %v", in, want, err)
	}
	for name, f := range map[string]func() Config{"Safe": Safe, "Crawler": Crawler, "Aggressive": Aggressive, "SafeBrowsing": SafeBrowsing} {
		a := f()
		a.RemoveFragment = !a.RemoveFragment
		a.MaxLength = 1
		for i := range a.DropParams {
			a.DropParams[i] = "q"
		}
		b := f()
		if b.RemoveFragment == a.RemoveFragment || b.MaxLength == 1 || slices.Contains(b.DropParams, "q") {
			t.Errorf("%s: a change to one value shows in the next", name)
		}
	}
	if got, err := Normalize(in); err != nil || got != want {
		t.Errorf("after changing profiles Normalize(%q) = %q, %v; want %q", in, got, err, want)
	}
}
