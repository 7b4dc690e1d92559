// Package redis keeps a crawl's state in Redis (through
// github.com/redis/go-redis/v9), so that several crawler processes can work
// on one crawl, the way Scrapy Cluster shares its queues through Redis.
//
// A DB is one crawl in one Redis database: every key starts with
// "crawlkit:{<crawl>}:", so any number of crawls share a server, and on
// Redis Cluster a crawl's keys share one hash slot (the braces are a hash
// tag), which the Lua scripts need.
//
// What the DB offers:
//
//   - Queue: a crawlkit.Queue shared by every process that opens the same
//     crawl. Adding, leasing, settling and blocking are Lua scripts, each
//     applied atomically by the server: a URL is queued once over the life
//     of the crawl (a hash of URL states), a host holds at most one lease and
//     is leased no earlier than its politeness time (sorted sets of ready
//     hosts, leases and delayed URLs), and a batch of leases or settles is
//     one round trip (one script call, or a pipeline of them). Idle
//     workers do not each poll: in each process one waiting Next asks the
//     server, and the add script publishes on the crawl's "added" channel
//     when it queues URLs, which wakes the waiting workers of every process
//     at once (QueueConfig.NoListen).
//   - FrontierStore (frontier.Store over a sorted set read BYLEX and a hash),
//     SeenStore (bloom.Store), FingerprintStore (simhash.Store) and
//     RobotsStore (robots.Store).
//
// The key "fpv" records the simhash.Version of the crawl's near-duplicate
// fingerprints (a crawl without it holds version 1). When it is not this
// build's, Open deletes the fingerprints and records the new version in
// one script, which the server applies atomically, so that processes
// opening at once delete them once, and reports it (DiscardedFingerprints,
// and a warning to Config.Logger): fingerprints of different versions
// must never be compared.
//
// # Choosing a store
//
// In memory (the components' defaults) is for tests and small crawls that
// need not survive a restart. Pebble (storage/pebble) is the default for a
// real crawl on one machine: embedded, durable, no server. PostgreSQL
// (storage/postgres) suits several workers sharing one crawl whose URL
// database should be queryable with SQL and as durable as the database.
// Redis suits several workers that need more leases per second than
// PostgreSQL gives (see BENCHMARKS.md), with Redis's durability: whatever
// the server's persistence settings keep. Beyond one server, partition the
// crawl by host over several nodes (the distributed example).
//
// # Consistency
//
// Each script runs atomically, so concurrent workers never see a half-done
// add, lease or settle. Durability is the server's: with appendonly yes and
// appendfsync always, an acknowledged write survives a server crash; with
// appendfsync everysec up to a second of writes can be lost; with only RDB
// snapshots (the default) everything since the last snapshot. A lost write
// can bring a settled URL back (fetched twice) or lose a queued one. When a
// worker process dies, its leases expire after LeaseTTL and their URLs are
// leased again; a URL whose worker died mid-fetch may be fetched twice.
// While the server is unreachable, operations fail with errors wrapping
// ErrUnavailable; the client reconnects on the next call. Reads, Adds
// (which drop URLs already known), and settles (which recognize their own
// earlier success) are retried by the client a few times on connection
// errors; leases are not, since a lost reply leaves its leases to expire.
//
// Lease times come from the callers' clocks (the now of NextAt and
// friends), so the clocks of the worker machines must agree to well within
// LeaseTTL.
package redis

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/crawlkit/crawlkit/frontier"

	goredis "github.com/redis/go-redis/v9"
)

//go:embed lua/*.lua
var luaFS embed.FS

// DefaultCrawl is the crawl id Open uses when Config.Crawl is empty.
const DefaultCrawl = "crawl"

var (
	// ErrClosed is returned by operations on a closed DB, and by a
	// Queue's operations after its Close or its DB's. It matches
	// frontier.ErrClosed too (errors.Is), the error the Queue interface
	// names for a closed queue.
	ErrClosed error = closedError{}
	// ErrUnavailable is wrapped by errors that come from losing the
	// connection to the server (refused, reset, timed out); the operation
	// may or may not have been applied, except where documented.
	ErrUnavailable = errors.New("redis: server unavailable")
	// ErrCrawl is returned for an invalid crawl id.
	ErrCrawl = errors.New("redis: invalid crawl id")
)

