package pebble

import (
	"errors"
	"fmt"

	cpebble "github.com/cockroachdb/pebble"
)

// Named records of crawl state that a restart must not forget and that no
// store interface covers: the politeness model's host clocks and blocks,
// the trap detector's verdicts. Each is one value, written whole and
// synced.

// stateKey is the key of the state record name.
func stateKey(name string) []byte {
	return append([]byte{prefixMeta, 's', 't', 'a', 't', 'e', ':'}, name...)
}

// PutState writes the state record name, durably (a synced write, unless
// the DB was opened without sync).
func (db *DB) PutState(name string, value []byte) error {
	if !db.begin() {
		return ErrClosed
	}
	defer db.end()
	if err := db.pdb.Set(stateKey(name), value, db.writeOpts); err != nil {
		return fmt.Errorf("pebble: state put %s: %w", name, err)
	}
	return nil
}

// State returns a copy of the state record name; ok is false when there
// is none.
func (db *DB) State(name string) (value []byte, ok bool, err error) {
	if !db.begin() {
		return nil, false, ErrClosed
	}
	defer db.end()
	v, closer, err := db.pdb.Get(stateKey(name))
	if errors.Is(err, cpebble.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("pebble: state get %s: %w", name, err)
	}
	defer closer.Close()
	return append([]byte(nil), v...), true, nil
}
