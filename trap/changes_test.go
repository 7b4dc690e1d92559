package trap

import (
	"bytes"
	"testing"
	"time"
)

// Changes moves with every admission, observation, Merge and Restore, and a
// Snapshot taken when it has not moved since another holds the same bytes.
func TestChangesMovesWithLearning(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	d := New(Config{PatternBudget: 5, DistinctCandidates: true})
	snap := func() []byte {
		var b bytes.Buffer
		if err := d.Snapshot(&b); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	step := func(what string, f func()) {
		t.Helper()
		before := d.Changes()
		f()
		if d.Changes() == before {
			t.Errorf("%s: Changes stayed at %d", what, before)
		}
	}
	step("admission", func() { d.JudgeAt(now, Candidate{URL: "http://a.test/x?id=1", Source: "http://a.test/"}) })
	step("observation", func() { d.ObservePage(Page{URL: "http://a.test/x?id=1", Fingerprint: 7}) })
	still, first := d.Changes(), snap()
	if again := snap(); d.Changes() != still || !bytes.Equal(first, again) {
		t.Fatal("a Snapshot moved Changes, or two Snapshots of unchanged learning differ")
	}
	step("merge", func() {
		if err := d.Merge(bytes.NewReader(first)); err != nil {
			t.Fatal(err)
		}
	})
	d = New(Config{PatternBudget: 5, DistinctCandidates: true})
	step("restore", func() {
		if err := d.Restore(bytes.NewReader(first)); err != nil {
			t.Fatal(err)
		}
	})
}
