package robots_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/crawlkit/crawlkit/robots"
)

// TestMemoryStoreByteBound checks that a MemoryStore evicts the least
// recently written records once their bodies pass the byte bound, counts
// a body shared by Body and GoodBody once, and keeps a single record
// larger than the bound alone.
func TestMemoryStoreByteBound(t *testing.T) {
	ctx := context.Background()
	const bound = 1 << 20
	s := robots.NewMemoryStoreSize(1000, bound)
	body := func(n int) []byte { return bytes.Repeat([]byte("Disallow: /x\n"), n/13) }

	// Ten records of ~200 KiB: only the last four or five fit in 1 MiB.
	for i := range 10 {
		b := body(200 << 10)
		if err := s.Put(ctx, fmt.Sprintf("http://h%d.test", i), robots.Record{Status: 200, Body: b, GoodStatus: 200, GoodBody: b}); err != nil {
			t.Fatal(err)
		}
		if got := s.Bytes(); got > bound {
			t.Fatalf("after %d puts the store counts %d bytes, over its bound of %d", i+1, got, bound)
		}
	}
	if n := s.Len(); n < 4 || n > 5 {
		t.Fatalf("store holds %d records of ~200 KiB under a 1 MiB bound (shared bodies counted once), want 4 or 5", n)
	}
	if _, ok, _ := s.Get(ctx, "http://h9.test"); !ok {
		t.Fatal("the most recent record was evicted")
	}
	if _, ok, _ := s.Get(ctx, "http://h0.test"); ok {
		t.Fatal("the oldest record was kept past the byte bound")
	}

	// Two different bodies in one record count twice.
	s2 := robots.NewMemoryStoreSize(1000, bound)
	for i := range 10 {
		if err := s2.Put(ctx, fmt.Sprintf("http://h%d.test", i), robots.Record{Status: 200, Body: body(200 << 10), GoodStatus: 200, GoodBody: body(200 << 10)}); err != nil {
			t.Fatal(err)
		}
	}
	if n := s2.Len(); n != 2 {
		t.Fatalf("store holds %d records of two ~200 KiB bodies under a 1 MiB bound, want 2", n)
	}

	// Rewriting a record replaces its count instead of adding to it.
	before := s2.Bytes()
	if err := s2.Put(ctx, "http://h9.test", robots.Record{Status: 404}); err != nil {
		t.Fatal(err)
	}
	if after := s2.Bytes(); after >= before-(300<<10) {
		t.Fatalf("replacing a 400 KiB record by an empty one took the count from %d to %d", before, after)
	}

	// One record over the bound is kept alone, and goes when another
	// origin arrives.
	if err := s2.Put(ctx, "http://huge.test", robots.Record{Status: 200, Body: body(2 << 20)}); err != nil {
		t.Fatal(err)
	}
	if n := s2.Len(); n != 1 {
		t.Fatalf("after a record over the bound the store holds %d records, want 1", n)
	}
	if err := s2.Put(ctx, "http://small.test", robots.Record{Status: 404}); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := s2.Get(ctx, "http://huge.test"); ok {
		t.Fatal("the record over the bound was kept after another origin arrived")
	}
	if _, ok, _ := s2.Get(ctx, "http://small.test"); !ok {
		t.Fatal("the small record was not kept")
	}
}

// TestMemoryStoreCountBound checks the record-count bound and LRU order.
func TestMemoryStoreCountBound(t *testing.T) {
	ctx := context.Background()
	s := robots.NewMemoryStore(3)
	for _, o := range []string{"http://a.test", "http://b.test", "http://c.test"} {
		if err := s.Put(ctx, o, robots.Record{Status: 404}); err != nil {
			t.Fatal(err)
		}
	}
	// Rewriting a makes b the least recently written.
	if err := s.Put(ctx, "http://a.test", robots.Record{Status: 200}); err != nil {
		t.Fatal(err)
	}
	if err := s.Put(ctx, "http://d.test", robots.Record{Status: 404}); err != nil {
		t.Fatal(err)
	}
	if n := s.Len(); n != 3 {
		t.Fatalf("Len = %d, want 3", n)
	}
	if _, ok, _ := s.Get(ctx, "http://b.test"); ok {
		t.Fatal("b, the least recently written, was kept")
	}
	if rec, ok, _ := s.Get(ctx, "http://a.test"); !ok || rec.Status != 200 {
		t.Fatalf("a = %+v, %v; want its rewritten record", rec, ok)
	}
}
