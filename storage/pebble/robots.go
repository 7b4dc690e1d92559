package pebble

import (
	"context"
	"errors"
	"fmt"

	cpebble "github.com/cockroachdb/pebble"

	"github.com/crawlkit/crawlkit/robots"
)

// RobotsStore is a robots.Store on Pebble: one key per origin under the
// robots prefix (0x40 followed by the origin, e.g. "https://example.com"),
// whose value is the record's binary form (robots.Record.MarshalBinary).
// It lets a restarted crawler, or several caches on one node, reuse fetched
// robots.txt files instead of fetching them again.
type RobotsStore struct {
	db *DB
}

var _ robots.Store = (*RobotsStore)(nil)

// RobotsStore returns the DB's robots.txt store. It is cheap; every call
// returns a view of the same records.
func (db *DB) RobotsStore() *RobotsStore { return &RobotsStore{db: db} }

// Get implements robots.Store.
func (s *RobotsStore) Get(ctx context.Context, origin string) (robots.Record, bool, error) {
	if !s.db.begin() {
		return robots.Record{}, false, ErrClosed
	}
	defer s.db.end()
	if err := ctx.Err(); err != nil {
		return robots.Record{}, false, err
	}
	v, closer, err := s.db.pdb.Get(prefixed(prefixRobots, []byte(origin)))
	if errors.Is(err, cpebble.ErrNotFound) {
		return robots.Record{}, false, nil
	}
	if err != nil {
		return robots.Record{}, false, fmt.Errorf("pebble: robots get %s: %w", origin, err)
	}
	defer closer.Close()
	var rec robots.Record
	// UnmarshalBinary copies what it keeps, so v may be released after.
	if err := rec.UnmarshalBinary(v); err != nil {
		return robots.Record{}, false, fmt.Errorf("pebble: robots get %s: %w", origin, err)
	}
	return rec, true, nil
}

// Put implements robots.Store. The write is synced unless the DB was opened
// with NoSync.
func (s *RobotsStore) Put(ctx context.Context, origin string, rec robots.Record) error {
	if !s.db.begin() {
		return ErrClosed
	}
	defer s.db.end()
	if err := ctx.Err(); err != nil {
		return err
	}
	v, err := rec.MarshalBinary()
	if err != nil {
		return fmt.Errorf("pebble: robots put %s: %w", origin, err)
	}
	if err := s.db.pdb.Set(prefixed(prefixRobots, []byte(origin)), v, s.db.writeOpts); err != nil {
		return fmt.Errorf("pebble: robots put %s: %w", origin, err)
	}
	return nil
}
