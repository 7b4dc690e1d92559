package bloom

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/crawlkit/crawlkit/internal/racebuild"
	"github.com/crawlkit/crawlkit/urlnorm"
)

func mustNew(t testing.TB, opts Config) *Set {
	t.Helper()
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func url(i int) string { return "https://example.com/p/" + strconv.Itoa(i) }

// fpRate inserts keys [0,n) into s, checks none is a false negative, then
// returns the fraction of `probes` keys never inserted that s reports seen.
func fpRate(t testing.TB, s *Set, n, probes uint64) float64 {
	t.Helper()
	for i := uint64(0); i < n; i++ {
		if _, err := s.TestAndAddKey(i); err != nil {
			t.Fatal(err)
		}
	}
	for i := uint64(0); i < n; i++ {
		if ok, _ := s.ContainsKey(i); !ok {
			t.Fatalf("false negative: key %d added but not contained", i)
		}
	}
	fp := 0
	for i := uint64(0); i < probes; i++ {
		if ok, _ := s.ContainsKey(1<<62 + i); ok {
			fp++
		}
	}
	return float64(fp) / float64(probes)
}

func TestFalsePositiveRateAtCapacity(t *testing.T) {
	for _, p := range []float64{0.01, 0.001, 0.05} {
		t.Run(fmt.Sprint(p), func(t *testing.T) {
			n := uint64(100_000)
			s := mustNew(t, Config{Expected: n, FalsePositiveRate: p})
			got := fpRate(t, s, n, 300_000)
			t.Logf("p=%v: measured %.5f (%.2f×), %d stages", p, got, got/p, s.Stats().Stages)
			if got > 1.25*p {
				t.Errorf("false-positive rate %.5f exceeds 1.25 × %v", got, p)
			}
			if s.Stats().Stages != 1 {
				t.Errorf("grew to %d stages at the expected load", s.Stats().Stages)
			}
		})
	}
}

func TestGrowthKeepsBound(t *testing.T) {
	const p = 0.01
	n := uint64(40_000)
	s := mustNew(t, Config{Expected: n, FalsePositiveRate: p})
	got := fpRate(t, s, 5*n, 300_000)
	st := s.Stats()
	t.Logf("5× expected: measured %.5f, %d stages, bits per stage %v, %.2f bits/key", got, st.Stages, st.StageBits, st.BitsPerKey)
	if st.Stages < 3 {
		t.Errorf("only %d stages after 5× the expected keys", st.Stages)
	}
	if got > p {
		t.Errorf("false-positive rate %.5f exceeds the bound %v at 5× capacity", got, p)
	}
}

func TestShardedGrowth(t *testing.T) {
	if testing.Short() || racebuild.Enabled {
		t.Skip("2M keys")
	}
	const p = 0.01
	n := uint64(400_000) // 8 shards
	s := mustNew(t, Config{Expected: n, FalsePositiveRate: p})
	if s.Stats().Shards < 2 {
		t.Fatalf("%d shards; the test needs several", s.Stats().Shards)
	}
	atCap := fpRate(t, s, n, 400_000)
	if st := s.Stats(); st.Stages != 1 {
		t.Errorf("a shard grew at the expected load: %d stages", st.Stages)
	}
	for i := n; i < 5*n; i++ {
		s.TestAndAddKey(i)
	}
	at5 := fpRate(t, s, 5*n, 400_000)
	t.Logf("%d shards: at capacity %.5f, at 5× %.5f (%d stages)", s.Stats().Shards, atCap, at5, s.Stats().Stages)
	if atCap > 1.25*p || at5 > p {
		t.Errorf("rates %.5f at capacity, %.5f at 5×; bound %v", atCap, at5, p)
	}
}

// TestTenMillion checks for false negatives over 10M URLs and measures the
// false-positive rate at that load. It takes ~10 s without the race
// detector, so it is skipped with -short and under -race.
func TestTenMillion(t *testing.T) {
	if testing.Short() || racebuild.Enabled {
		t.Skip("10M URLs; run without -race and -short")
	}
	const n, p = 10_000_000, 0.01
	s := mustNew(t, Config{Expected: n, FalsePositiveRate: p})
	newCount := 0
	for i := 0; i < n; i++ {
		seen, _ := s.TestAndAdd(url(i))
		if !seen {
			newCount++
		}
	}
	for i := 0; i < n; i++ {
		if ok, _ := s.Contains(url(i)); !ok {
			t.Fatalf("false negative for %s", url(i))
		}
	}
	fp := 0
	const probes = 1_000_000
	for i := 0; i < probes; i++ {
		if ok, _ := s.Contains("https://other.example/q/" + strconv.Itoa(i)); ok {
			fp++
		}
	}
	rate := float64(fp) / probes
	st := s.Stats()
	t.Logf("10M URLs: 0 false negatives; %d reported new on insert; FP %.5f (%.2f× of %v); %.3f bits/key; %d stages",
		newCount, rate, rate/p, p, float64(st.Bits)/n, st.Stages)
	if rate > 1.25*p {
		t.Errorf("false-positive rate %.5f exceeds 1.25 × %v", rate, p)
	}
}

func TestBitsPerKeyMatchesFormula(t *testing.T) {
	for _, tc := range []struct {
		n uint64
		p float64
	}{{10_000_000, 0.01}, {1_000_000, 0.001}, {100_000, 0.01}, {50_000_000, 0.02}} {
		s, err := newSet(Config{Expected: tc.n, FalsePositiveRate: tc.p})
		if err != nil {
			t.Fatal(err)
		}
		formula := -math.Log(tc.p) / (math.Ln2 * math.Ln2)
		sp := s.params[0]
		got := float64(sp.m*uint64(len(s.shards))) / float64(tc.n)
		t.Logf("n=%d p=%v: %.3f bits/key, formula %.3f (%+.1f%%), k=%d, %d shards",
			tc.n, tc.p, got, formula, 100*(got/formula-1), sp.k, len(s.shards))
		if got > 1.05*formula || got < formula {
			t.Errorf("n=%d p=%v: %.3f bits/key, want within 5%% above %.3f", tc.n, tc.p, got, formula)
		}
	}
}

func TestTestAndAddAtomic(t *testing.T) {
	s := mustNew(t, Config{Expected: 100_000})
	const goroutines, urls = 4, 2000
	for i := 0; i < urls; i++ {
		u := url(i)
		var wg sync.WaitGroup
		start := make(chan struct{})
		results := make(chan bool, goroutines)
		for g := 0; g < goroutines; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				seen, err := s.TestAndAdd(u)
				if err != nil {
					t.Error(err)
				}
				results <- seen
			}()
		}
		close(start)
		wg.Wait()
		close(results)
		fresh := 0
		for seen := range results {
			if !seen {
				fresh++
			}
		}
		// With a 1% filter an unseen URL can be a false positive, so
		// zero winners is possible but two never is.
		if fresh > 1 {
			t.Fatalf("%s: %d goroutines were told it was new", u, fresh)
		}
	}
}

