// Package robotstest is the conformance kit for robots.Store
// implementations: the stores a robots.Cache keeps fetched robots.txt
// records in, so that several crawler processes, or one after a restart,
// share them (storage/pebble, storage/postgres and storage/redis offer one
// as RobotsStore, or a user's own). A store proves itself by passing Run
// in its tests:
//
//	func TestRobotsStore(t *testing.T) {
//		robotstest.Run(t, func(t *testing.T, dir string) robotstest.Store {
//			db, err := mydb.Open(dir) // or a table or key prefix derived from dir
//			if err != nil {
//				t.Fatal(err)
//			}
//			return robotstest.Store{Records: db.RobotsStore(), Close: db.Close, ErrClosed: mydb.ErrClosed}
//		})
//	}
//
// Run calls the Opener with a fresh dir for every scenario. To check that
// records outlive the value that wrote them, it calls Store.Close and then
// the Opener again with the same dir, and expects to find what was
// written. A store that does not live in a directory uses dir only as a
// name: stores opened under different dirs must be independent, and
// opening a dir again must see its earlier records. A store that lives in
// process memory returns the same value for the same dir and leaves Close
// nil (see the example).
//
// What it checks (scenario names in parentheses):
//
//   - Records: Get of an origin never stored finds nothing, without error;
//     Get returns every field of the Record last Put for the origin (times
//     as instants, zero times as zero, bodies byte for byte, including
//     binary ones and one of the parse limit plus one octet); a later Put
//     replaces the whole record, also clearing fields; origins differing
//     only in scheme or port are distinct; stores under different dirs are
//     independent; records survive Close and open.
//   - Concurrent: Puts and Gets of many origins from several goroutines,
//     each Get seeing a record once its Put returned.
//   - AfterClose, when Store.Close and Store.ErrClosed are set: Get and Put
//     fail with an error matching ErrClosed.
//
// The times the kit stores are whole seconds in UTC, so stores that keep
// microseconds or milliseconds represent them exactly.
package robotstest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/internal/kitrun"

	"github.com/crawlkit/crawlkit/robots"
)

// Store is a record store opened for the kit.
type Store struct {
	// Records is the store under test.
	Records robots.Store
	// Close, if not nil, releases Records (and whatever it belongs to) so
	// that its dir can be opened again. The kit calls it once for every
	// Store an Opener returned: before opening the same dir again, or when
	// the scenario ends.
	Close func() error
	// ErrClosed, if not nil, is the error Get and Put return (errors.Is)
	// once Close has returned. The AfterClose scenario runs only when
	// Close and ErrClosed are both set.
	ErrClosed error
}

// Opener opens the store kept under dir (see the package documentation).
// It reports failures through t.
type Opener func(t *testing.T, dir string) Store

// Run runs every conformance scenario against the stores open returns,
// each as a subtest.
func Run(t *testing.T, open Opener) {
	t.Helper()
	scenarios := []struct {
		name string
		fn   func(t *testing.T, open Opener)
	}{
		{"Records", testRecords},
		{"Concurrent", testConcurrent},
		{"AfterClose", testAfterClose},
	}
	for _, s := range scenarios {
		t.Run(s.name, func(t *testing.T) { s.fn(t, open) })
	}
}

var ctx = context.Background()

// opened is a Store the kit has not closed yet.
type opened struct {
	Store
	closer *kitrun.Closer
}

func openStore(t *testing.T, open Opener, dir string) *opened {
	t.Helper()
	s := &opened{Store: open(t, dir)}
	if s.Records == nil {
		t.Fatal("Opener returned a Store with nil Records")
	}
	s.closer = kitrun.NewCloser(t, s.Close)
	return s
}

func (s *opened) close(t *testing.T) {
	t.Helper()
	s.closer.Close(t)
}

func reopen(t *testing.T, open Opener, dir string, s *opened) *opened {
	t.Helper()
	s.close(t)
	return openStore(t, open, dir)
}

func put(t *testing.T, s robots.Store, origin string, rec robots.Record) {
	t.Helper()
	if err := s.Put(ctx, origin, rec); err != nil {
		t.Fatalf("Put(%s): %v", origin, err)
	}
}

// check fails t unless s holds want for origin.
func check(t *testing.T, s robots.Store, origin string, want robots.Record) {
	t.Helper()
	got, ok, err := s.Get(ctx, origin)
	if err != nil || !ok {
		t.Fatalf("Get(%s): found %v, error %v; want the record stored", origin, ok, err)
	}
	if diff := diffRecords(got, want); diff != "" {
		t.Fatalf("Get(%s) returned a record differing from the one stored: %s", origin, diff)
	}
}

func checkAbsent(t *testing.T, s robots.Store, origin string) {
	t.Helper()
	if rec, ok, err := s.Get(ctx, origin); err != nil || ok {
		t.Fatalf("Get(%s) of an origin not stored: %+v, found %v, error %v; want nothing, no error", origin, rec, ok, err)
	}
}

