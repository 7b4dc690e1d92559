package urlnorm

import (
	"errors"
	"net/url"
	"strings"
	"testing"
)

func TestResolveString(t *testing.T) {
	const base = "http://user:pw@Example.ORG:8080/a/b/c?q=1#f"
	cases := []struct{ ref, want string }{
		{"", "http://user:pw@example.org:8080/a/b/c?q=1"},
		{"#", "http://user:pw@example.org:8080/a/b/c?q=1#"},
		{"#x y", "http://user:pw@example.org:8080/a/b/c?q=1#x%20y"},
		{"?", "http://user:pw@example.org:8080/a/b/c?"},
		{"?a'b c", "http://user:pw@example.org:8080/a/b/c?a%27b%20c"},
		{"d", "http://user:pw@example.org:8080/a/b/d"},
		{"../../../../d", "http://user:pw@example.org:8080/d"},
		{"./", "http://user:pw@example.org:8080/a/b/"},
		{"%2e%2E/d", "http://user:pw@example.org:8080/a/d"},
		{`\d\e`, "http://user:pw@example.org:8080/d/e"},
		{"//other.example", "http://other.example/"},
		{`\\other.example\x`, "http://other.example/x"},
		{"///other.example/x", "http://other.example/x"},
		{"http:d", "http://user:pw@example.org:8080/a/b/d"},
		{"http://EXAMPLE.com:80/", "http://example.com/"},
		{"https:d", "https://d/"},
		{"HTTPS://Bücher.de/ü?ü#ü", "https://xn--bcher-kva.de/%C3%BC?%C3%BC#%C3%BC"},
		{"//0x7f.1/", "http://127.0.0.1/"},
		{"//[::ffff:127.0.0.1]/", "http://[::ffff:7f00:1]/"},
		{"//[2001:db8:0:0:1:0:0:1]/", "http://[2001:db8::1:0:0:1]/"},
		{"\x00 /d\x1f ", "http://user:pw@example.org:8080/d"},
		{"/a\tb\nc", "http://user:pw@example.org:8080/abc"},
		{"/%zz|^{}", "http://user:pw@example.org:8080/%zz|%5E%7B%7D"},
		{"mailto:Someone@Example.org", "mailto:Someone@Example.org"},
		{"JavaScript:alert(1)", "javascript:alert(1)"},
	}
	for _, c := range cases {
		got, err := ResolveString(base, c.ref)
		if err != nil || got != c.want {
			t.Errorf("ResolveString(base, %q) = %q, %v; want %q", c.ref, got, err, c.want)
		}
	}
}

// TestResolveCaretInPath checks that '^' is percent-encoded in a path, as
// the URL Standard's path percent-encode set has required since
// whatwg/url#846 (2025) and Chrome and Firefox do, and nowhere else.
func TestResolveCaretInPath(t *testing.T) {
	cases := []struct{ base, ref, want string }{
		{"", "http://h/a^b", "http://h/a%5Eb"},
		{"http://h/x/", "a^b", "http://h/x/a%5Eb"},
		{"http://h/a^b/", "c", "http://h/a%5Eb/c"},
		{"", "http://h/a^b?c^d#e^f", "http://h/a%5Eb?c^d#e^f"},
		{"", "http://u^v@h/", "http://u%5Ev@h/"},
	}
	for _, c := range cases {
		got, err := ResolveString(c.base, c.ref)
		if err != nil || got != c.want {
			t.Errorf("ResolveString(%q, %q) = %q, %v; want %q", c.base, c.ref, got, err, c.want)
		}
	}
}

func TestResolveErrors(t *testing.T) {
	cases := []struct{ base, ref, reason string }{
		{"", "relative", "without a base URL"},
		{"mailto:x@example.org", "relative", "not an http or https URL"},
		{"http://exa mple.org/", "relative", "base URL: forbidden character"},
		{"http://example.org/", "//exa mple/", "forbidden character"},
		{"http://example.org/", "//a.b.0x100000000/", "invalid IPv4"},
		{"http://example.org/", "//1.2.3.4.5/", "invalid IPv4"},
		{"http://example.org/", "//x:65536/", "port out of range"},
		{"http://example.org/", "http://@/", "missing host"},
		{"http://example.org/", "http:///", "empty host"},
	}
	for _, c := range cases {
		_, err := ResolveString(c.base, c.ref)
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), c.reason) {
			t.Errorf("ResolveString(%q, %q) error = %v, want ErrInvalid saying %q", c.base, c.ref, err, c.reason)
		}
	}
	if _, err := ResolveString("http://example.org/", strings.Repeat("a", DefaultMaxLength+1)); !errors.Is(err, ErrTooLong) {
		t.Errorf("over-long reference: err = %v, want ErrTooLong", err)
	}
}

func TestResolveURL(t *testing.T) {
	base, err := url.Parse("http://Example.org/dir/page?q#frag")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		ref                                 string
		str, host, path, rawQuery, fragment string
	}{
		{"x%2Fy/./z?a=b", "http://example.org/dir/x%2Fy/z?a=b", "example.org", "/dir/x/y/z", "a=b", ""},
		{"../a b#c d", "http://example.org/a%20b#c%20d", "example.org", "/a b", "", "c d"},
		{"?", "http://example.org/dir/page?", "example.org", "/dir/page", "", ""},
		{"//u:p@h:81/", "http://u:p@h:81/", "h:81", "/", "", ""},
	}
	for _, c := range cases {
		u, err := Resolve(base, c.ref)
		if err != nil {
			t.Errorf("Resolve(%q): %v", c.ref, err)
			continue
		}
		if u.String() != c.str || u.Host != c.host || u.Path != c.path || u.RawQuery != c.rawQuery || u.Fragment != c.fragment {
			t.Errorf("Resolve(%q) = %q (host %q path %q query %q fragment %q), want %q (%q %q %q %q)",
				c.ref, u, u.Host, u.Path, u.RawQuery, u.Fragment, c.str, c.host, c.path, c.rawQuery, c.fragment)
		}
		if !u.IsAbs() {
			t.Errorf("Resolve(%q) is not absolute", c.ref)
		}
	}
	u, err := Resolve(base, "mailto:x@example.org")
	if err != nil || u.Scheme != "mailto" || u.Opaque != "x@example.org" {
		t.Errorf("Resolve(mailto) = %#v, %v", u, err)
	}
	u, err = Resolve(nil, "https://example.org/x")
	if err != nil || u.String() != "https://example.org/x" {
		t.Errorf("Resolve(nil, absolute) = %v, %v", u, err)
	}
	if _, err := Resolve(nil, "x"); !errors.Is(err, ErrInvalid) {
		t.Errorf("Resolve(nil, relative) err = %v, want ErrInvalid", err)
	}
}
