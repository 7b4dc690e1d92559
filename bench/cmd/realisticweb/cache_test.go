package main

import (
	"bytes"
	"slices"
	"testing"
)

// A web loaded from the cache has the bodies, sizes and links of the web
// that was built and written there.
func TestCacheRoundTrip(t *testing.T) {
	loadTestCorpus(t)
	dir := t.TempDir()
	key, err := cacheKey(5, 4, 10, 11, corpusDir)
	if err != nil {
		t.Fatal(err)
	}
	built := newSite(5, 4, 10, 11)
	bodies, cached, err := loadOrBuild(built, corpusDir, dir, key)
	if err != nil || cached {
		t.Fatalf("first load: cached %v, err %v", cached, err)
	}
	loaded := newSite(5, 4, 10, 11)
	again, cached, err := loadOrBuild(loaded, corpusDir, dir, key)
	if err != nil || !cached {
		t.Fatalf("second load: cached %v, err %v", cached, err)
	}
	for i := range built.pages {
		b, l := built.pages[i], loaded.pages[i]
		if b.size != l.size || b.nLinks != l.nLinks || !slices.Equal(b.links, l.links) ||
			!bytes.Equal(bodies[i].gz, again[i].gz) || !bytes.Equal(bodies[i].br, again[i].br) {
			t.Fatalf("page %d differs after the round trip", i)
		}
	}
	if other, _ := cacheKey(5, 4, 10, 12, corpusDir); other == key {
		t.Fatal("different page counts share a cache key")
	}
}
