package httpcache_test

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/httpcache"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func hdr(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i < len(kv); i += 2 {
		h.Add(kv[i], kv[i+1])
	}
	return h
}

// Freshness per RFC 9111 §4.2: max-age before Expires before the
// Last-Modified heuristic; no-cache and a bad Expires are never fresh; the
// Age header counts.
func TestFreshness(t *testing.T) {
	date := t0.Format(http.TimeFormat)
	for _, tc := range []struct {
		name     string
		status   int
		h        http.Header
		lifetime time.Duration
		freshAt  time.Duration // after Stored: fresh just before, stale at
	}{
		{"max-age", 200, hdr("Cache-Control", "public, max-age=60"), time.Minute, time.Minute},
		{"max-age over Expires", 200, hdr("Cache-Control", "max-age=60", "Date", date, "Expires", t0.Add(time.Hour).Format(http.TimeFormat)), time.Minute, time.Minute},
		{"Expires", 200, hdr("Date", date, "Expires", t0.Add(time.Hour).Format(http.TimeFormat)), time.Hour, time.Hour},
		{"bad Expires", 200, hdr("Expires", "0"), 0, 0},
		{"no-cache", 200, hdr("Cache-Control", "no-cache, max-age=600"), 0, 0},
		{"heuristic", 200, hdr("Date", date, "Last-Modified", t0.Add(-100*time.Hour).Format(http.TimeFormat)), 10 * time.Hour, 10 * time.Hour},
		{"heuristic not for 500", 500, hdr("Date", date, "Last-Modified", t0.Add(-100*time.Hour).Format(http.TimeFormat)), 0, 0},
		{"Age", 200, hdr("Cache-Control", "max-age=60", "Age", "50"), time.Minute, 10 * time.Second},
		{"nothing", 200, hdr(), 0, 0},
		{"huge max-age", 200, hdr("Cache-Control", "max-age=99999999999999999999"), 1<<63 - 1, 1<<63 - 1},
	} {
		e := &httpcache.Entry{URL: "http://a.test/", StatusCode: tc.status, Header: tc.h, Stored: t0}
		if got := e.Lifetime(); got != tc.lifetime {
			t.Errorf("%s: lifetime %v, want %v", tc.name, got, tc.lifetime)
		}
		if tc.freshAt > 0 && !e.Fresh(t0.Add(tc.freshAt-time.Second)) {
			t.Errorf("%s: stale %v after it was stored", tc.name, tc.freshAt-time.Second)
		}
		if tc.freshAt < 1<<62 && e.Fresh(t0.Add(tc.freshAt)) {
			t.Errorf("%s: fresh %v after it was stored", tc.name, tc.freshAt)
		}
	}
}

// What RFC 9111 §3 lets a private cache store.
func TestStorable(t *testing.T) {
	for _, tc := range []struct {
		status int
		h      http.Header
		want   bool
	}{
		{200, hdr(), true},
		{404, hdr(), true},
		{500, hdr(), false},
		{500, hdr("Cache-Control", "max-age=10"), true},
		{302, hdr(), false},
		{302, hdr("Expires", t0.Format(http.TimeFormat)), true},
		{200, hdr("Cache-Control", "private, no-store"), false},
		{200, hdr("Vary", "Accept, *"), false},
		{200, hdr("Vary", "Accept-Encoding"), true},
	} {
		if got := httpcache.Storable(tc.status, tc.h); got != tc.want {
			t.Errorf("%d %v: Storable %v, want %v", tc.status, tc.h, got, tc.want)
		}
	}
}

// A 304's header replaces the stored one's fields, and its time restarts
// the entry's age.
func TestRevalidated(t *testing.T) {
	e := &httpcache.Entry{URL: "http://a.test/", StatusCode: 200, Stored: t0, Body: []byte("x"),
		Header: hdr("Cache-Control", "max-age=60", "ETag", `"v1"`, "Content-Length", "1", "X-Kept", "yes")}
	e.Revalidated(hdr("Cache-Control", "max-age=120", "Content-Length", "0"), t0.Add(time.Hour))
	if got := e.Header.Get("Cache-Control"); got != "max-age=120" {
		t.Errorf("Cache-Control %q", got)
	}
	if e.Header.Get("Content-Length") != "1" || e.Header.Get("X-Kept") != "yes" || e.Header.Get("ETag") != `"v1"` {
		t.Errorf("stored fields lost: %v", e.Header)
	}
	if !e.Fresh(t0.Add(time.Hour+time.Minute)) || e.Fresh(t0.Add(time.Hour+2*time.Minute)) {
		t.Error("the revalidated entry's age does not start at the 304")
	}
}

