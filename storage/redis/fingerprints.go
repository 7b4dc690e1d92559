package redis

import (
	"context"
	"log/slog"
	"strconv"

	"github.com/crawlkit/crawlkit/simhash"
)

// checkFingerprintVersion runs at Open, and for a DB made by New before
// the first use of its FingerprintStore: if the crawl holds fingerprints
// of another simhash.Version than this build's, it deletes them, records
// the current version (one script, applied atomically, so that processes
// opening the crawl at once delete them once and never the ones put
// after) and logs a warning. The fingerprints are only an index of the
// pages seen, and comparing fingerprints of different features would
// report false near-duplicates or miss true ones; discarding them only
// costs duplicate detection against the pages fetched before the upgrade.
func (db *DB) checkFingerprintVersion(ctx context.Context) error {
	db.fpMu.Lock()
	defer db.fpMu.Unlock()
	if db.fpChecked {
		return nil
	}
	// discarded is set by the attempt whose script deleted and kept by a
	// later one that finds the version current: a lost reply to a script
	// that ran must still report the discard.
	var discarded int64
	err := retry(ctx, "fingerprint version", func() error {
		n, err := db.scripts.fpversion.Run(ctx, db.client, []string{db.key("fpv")}, db.prefix, strconv.Itoa(simhash.Version)).Int64()
		if err == nil && n != 0 {
			discarded = n
		}
		return err
	})
	if err != nil {
		return err
	}
	db.fpChecked = true
	if discarded != 0 {
		db.discardedVersion = int(discarded)
		db.log.Warn("redis: discarded the near-duplicate fingerprints of another simhash version",
			"crawl_prefix", db.prefix, "stored_version", discarded, "version", simhash.Version)
	}
	return nil
}

// fingerprintsChecked makes sure the fingerprint version was checked,
// before the FingerprintStore reads or writes.
func (db *DB) fingerprintsChecked() error {
	ctx, cancel := context.WithTimeout(db.ctx, opTimeout)
	defer cancel()
	err := db.checkFingerprintVersion(ctx)
	if err != nil && db.isClosed() {
		return ErrClosed
	}
	return err
}

// DiscardedFingerprints returns the simhash.Version of the fingerprints
// deleted because they were of another version than this build's, or 0 if
// none were (another process may have deleted them). Open deletes them; on
// a DB made by New, the first Put or ForEach of its FingerprintStore does.
// Pages fetched before are then not found as near-duplicates of later
// ones. The deletion is also logged, at Warn level, to Config.Logger.
func (db *DB) DiscardedFingerprints() int {
	db.fpMu.Lock()
	defer db.fpMu.Unlock()
	return db.discardedVersion
}

// nopLogger discards its records.
var nopLogger = slog.New(slog.DiscardHandler)