// diffRecords describes how got differs from want, "" if it does not.
func diffRecords(got, want robots.Record) string {
	var d []string
	ints := func(name string, g, w int) {
		if g != w {
			d = append(d, fmt.Sprintf("%s %d, want %d", name, g, w))
		}
	}
	strs := func(name, g, w string) {
		if g != w {
			d = append(d, fmt.Sprintf("%s %q, want %q", name, g, w))
		}
	}
	times := func(name string, g, w time.Time) {
		if !g.Equal(w) || g.IsZero() != w.IsZero() {
			d = append(d, fmt.Sprintf("%s %v, want %v", name, g, w))
		}
	}
	bodies := func(name string, g, w []byte) {
		if !bytes.Equal(g, w) {
			d = append(d, fmt.Sprintf("%s of %d bytes (%.20q), want %d bytes (%.20q)", name, len(g), g, len(w), w))
		}
	}
	ints("Status", got.Status, want.Status)
	bodies("Body", got.Body, want.Body)
	strs("URL", got.URL, want.URL)
	strs("Err", got.Err, want.Err)
	times("FetchedAt", got.FetchedAt, want.FetchedAt)
	times("Expires", got.Expires, want.Expires)
	ints("Failures", got.Failures, want.Failures)
	times("UnreachableSince", got.UnreachableSince, want.UnreachableSince)
	ints("GoodStatus", got.GoodStatus, want.GoodStatus)
	bodies("GoodBody", got.GoodBody, want.GoodBody)
	times("GoodAt", got.GoodAt, want.GoodAt)
	return strings.Join(d, "; ")
}

var base = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

// reachable is a record of a fetched robots.txt.
func reachable(origin, body string) robots.Record {
	return robots.Record{Status: 200, Body: []byte(body), URL: origin + "/robots.txt",
		FetchedAt: base, Expires: base.Add(24 * time.Hour),
		GoodStatus: 200, GoodBody: []byte(body), GoodAt: base}
}

func testRecords(t *testing.T, open Opener) {
	dir := t.TempDir()
	s := openStore(t, open, dir)
	checkAbsent(t, s.Records, "https://a.test")

	a := reachable("https://a.test", "User-agent: *\nDisallow: /private\n")
	put(t, s.Records, "https://a.test", a)
	check(t, s.Records, "https://a.test", a)

	// An unreachable fetch after a good one: every field set.
	unreachable := robots.Record{Status: 503, URL: "https://a.test/robots.txt", Err: "503 Service Unavailable",
		FetchedAt: base.Add(time.Hour), Expires: base.Add(time.Hour + 10*time.Minute), Failures: 2,
		UnreachableSince: base.Add(30 * time.Minute), GoodStatus: 200, GoodBody: a.Body, GoodAt: base}
	put(t, s.Records, "https://a.test", unreachable)
	check(t, s.Records, "https://a.test", unreachable)

	// A later reachable fetch clears what the unreachable one set.
	fourOhFour := robots.Record{Status: 404, URL: "https://www.a.test/robots.txt",
		FetchedAt: base.Add(2 * time.Hour), Expires: base.Add(26 * time.Hour), GoodStatus: 404, GoodAt: base.Add(2 * time.Hour)}
	put(t, s.Records, "https://a.test", fourOhFour)
	check(t, s.Records, "https://a.test", fourOhFour)

	// Bodies are bytes, not text; the largest is the parse limit plus one.
	binary := reachable("http://a.test", "User-agent: *\x00\xff\xfe\r\nDisallow: /\xc3\x28\n")
	put(t, s.Records, "http://a.test", binary)
	big := bytes.Repeat([]byte("Disallow: /x\n"), robots.DefaultMaxBytes/13+1)[:robots.DefaultMaxBytes+1]
	large := reachable("https://a.test:8443", string(big))
	put(t, s.Records, "https://a.test:8443", large)
	never := robots.Record{Err: "dial tcp: connection refused", FetchedAt: base, Expires: base.Add(time.Minute),
		Failures: 1, UnreachableSince: base}
	put(t, s.Records, "https://b.test", never)

	want := map[string]robots.Record{"https://a.test": fourOhFour, "http://a.test": binary,
		"https://a.test:8443": large, "https://b.test": never}
	checkAll := func(s robots.Store) {
		t.Helper()
		for origin, rec := range want {
			check(t, s, origin, rec)
		}
		checkAbsent(t, s, "https://c.test")
		checkAbsent(t, s, "https://a.test:443")
	}
	checkAll(s.Records)

	other := openStore(t, open, t.TempDir())
	checkAbsent(t, other.Records, "https://a.test")
	put(t, other.Records, "https://c.test", reachable("https://c.test", ""))
	checkAbsent(t, s.Records, "https://c.test")

	s = reopen(t, open, dir, s)
	checkAll(s.Records)
}

func testConcurrent(t *testing.T, open Opener) {
	s := openStore(t, open, t.TempDir())
	const workers, perWorker = 4, 50
	var wg sync.WaitGroup
	errc := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perWorker {
				origin := fmt.Sprintf("https://h%d-%d.test", w, i)
				rec := reachable(origin, fmt.Sprintf("User-agent: *\nDisallow: /%d/%d\n", w, i))
				if err := s.Records.Put(ctx, origin, rec); err != nil {
					errc <- fmt.Errorf("Put(%s): %v", origin, err)
					return
				}
				got, ok, err := s.Records.Get(ctx, origin)
				if err != nil || !ok {
					errc <- fmt.Errorf("Get(%s) after its Put returned: found %v, error %v", origin, ok, err)
					return
				}
				if diff := diffRecords(got, rec); diff != "" {
					errc <- fmt.Errorf("Get(%s): %s", origin, diff)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
}

func testAfterClose(t *testing.T, open Opener) {
	s := openStore(t, open, t.TempDir())
	if s.Close == nil || s.ErrClosed == nil {
		t.Skip("the Store has no Close or no ErrClosed")
	}
	put(t, s.Records, "https://a.test", reachable("https://a.test", ""))
	s.close(t)
	if _, _, err := s.Records.Get(ctx, "https://a.test"); !errors.Is(err, s.ErrClosed) {
		t.Errorf("Get after Close: %v, want an error matching %v", err, s.ErrClosed)
	}
	if err := s.Records.Put(ctx, "https://b.test", reachable("https://b.test", "")); !errors.Is(err, s.ErrClosed) {
		t.Errorf("Put after Close: %v, want an error matching %v", err, s.ErrClosed)
	}
}
