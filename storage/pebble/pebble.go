// Package pebble implements crawlkit's storage interfaces on Pebble, an
// embedded, durable key-value store (github.com/cockroachdb/pebble). It is
// the default store for real crawls: one directory holds a node's whole crawl
// state (frontier, seen set, fingerprints).
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
	"errors"
	"fmt"
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
}

// DB is an open Pebble directory shared by the component stores.
type DB struct {
	pdb       *cpebble.DB
	cache     *cpebble.Cache
	writeOpts *cpebble.WriteOptions
	dir       string

	mu     sync.Mutex
	closed bool
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
	pdb, err := cpebble.Open(dir, &cpebble.Options{Cache: cache})
	if err != nil {
		cache.Unref()
		return nil, fmt.Errorf("pebble: opening %s: %w", dir, err)
	}
	wo := cpebble.Sync
	if opts.NoSync {
		wo = cpebble.NoSync
	}
	return &DB{pdb: pdb, cache: cache, writeOpts: wo, dir: dir}, nil
}

// CacheBytes returns the size of the DB's block cache.
func (db *DB) CacheBytes() int64 { return db.cache.MaxSize() }

// Dir returns the directory the DB was opened on.
func (db *DB) Dir() string { return db.dir }

// Close flushes and closes the DB. Stores taken from it must not be used
// afterwards. Close is idempotent.
func (db *DB) Close() error {
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.closed {
		return nil
	}
	db.closed = true
	err := db.pdb.Close()
	db.cache.Unref()
	if err != nil {
		return fmt.Errorf("pebble: closing %s: %w", db.dir, err)
	}
	return nil
}

// isClosed reports whether Close has been called.
func (db *DB) isClosed() bool {
	db.mu.Lock()
	defer db.mu.Unlock()
	return db.closed
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
