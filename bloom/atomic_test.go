package bloom

import (
	"sync"
	"sync/atomic"
	"testing"
	"unsafe"
)

// The first two tests replay, one step at a time, the interleavings the
// locked half of TestAndAddKey must handle: the lock-free check has found
// the key absent, and before the lock is taken another adder of the same
// key runs, or the shard grows.

// lockedHalf runs the locked half for key, as after a lock-free check that
// found it absent.
func lockedHalf(s *Set, key uint64) (seen bool) {
	h1, h2 := hashes(key)
	return s.lockedTestAndAdd(s.shardOf(h1, h2), h1, h2)
}

func TestLockedHalfRechecks(t *testing.T) {
	s := mustNew(t, Config{Expected: 1000})
	const k = 7
	if ok, _ := s.ContainsKey(k); ok {
		t.Fatal("empty set contains a key")
	}
	// The lock-free check has found k absent; another adder adds it.
	if seen, _ := s.TestAndAddKey(k); seen {
		t.Fatal("first add reported seen")
	}
	if !lockedHalf(s, k) {
		t.Fatal("the late adder was told new after the key was added: two adders told new")
	}
	if s.Len() != 1 {
		t.Fatalf("Len = %d, want 1", s.Len())
	}
	// No other adder: the locked half records the key.
	if lockedHalf(s, k+1) {
		t.Fatal("sole adder told seen")
	}
	if ok, _ := s.ContainsKey(k + 1); !ok || s.Len() != 2 {
		t.Fatalf("after the sole add: contained %v, Len %d", ok, s.Len())
	}
}

func TestLockedHalfAfterGrowth(t *testing.T) {
	// One shard: Expected below minKeysPerShard.
	s := mustNew(t, Config{Expected: 1000})
	sh := &s.shards[0]
	// Keys the lock-free check finds absent while the shard has one stage.
	var cands []uint64
	for k := uint64(1 << 40); len(cands) < 64; k++ {
		cands = append(cands, k)
	}
	// Other keys fill the stage until the shard grows.
	for i := uint64(0); len(sh.list()) == 1; i++ {
		s.TestAndAddKey(i)
	}
	if sealed := sh.list()[0]; sealed.count != sealed.limit || sh.fill != 0 {
		t.Fatalf("after growth: sealed stage holds %d keys (limit %d), fill %d", sealed.count, sealed.limit, sh.fill)
	}
	var fresh []uint64
	for _, k := range cands {
		if ok, _ := s.ContainsKey(k); !ok {
			fresh = append(fresh, k)
		}
	}
	if len(fresh) < 2 {
		t.Fatalf("only %d of %d candidate keys are still absent", len(fresh), len(cands))
	}

	// The same key was added, into the new stage, between the check and
	// the lock.
	a := fresh[0]
	if seen, _ := s.TestAndAddKey(a); seen {
		t.Fatal("first add after growth reported seen")
	}
	n := s.Len()
	if !lockedHalf(s, a) {
		t.Fatal("late adder told new although the key went into the grown stage")
	}
	if s.Len() != n {
		t.Fatalf("Len moved from %d to %d on a seen key", n, s.Len())
	}

	// No other adder: the key goes into the newest stage, not the sealed one.
	b := fresh[1]
	if lockedHalf(s, b) {
		t.Fatal("sole adder told seen after growth")
	}
	h1, h2 := hashes(b)
	stages := sh.list()
	last := len(stages) - 1
	if !stages[last].contains(h1, h2, stageSeed(last)) || stages[0].contains(h1, h2, stageSeed(0)) {
		t.Fatal("key not in the newest stage only")
	}
	if s.Len() != n+1 || sh.fill != 2 {
		t.Fatalf("Len = %d (want %d), fill = %d (want 2)", s.Len(), n+1, sh.fill)
	}
}

// TestSameKeysInLockstep has every goroutine add the same keys in the same
// order, so most keys have several adders at once, in a set small enough
// to grow many times meanwhile. At most one adder per key may be told new
// (none if the key is a false positive), no key is lost, Len counts the
// winners, and the stage counts (kept in the shard for the newest stage)
// add up to Len with every sealed stage exactly at its limit.
func TestSameKeysInLockstep(t *testing.T) {
	const n, goroutines = 30_000, 6
	s := mustNew(t, Config{Expected: 500, FalsePositiveRate: 0.01})
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
	sh := &s.shards[0]
	stages := sh.list()
	sum := sh.fill
	for _, st := range stages[:len(stages)-1] {
		if st.count != st.limit {
			t.Errorf("sealed stage holds %d keys, limit %d", st.count, st.limit)
		}
		sum += st.count
	}
	if sum != s.Len() {
		t.Errorf("stage counts add up to %d, Len %d", sum, s.Len())
	}
	if len(stages) < 5 || total < n*98/100 {
		t.Fatalf("%d stages, %d of %d keys new", len(stages), total, n)
	}
}

// TestShardLayout checks the padding the shard comment describes: what
// lookups read fills the first cache line, what insertions write starts
// the second.
func TestShardLayout(t *testing.T) {
	var sh shard
	if got := unsafe.Offsetof(sh.mu); got != cacheLine {
		t.Errorf("mu at offset %d, want %d", got, cacheLine)
	}
	if got := unsafe.Sizeof(sh); got != 2*cacheLine {
		t.Errorf("shard is %d bytes, want %d", got, 2*cacheLine)
	}
	if end := unsafe.Offsetof(sh.stages) + unsafe.Sizeof(sh.stages); end > cacheLine {
		t.Errorf("stage list ends at %d, past the first line", end)
	}
}
