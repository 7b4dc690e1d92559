package hostcheck

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
)

func request(local net.Addr, host, origin string) *http.Request {
	r := httptest.NewRequest("GET", "/", nil)
	if local != nil {
		r = r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, local))
	}
	r.Host = host
	if origin != "" {
		r.Header.Set("Origin", origin)
	}
	return r
}

func TestCheck(t *testing.T) {
	loop4 := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8081}
	loop6 := &net.TCPAddr{IP: net.IPv6loopback, Port: 8081}
	lan := &net.TCPAddr{IP: net.IPv4(10, 0, 0, 5), Port: 8080}
	lan6 := &net.TCPAddr{IP: net.ParseIP("fd00::5"), Port: 8080}
	for _, tc := range []struct {
		allowed      []string
		local        net.Addr
		host, origin string
		ok           bool
	}{
		// Loopback listeners: the loopback names, with the port.
		{nil, loop4, "127.0.0.1:8081", "", true},
		{nil, loop4, "localhost:8081", "", true},
		{nil, loop4, "LOCALHOST.:8081", "", true},
		{nil, loop4, "[::1]:8081", "", true},
		{nil, loop6, "localhost:8081", "", true},
		{nil, loop4, "localhost:8081", "http://localhost:8081", true},
		{nil, loop4, "127.0.0.1:8081", "http://[::1]:8081", true},
		// DNS rebinding: the attacker's name, with any port.
		{nil, loop4, "evil.example:8081", "", false},
		{nil, loop4, "evil.example", "", false},
		{nil, loop4, "localhost.evil.example:8081", "", false},
		// Another port is another service (or a tunnel: see AllowedHosts).
		{nil, loop4, "localhost:9000", "", false},
		{nil, loop4, "localhost", "", false},
		// A foreign page reading the dashboard by a cross-origin request.
		{nil, loop4, "127.0.0.1:8081", "http://evil.example", false},
		{nil, loop4, "127.0.0.1:8081", "null", false},
		{nil, loop4, "127.0.0.1:8081", "file://", false},
		{nil, loop4, "", "", false},
		{nil, loop4, "127.0.0.1:0x1f91", "", false},
		// Other listeners: their own address only.
		{nil, lan, "10.0.0.5:8080", "", true},
		{nil, lan, "localhost:8080", "", false},
		{nil, lan, "10.0.0.6:8080", "", false},
		{nil, lan, "crawler.internal:8080", "", false},
		{nil, lan6, "[fd00::5]:8080", "", true},
		// Configured names: any port without one, that port with one.
		{[]string{"crawler.internal"}, lan, "crawler.internal:8080", "", true},
		{[]string{"Crawler.Internal"}, lan, "crawler.internal", "http://crawler.internal:3000", true},
		{[]string{"crawler.internal:8080"}, lan, "crawler.internal:8080", "", true},
		{[]string{"crawler.internal:8080"}, lan, "crawler.internal:9090", "", false},
		{[]string{"localhost:9000"}, loop4, "localhost:9000", "", true},
		{[]string{"::1"}, lan, "[::1]:1", "", true},
		{[]string{"[::1]:1"}, lan, "[::1]:1", "", true},
		{[]string{"*"}, loop4, "evil.example", "http://evil.example", true},
		// No local address: the configured names only, and no check
		// without any.
		{nil, nil, "example.com", "", true},
		{[]string{"a.test"}, nil, "example.com", "", false},
		{[]string{"a.test"}, nil, "a.test", "", true},
		{[]string{"a.test"}, &net.UnixAddr{Name: "/tmp/s", Net: "unix"}, "example.com", "", false},
	} {
		c, err := New(tc.allowed)
		if err != nil {
			t.Fatal(err)
		}
		err = c.Check(request(tc.local, tc.host, tc.origin))
		if (err == nil) != tc.ok || (err != nil && !errors.Is(err, ErrForbidden)) {
			t.Errorf("allowed %v, local %v, Host %q, Origin %q: %v, want ok=%v", tc.allowed, tc.local, tc.host, tc.origin, err, tc.ok)
		}
	}
}

// TestTLSDefaultPort: a Host without a port over TLS means port 443.
func TestTLSDefaultPort(t *testing.T) {
	c, _ := New(nil)
	r := request(&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 443}, "localhost", "")
	if err := c.Check(r); err == nil {
		t.Fatal("plain HTTP Host without a port matched port 443")
	}
	r.TLS = &tls.ConnectionState{}
	if err := c.Check(r); err != nil {
		t.Fatal(err)
	}
}

func TestNewRejectsBadEntries(t *testing.T) {
	for _, a := range []string{"", "http://a.test", "a.test/x", "a.test:0", "a.test:99999", "a.test:x", "[::1", "u@a.test", "*.a.test"} {
		if _, err := New([]string{a}); err == nil {
			t.Errorf("New accepted %q", a)
		}
	}
}

// TestServer: through a real net/http server the listener's address is
// known, and a foreign Host is refused.
func TestServer(t *testing.T) {
	c, _ := New(nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := c.Check(r); err != nil {
			http.Error(w, err.Error(), http.StatusForbidden)
		}
	}))
	defer ts.Close()
	for host, want := range map[string]int{ts.Listener.Addr().String(): 200, "evil.example": 403} {
		req, _ := http.NewRequest("GET", ts.URL, nil)
		req.Host = host
		resp, err := ts.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("Host %q: %d, want %d", host, resp.StatusCode, want)
		}
	}
}
