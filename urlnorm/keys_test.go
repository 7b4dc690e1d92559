package urlnorm

import (
	"errors"
	"net/url"
	"strings"
	"testing"
)

// XXH64 (seed 0) reference values: the first three from the xxHash
// project's published test vectors, the others computed with the
// independent implementation github.com/cespare/xxhash/v2 (Sum64String).
// They pin Key and HostKey: a change here breaks every stored key.
var xxh64Vectors = []struct {
	in   string
	want uint64
}{
	{"", 0xef46db3751d8e999},
	{"a", 0xd24ec4f1a98c6e5b},
	{"abc", 0x44bc2cf5ad770999},
	{"example.com", 0x2883ba7dc9aa3289},
	{"http://www.example.com/a?a=1&b=2", 0x2ae5b54a2bd1ade8},
	{"https://example.org/" + strings.Repeat("0123456789", 10), 0x006d62af50685642},
}

func TestKeyVectors(t *testing.T) {
	for _, v := range xxh64Vectors {
		if got := Key(v.in); got != v.want {
			t.Errorf("Key(%q) = %#016x, want %#016x", v.in, got, v.want)
		}
		if got := HostKey(v.in); got != v.want {
			t.Errorf("HostKey(%q) = %#016x, want %#016x", v.in, got, v.want)
		}
	}
}

func TestKeyDoesNotAllocate(t *testing.T) {
	s := "https://example.org/some/path?with=query&and=more"
	if n := testing.AllocsPerRun(100, func() { _ = Key(s); _ = HostKey("example.org") }); n != 0 {
		t.Errorf("Key allocates %v times per call", n)
	}
}

func TestHost(t *testing.T) {
	cases := []struct{ in, want string }{
		{"http://Example.COM/x", "example.com"},
		{"http://example.com:80/x", "example.com"},
		{"https://example.com:443/x", "example.com"},
		{"http://example.com:443/x", "example.com:443"},
		{"https://example.com:8443/x", "example.com:8443"},
		{"http://example.com./x", "example.com"},
		{"http://bücher.de/", "xn--bcher-kva.de"},
		{"http://[::1]:8080/", "[::1]:8080"},
		{"http://0x7f.1/", "127.0.0.1"},
		{"http://user:pw@h0042.test/", "h0042.test"},
	}
	for _, c := range cases {
		u, err := url.Parse(c.in)
		if err != nil {
			t.Fatal(err)
		}
		if got := Host(u); got != c.want {
			t.Errorf("Host(%q) = %q, want %q", c.in, got, c.want)
		}
		if got, err := HostOf(c.in); err != nil || got != c.want {
			t.Errorf("HostOf(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	// Host agrees with the host of the normalized URL.
	n, _ := Normalize("HTTP://WWW.Bücher.DE.:80/x")
	u, _ := url.Parse(n)
	if Host(u) != u.Host || u.Host != "www.xn--bcher-kva.de" {
		t.Errorf("Host of normalized URL %q = %q", n, Host(u))
	}
	// An already-normal host is returned without copying.
	u, _ = url.Parse("http://example.com:8080/")
	if n := testing.AllocsPerRun(100, func() { _ = Host(u) }); n != 0 {
		t.Errorf("Host of a normal host allocates %v times", n)
	}
	if h := Host(&url.URL{Scheme: "http", Host: "exa mple.com"}); h != "exa mple.com" {
		t.Errorf("Host of an invalid host = %q", h)
	}
}

func TestHostOfErrors(t *testing.T) {
	if _, err := HostOf("mailto:x@example.com"); !errors.Is(err, ErrUnsupportedScheme) {
		t.Errorf("HostOf(mailto) err = %v", err)
	}
	if _, err := HostOf("http://exa mple.com/"); !errors.Is(err, ErrInvalid) {
		t.Errorf("HostOf(bad host) err = %v", err)
	}
	if h, err := HostOf("example.com/a"); err != nil || h != "example.com" {
		t.Errorf("HostOf(scheme-less) = %q, %v", h, err)
	}
}

func TestRegistrableDomain(t *testing.T) {
	cases := []struct{ in, want string }{
		{"www.example.com", "example.com"},
		{"a.b.example.co.uk", "example.co.uk"},
		{"example.co.uk:8080", "example.co.uk"},
		{"x.user.github.io", "user.github.io"},
		{"WWW.Example.COM", "example.com"},
		{"h0042.test", "h0042.test"},
		{"sub.h0042.test:8080", "h0042.test"},
		{"xn--bcher-kva.de", "xn--bcher-kva.de"},
		{"127.0.0.1:8080", "127.0.0.1"},
		{"[::1]:8080", "[::1]"},
	}
	for _, c := range cases {
		if got, err := RegistrableDomain(c.in); err != nil || got != c.want {
			t.Errorf("RegistrableDomain(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{"com", "co.uk", "localhost", "", "[::1"} {
		if got, err := RegistrableDomain(bad); !errors.Is(err, ErrInvalid) {
			t.Errorf("RegistrableDomain(%q) = %q, %v; want ErrInvalid", bad, got, err)
		}
	}
}
