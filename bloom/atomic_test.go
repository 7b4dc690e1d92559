package bloom

import (
	"sync"
	"sync/atomic"
	"testing"
)

// staleProbe is the state the lock-free half of TestAndAddKey leaves for
// addMissing: the stage list it read and the key's missing probes in the
// newest stage of that list.
type staleProbe struct {
	key     uint64
	h1, h2  uint64
	sh      *shard
	stages  []*stage
	p       probe
	missing uint64
}

func takeProbe(t *testing.T, s *Set, key uint64) *staleProbe {
	t.Helper()
	sp := &staleProbe{key: key}
	sp.h1, sp.h2 = hashes(key)
	sp.sh = s.shardOf(sp.h1, sp.h2)
	sp.stages = sp.sh.list()
	last := len(sp.stages) - 1
	sp.missing = sp.p.load(sp.stages[last], sp.h1, sp.h2, stageSeed(last))
	if sp.missing == 0 {
		t.Fatalf("key %d: all bits already set; pick a key the filter does not hold", key)
	}
	return sp
}

// finish runs the locked half with the (possibly stale) probe.
func (sp *staleProbe) finish(s *Set) (seen bool) {
	return s.addMissing(sp.sh, sp.stages, &sp.p, sp.missing, sp.h1, sp.h2)
}

// The tests below replay, one step at a time, the interleavings the
// atomicity argument of addMissing covers: another adder of the same key
// (or the shard's growth) runs between the lock-free probe and the lock.

func TestAddMissingRechecksUnderLock(t *testing.T) {
	s := mustNew(t, Options{Expected: 1000})
	const k = 7
	sp := takeProbe(t, s, k)
	// Another goroutine adds the same key between the probe and the lock.
	if seen, _ := s.TestAndAddKey(k); seen {
		t.Fatal("first add reported seen")
	}
	if !sp.finish(s) {
		t.Fatal("the stale adder was told new after the key was added: two adders told new")
	}
	if s.Len() != 1 {
		t.Fatalf("Len = %d, want 1", s.Len())
	}

	// Without the other adder, the stale probe is the first: it is told
	// new and the key is recorded.
	sp = takeProbe(t, s, k+1)
	if sp.finish(s) {
		t.Fatal("sole adder told seen")
	}
	if ok, _ := s.ContainsKey(k + 1); !ok || s.Len() != 2 {
		t.Fatalf("after the sole add: contained %v, Len %d", ok, s.Len())
	}
	if seen, _ := s.TestAndAddKey(k + 1); !seen {
		t.Fatal("second add of the same key told new")
	}
}

func TestAddMissingAfterGrowth(t *testing.T) {
	// One shard: Expected below minKeysPerShard.
	s := mustNew(t, Options{Expected: 1000})
	// Probes of candidate keys, taken while the shard has one stage.
	var cands []*staleProbe
	for k := uint64(1 << 40); len(cands) < 64; k++ {
		if ok, _ := s.ContainsKey(k); !ok {
			cands = append(cands, takeProbe(t, s, k))
		}
	}
	// Other keys fill the stage until the shard grows.
	for i := uint64(0); len(s.shards[0].list()) == 1; i++ {
		s.TestAndAddKey(i)
	}
	var fresh []*staleProbe
	for _, sp := range cands {
		if ok, _ := s.ContainsKey(sp.key); !ok {
			fresh = append(fresh, sp)
		}
	}
	if len(fresh) < 2 {
		t.Fatalf("only %d of %d candidate keys are still absent", len(fresh), len(cands))
	}

	// The same key was added (into the new stage) between the probe and
	// the lock: the stale adder must find it there.
	a := fresh[0]
	if seen, _ := s.TestAndAddKey(a.key); seen {
		t.Fatal("first add after growth reported seen")
	}
	n := s.Len()
	if !a.finish(s) {
		t.Fatal("stale adder told new although the key went into the grown stage")
	}
	if s.Len() != n {
		t.Fatalf("Len moved from %d to %d on a seen key", n, s.Len())
	}

	// No other adder: the stale adder must add the key to the newest
	// stage, not to the sealed one its probe was computed for.
	b := fresh[1]
	if b.finish(s) {
		t.Fatal("sole adder told seen after growth")
	}
	stages := s.shards[0].list()
	last := len(stages) - 1
	if !stages[last].contains(b.h1, b.h2, stageSeed(last)) {
		t.Fatal("key not in the newest stage")
	}
	if stages[0].contains(b.h1, b.h2, stageSeed(0)) {
		t.Fatal("key's bits were set in the sealed stage")
	}
	if s.Len() != n+1 {
		t.Fatalf("Len = %d, want %d", s.Len(), n+1)
	}
}

// TestSameKeysInLockstep has every goroutine add the same keys in the same
// order, so most keys have several adders at once, in a set small enough
// to grow many times meanwhile. Exactly one adder per key may be told new
// (none if the key is a false positive), no key is lost, and Len counts
// the winners.
func TestSameKeysInLockstep(t *testing.T) {
	const n, goroutines = 30_000, 6
	s := mustNew(t, Options{Expected: 500, FalsePositiveRate: 0.01})
	wins := make([]atomic.Int32, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for k := 0; k < n; k++ {
				if seen, _ := s.TestAndAddKey(uint64(k)); !seen {
					wins[k].Add(1)
				}
			}
		}()
	}
	close(start)
	wg.Wait()
	total := 0
	for k := range wins {
		w := int(wins[k].Load())
		if w > 1 {
			t.Fatalf("key %d told new to %d adders", k, w)
		}
		total += w
		if ok, _ := s.ContainsKey(uint64(k)); !ok {
			t.Fatalf("key %d lost", k)
		}
	}
	if uint64(total) != s.Len() {
		t.Fatalf("%d adders told new, Len %d", total, s.Len())
	}
	if st := s.Stats(); st.Stages < 5 || total < n*98/100 {
		t.Fatalf("%d stages, %d of %d keys new", st.Stages, total, n)
	}
}
