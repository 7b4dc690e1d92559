package frontier

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

// FuzzRecover opens a frontier on a store of queued records built from the
// input, some well formed and some not: recovery must not panic and must
// either refuse the store as corrupt or hand out each well-formed URL at
// most once and then report nothing left, in a bounded number of calls.
func FuzzRecover(f *testing.F) {
	f.Add([]byte{0, 0, 1, 0, 1, 0, 2, 0, 1, 3, 3, 0, 2, 1, 5, 0})
	f.Add([]byte{0, 7, 1, 0, 0, 0, 2, 1, 0, 9, 1, 2, 1, 1, 1, 3})
	f.Add([]byte{3, 0, 1, 4, 0, 0, 1, 5, 0, 1, 1, 6, 2, 3, 0, 0})
	f.Fuzz(func(t *testing.T, in []byte) {
		var muts []Mutation
		// Each 4 bytes: host (a.test to d.test, or a name no host has),
		// band, seq, and how the record is spoiled.
		for i := 0; i+4 <= len(in) && len(muts) < 64; i += 4 {
			host := []string{"a.test", "b.test", "c.test", "d.test", "a.test\x00x", ""}[int(in[i])%6]
			band, seq, spoil := in[i+1]%20, uint64(in[i+2]), in[i+3]
			k := queuedKey(host, band, seq)
			v := appendRecord(nil, &record{url: fmt.Sprintf("http://%s/%d/%d", host, band, seq), depth: uint64(band)}, false)
			switch spoil % 5 {
			case 1:
				k = k[:len(k)-1-int(spoil/5)%4]
			case 2:
				k = append(k, spoil)
			case 3:
				v = v[:len(v)/2]
			}
			muts = append(muts, Mutation{Key: k, Value: v})
		}
		for _, window := range []int{1, 3} {
			s := NewMemoryStore()
			if err := s.Write(context.Background(), muts); err != nil {
				t.Fatal(err)
			}
			g, err := New(Config{Store: s, Window: window, Politeness: FixedDelay(0), Now: noClock(t)})
			if err != nil {
				if !errors.Is(err, ErrCorrupt) {
					t.Fatalf("New: %v is not ErrCorrupt", err)
				}
				continue
			}
			seen := map[string]bool{}
			for calls := 0; ; calls++ {
				if calls > 4*len(muts)+8 {
					t.Fatalf("window %d: still leasing after %d calls for %d records", window, calls, len(muts))
				}
				l, _, err := g.NextAt(t0)
				if err != nil || l == nil {
					break
				}
				if seen[l.URL] {
					t.Fatalf("window %d: %s leased twice", window, l.URL)
				}
				seen[l.URL] = true
				if _, err := g.DoneAt(t0, l, Success(0)); err != nil {
					break
				}
			}
			g.Close()
		}
	})
}
