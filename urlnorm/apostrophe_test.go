package urlnorm_test

import (
	"testing"

	"github.com/crawlkit/crawlkit/urlnorm"
)

// TestQueryApostropheOneKey checks that a URL with "'" in its query has one
// key however it was found: as written in a sitemap (Normalize) or resolved
// from a link (Resolve, which encodes it as browsers do), while a "'" in the
// path, which browsers send as it is, stays.
func TestQueryApostropheOneKey(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"http://a.test/p?q=it's", "http://a.test/p?q=it%27s"},
		{"http://a.test/p?q=it%27s", "http://a.test/p?q=it%27s"},
		{"http://a.test/it's?b=1&a='", "http://a.test/it's?a=%27&b=1"},
	} {
		n, err := urlnorm.Normalize(c.in)
		if err != nil || n != c.want {
			t.Errorf("Normalize(%q) = %q, %v; want %q", c.in, n, err, c.want)
		}
		r, err := urlnorm.ResolveString("", c.in)
		if err != nil {
			t.Fatal(err)
		}
		rn, err := urlnorm.Normalize(r)
		if err != nil || rn != n || urlnorm.Key(rn) != urlnorm.Key(n) {
			t.Errorf("%q: resolved then normalized %q, normalized %q: want one key", c.in, rn, n)
		}
	}
	// The RFC 3986 profile keeps it, as crawler-commons does.
	safe := urlnorm.Safe()
	if n, err := safe.Normalize("http://a.test/p?q=it's"); err != nil || n != "http://a.test/p?q=it's" {
		t.Errorf("Safe profile: %q, %v", n, err)
	}
}
