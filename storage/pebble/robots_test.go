package pebble

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/robots"
)

func TestRobotsStoreSurvivesReopen(t *testing.T) {
	var fetches atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fetches.Add(1)
		io.WriteString(w, "User-agent: *\nDisallow: /private/\n")
	}))
	defer srv.Close()
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	dir := filepath.Join(t.TempDir(), "db")

	db, err := Open(dir, Config{})
	if err != nil {
		t.Fatal(err)
	}
	c := robots.NewCache(robots.Config{Client: srv.Client(), Store: db.RobotsStore()})
	if _, err := c.PolicyAt(context.Background(), srv.URL, now); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	// A new process: a fresh cache over the reopened DB needs no fetch.
	db, err = Open(dir, Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	c = robots.NewCache(robots.Config{Client: srv.Client(), Store: db.RobotsStore()})
	p, err := c.PolicyAt(context.Background(), srv.URL+"/x", now.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if fetches.Load() != 1 {
		t.Fatalf("%d fetches, want 1 (the stored record is fresh)", fetches.Load())
	}
	if d, err := p.Allowed("ExampleBot", "/private/a"); err != nil || d.Allowed {
		t.Errorf("stored policy: %+v, %v; want /private/ disallowed", d, err)
	}
}

func TestRobotsStoreGetPut(t *testing.T) {
	db, err := Open(filepath.Join(t.TempDir(), "db"), Config{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	s := db.RobotsStore()
	ctx := context.Background()
	if _, ok, err := s.Get(ctx, "https://example.com"); ok || err != nil {
		t.Fatalf("Get of an unknown origin: ok=%v err=%v", ok, err)
	}
	rec := robots.Record{Status: 503, Err: "HTTP status 503", Failures: 3,
		FetchedAt: time.Unix(1700000000, 5).UTC(), Expires: time.Unix(1700000600, 0).UTC(),
		UnreachableSince: time.Unix(1690000000, 0).UTC(), GoodStatus: 200, GoodBody: []byte("User-agent: *\n"),
		GoodAt: time.Unix(1680000000, 0).UTC()}
	if err := s.Put(ctx, "https://example.com", rec); err != nil {
		t.Fatal(err)
	}
	got, ok, err := s.Get(ctx, "https://example.com")
	if err != nil || !ok || !reflect.DeepEqual(got, rec) {
		t.Fatalf("Get = %+v, %v, %v; want %+v", got, ok, err, rec)
	}
	if _, ok, _ := s.Get(ctx, "https://example.com:8443"); ok {
		t.Error("another origin shares the record")
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Get(ctx, "https://example.com"); !errors.Is(err, ErrClosed) {
		t.Errorf("Get after Close: %v, want ErrClosed", err)
	}
	if err := s.Put(ctx, "https://example.com", rec); !errors.Is(err, ErrClosed) {
		t.Errorf("Put after Close: %v, want ErrClosed", err)
	}
}
