package frontier

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
)

// Store is the ordered key-value store a Frontier persists through. The
// frontier owns the key layout (see the package documentation); a Store only
// has to keep byte-string keys in order and apply batches atomically and
// durably. It is deliberately small so that it maps directly onto an embedded
// engine (Pebble: a batch and an iterator), a SQL table (PostgreSQL: one
// transaction of INSERT ... ON CONFLICT / DELETE, and SELECT ... WHERE k >= $1
// AND k < $2 ORDER BY k LIMIT $3 over a bytea primary key), or Redis (MULTI of
// HSET/HDEL plus a sorted set of keys read with ZRANGE ... BYLEX LIMIT).
//
// A Frontier is the only writer of its key space: two frontiers must not
// share one. Implementations must be safe for concurrent use; the frontier
// issues one Write at a time but may Scan while a Write is in flight, and a
// Scan must then see either none or all of that Write's mutations.
//
// frontiertest.Run checks an implementation against this contract.
type Store interface {
	// Write applies muts atomically and durably: when Write returns nil,
	// every mutation survives a crash of the process (and, for a local
	// store, of the machine); when it returns an error, none or all of
	// them may have been applied, and the frontier treats the operation as
	// not acknowledged. Within one Write a later mutation of a key wins.
	// Write must not retain muts or the slices in it after it returns.
	Write(ctx context.Context, muts []Mutation) error

	// Scan returns up to limit pairs with start <= key < end, in ascending
	// byte order of key. A nil end means no upper bound. limit is always
	// positive. The returned slices belong to the caller.
	Scan(ctx context.Context, start, end []byte, limit int) ([]KV, error)

	// Close releases the store's resources. The frontier never calls it:
	// whoever opened the store closes it, after closing the Frontier.
	Close() error
}

// Mutation is one change in a Store.Write batch: a put of Value under Key,
// or, when Delete is set, the removal of Key (removing an absent key is not
// an error).
type Mutation struct {
	Key    []byte
	Value  []byte
	Delete bool
}

// KV is one key-value pair returned by Store.Scan.
type KV struct {
	Key   []byte
	Value []byte
}

// ErrStoreClosed is returned by MemoryStore operations after Close; other
// Store implementations return their own errors.
var ErrStoreClosed = errors.New("frontier: store is closed")

// MemoryStore is a Store held in process memory: an ordered map from keys to
// values (a skip list). It is the reference implementation of the Store
// contract and is useful in tests. Nothing survives the process; a new
// Frontier on the same MemoryStore sees everything an earlier one wrote, which
// models a restart. For a plain in-memory crawl, leave Config.Store nil
// instead: the frontier then keeps every URL in its own compact queues and
// skips the encoding a Store needs.
type MemoryStore struct {
	mu     sync.RWMutex
	list   skiplist
	closed bool
}

// NewMemoryStore returns an empty MemoryStore.
func NewMemoryStore() *MemoryStore {
	m := &MemoryStore{}
	m.list.init()
	return m
}

// Write applies muts atomically. It is durable only for the life of the
// process.
func (m *MemoryStore) Write(ctx context.Context, muts []Mutation) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return ErrStoreClosed
	}
	for i := range muts {
		mu := &muts[i]
		if mu.Delete {
			m.list.delete(mu.Key)
			continue
		}
		m.list.put(bytes.Clone(mu.Key), bytes.Clone(mu.Value))
	}
	return nil
}

// Scan returns up to limit pairs with start <= key < end in key order.
func (m *MemoryStore) Scan(ctx context.Context, start, end []byte, limit int) ([]KV, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if limit <= 0 {
		return nil, fmt.Errorf("frontier: MemoryStore.Scan: limit %d is not positive", limit)
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.closed {
		return nil, ErrStoreClosed
	}
	var out []KV
	for n := m.list.seekGE(start); n != nil && len(out) < limit; n = n.next[0] {
		if end != nil && bytes.Compare(n.key, end) >= 0 {
			break
		}
		out = append(out, KV{Key: bytes.Clone(n.key), Value: bytes.Clone(n.value)})
	}
	return out, nil
}

// Len reports the number of keys in the store.
func (m *MemoryStore) Len() int {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.list.n
}

// Close marks the store closed: later operations fail with ErrStoreClosed.
// Reopen makes it usable again with its contents intact.
func (m *MemoryStore) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closed = true
	return nil
}

// Reopen makes a closed MemoryStore usable again, with everything written
// before Close still in it, the way a durable store is reopened after a
// restart. It returns m.
func (m *MemoryStore) Reopen() *MemoryStore {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closed = false
	return m
}

// skiplist is an ordered map of byte-string keys (Pugh, "Skip lists: a
// probabilistic alternative to balanced trees", CACM 1990) with p = 1/4.
// Levels come from a xorshift generator with a fixed seed, so the structure
// is deterministic.
type skiplist struct {
	head  slNode
	level int
	n     int
	rng   uint64
}

const slMaxLevel = 24

type slNode struct {
	key, value []byte
	next       []*slNode
}

func (s *skiplist) init() {
	s.head.next = make([]*slNode, slMaxLevel)
	s.level = 1
	s.rng = 0x9e3779b97f4a7c15
}

func (s *skiplist) randomLevel() int {
	lvl := 1
	for lvl < slMaxLevel {
		s.rng ^= s.rng << 13
		s.rng ^= s.rng >> 7
		s.rng ^= s.rng << 17
		if s.rng&3 != 0 {
			break
		}
		lvl++
	}
	return lvl
}

// findPrev fills prev with the last node before key on every level and
// returns the node at or after key on level 0.
func (s *skiplist) findPrev(key []byte, prev *[slMaxLevel]*slNode) *slNode {
	x := &s.head
	for l := s.level - 1; l >= 0; l-- {
		for x.next[l] != nil && bytes.Compare(x.next[l].key, key) < 0 {
			x = x.next[l]
		}
		prev[l] = x
	}
	return x.next[0]
}

func (s *skiplist) seekGE(key []byte) *slNode {
	x := &s.head
	for l := s.level - 1; l >= 0; l-- {
		for x.next[l] != nil && bytes.Compare(x.next[l].key, key) < 0 {
			x = x.next[l]
		}
	}
	return x.next[0]
}

func (s *skiplist) put(key, value []byte) {
	var prev [slMaxLevel]*slNode
	if n := s.findPrev(key, &prev); n != nil && bytes.Equal(n.key, key) {
		n.value = value
		return
	}
	lvl := s.randomLevel()
	for l := s.level; l < lvl; l++ {
		prev[l] = &s.head
	}
	if lvl > s.level {
		s.level = lvl
	}
	n := &slNode{key: key, value: value, next: make([]*slNode, lvl)}
	for l := 0; l < lvl; l++ {
		n.next[l] = prev[l].next[l]
		prev[l].next[l] = n
	}
	s.n++
}

func (s *skiplist) delete(key []byte) {
	var prev [slMaxLevel]*slNode
	n := s.findPrev(key, &prev)
	if n == nil || !bytes.Equal(n.key, key) {
		return
	}
	for l := 0; l < len(n.next); l++ {
		prev[l].next[l] = n.next[l]
	}
	for s.level > 1 && s.head.next[s.level-1] == nil {
		s.level--
	}
	s.n--
}
