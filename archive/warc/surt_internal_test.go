package warc

import (
	"strings"
	"testing"
)

// TestSURT: the keys pywb and warcio give these URLs.
func TestSURT(t *testing.T) {
	for _, c := range []struct{ url, want string }{
		{"http://www.Example.com/a?b=1&a=2", "com,example)/a?a=2&b=1"},
		{"https://example.com", "com,example)/"},
		{"http://www2.example.com/", "com,example)/"},
		{"http://wwwexample.com/", "com,wwwexample)/"},
		{"http://example.com:80/x", "com,example)/x"},
		{"https://example.com:443/x", "com,example)/x"},
		{"http://example.com:8080/x#frag", "com,example:8080)/x"},
		{"http://127.0.0.1:8000/p/Q?", "1,0,0,127:8000)/p/q"},
		{"HTTP://A.TEST/Path%2Fx?Z=1", "test,a)/path%2fx?z=1"},
		{"ftp://example.com/", "ftp://example.com/"},
		{"dns:example.com", "dns:example.com"},
	} {
		if got := surt(c.url); got != c.want {
			t.Errorf("surt(%q) = %q, want %q", c.url, got, c.want)
		}
	}
}

// FuzzSURT: any string gives a key without a line break or a space that
// would break a CDXJ line, and an http(s) URL's key has its ")".
func FuzzSURT(f *testing.F) {
	for _, s := range []string{"http://www.example.com/a?b&a", "https://[::1]:8443/x", "http://a.test/ b", "http://"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		k := surt(s)
		if k == s {
			return
		}
		if strings.ContainsAny(k, " \n\r") {
			t.Errorf("surt(%q) = %q has a space or line break", s, k)
		}
		if !strings.Contains(k, ")") {
			t.Errorf("surt(%q) = %q has no )", s, k)
		}
	})
}