// Put stores what can be reused, Get finds it under its URL, and past
// MaxBytes the entries used least recently go first.
func TestPutGetEvict(t *testing.T) {
	now := t0
	c, err := httpcache.Open(t.TempDir(), httpcache.Config{MaxBytes: 4000, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	put := func(u string, h http.Header) bool {
		t.Helper()
		now = now.Add(time.Second)
		ok, err := c.Put(&httpcache.Entry{URL: u, StatusCode: 200, Header: h, Body: bytes.Repeat([]byte("x"), 900), Stored: now})
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if put("http://a.test/none", hdr()) {
		t.Error("an entry neither fresh nor revalidatable was stored")
	}
	if put("http://a.test/nostore", hdr("Cache-Control", "no-store", "ETag", `"1"`)) {
		t.Error("a no-store entry was stored")
	}
	for _, p := range []string{"1", "2", "3"} {
		if !put("http://a.test/"+p, hdr("ETag", `"`+p+`"`)) {
			t.Fatalf("/%s not stored", p)
		}
	}
	now = now.Add(time.Second)
	if e, ok := c.Get("http://a.test/1"); !ok || e.Validators().ETag != `"1"` || len(e.Body) != 900 {
		t.Fatalf("Get /1: %v, %v", e, ok)
	}
	put("http://a.test/4", hdr("ETag", `"4"`)) // over 4000 bytes: /2, used least recently, goes
	for p, want := range map[string]bool{"1": true, "2": false, "3": true, "4": true} {
		if _, ok := c.Get("http://a.test/" + p); ok != want {
			t.Errorf("/%s cached %v, want %v", p, ok, want)
		}
	}
	if c.Size() > 4000 {
		t.Errorf("size %d over the bound", c.Size())
	}
	if err := c.Delete("http://a.test/1"); err != nil {
		t.Fatal(err)
	}
	if _, ok := c.Get("http://a.test/1"); ok {
		t.Error("deleted entry found")
	}
}

// MinFresh serves any stored entry without a request for a while.
func TestMinFresh(t *testing.T) {
	now := t0
	c, err := httpcache.Open(t.TempDir(), httpcache.Config{MinFresh: time.Hour, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	e := &httpcache.Entry{URL: "http://a.test/", StatusCode: 200, Header: hdr(), Stored: now}
	if ok, err := c.Put(e); !ok || err != nil {
		t.Fatalf("Put: %v, %v", ok, err)
	}
	now = now.Add(59 * time.Minute)
	if !c.Fresh(e) {
		t.Error("stale within MinFresh")
	}
	now = now.Add(time.Minute)
	if c.Fresh(e) {
		t.Error("fresh past MinFresh")
	}
}

// Bad options are refused with ErrConfig.
func TestOpenOptions(t *testing.T) {
	for _, o := range []httpcache.Config{{MaxBytes: -1}, {MinFresh: -time.Second}} {
		if _, err := httpcache.Open(t.TempDir(), o); !errors.Is(err, httpcache.ErrConfig) {
			t.Errorf("%+v: %v", o, err)
		}
	}
	if _, err := httpcache.Open("", httpcache.Config{}); !errors.Is(err, httpcache.ErrConfig) {
		t.Errorf("no directory: %v", err)
	}
}

// Decode reads what Encode wrote, and refuses anything else with
// ErrCorrupt, never panicking.
func FuzzDecode(f *testing.F) {
	e := &httpcache.Entry{URL: "http://a.test/", FinalURL: "https://a.test/", StatusCode: 200,
		Redirects: []httpcache.Hop{{URL: "http://a.test/", Status: 301}},
		Header:    hdr("ETag", `"x"`), Body: []byte("body\nwith lines"), Stored: t0}
	f.Add(e.Encode())
	f.Add([]byte("crawlkit-httpcache 1\n{}\n"))
	f.Add([]byte("crawlkit-httpcache 1\n{\"url\":\"u\",\"status\":200,\"body_len\":3}\nabc"))
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := httpcache.Decode(b)
		if err != nil {
			if !errors.Is(err, httpcache.ErrCorrupt) {
				t.Fatalf("error %v does not wrap ErrCorrupt", err)
			}
			return
		}
		again, err := httpcache.Decode(e.Encode())
		if err != nil {
			t.Fatalf("re-encoded entry does not decode: %v", err)
		}
		if again.URL != e.URL || again.StatusCode != e.StatusCode || !bytes.Equal(again.Body, e.Body) {
			t.Fatalf("round trip changed the entry: %+v vs %+v", again, e)
		}
	})
}

func ExampleCache() {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	dir, err := os.MkdirTemp("", "httpcache-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	c, err := httpcache.Open(dir, httpcache.Config{Now: func() time.Time { return now }})
	if err != nil {
		panic(err)
	}
	c.Put(&httpcache.Entry{URL: "https://example.com/", StatusCode: 200, Stored: now,
		Header: http.Header{"Cache-Control": {"max-age=300"}, "Etag": {`"v7"`}}, Body: []byte("<p>hello</p>")})

	now = now.Add(time.Minute)
	e, _ := c.Get("https://example.com/")
	fmt.Println("fresh after a minute:", c.Fresh(e))
	now = now.Add(time.Hour)
	fmt.Println("fresh after an hour:", c.Fresh(e), "- revalidate with", strings.TrimSpace(e.Validators().ETag))
	// Output:
	// fresh after a minute: true
	// fresh after an hour: false - revalidate with "v7"
}
