package redis

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/crawlkit/crawlkit/bloom"
	"github.com/crawlkit/crawlkit/frontier"
	"github.com/crawlkit/crawlkit/robots"
	"github.com/crawlkit/crawlkit/simhash"
)

// opTimeout bounds the operations of the store interfaces that take no
// context (bloom.Store, simhash.Store).
const opTimeout = 30 * time.Second

// FrontierStore is a frontier.Store in two keys: a sorted set of the keys,
// all with score 0 so that Redis orders them byte by byte (ZRANGE ...
// BYLEX), and a hash from key to value. A Write is one MULTI/EXEC
// transaction; a Scan is one Lua script, so it sees a Write entirely or not
// at all.
type FrontierStore struct {
	db         *DB
	zkey, hkey string
}

var _ frontier.Store = (*FrontierStore)(nil)

// FrontierStore returns the crawl's frontier store. Only one Frontier may
// use a crawl's store at a time. Closing the store does not close the DB.
func (db *DB) FrontierStore() *FrontierStore {
	return &FrontierStore{db: db, zkey: db.key("kv:z"), hkey: db.key("kv:h")}
}

// Write applies muts in one MULTI/EXEC transaction.
func (s *FrontierStore) Write(ctx context.Context, muts []frontier.Mutation) error {
	if s.db.isClosed() {
		return ErrClosed
	}
	if len(muts) == 0 {
		return ctx.Err()
	}
	// Repeating the whole transaction leaves the same contents.
	return retry(ctx, "frontier write", func() error {
		_, err := s.db.client.TxPipelined(ctx, func(p goredis.Pipeliner) error {
			for i := range muts {
				m := &muts[i]
				k := string(m.Key)
				if m.Delete {
					p.ZRem(ctx, s.zkey, k)
					p.HDel(ctx, s.hkey, k)
				} else {
					p.ZAdd(ctx, s.zkey, goredis.Z{Member: k})
					p.HSet(ctx, s.hkey, k, m.Value)
				}
			}
			return nil
		})
		return err
	})
}

// Scan returns up to limit pairs with start <= key < end (end nil: no upper
// bound) in key order.
func (s *FrontierStore) Scan(ctx context.Context, start, end []byte, limit int) ([]frontier.KV, error) {
	if s.db.isClosed() {
		return nil, ErrClosed
	}
	if limit <= 0 {
		return nil, fmt.Errorf("redis: frontier scan: limit %d is not positive", limit)
	}
	maxArg := "+"
	if end != nil {
		maxArg = "(" + string(end)
	}
	var res []any
	err := retry(ctx, "frontier scan", func() error {
		var err error
		res, err = s.db.scripts.scan.Run(ctx, s.db.client, []string{s.zkey, s.hkey}, "["+string(start), maxArg, limit).Slice()
		return err
	})
	if err != nil {
		return nil, err
	}
	out := make([]frontier.KV, 0, len(res)/2)
	for i := 0; i+1 < len(res); i += 2 {
		k, _ := res[i].(string)
		v, _ := res[i+1].(string)
		out = append(out, frontier.KV{Key: []byte(k), Value: []byte(v)})
	}
	return out, nil
}

// Close is a no-op: the store shares the DB, which its owner closes.
func (s *FrontierStore) Close() error { return nil }

// setShards spreads a large set over several Redis sets, so that ForEach can
// read each whole (SMEMBERS, exact and without the repeats SSCAN may
// return) while no single reply is huge.
const setShards = 256

// SeenStore is the exact set behind a bloom.Set: 256 Redis sets of 8-byte
// big-endian keys, sharded by the key's low byte. Several processes may
// share it.
type SeenStore struct {
	db *DB
}

var _ bloom.Store = (*SeenStore)(nil)

// SeenStore returns the crawl's seen-URL store.
func (db *DB) SeenStore() *SeenStore { return &SeenStore{db: db} }

func (s *SeenStore) shard(key uint64) string { return s.db.key(fmt.Sprintf("seen:%02x", byte(key))) }

func seenMember(key uint64) string {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], key)
	return string(b[:])
}

// Contains implements bloom.Store.
func (s *SeenStore) Contains(key uint64) (bool, error) {
	if s.db.isClosed() {
		return false, ErrClosed
	}
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	var ok bool
	err := retry(ctx, "seen contains", func() error {
		var err error
		ok, err = s.db.client.SIsMember(ctx, s.shard(key), seenMember(key)).Result()
		return err
	})
	return ok, err
}

// Add implements bloom.Store.
func (s *SeenStore) Add(key uint64) error { return s.AddBatch([]uint64{key}) }

// AddBatch records several keys in one pipelined round trip.
func (s *SeenStore) AddBatch(keys []uint64) error {
	if s.db.isClosed() {
		return ErrClosed
	}
	if len(keys) == 0 {
		return nil
	}
	byShard := map[string][]any{}
	for _, k := range keys {
		sh := s.shard(k)
		byShard[sh] = append(byShard[sh], seenMember(k))
	}
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	return retry(ctx, "seen add", func() error {
		_, err := s.db.client.Pipelined(ctx, func(p goredis.Pipeliner) error {
			for sh, ms := range byShard {
				p.SAdd(ctx, sh, ms...)
			}
			return nil
		})
		return err
	})
}