func TestStoreRemovesFalsePositives(t *testing.T) {
	store := NewMemoryStore()
	// A tiny, very loose filter: most fresh keys are filter positives.
	s := mustNew(t, Config{Expected: 1000, FalsePositiveRate: 0.5, Store: store})
	for i := 0; i < 20_000; i++ {
		seen, err := s.TestAndAddKey(uint64(i))
		if err != nil || seen {
			t.Fatalf("key %d: seen=%v err=%v on first insert", i, seen, err)
		}
	}
	for i := 0; i < 20_000; i++ {
		seen, _ := s.TestAndAddKey(uint64(i))
		if !seen {
			t.Fatalf("key %d: reported new on second insert", i)
		}
	}
	if store.Len() != 20_000 || s.Len() != 20_000 {
		t.Fatalf("store holds %d keys, set counts %d; want 20000", store.Len(), s.Len())
	}

	// A new Set over the same store rebuilds its filter from the store.
	s2 := mustNew(t, Config{Expected: 1000, FalsePositiveRate: 0.5, Store: store})
	for i := 0; i < 20_000; i++ {
		if ok, _ := s2.ContainsKey(uint64(i)); !ok {
			t.Fatalf("key %d lost after rebuilding from the store", i)
		}
	}
	if ok, _ := s2.ContainsKey(1 << 50); ok {
		t.Fatal("a key never added is contained")
	}
}

type failingStore struct{ MemoryStore }

var errBroken = errors.New("disk on fire")

func (f *failingStore) Add(uint64) error { return errBroken }

func TestStoreErrorsAreWrapped(t *testing.T) {
	s := mustNew(t, Config{Store: &failingStore{}})
	if _, err := s.TestAndAdd("https://example.com/"); !errors.Is(err, errBroken) {
		t.Fatalf("err = %v, want wrapping %v", err, errBroken)
	}
}

func TestInvalidOptions(t *testing.T) {
	for _, o := range []Config{
		{FalsePositiveRate: -1}, {FalsePositiveRate: 0.9}, {FalsePositiveRate: math.NaN()},
		{Expected: 1 << 50},
	} {
		if _, err := New(o); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("New(%+v) err = %v, want ErrInvalidConfig", o, err)
		}
	}
}

func TestKeyIsXXH64(t *testing.T) {
	// Reference values of XXH64 with seed 0 (from the xxHash
	// specification's test vectors): the key is part of the on-disk
	// contract of stores and snapshots.
	for s, want := range map[string]uint64{
		"":    0xef46db3751d8e999,
		"abc": 0x44bc2cf5ad770999,
	} {
		if got := Key(s); got != want {
			t.Errorf("Key(%q) = %#x, want %#x", s, got, want)
		}
	}
}

func TestKeyAgreesWithURLNorm(t *testing.T) {
	// Callers holding urlnorm keys may use TestAndAddKey interchangeably
	// with TestAndAdd on the same normalized URL.
	for _, u := range []string{"", "https://example.com/", "http://a.test/x?y=1", url(12345)} {
		if Key(u) != urlnorm.Key(u) {
			t.Errorf("Key(%q) = %#x, urlnorm.Key = %#x", u, Key(u), urlnorm.Key(u))
		}
	}
}

// TestConcurrentGrowth races inserters of the same keys (so shards grow
// while lock-free readers are checking bits) and checks that no key is
// reported new twice and none is lost.
func TestConcurrentGrowth(t *testing.T) {
	s := mustNew(t, Config{Expected: 1000, FalsePositiveRate: 0.01})
	const n, goroutines = 20_000, 4
	wins := make([]atomic.Int32, n)
	var wg sync.WaitGroup
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < n; i++ {
				k := (i + g*n/goroutines) % n
				seen, _ := s.TestAndAddKey(uint64(k))
				if !seen {
					wins[k].Add(1)
				}
				s.ContainsKey(uint64(n + i))
			}
		}(g)
	}
	wg.Wait()
	total := 0
	for k := range wins {
		w := int(wins[k].Load())
		if w > 1 {
			t.Fatalf("key %d reported new %d times", k, w)
		}
		total += w
		if ok, _ := s.ContainsKey(uint64(k)); !ok {
			t.Fatalf("key %d lost", k)
		}
	}
	if uint64(total) != s.Len() {
		t.Fatalf("%d wins but Len %d", total, s.Len())
	}
	if st := s.Stats(); st.Stages < 4 || total < n*98/100 {
		t.Fatalf("%d stages, %d of %d keys new", st.Stages, total, n)
	}
}