// Config configures Open.
type Config struct {
	// Addr is the server's host:port. Empty means 127.0.0.1:6379.
	Addr string
	// Username, Password and DB select the account and database.
	Username, Password string
	DB                 int
	// Crawl names the crawl: its keys start with "crawlkit:{Crawl}:". It
	// may not contain braces. Empty means DefaultCrawl.
	Crawl string
	// PoolSize bounds the connection pool. Zero keeps go-redis's default
	// (10 per CPU).
	PoolSize int
	// Logger receives the warning of Open when it discards the stored
	// near-duplicate fingerprints of another simhash.Version (see
	// DB.DiscardedFingerprints). Nil discards it.
	Logger *slog.Logger
}

// DB is one crawl's state in Redis. It is safe for concurrent use.
type DB struct {
	client  goredis.UniversalClient
	owned   bool // Close closes the client
	prefix  string
	scripts scripts
	// ctx ends with Close; the Queues' contexts derive from it, so that
	// closing the DB also ends their waits and listeners.
	ctx    context.Context
	cancel context.CancelFunc

	log *slog.Logger

	// fpMu guards the fingerprint version check: fpChecked once it ran,
	// discardedVersion the simhash.Version of the fingerprints it deleted.
	fpMu             sync.Mutex
	fpChecked        bool
	discardedVersion int

	mu     sync.Mutex
	closed bool
}

// scripts are the Lua scripts, each with the shared prelude in front.
type scripts struct {
	add, lease, settle, extend, block, scan, fpversion *goredis.Script
}

func loadScripts() (scripts, error) {
	read := func(name string) (string, error) {
		b, err := luaFS.ReadFile("lua/" + name + ".lua")
		return string(b), err
	}
	prelude, err := read("prelude")
	if err != nil {
		return scripts{}, err
	}
	var s scripts
	for _, sc := range []struct {
		name    string
		dst     **goredis.Script
		prelude bool
	}{
		{"add", &s.add, true}, {"lease", &s.lease, true}, {"settle", &s.settle, true},
		{"extend", &s.extend, true}, {"block", &s.block, true}, {"scan", &s.scan, false},
		{"fpversion", &s.fpversion, false},
	} {
		src, err := read(sc.name)
		if err != nil {
			return scripts{}, err
		}
		if sc.prelude {
			src = prelude + "\n" + src
		}
		*sc.dst = goredis.NewScript(src)
	}
	return s, nil
}

// Open connects to the server in opts and checks that it answers. It then
// discards the crawl's near-duplicate fingerprints if they are of another
// simhash.Version than this build's (DiscardedFingerprints).
func Open(ctx context.Context, opts Config) (*DB, error) {
	addr := opts.Addr
	if addr == "" {
		addr = "127.0.0.1:6379"
	}
	client := goredis.NewClient(&goredis.Options{
		Addr:     addr,
		Username: opts.Username,
		Password: opts.Password,
		DB:       opts.DB,
		PoolSize: opts.PoolSize,
	})
	db, err := newDB(client, opts.Crawl, true)
	if err != nil {
		client.Close()
		return nil, err
	}
	if err := client.Ping(ctx).Err(); err != nil {
		client.Close()
		return nil, wrap("connect "+addr, err)
	}
	if opts.Logger != nil {
		db.log = opts.Logger
	}
	if err := db.checkFingerprintVersion(ctx); err != nil {
		db.cancel()
		client.Close()
		return nil, err
	}
	return db, nil
}

// New returns the DB of crawl on a client the caller made (a single node,
// Sentinel or Cluster client) and keeps; Close leaves the client open. New
// does not contact the server: the fingerprint version check of Open runs
// at the first Put or ForEach of the DB's FingerprintStore, with no
// logger (see DiscardedFingerprints).
func New(client goredis.UniversalClient, crawl string) (*DB, error) {
	return newDB(client, crawl, false)
}

