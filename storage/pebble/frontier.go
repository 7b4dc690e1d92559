package pebble

import (
	"bytes"
	"context"
	"fmt"

	cpebble "github.com/cockroachdb/pebble"

	"github.com/crawlkit/crawlkit/frontier"
)

// FrontierStore is a frontier.Store kept in a DB under the frontier's key
// prefix. Get it with DB.Frontier.
//
// Each Write is one Pebble batch committed with a synced write-ahead log
// (unless the DB was opened with NoSync), so an acknowledged Add or settle
// survives kill -9. The frontier already gathers concurrent Adds and settles
// into one Write (group commit), and Pebble's commit pipeline additionally
// shares one fsync among concurrent batches. Scans are bounded iterators over
// exactly the requested range: the frontier reads a host's queue from its
// cursor, so a scan never walks other hosts' keys or the tombstones of URLs
// settled before the cursor.
type FrontierStore struct {
	db *DB
}

// Frontier returns the DB's frontier store. Only one Frontier may use it at a
// time. Closing the FrontierStore does not close the DB.
func (db *DB) Frontier() *FrontierStore { return &FrontierStore{db: db} }

var _ frontier.Store = (*FrontierStore)(nil)

// Write commits muts as one batch, synced unless the DB is NoSync.
func (s *FrontierStore) Write(ctx context.Context, muts []frontier.Mutation) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if !s.db.begin() {
		return ErrClosed
	}
	defer s.db.end()
	size := 0
	for i := range muts {
		size += len(muts[i].Key) + len(muts[i].Value) + 16
	}
	b := s.db.pdb.NewBatchWithSize(size)
	defer b.Close()
	key := make([]byte, 0, 64)
	for i := range muts {
		m := &muts[i]
		key = append(key[:0], prefixFrontier)
		key = append(key, m.Key...)
		var err error
		if m.Delete {
			err = b.Delete(key, nil)
		} else {
			err = b.Set(key, m.Value, nil)
		}
		if err != nil {
			return fmt.Errorf("pebble: frontier batch: %w", err)
		}
	}
	if err := b.Commit(s.db.writeOpts); err != nil {
		return fmt.Errorf("pebble: frontier commit: %w", err)
	}
	return nil
}

// Scan returns up to limit pairs with start <= key < end (end nil: no upper
// bound) in key order.
func (s *FrontierStore) Scan(ctx context.Context, start, end []byte, limit int) ([]frontier.KV, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if limit <= 0 {
		return nil, fmt.Errorf("pebble: frontier scan: limit %d is not positive", limit)
	}
	if !s.db.begin() {
		return nil, ErrClosed
	}
	defer s.db.end()
	lower := prefixed(prefixFrontier, start)
	upper := prefixUpperBound(prefixFrontier)
	if end != nil {
		upper = prefixed(prefixFrontier, end)
	}
	if bytes.Compare(lower, upper) >= 0 {
		return nil, nil
	}
	it, err := s.db.pdb.NewIterWithContext(ctx, &cpebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return nil, fmt.Errorf("pebble: frontier scan: %w", err)
	}
	var out []frontier.KV
	for ok := it.First(); ok && len(out) < limit; ok = it.Next() {
		k := it.Key()
		v, err := it.ValueAndErr()
		if err != nil {
			it.Close()
			return nil, fmt.Errorf("pebble: frontier scan: %w", err)
		}
		out = append(out, frontier.KV{Key: bytes.Clone(k[1:]), Value: bytes.Clone(v)})
	}
	if err := it.Close(); err != nil {
		return nil, fmt.Errorf("pebble: frontier scan: %w", err)
	}
	return out, nil
}

// Close is a no-op: the store shares the DB, which its owner closes.
func (s *FrontierStore) Close() error { return nil }