// ForEach implements bloom.Store, reading one shard at a time.
func (s *SeenStore) ForEach(fn func(key uint64) error) error {
	if s.db.isClosed() {
		return ErrClosed
	}
	for i := 0; i < setShards; i++ {
		ms, err := readSet(s.db, s.db.key(fmt.Sprintf("seen:%02x", i)))
		if err != nil {
			return wrap("seen scan", err)
		}
		for _, m := range ms {
			if len(m) != 8 {
				return fmt.Errorf("redis: seen scan: malformed member %x", m)
			}
			if err := fn(binary.BigEndian.Uint64([]byte(m))); err != nil {
				return err
			}
		}
	}
	return nil
}

// readSet returns the members of one set.
func readSet(db *DB, key string) ([]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	var ms []string
	err := retry(ctx, "smembers", func() error {
		var err error
		ms, err = db.client.SMembers(ctx, key).Result()
		return err
	})
	return ms, err
}

// FingerprintStore persists a simhash.Index: 256 Redis sets of 16-byte
// members (fingerprint and document id, big-endian), sharded by the
// fingerprint's low byte. A pair put twice is stored once. The key "fpv"
// holds the simhash.Version of the fingerprints: Open discards those of
// another version (DB.DiscardedFingerprints).
type FingerprintStore struct {
	db *DB
}

var _ simhash.Store = (*FingerprintStore)(nil)

// FingerprintStore returns the crawl's fingerprint store.
func (db *DB) FingerprintStore() *FingerprintStore { return &FingerprintStore{db: db} }

// Put implements simhash.Store in one pipelined round trip.
func (s *FingerprintStore) Put(entries []simhash.Entry) error {
	if s.db.isClosed() {
		return ErrClosed
	}
	if len(entries) == 0 {
		return nil
	}
	if err := s.db.fingerprintsChecked(); err != nil {
		return err
	}
	byShard := map[string][]any{}
	for _, e := range entries {
		var b [16]byte
		binary.BigEndian.PutUint64(b[:8], e.Fingerprint)
		binary.BigEndian.PutUint64(b[8:], e.ID)
		sh := s.db.key(fmt.Sprintf("fp:%02x", byte(e.Fingerprint)))
		byShard[sh] = append(byShard[sh], string(b[:]))
	}
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	return retry(ctx, "fingerprint put", func() error {
		_, err := s.db.client.Pipelined(ctx, func(p goredis.Pipeliner) error {
			for sh, ms := range byShard {
				p.SAdd(ctx, sh, ms...)
			}
			return nil
		})
		return err
	})
}

// ForEach implements simhash.Store.
func (s *FingerprintStore) ForEach(fn func(simhash.Entry) error) error {
	if s.db.isClosed() {
		return ErrClosed
	}
	if err := s.db.fingerprintsChecked(); err != nil {
		return err
	}
	for i := 0; i < setShards; i++ {
		ms, err := readSet(s.db, s.db.key(fmt.Sprintf("fp:%02x", i)))
		if err != nil {
			return wrap("fingerprint scan", err)
		}
		for _, m := range ms {
			if len(m) != 16 {
				return fmt.Errorf("redis: fingerprint scan: malformed member %x", m)
			}
			b := []byte(m)
			if err := fn(simhash.Entry{Fingerprint: binary.BigEndian.Uint64(b[:8]), ID: binary.BigEndian.Uint64(b[8:])}); err != nil {
				return err
			}
		}
	}
	return nil
}

// RobotsStore is a robots.Store in one hash from origin to the record's
// binary form (robots.Record.MarshalBinary). Workers sharing the crawl
// share fetched robots.txt files.
type RobotsStore struct {
	db  *DB
	key string
}

var _ robots.Store = (*RobotsStore)(nil)

// RobotsStore returns the crawl's robots.txt store.
func (db *DB) RobotsStore() *RobotsStore { return &RobotsStore{db: db, key: db.key("robots")} }

// Get implements robots.Store.
func (s *RobotsStore) Get(ctx context.Context, origin string) (robots.Record, bool, error) {
	if s.db.isClosed() {
		return robots.Record{}, false, ErrClosed
	}
	var b []byte
	err := retry(ctx, "robots get "+origin, func() error {
		var err error
		b, err = s.db.client.HGet(ctx, s.key, origin).Bytes()
		return err
	})
	if errors.Is(err, goredis.Nil) {
		return robots.Record{}, false, nil
	}
	if err != nil {
		return robots.Record{}, false, err
	}
	var rec robots.Record
	if err := rec.UnmarshalBinary(b); err != nil {
		return robots.Record{}, false, fmt.Errorf("redis: robots get %s: %w", origin, err)
	}
	return rec, true, nil
}

// Put implements robots.Store.
func (s *RobotsStore) Put(ctx context.Context, origin string, rec robots.Record) error {
	if s.db.isClosed() {
		return ErrClosed
	}
	b, err := rec.MarshalBinary()
	if err != nil {
		return fmt.Errorf("redis: robots put %s: %w", origin, err)
	}
	return retry(ctx, "robots put "+origin, func() error {
		return s.db.client.HSet(ctx, s.key, origin, b).Err()
	})
}
