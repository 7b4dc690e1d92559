package postgres

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/jackc/pgx/v5"

	"github.com/crawlkit/crawlkit/simhash"
)

// fingerprintVersionName is the row of the table meta that holds the
// simhash.Version of the rows of fingerprints. A schema without it holds
// fingerprints of version 1, if any.
const fingerprintVersionName = "fingerprint_version"

// fingerprintLockKey is the first key of the advisory lock (the second is
// the hash of the schema's name) taken while the fingerprint version is
// checked, so that processes opening one schema at once discard the old
// fingerprints once and never the ones written after.
const fingerprintLockKey int32 = 0x66707672 // "fpvr"

// checkFingerprintVersion runs at Open, after the migrations: if the
// schema holds fingerprints of another simhash.Version than this build's,
// it deletes them, records the current version and logs a warning. The
// delete and the record are one transaction, under an advisory lock that
// makes concurrent Opens wait and then find the version current. A schema
// already at the current version costs one SELECT and no write, so worker
// roles with row rights only open it. The fingerprints are only an index
// of the pages seen, and comparing fingerprints of different features
// would report false near-duplicates or miss true ones; discarding them
// only costs duplicate detection against the pages fetched before the
// upgrade.
func (db *DB) checkFingerprintVersion(ctx context.Context, logger *slog.Logger) error {
	var v int64
	err := db.pool.QueryRow(ctx, "SELECT value FROM meta WHERE name = $1", fingerprintVersionName).Scan(&v)
	switch {
	case err == nil && v == simhash.Version:
		return nil
	case err != nil && !errors.Is(err, pgx.ErrNoRows):
		return wrap("reading the fingerprint version", err)
	}
	// discarded is set by the attempt that deletes and kept by a later
	// one that finds the version current: a lost reply to a commit that
	// was applied must still report the discard.
	var discarded int64
	err = retry(ctx, func() error {
		return pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1, hashtext($2))", fingerprintLockKey, db.schema); err != nil {
				return err
			}
			var stored int64
			err := tx.QueryRow(ctx, "SELECT value FROM meta WHERE name = $1", fingerprintVersionName).Scan(&stored)
			switch {
			case errors.Is(err, pgx.ErrNoRows):
				// No record: an empty schema, or one written before
				// versions (1).
				var any bool
				if err := tx.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM fingerprints)").Scan(&any); err != nil {
					return err
				}
				if any {
					stored = 1
				}
			case err != nil:
				return err
			case stored == simhash.Version:
				return nil
			case stored < 1:
				return fmt.Errorf("%w: %s: malformed fingerprint version %d in meta", ErrSchema, db.schema, stored)
			}
			if stored != 0 {
				// DELETE rather than TRUNCATE: a worker role has no
				// TRUNCATE right, and readers are not blocked.
				if _, err := tx.Exec(ctx, "DELETE FROM fingerprints"); err != nil {
					return err
				}
			}
			if _, err := tx.Exec(ctx, `INSERT INTO meta (name, value) VALUES ($1, $2)
				ON CONFLICT (name) DO UPDATE SET value = excluded.value`, fingerprintVersionName, simhash.Version); err != nil {
				return err
			}
			discarded = stored
			return nil
		})
	}, "checking the fingerprint version")
	if err != nil {
		return err
	}
	if discarded != 0 {
		db.discardedVersion = int(discarded)
		logger.Warn("postgres: discarded the near-duplicate fingerprints of another simhash version",
			"schema", db.schema, "stored_version", discarded, "version", simhash.Version)
	}
	return nil
}

// DiscardedFingerprints returns the simhash.Version of the fingerprints
// that Open deleted because they were of another version than this
// build's, or 0 if it deleted none (another process may have). Pages
// fetched before are then not found as near-duplicates of later ones.
// Open also logs it, at Warn level, to Config.Logger.
func (db *DB) DiscardedFingerprints() int { return db.discardedVersion }
