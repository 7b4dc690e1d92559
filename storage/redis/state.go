package redis

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// StateStore keeps named crawl state records, one string key each
// ("state:" + name), for the processes of a crawl to share (it is a
// crawlkit.StateStore: the Crawler keeps its spider-trap learning there
// with Config.StateStore).
type StateStore struct {
	db *DB
}

// StateStore returns the crawl's state store. Closing the DB closes it.
func (db *DB) StateStore() *StateStore { return &StateStore{db: db} }

// stateBackoffMax bounds the pause before UpdateState runs update again
// after another process changed the record under it: a random wait up to
// a bound that doubles from 1 ms, so that contending writers spread out
// instead of colliding again at once.
const stateBackoffMax = 64 * time.Millisecond

// UpdateState replaces the record name with update(its value) with
// optimistic locking: WATCH, GET, then SET in MULTI/EXEC, which fails if
// another process wrote the record meanwhile, and then runs again after a
// short random pause, until ctx ends. No update is lost; update may run
// more than once.
func (s *StateStore) UpdateState(ctx context.Context, name string, update func(old []byte) ([]byte, error)) error {
	if s.db.isClosed() {
		return ErrClosed
	}
	key := s.db.key("state:" + name)
	for bound := time.Millisecond; ; bound = min(2*bound, stateBackoffMax) {
		err := s.db.client.Watch(ctx, func(tx *goredis.Tx) error {
			old, err := tx.Get(ctx, key).Bytes()
			if errors.Is(err, goredis.Nil) {
				old, err = nil, nil
			}
			if err != nil {
				return err
			}
			v, err := update(old)
			if err != nil {
				return errUpdate{err}
			}
			_, err = tx.TxPipelined(ctx, func(p goredis.Pipeliner) error {
				p.Set(ctx, key, v, 0)
				return nil
			})
			return err
		}, key)
		var ue errUpdate
		switch {
		case err == nil:
			return nil
		case errors.Is(err, goredis.TxFailedErr):
			t := time.NewTimer(rand.N(bound))
			select {
			case <-ctx.Done():
				t.Stop()
				return fmt.Errorf("redis: state %s: %w", name, ctx.Err())
			case <-t.C:
			}
			continue
		case errors.As(err, &ue):
			return ue.err
		default:
			return fmt.Errorf("redis: state %s: %w", name, err)
		}
	}
}

// errUpdate carries the update function's error out of the transaction.
type errUpdate struct{ err error }

func (e errUpdate) Error() string { return e.err.Error() }
