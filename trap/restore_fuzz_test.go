package trap

import (
	"bytes"
	"fmt"
	"testing"
	"time"
)

// FuzzRestore restores a detector from arbitrary bytes, seeded with real
// snapshots: Restore must not panic, and a detector it accepted must go on
// judging, learning and snapshotting without panicking.
func FuzzRestore(f *testing.F) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cfg := Config{MaxHosts: 4, MaxTrackedURLs: 16, PatternBudget: 3, DistinctCandidates: true}
	seed := New(cfg)
	for i := 0; i < 20; i++ {
		u := fmt.Sprintf("http://h%d.test/item?id=%d", i%3, i)
		if !seed.JudgeAt(now, Candidate{URL: u, Source: "http://seed.test/"}).Rejected() {
			seed.ObservePage(Page{URL: u, Fingerprint: uint64(i % 2), Links: []string{"http://h1.test/x"}})
		}
	}
	var buf bytes.Buffer
	if err := seed.Snapshot(&buf); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Add([]byte("junk"))
	f.Fuzz(func(t *testing.T, b []byte) {
		d := New(cfg)
		if err := d.Restore(bytes.NewReader(b)); err != nil {
			return
		}
		for i := 0; i < 8; i++ {
			u := fmt.Sprintf("http://h%d.test/item?id=%d", i%5, 100+i)
			if !d.JudgeAt(now, Candidate{URL: u, Source: "http://h0.test/"}).Rejected() {
				d.ObservePage(Page{URL: u, Fingerprint: uint64(i), Links: []string{"http://h2.test/y"}})
			}
		}
		if err := d.Snapshot(&bytes.Buffer{}); err != nil {
			t.Fatalf("snapshot after a restore: %v", err)
		}
	})
}
