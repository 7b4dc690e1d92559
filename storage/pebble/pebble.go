// Package pebble implements crawlkit's storage interfaces on Pebble, an
// embedded, durable key-value store (github.com/cockroachdb/pebble). It is
// the default store for real crawls: one directory holds a node's whole crawl
// state (frontier, seen set, fingerprints, robots.txt files).
//
// Open a DB once per directory and take the component stores from it; they
// share the engine and its write-ahead log, each under its own key prefix:
//
//	db, err := pebble.Open("crawl-data", pebble.Config{})
//	...
//	defer db.Close()
//
// Durability: every write that acknowledges something to a caller (an added
// URL, a settled lease, a seen URL) is committed with a synced write-ahead
// log. Without the sync, acknowledged writes were lost after kill -9 in
// testing. Pebble's commit pipeline groups the WAL syncs of concurrent
// committers, so concurrent writers share one fsync (group commit).
//
// # Damage
//
// Pebble replays its write-ahead log (WAL) up to the first invalid record
// and silently drops the rest, which is right for the torn tail kill -9 or
// a power loss leaves (the last, unacknowledged record partly written) and
// wrong for damage in the middle, which loses acknowledged writes. Open
// therefore checks the directory first and fails with an error matching
// ErrDamaged (a *DamageError naming the file) when:
//
//   - a WAL or the MANIFEST has an invalid record followed by valid ones;
//   - a WAL or the MANIFEST differs in any byte from how the last clean
//     Close left it (Close records their sizes and checksums), which
//     catches a cut or a flipped byte anywhere, the tail included;
//   - CURRENT is missing while the directory holds Pebble data, or names
//     a missing MANIFEST;
//   - Pebble reports corruption, or a table (.sst) the MANIFEST lists is
//     missing or has the wrong size.
//
// What is recovered without an error: a torn tail after a crash, WAL or
// MANIFEST. What cannot be told from a torn tail, and is therefore
// recovered as one: after a crash (no clean Close since the last Open), a
// WAL or MANIFEST cut at any point, or damaged in its last record, loses
// the records from there on. After a power loss, unsynced writes can land
// out of order and, rarely, look like damage in the middle; Open then
// reports ErrDamaged although nothing acknowledged was lost.
//
// A directory written in another crawlkit format version (FormatVersion,
// recorded on the first Open) fails with an error matching
// ErrFormatVersion.
//
// # Salvage
//
// Damage is not repaired: Open refuses the directory so that nothing more
// is lost. To salvage it, stop the crawl, copy the directory (cp -a; the
// copy is what you experiment on), and open the copy with
// Config{Salvage: true}: read-only, without the checks above, so Pebble
// replays each log up to its damage. Read what you need (DB.Frontier's
// Scan, SeenStore.ForEach, FingerprintStore.ForEach, NameStore) and write
// it into a fresh directory, or simply start a fresh directory and
// recrawl. A missing CURRENT or a missing table cannot be salvaged this
// way: Pebble cannot open the directory at all.
package pebble

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	cpebble "github.com/cockroachdb/pebble"
	"github.com/cockroachdb/pebble/vfs"
)

// Key prefixes: each component store keeps its keys under one prefix byte so
// several stores share a DB without colliding. The values are part of the
// on-disk format and never change.
const (
	prefixMeta         byte = 0x00 // format version and other DB-wide records
	prefixFrontier     byte = 0x10 // frontier.Store
	prefixSeen         byte = 0x20 // bloom exact store
	prefixFingerprints byte = 0x30 // simhash index store
	prefixRobots       byte = 0x40 // robots policy cache
)

// FormatVersion is the version of crawlkit's on-disk format (its key
// prefixes and value encodings) that this build reads and writes. It is
// recorded in the directory on the first Open; directories written before
// it was recorded are version 1.
const FormatVersion = 1

// formatVersionKey holds FormatVersion in decimal.
var formatVersionKey = []byte{prefixMeta, 'f', 'o', 'r', 'm', 'a', 't'}

