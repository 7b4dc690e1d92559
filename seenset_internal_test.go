package crawlkit

import (
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/crawlkit/crawlkit/bloom"
)

// memDisk is a SeenStore in memory, standing in for the DataDir's.
type memDisk struct {
	mu   sync.Mutex
	keys map[uint64]bool
	gets int
}

func (d *memDisk) Contains(k uint64) (bool, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.gets++
	return d.keys[k], nil
}

func (d *memDisk) AddBatch(keys []uint64) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, k := range keys {
		d.keys[k] = true
	}
	return nil
}

func (d *memDisk) AddLazy(keys []uint64) error { return d.AddBatch(keys) }

func (d *memDisk) ForEach(fn func(uint64) error) error {
	for k := range d.keys {
		if err := fn(k); err != nil {
			return err
		}
	}
	return nil
}

// TestSeenSetHasNoFalsePositives checks the seen set as the Crawler builds
// it: with a filter far too small for its keys (half of all answers of the
// filter alone would be wrong), no new key is ever taken for a seen one,
// in memory and with a DataDir, before and after its keys reach the disk.
func TestSeenSetHasNoFalsePositives(t *testing.T) {
	disk := &memDisk{keys: map[uint64]bool{}}
	claims := newClaimedStore(disk)
	for name, store := range map[string]bloom.Store{"memory": bloom.NewMemoryStore(), "datadir": claims} {
		set, err := bloom.New(bloom.Config{Expected: 64, FalsePositiveRate: 0.5, Store: store})
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(1, 2))
		added := make([]uint64, 20000)
		for i := range added {
			added[i] = rng.Uint64()
			if seen, err := set.TestAndAddKey(added[i]); err != nil || seen {
				t.Fatalf("%s: a new key was taken as seen (%v)", name, err)
			}
		}
		if name == "datadir" {
			// Half the keys reach the disk; the rest stay claimed.
			if err := claims.durable(added[:10000], false); err != nil {
				t.Fatal(err)
			}
		}
		for _, k := range added {
			if seen, err := set.ContainsKey(k); err != nil || !seen {
				t.Fatalf("%s: an added key was taken as new (%v)", name, err)
			}
		}
		for i := 0; i < 20000; i++ {
			if seen, _ := set.ContainsKey(rng.Uint64()); seen {
				t.Fatalf("%s: a key never added was taken as seen", name)
			}
		}
	}
}

// TestClaimsLeaveOnceDurable checks that claims do not grow with the
// crawl: keys leave them once on disk, and the cache of keys found on disk
// stays bounded.
func TestClaimsLeaveOnceDurable(t *testing.T) {
	disk := &memDisk{keys: map[uint64]bool{}}
	s := newClaimedStore(disk)
	for k := uint64(0); k < 3*recentSeen; k++ {
		if err := s.Add(k); err != nil {
			t.Fatal(err)
		}
		if err := s.durable([]uint64{k}, k%2 == 0); err != nil {
			t.Fatal(err)
		}
		if ok, _ := s.Contains(k); !ok {
			t.Fatalf("key %d not found after it was made durable", k)
		}
	}
	if len(s.claimed) != 0 || len(s.recent) > recentSeen {
		t.Errorf("claims %d, recent %d (bound %d)", len(s.claimed), len(s.recent), recentSeen)
	}
	gets := disk.gets
	if ok, _ := s.Contains(3*recentSeen - 1); !ok || disk.gets != gets {
		t.Errorf("a key just found on disk was read from disk again")
	}
}