func newDB(client goredis.UniversalClient, crawl string, owned bool) (*DB, error) {
	if crawl == "" {
		crawl = DefaultCrawl
	}
	if strings.ContainsAny(crawl, "{}") {
		return nil, fmt.Errorf("%w: %q contains a brace", ErrCrawl, crawl)
	}
	s, err := loadScripts()
	if err != nil {
		return nil, fmt.Errorf("redis: reading scripts: %w", err)
	}
	db := &DB{client: client, owned: owned, prefix: "crawlkit:{" + crawl + "}:", scripts: s, log: nopLogger}
	db.ctx, db.cancel = context.WithCancel(context.Background())
	return db, nil
}

// Prefix returns the prefix of every key of the crawl.
func (db *DB) Prefix() string { return db.prefix }

// Client returns the DB's Redis client.
func (db *DB) Client() goredis.UniversalClient { return db.client }

// Close closes the client if Open made it. Stores and queues taken from the
// DB fail with ErrClosed afterwards. Close is idempotent.
func (db *DB) Close() error {
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.closed {
		return nil
	}
	db.closed = true
	db.cancel()
	if db.owned {
		return db.client.Close()
	}
	return nil
}

func (db *DB) isClosed() bool {
	db.mu.Lock()
	defer db.mu.Unlock()
	return db.closed
}

// Drop deletes every key of the crawl, for tests and for discarding a
// finished crawl. It scans with SCAN, so it is safe on a busy server, and
// it does not close the DB.
func (db *DB) Drop(ctx context.Context) error {
	if db.isClosed() {
		return ErrClosed
	}
	var cursor uint64
	// Every glob character of the prefix is escaped, the backslash too: a
	// backslash in the crawl id would otherwise turn the escape of the
	// character after it into a literal backslash and leave that character
	// a wildcard matching other crawls' keys (Drop of crawl `a\*` deleted
	// crawl `a\b`'s).
	pattern := strings.NewReplacer(`\`, `\\`, "{", `\{`, "}", `\}`, "*", `\*`, "?", `\?`, "[", `\[`, "]", `\]`).Replace(db.prefix) + "*"
	for {
		keys, next, err := db.client.Scan(ctx, cursor, pattern, 1000).Result()
		if err != nil {
			return wrap("drop", err)
		}
		if len(keys) > 0 {
			if err := db.client.Unlink(ctx, keys...).Err(); err != nil {
				return wrap("drop", err)
			}
		}
		if next == 0 {
			return nil
		}
		cursor = next
	}
}

// key returns the crawl's key named name.
func (db *DB) key(name string) string { return db.prefix + name }

// wrap names the failed operation and marks connection failures with
// ErrUnavailable.
func wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, ErrClosed) {
		return err
	}
	if isConnError(err) {
		return fmt.Errorf("redis: %s: %w: %w", op, ErrUnavailable, err)
	}
	return fmt.Errorf("redis: %s: %w", op, err)
}

// isConnError reports errors of the connection rather than of the command.
func isConnError(err error) bool {
	var netErr net.Error
	return errors.As(err, &netErr) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, net.ErrClosed) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, goredis.ErrClosed) || errors.Is(err, goredis.ErrPoolTimeout) ||
		strings.HasPrefix(err.Error(), "LOADING ")
}

// retryAttempts bounds the attempts of an operation that is safe to repeat.
const retryAttempts = 4

// retry runs fn, which must be safe to repeat, up to retryAttempts times
// while it fails with a connection error, pausing 25 ms, 50 ms, 100 ms, and
// wraps the last error.
func retry(ctx context.Context, op string, fn func() error) error {
	var err error
	for attempt := 0; attempt < retryAttempts; attempt++ {
		if attempt > 0 {
			t := time.NewTimer(25 * time.Millisecond << (attempt - 1))
			select {
			case <-ctx.Done():
				t.Stop()
				return wrap(op, err)
			case <-t.C:
			}
		}
		if err = fn(); err == nil || !(isConnError(err) || errors.Is(err, errNoScript)) || ctx.Err() != nil {
			break
		}
	}
	return wrap(op, err)
}

// closedError is ErrClosed: one value that errors.Is matches both as this
// package's ErrClosed and as frontier.ErrClosed.
type closedError struct{}

func (closedError) Error() string { return "redis: closed" }

func (closedError) Is(target error) bool { return target == frontier.ErrClosed }
