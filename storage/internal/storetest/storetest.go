// Package storetest checks the stores a storage backend offers the
// components (bloom.Store with AddBatch, simhash.Store, robots.Store) the
// same way for every backend, and that they refuse work after their
// backend is closed.
package storetest

import (
	"context"
	"errors"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/bloom"
	"github.com/crawlkit/crawlkit/robots"
	"github.com/crawlkit/crawlkit/simhash"
)

// SeenStore is a bloom.Store that also records keys in batches.
type SeenStore interface {
	bloom.Store
	AddBatch(keys []uint64) error
}

// Backend is one freshly opened, empty backend's stores.
type Backend struct {
	Seen         SeenStore
	Fingerprints simhash.Store
	Robots       robots.Store
	// Close closes the backend; afterwards every store must fail with
	// ErrClosed.
	Close     func() error
	ErrClosed error
}

// Opener opens a new, empty backend for one test and arranges its cleanup.
type Opener func(t *testing.T) Backend

// Run runs the store checks against backends made by open.
func Run(t *testing.T, open Opener) {
	t.Run("SeenStoreBehindBloom", func(t *testing.T) { seenBehindBloom(t, open) })
	t.Run("FingerprintStore", func(t *testing.T) { fingerprints(t, open) })
	t.Run("RobotsStore", func(t *testing.T) { robotsRecords(t, open) })
	t.Run("AfterClose", func(t *testing.T) { afterClose(t, open) })
}

func seenBehindBloom(t *testing.T, open Opener) {
	b := open(t)
	// A loose filter, so that many answers go to the store.
	opts := bloom.Options{Expected: 200, FalsePositiveRate: 0.3, Store: b.Seen}
	set, err := bloom.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	const n = 600
	var wg sync.WaitGroup
	fresh := make([]int, 2)
	for g := range fresh {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < n; i++ {
				seen, err := set.TestAndAddKey(uint64(i) * 0x9e3779b97f4a7c15)
				if err != nil {
					t.Error(err)
					return
				}
				if !seen {
					fresh[g]++
				}
			}
		}(g)
	}
	wg.Wait()
	if fresh[0]+fresh[1] != n {
		t.Fatalf("%d + %d keys reported new, want exactly %d", fresh[0], fresh[1], n)
	}
	if err := b.Seen.AddBatch([]uint64{1 << 63, 3, 1 << 63}); err != nil {
		t.Fatal(err)
	}
	// A new set over the same store: another process, or a restart.
	set, err = bloom.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	if set.Len() != n+2 {
		t.Fatalf("rebuilt set counts %d keys, want %d", set.Len(), n+2)
	}
	mult, count := uint64(0x9e3779b97f4a7c15), uint64(n)
	never := count * mult // the loop stopped before it
	for _, k := range []uint64{1 << 63, 3, never} {
		ok, err := b.Seen.Contains(k)
		if want := k != never; err != nil || ok != want {
			t.Fatalf("Contains(%x) = %v, %v; want %v", k, ok, err, want)
		}
	}
}

func fingerprints(t *testing.T, open Opener) {
	s := open(t).Fingerprints
	in := []simhash.Entry{{Fingerprint: 1, ID: 10}, {Fingerprint: 1 << 63, ID: 1<<64 - 1}, {Fingerprint: 1, ID: 10}, {Fingerprint: 7, ID: 10}}
	if err := s.Put(in); err != nil {
		t.Fatal(err)
	}
	if err := s.Put(nil); err != nil {
		t.Fatal(err)
	}
	var got []simhash.Entry
	if err := s.ForEach(func(e simhash.Entry) error { got = append(got, e); return nil }); err != nil {
		t.Fatal(err)
	}
	sort.Slice(got, func(i, j int) bool { return got[i].Fingerprint < got[j].Fingerprint })
	want := []simhash.Entry{{Fingerprint: 1, ID: 10}, {Fingerprint: 7, ID: 10}, {Fingerprint: 1 << 63, ID: 1<<64 - 1}}
	if len(got) != len(want) {
		t.Fatalf("ForEach returned %v, want %v (a pair put twice is stored once)", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("ForEach returned %v, want %v", got, want)
		}
	}
	// An index over the store finds what was stored.
	ix, err := simhash.NewIndex(simhash.Options{Store: s})
	if err != nil {
		t.Fatal(err)
	}
	if ix.Len() != 3 || !ix.Has(7) || ix.Has(0xff00ff00ff00ff00) {
		t.Fatal("index rebuilt from the store does not hold exactly its fingerprints")
	}
}

func robotsRecords(t *testing.T, open Opener) {
	s := open(t).Robots
	ctx := context.Background()
	if _, ok, err := s.Get(ctx, "https://nowhere.test"); err != nil || ok {
		t.Fatalf("Get of an unknown origin: ok=%v err=%v", ok, err)
	}
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	rec := robots.Record{Status: 200, Body: []byte("User-agent: *\nDisallow: /private\n"), URL: "https://a.test/robots.txt",
		FetchedAt: now, Expires: now.Add(24 * time.Hour), GoodStatus: 200, GoodBody: []byte("User-agent: *\n"), GoodAt: now}
	if err := s.Put(ctx, "https://a.test", rec); err != nil {
		t.Fatal(err)
	}
	rec2 := rec
	rec2.Status, rec2.Failures, rec2.Err = 503, 1, "503 Service Unavailable"
	if err := s.Put(ctx, "https://a.test", rec2); err != nil {
		t.Fatal(err)
	}
	got, ok, err := s.Get(ctx, "https://a.test")
	if err != nil || !ok {
		t.Fatalf("Get: ok=%v err=%v", ok, err)
	}
	if got.Status != 503 || got.Failures != 1 || got.Err != rec2.Err || string(got.GoodBody) != string(rec.GoodBody) || !got.Expires.Equal(rec.Expires) {
		t.Fatalf("Get returned %+v, want the second Put %+v", got, rec2)
	}
}

func afterClose(t *testing.T, open Opener) {
	b := open(t)
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if err := b.Seen.Add(1); !errors.Is(err, b.ErrClosed) {
		t.Fatalf("SeenStore.Add after Close: %v", err)
	}
	if err := b.Seen.AddBatch([]uint64{1}); !errors.Is(err, b.ErrClosed) {
		t.Fatalf("SeenStore.AddBatch after Close: %v", err)
	}
	if err := b.Fingerprints.Put([]simhash.Entry{{}}); !errors.Is(err, b.ErrClosed) {
		t.Fatalf("FingerprintStore.Put after Close: %v", err)
	}
	if _, _, err := b.Robots.Get(context.Background(), "x"); !errors.Is(err, b.ErrClosed) {
		t.Fatalf("RobotsStore.Get after Close: %v", err)
	}
}
