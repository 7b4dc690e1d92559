package fetch

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/cookiejar"
	"strings"
	"sync"
	"testing"
)

// postLog records what a test server was asked: method, path, body and
// Content-Type of each request.
type postLog struct {
	mu   sync.Mutex
	reqs []string
}

func (l *postLog) add(r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.reqs = append(l.reqs, r.Method+" "+r.URL.Path+" ["+r.Header.Get("Content-Type")+"] "+string(b))
}

func (l *postLog) all() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.reqs, "\n")
}

// A POST sends its body; a 302 or 301 answer is followed with a GET
// without the body's Content-Type, a 307 or 308 with the POST again
// (RFC 9110 §15.4).
func TestPostRedirects(t *testing.T) {
	for _, tc := range []struct {
		status int
		want   string
	}{
		{http.StatusFound, "POST /login [application/x-www-form-urlencoded] u=a\nGET /home [] "},
		{http.StatusMovedPermanently, "POST /login [application/x-www-form-urlencoded] u=a\nGET /home [] "},
		{http.StatusSeeOther, "POST /login [application/x-www-form-urlencoded] u=a\nGET /home [] "},
		{http.StatusTemporaryRedirect, "POST /login [application/x-www-form-urlencoded] u=a\nPOST /home [application/x-www-form-urlencoded] u=a"},
		{http.StatusPermanentRedirect, "POST /login [application/x-www-form-urlencoded] u=a\nPOST /home [application/x-www-form-urlencoded] u=a"},
	} {
		var log postLog
		web := newVirtualWeb(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			log.add(r)
			if r.URL.Path == "/login" {
				http.Redirect(w, r, "/home", tc.status)
				return
			}
			io.WriteString(w, "welcome")
		}))
		f := newTestFetcher(t, web, nil)
		resp, err := f.Do(context.Background(), &Request{URL: "http://site.test/login", Method: http.MethodPost,
			Header: http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}, Body: []byte("u=a")})
		if err != nil {
			t.Fatalf("%d: %v", tc.status, err)
		}
		if string(resp.Body) != "welcome" || resp.FinalURL.Path != "/home" {
			t.Errorf("%d: got %q from %s", tc.status, resp.Body, resp.FinalURL)
		}
		if got := log.all(); got != tc.want {
			t.Errorf("%d: server saw\n%s\nwant\n%s", tc.status, got, tc.want)
		}
	}
}

// A POST that fails transiently is not retried: the server may have acted
// on it (RFC 9110 §9.2.2).
func TestPostNotRetried(t *testing.T) {
	var log postLog
	web := newVirtualWeb(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		log.add(r)
		http.Error(w, "busy", http.StatusServiceUnavailable)
	}))
	f := newTestFetcher(t, web, func(c *Config) { c.MaxRetries = 3 })
	resp, err := f.Do(context.Background(), &Request{URL: "http://site.test/login", Method: http.MethodPost, Body: []byte("x")})
	if err != nil || resp.StatusCode != http.StatusServiceUnavailable || resp.Attempts != 1 {
		t.Fatalf("got %v, %v", resp, err)
	}
	if n := strings.Count(log.all(), "POST"); n != 1 {
		t.Errorf("server saw %d POSTs, want 1", n)
	}
}

// Only POST carries a body, and other methods stay refused.
func TestPostBadRequests(t *testing.T) {
	f := newTestFetcher(t, nil, nil)
	for _, r := range []*Request{
		{URL: "http://site.test/", Body: []byte("x")},
		{URL: "http://site.test/", Method: http.MethodHead, Body: []byte("x")},
		{URL: "http://site.test/", Method: http.MethodPut},
	} {
		if _, err := f.Do(context.Background(), r); err == nil || errors.Is(err, context.Canceled) {
			t.Errorf("%s with %d bytes: err %v, want a refusal", r.Method, len(r.Body), err)
		}
	}
}

// A Fetcher sharing another's connections keeps the cookie Jar of its own
// Client: a login's Set-Cookie is sent back by the next request.
func TestShareConnsKeepsJar(t *testing.T) {
	web := newVirtualWeb(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			http.SetCookie(w, &http.Cookie{Name: "sid", Value: "42", Path: "/"})
			http.Redirect(w, r, "/home", http.StatusFound)
			return
		}
		c, err := r.Cookie("sid")
		if err != nil {
			io.WriteString(w, "anonymous")
			return
		}
		io.WriteString(w, "sid="+c.Value)
	}))
	owner := newTestFetcher(t, web, nil)
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	s := newTestFetcher(t, nil, func(c *Config) {
		c.ShareConns, c.AllowCIDRs = owner, nil
		c.Client = &http.Client{Jar: jar}
	})
	resp, err := s.Do(context.Background(), &Request{URL: "http://site.test/login", Method: http.MethodPost})
	if err != nil || string(resp.Body) != "sid=42" {
		t.Fatalf("got %q, %v; want the cookie set by the POST's answer sent with the redirect", resp.Body, err)
	}
	if _, err := New(Config{UserAgent: "x/1.0", ShareConns: owner, Client: &http.Client{Transport: http.DefaultTransport}}); err == nil {
		t.Error("ShareConns with a Client's Transport was accepted")
	}
}
