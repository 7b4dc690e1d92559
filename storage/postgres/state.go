package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// StateStore keeps named crawl state records in the table state, for the
// processes of a crawl to share (it is a crawlkit.StateStore: the
// Crawler keeps its spider-trap learning there with Config.StateStore).
type StateStore struct {
	db *DB
}

// StateStore returns the DB's state store. Closing the DB closes it.
func (db *DB) StateStore() *StateStore { return &StateStore{db: db} }

// UpdateState replaces the record name with update(its value) in one
// transaction that locks the row (SELECT ... FOR UPDATE), so concurrent
// updates of one record from several processes run one after another and
// none is lost. A record that does not exist yet reads as nil.
func (s *StateStore) UpdateState(ctx context.Context, name string, update func(old []byte) ([]byte, error)) error {
	if s.db.isClosed() {
		return ErrClosed
	}
	var failed error
	err := pgx.BeginFunc(ctx, s.db.pool, func(tx pgx.Tx) error {
		// An empty row first, so that the first writers of a name wait
		// for each other on its lock like every later one.
		if _, err := tx.Exec(ctx, "INSERT INTO state (name, value) VALUES ($1, '') ON CONFLICT (name) DO NOTHING", name); err != nil {
			return err
		}
		var old []byte
		if err := tx.QueryRow(ctx, "SELECT value FROM state WHERE name = $1 FOR UPDATE", name).Scan(&old); err != nil {
			return err
		}
		if len(old) == 0 {
			old = nil
		}
		v, err := update(old)
		if err != nil {
			failed = err
			return err
		}
		if v == nil {
			v = []byte{}
		}
		_, err = tx.Exec(ctx, "UPDATE state SET value = $2, updated_at = now() WHERE name = $1", name, v)
		return err
	})
	switch {
	case failed != nil:
		return failed
	case err != nil:
		return fmt.Errorf("postgres: state %s: %w", name, err)
	}
	return nil
}
