package pebble

import (
	"errors"
	"strings"
	"testing"
)

func TestNameStore(t *testing.T) {
	dir := t.TempDir()
	db, err := Open(dir, Config{})
	if err != nil {
		t.Fatal(err)
	}
	ns := db.NameStore()
	if _, ok, err := ns.Get(1); ok || err != nil {
		t.Fatalf("empty store: ok=%v err=%v", ok, err)
	}
	if err := ns.Put(1, "http://a.example/"); err != nil {
		t.Fatal(err)
	}
	if err := ns.Put(2, "http://b.example/x"); err != nil {
		t.Fatal(err)
	}
	if err := ns.Put(1, "http://a.example/again"); err != nil {
		t.Fatal(err)
	}
	if err := ns.Put(3, strings.Repeat("x", MaxNameBytes+1)); !errors.Is(err, ErrNameTooLong) {
		t.Fatalf("overlong name: %v", err)
	}
	// Names survive a clean close and reopen.
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ns.Get(1); !errors.Is(err, ErrClosed) {
		t.Fatalf("Get after Close: %v", err)
	}
	if err := ns.Put(4, "x"); !errors.Is(err, ErrClosed) {
		t.Fatalf("Put after Close: %v", err)
	}
	db, err = Open(dir, Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ns = db.NameStore()
	for id, want := range map[uint64]string{1: "http://a.example/again", 2: "http://b.example/x"} {
		got, ok, err := ns.Get(id)
		if err != nil || !ok || got != want {
			t.Errorf("Get(%d) = %q, %v, %v; want %q", id, got, ok, err, want)
		}
	}
	if _, ok, _ := ns.Get(3); ok {
		t.Error("the rejected name was stored")
	}
}