// ErrClosed is returned by operations on a closed DB.
var ErrClosed = errors.New("pebble: store is closed")

// Config configures Open. The zero value is a durable configuration suited
// to a crawl on one node.
type Config struct {
	// CacheBytes is the size of Pebble's block cache. Zero means 64 MiB.
	CacheBytes int64
	// NoSync disables syncing the write-ahead log on acknowledged writes.
	// It is for benchmarks and throwaway crawls only: with NoSync a crash
	// (kill -9, power loss) can lose writes that were acknowledged.
	NoSync bool
	// Logger receives Pebble's own log lines: its informational messages
	// (WAL replay, compactions) at Debug level. Nil discards them, so that
	// a program's output is its own; Pebble's fatal errors panic, as
	// Pebble's default logger makes them exit, with the message.
	Logger *slog.Logger
	// Salvage opens a damaged directory read-only and without the damage
	// checks (see Damage and Salvage in the package doc), so that what
	// precedes the damage can be read and copied out. Writes fail. Open
	// only a copy of the directory this way.
	Salvage bool
}

// pebbleLogger adapts a slog.Logger to Pebble's Logger.
type pebbleLogger struct{ l *slog.Logger }

func (p pebbleLogger) Infof(format string, args ...any) {
	p.l.Debug("pebble: " + fmt.Sprintf(format, args...))
}

func (p pebbleLogger) Fatalf(format string, args ...any) {
	msg := "pebble: " + fmt.Sprintf(format, args...)
	p.l.Error(msg)
	panic(msg)
}

// DB is an open Pebble directory shared by the component stores.
type DB struct {
	pdb       *cpebble.DB
	cache     *cpebble.Cache
	writeOpts *cpebble.WriteOptions
	dir       string
	lock      *cpebble.Lock
	salvage   bool // read-only: Close records no clean close

	// use is read-locked by every operation of the component stores for
	// as long as it uses pdb (with the iterators and batches it opens),
	// and write-locked by Close, which never unlocks it. Operations only
	// try the read lock (begin): once Close has begun they fail with
	// ErrClosed instead of waiting, so an operation made from within
	// another (a callback) cannot deadlock against a waiting Close.
	use sync.RWMutex

	closeMu sync.Mutex // serializes Close
	closed  bool       // under closeMu

	discardedVersion int // see DiscardedFingerprints
}

// Open opens (creating if needed) the Pebble directory dir. It fails
// with an error matching ErrDamaged on a damaged directory and
// ErrFormatVersion on one of another format version; see the package doc.
func Open(dir string, opts Config) (_ *DB, err error) {
	if dir == "" {
		return nil, errors.New("pebble: Open: empty directory name")
	}
	if !opts.Salvage {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("pebble: opening %s: %w", dir, err)
		}
	}
	// vfs.Default rather than Pebble's default FS, which wraps it in a
	// disk-health checker whose goroutine a failed Open never stops; its
	// reports went to a no-op listener anyway.
	fs := vfs.Default
	// The lock is taken before the checks so that they never read a
	// directory another process is writing.
	lock, err := cpebble.LockDirectory(dir, fs)
	if err != nil {
		return nil, fmt.Errorf("pebble: opening %s: %w", dir, err)
	}
	defer func() {
		if err != nil {
			lock.Close()
		}
	}()
	if err := checkDir(dir, !opts.Salvage); err != nil {
		return nil, err
	}
	if !opts.Salvage {
		// The clean-close record describes the directory as Close left
		// it; Pebble is about to change it.
		err := os.Remove(filepath.Join(dir, cleanCloseName))
		if err == nil {
			err = syncDir(dir)
		}
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("pebble: opening %s: %w", dir, err)
		}
	}

	cacheBytes := opts.CacheBytes
	if cacheBytes <= 0 {
		cacheBytes = 64 << 20
	}
	cache := cpebble.NewCache(cacheBytes)
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	pdb, err := openPebble(dir, &cpebble.Options{
		Cache:    cache,
		Logger:   pebbleLogger{logger},
		FS:       fs,
		Lock:     lock,
		ReadOnly: opts.Salvage,
	})
	if err != nil {
		cache.Unref()
		return nil, err
	}
	wo := cpebble.Sync
	if opts.NoSync {
		wo = cpebble.NoSync
	}
	db := &DB{pdb: pdb, cache: cache, writeOpts: wo, dir: dir, lock: lock, salvage: opts.Salvage}
	if err := db.checkFormatVersion(); err != nil {
		pdb.Close()
		cache.Unref()
		return nil, err
	}
	if !opts.Salvage {
		if err := db.checkFingerprintVersion(logger); err != nil {
			pdb.Close()
			cache.Unref()
			return nil, fmt.Errorf("pebble: opening %s: %w", dir, err)
		}
	}
	return db, nil
}

