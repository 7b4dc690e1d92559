package distributed

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// fakeEntry is a hosts bucket entry.
type fakeEntry struct {
	jetstream.KeyValueEntry // nil: other methods panic
	value                   []byte
	created                 time.Time
}

func (e fakeEntry) Value() []byte      { return e.value }
func (e fakeEntry) Created() time.Time { return e.created }

func entry(t *testing.T, host string, wait time.Duration, created time.Time) jetstream.KeyValueEntry {
	b, err := json.Marshal(hostRecord{Host: host, Wait: wait.Milliseconds()})
	if err != nil {
		t.Fatal(err)
	}
	return fakeEntry{value: b, created: created}
}

// TestHostBlocks checks how a new holder turns a partition's host records
// into waits: each record's wait less its age, the age taken from the
// server timestamps against the newest record (never from the reader's
// clock), and hosts whose wait is over not blocked at all.
func TestHostBlocks(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	got := hostBlocks([]jetstream.KeyValueEntry{
		entry(t, "a.test", 30*time.Second, t0),                    // reservation of a fetch 10 s before the newest record
		entry(t, "b.test", time.Second, t0.Add(5*time.Second)),    // its wait was over 4 s before the newest
		entry(t, "c.test", 2*time.Second, t0.Add(10*time.Second)), // the newest record
		fakeEntry{value: []byte("not json"), created: t0},
	})
	want := []hostBlock{{"a.test", 20 * time.Second}, {"c.test", 2 * time.Second}}
	if !slices.Equal(got, want) {
		t.Errorf("hostBlocks = %v, want %v", got, want)
	}
	if got := hostBlocks(nil); len(got) != 0 {
		t.Errorf("no records: %v", got)
	}
}

// TestHostKeyIsPerPartition checks that a host's record key names its
// partition, which a new holder filters on.
func TestHostKeyIsPerPartition(t *testing.T) {
	k := hostKey(12, "www.example.com")
	if len(k) != len("p12.")+16 || k[:4] != "p12." {
		t.Errorf("hostKey = %q", k)
	}
	if hostKey(12, "www.example.com") != k || hostKey(12, "example.com") == k {
		t.Error("hostKey is not a function of the host")
	}
}
