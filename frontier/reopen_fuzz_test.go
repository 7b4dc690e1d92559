package frontier

import (
	"fmt"
	"testing"
)

// FuzzReopen runs a sequence of adds, leases, settlements and reopenings
// (a new Frontier on the same store, as after a crash: unsettled leases
// are dropped) drawn from the input, with small windows and memory
// budgets, then drains the frontier. Every URL added must be settled
// exactly once, and no settled URL leased again.
func FuzzReopen(f *testing.F) {
	f.Add([]byte{1, 0, 0, 8, 3, 1, 1, 2, 7, 1, 3, 2, 1, 2})
	f.Add([]byte{0, 4, 8, 12, 16, 20, 7, 1, 1, 1, 3, 2, 2, 2, 0, 3})
	f.Add([]byte{2, 0, 4, 0, 4, 0, 4, 3, 1, 3, 1, 2, 3, 0, 5, 9, 13, 3})
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) == 0 || len(in) > 400 {
			return
		}
		cfg := Config{Store: NewMemoryStore(), Window: 1 + int(in[0]%3), MaxInMemory: []int{0, 1, 3}[in[0]/3%3],
			Politeness: FixedDelay(0), Now: noClock(t)}
		open := func() *Frontier {
			g, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			return g
		}
		g := open()
		added, settled := map[string]bool{}, map[string]bool{}
		var held []*Lease
		settle := func(l *Lease) {
			if _, err := g.DoneAt(t0, l, Success(0)); err != nil {
				t.Fatal(err)
			}
			if settled[l.URL] {
				t.Fatalf("%s settled twice", l.URL)
			}
			settled[l.URL] = true
		}
		lease := func() bool {
			l, _, err := g.NextAt(t0)
			if err != nil {
				t.Fatal(err)
			}
			if l == nil {
				return false
			}
			if settled[l.URL] || !added[l.URL] {
				t.Fatalf("%s leased, settled already or never added", l.URL)
			}
			held = append(held, l)
			return true
		}
		for i, op := range in[1:] {
			switch op % 4 {
			case 0: // add a URL of one of four hosts at a depth of 0 to 5
				u := fmt.Sprintf("http://h%d.test/%d", op/4%4, i)
				added[u] = true
				mustAdd(t, g, t0, Entry{URL: u, Depth: int(op / 16 % 6)})
			case 1:
				lease()
			case 2:
				if len(held) > 0 {
					settle(held[0])
					held = held[1:]
				}
			case 3: // the process dies: leases held are lost
				g.Close()
				g, held = open(), nil
			}
		}
		for calls := 0; ; calls++ {
			if calls > 2*len(added)+4 {
				t.Fatalf("still leasing after %d calls for %d URLs", calls, len(added))
			}
			for _, l := range held {
				settle(l)
			}
			held = nil
			if !lease() {
				break
			}
		}
		g.Close()
		for u := range added {
			if !settled[u] {
				t.Errorf("%s added and never settled", u)
			}
		}
	})
}
