package warc

import "testing"

func TestRequestTarget(t *testing.T) {
	for _, tc := range []struct{ url, target, host string }{
		{"http://a.test/page?x=1", "/page?x=1", "a.test"},
		{"http://a.test", "/", "a.test"},
		{"http://a.test?x=1", "/?x=1", "a.test"},
		{"http://a.test/p#frag", "/p", "a.test"},
		{"http://a.test:8080/p", "/p", "a.test:8080"},
		{"http://user:secret@h.test/p", "/p", "h.test"},
		{"http://user:p%40ss@h.test:81", "/", "h.test:81"},
		{"http://user@h.test?q=a@b", "/?q=a@b", "h.test"},
		{"http://h.test/a@b/c", "/a@b/c", "h.test"},
		{"http://[2001:db8::1]/p", "/p", "[2001:db8::1]"},
		{"http://[2001:db8::1]:8080/p", "/p", "[2001:db8::1]:8080"},
		{"http://u:pw@[2001:db8::1]:8080", "/", "[2001:db8::1]:8080"},
		{"http://[fe80::1%25eth0]:8080/p", "/p", "[fe80::1]:8080"},
	} {
		target, host := requestTarget(tc.url)
		if target != tc.target || host != tc.host {
			t.Errorf("requestTarget(%q) = %q, %q; want %q, %q", tc.url, target, host, tc.target, tc.host)
		}
	}
}
