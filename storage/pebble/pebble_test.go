package pebble

import (
	"bytes"
	"errors"
	"path/filepath"
	"testing"
)

func TestOpenCloseReopen(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	db, err := Open(dir, Config{})
	if err != nil {
		t.Fatal(err)
	}
	key := prefixed(prefixMeta, []byte("probe"))
	if err := db.pdb.Set(key, []byte("v1"), db.writeOpts); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, _, err := db.NameStore().Get(1); !errors.Is(err, ErrClosed) {
		t.Fatalf("NameStore.Get after Close: %v, want ErrClosed", err)
	}

	db, err = Open(dir, Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	v, closer, err := db.pdb.Get(key)
	if err != nil {
		t.Fatalf("value lost across reopen: %v", err)
	}
	defer closer.Close()
	if !bytes.Equal(v, []byte("v1")) {
		t.Fatalf("got %q, want v1", v)
	}
}

func TestOpenRejectsEmptyDir(t *testing.T) {
	if _, err := Open("", Config{}); err == nil {
		t.Fatal("Open(\"\") succeeded")
	}
}

func TestPrefixUpperBound(t *testing.T) {
	ub := prefixUpperBound(prefixFrontier)
	in := prefixed(prefixFrontier, []byte{0xff, 0xff})
	if bytes.Compare(in, ub) >= 0 {
		t.Fatalf("key %x not below upper bound %x", in, ub)
	}
	if bytes.Compare(prefixed(prefixSeen, nil), ub) < 0 {
		t.Fatalf("next prefix sorts below upper bound")
	}
}

func TestCacheBytes(t *testing.T) {
	for _, c := range []struct{ opt, want int64 }{{0, 64 << 20}, {-5, 64 << 20}, {8 << 20, 8 << 20}} {
		db, err := Open(filepath.Join(t.TempDir(), "db"), Config{CacheBytes: c.opt})
		if err != nil {
			t.Fatal(err)
		}
		if got := db.CacheBytes(); got != c.want {
			t.Errorf("CacheBytes %d: cache of %d bytes, want %d", c.opt, got, c.want)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
