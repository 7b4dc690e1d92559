package pebble_test

import (
	"bytes"
	"testing"

	"github.com/crawlkit/crawlkit/storage/pebble"
)

// State records survive a reopen; a missing one is reported as such.
func TestStateSurvivesReopen(t *testing.T) {
	dir := t.TempDir()
	db, err := pebble.Open(dir, pebble.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := db.State("politeness"); ok || err != nil {
		t.Fatalf("State of a new DB: ok %v, err %v", ok, err)
	}
	if err := db.PutState("politeness", []byte("v1")); err != nil {
		t.Fatal(err)
	}
	if err := db.PutState("politeness", []byte("v2")); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err = pebble.Open(dir, pebble.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	v, ok, err := db.State("politeness")
	if !ok || err != nil || !bytes.Equal(v, []byte("v2")) {
		t.Fatalf("State after reopen = %q, %v, %v; want v2", v, ok, err)
	}
}