// openPebble opens dir with Pebble, turning the damage Pebble reports
// (by an error or, on some damage, by panicking) into a *DamageError.
func openPebble(dir string, o *cpebble.Options) (pdb *cpebble.DB, err error) {
	defer func() {
		if r := recover(); r != nil {
			pdb, err = nil, &DamageError{Dir: dir, Problem: fmt.Sprintf("Pebble panicked opening it: %v", r)}
		}
	}()
	pdb, err = cpebble.Open(dir, o)
	if err == nil {
		return pdb, nil
	}
	if cpebble.IsCorruptionError(err) {
		return nil, &DamageError{Dir: dir, Problem: "Pebble found corruption", Err: err}
	}
	// Pebble v1.1 reports a table the MANIFEST lists but the directory
	// lacks (or holds with another size) in an error that wraps nothing;
	// its text is all there is. TestOpenMissingTable notices a change.
	if msg := err.Error(); strings.Contains(msg, "unknown to the objstorage provider") ||
		strings.Contains(msg, "object size mismatch") {
		return nil, &DamageError{Dir: dir, Problem: "a table (.sst) the MANIFEST lists is missing or has another size", Err: err}
	}
	return nil, fmt.Errorf("pebble: opening %s: %w", dir, err)
}

// checkFormatVersion compares the directory's format version with
// FormatVersion, recording it if the directory has none.
func (db *DB) checkFormatVersion() error {
	v, closer, err := db.pdb.Get(formatVersionKey)
	if errors.Is(err, cpebble.ErrNotFound) {
		if db.salvage {
			return nil
		}
		err = db.pdb.Set(formatVersionKey, []byte(strconv.Itoa(FormatVersion)), cpebble.Sync)
		if err != nil {
			return fmt.Errorf("pebble: opening %s: recording the format version: %w", db.dir, err)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("pebble: opening %s: reading the format version: %w", db.dir, err)
	}
	defer closer.Close()
	if string(v) != strconv.Itoa(FormatVersion) {
		return &VersionError{Dir: db.dir, Found: string(v), Want: FormatVersion}
	}
	return nil
}

// CacheBytes returns the size of the DB's block cache.
func (db *DB) CacheBytes() int64 { return db.cache.MaxSize() }

// Dir returns the directory the DB was opened on.
func (db *DB) Dir() string { return db.dir }

// Close flushes and closes the DB. It waits for the operations of the
// DB's stores already in progress to end; operations begun later, and
// every operation after Close, fail with ErrClosed. A store callback that
// runs while its operation holds the DB (FingerprintTables.ScanRows' fn)
// must therefore not call Close, which would wait for it forever; a
// ForEach callback holds nothing and may. Close is idempotent and safe
// for concurrent use: a call made while another is closing the DB waits
// for it to finish and returns nil. Close records the clean close in the
// directory, so that the next Open can tell damage from a crash's torn
// tail; a program that exits without Close is judged as having crashed.
func (db *DB) Close() error {
	db.closeMu.Lock()
	defer db.closeMu.Unlock()
	if db.closed {
		return nil
	}
	db.closed = true
	db.use.Lock() // never unlocked: the DB stays closed
	err := db.pdb.Close()
	db.cache.Unref()
	if err != nil {
		db.lock.Close()
		return fmt.Errorf("pebble: closing %s: %w", db.dir, err)
	}
	if !db.salvage {
		// Under the lock still, so that no other Open sees the directory
		// closed but not yet recorded as cleanly closed.
		err = writeCleanClose(db.dir)
	}
	if lerr := db.lock.Close(); err == nil {
		err = lerr
	}
	if err != nil {
		return fmt.Errorf("pebble: closing %s: recording the clean close: %w", db.dir, err)
	}
	return nil
}

// begin starts an operation on pdb, which must call end when it no longer
// uses pdb or anything opened from it. It reports false, starting
// nothing, once Close has begun: the operation must then return
// ErrClosed.
func (db *DB) begin() bool { return db.use.TryRLock() }

// end ends an operation started by begin.
func (db *DB) end() { db.use.RUnlock() }

// forEachChunk is how many keys forEachKey reads under one hold of the DB.
const forEachChunk = 1024

// forEachKey calls fn for every key k with lower <= k < upper, in
// ascending order; every such key must be keyLen bytes long, and k is
// valid only during the call. It reads up to forEachChunk keys with one
// iterator while holding the DB, then calls fn for them with the DB let
// go, so fn may take long or use the DB (even close it) without holding
// up Close. A walk is therefore not one snapshot: it sees once every key
// stored before it began and not deleted since, and may or may not see
// keys written during it. It returns fn's first error, ErrClosed if the
// DB is closed before the walk ends, or an error starting "pebble: "
// followed by what.
func (db *DB) forEachKey(lower, upper []byte, keyLen int, what string, fn func(k []byte) error) error {
	from := bytes.Clone(lower)
	var buf []byte
	for {
		var more bool
		var err error
		buf, more, err = db.readKeys(buf[:0], from, upper, keyLen, what)
		if err != nil {
			return err
		}
		for k := buf; len(k) > 0; k = k[keyLen:] {
			if err := fn(k[:keyLen]); err != nil {
				return err
			}
		}
		if !more {
			return nil
		}
		// The next chunk starts right after the last key read: at that
		// key followed by a zero byte.
		from = append(append(from[:0], buf[len(buf)-keyLen:]...), 0)
	}
}

// readKeys appends to buf up to forEachChunk keys k with lower <= k <
// upper, in ascending order, and reports whether there are more.
func (db *DB) readKeys(buf, lower, upper []byte, keyLen int, what string) (_ []byte, more bool, err error) {
	if !db.begin() {
		return buf, false, ErrClosed
	}
	defer db.end()
	it, err := db.pdb.NewIter(&cpebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return buf, false, fmt.Errorf("pebble: %s: %w", what, err)
	}
	n := 0
	for ok := it.First(); ok; ok = it.Next() {
		if n == forEachChunk {
			more = true
			break
		}
		k := it.Key()
		if len(k) != keyLen {
			it.Close()
			return buf, false, fmt.Errorf("pebble: %s: malformed key %x", what, k)
		}
		buf = append(buf, k...)
		n++
	}
	if err := it.Close(); err != nil {
		return buf, false, fmt.Errorf("pebble: %s: %w", what, err)
	}
	return buf, more, nil
}

// prefixed returns a new key made of prefix followed by key.
func prefixed(prefix byte, key []byte) []byte {
	k := make([]byte, 1+len(key))
	k[0] = prefix
	copy(k[1:], key)
	return k
}

// prefixUpperBound returns the smallest key greater than every key starting
// with prefix p (for a single-byte prefix below 0xff).
func prefixUpperBound(p byte) []byte { return []byte{p + 1} }
