// Package pebble implements crawlkit's storage interfaces on Pebble, an
// embedded, durable key-value store (github.com/cockroachdb/pebble). It is
// the default store for real crawls: one directory holds a node's whole crawl
// state (frontier, seen set, fingerprints, robots.txt files).
//
// Open a DB once per directory and take the component stores from it; they
// share the engine and its write-ahead log, each under its own key prefix:
//
//	db, err := pebble.Open("crawl-data", pebble.Options{})
//	...
//	defer db.Close()
//
// Durability: every write that acknowledges something to a caller (an added
// URL, a settled lease, a seen URL) is committed with a synced write-ahead
// log. Without the sync, acknowledged writes were lost after kill -9 in
// testing. Pebble's commit pipeline groups the WAL syncs of concurrent
// committers, so concurrent writers share one fsync (group commit).
package pebble

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	cpebble "github.com/cockroachdb/pebble"
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

// ErrClosed is returned by operations on a closed DB.
var ErrClosed = errors.New("pebble: store is closed")

// Options configures Open. The zero value is a durable configuration suited
// to a crawl on one node.
type Options struct {
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

// Open opens (creating if needed) the Pebble directory dir.
func Open(dir string, opts Options) (*DB, error) {
	if dir == "" {
		return nil, errors.New("pebble: Open: empty directory name")
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
	pdb, err := cpebble.Open(dir, &cpebble.Options{Cache: cache, Logger: pebbleLogger{logger}})
	if err != nil {
		cache.Unref()
		return nil, fmt.Errorf("pebble: opening %s: %w", dir, err)
	}
	wo := cpebble.Sync
	if opts.NoSync {
		wo = cpebble.NoSync
	}
	db := &DB{pdb: pdb, cache: cache, writeOpts: wo, dir: dir}
	if err := db.checkFingerprintVersion(logger); err != nil {
		pdb.Close()
		cache.Unref()
		return nil, fmt.Errorf("pebble: opening %s: %w", dir, err)
	}
	return db, nil
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
// for it to finish and returns nil.
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
		return fmt.Errorf("pebble: closing %s: %w", db.dir, err)
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
