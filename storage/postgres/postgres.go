// Package postgres keeps a crawl's state in PostgreSQL (through
// github.com/jackc/pgx/v5), so that several crawler processes, on one machine
// or many, can work on one crawl.
//
// A DB is one schema of one database. It holds the URL database (table urls:
// one row per URL with its host, depth, discovery time, priority, fetch
// history and state), the shared per-host politeness state (table hosts), the
// robots.txt cache (robots_cache), and the tables behind the component
// stores. Open creates the schema and applies the embedded migrations, under
// an advisory lock so that workers starting together do not race; the
// applied version is kept in schema_migrations. A schema already at the
// package's version is opened without any DDL, so worker processes may run
// as a role that can only read and write the schema's rows (USAGE on the
// schema; SELECT, INSERT, UPDATE, DELETE on its tables; USAGE and UPDATE on
// its sequences) once an administrator's Open has migrated it.
//
// The table meta records the simhash.Version of the stored near-duplicate
// fingerprints (a schema without the record holds version 1). When it is
// not this build's, Open deletes the fingerprints and records the new
// version in one transaction, under an advisory lock so that processes
// opening at once delete them once, and reports it (DiscardedFingerprints,
// and a warning to Config.Logger): fingerprints of different versions
// must never be compared.
//
// What the DB offers:
//
//   - Queue: a crawlkit.Queue shared by every process that opens the same
//     schema. Adds are deduplicated by the database (INSERT ... ON CONFLICT
//     DO NOTHING on url_hash), so a URL discovered by two workers at once is
//     queued once; leasing takes hosts with SELECT ... FOR UPDATE SKIP
//     LOCKED, so concurrent workers never wait for each other and never hold
//     two leases on one host; each host's next permitted contact time is a
//     column, set from the Politeness model when a lease is settled. Idle
//     workers do not each poll: in each process one waiting Next asks the
//     database, and an Add that queues URLs sends a notification (NOTIFY on
//     a channel named after the schema) that wakes the waiting workers of
//     every process at once (QueueConfig.NoListen).
//   - FrontierStore (frontier.Store), SeenStore (bloom.Store), FingerprintStore
//     (simhash.Store) and RobotsStore (robots.Store), for a single-process
//     Frontier that keeps its state in PostgreSQL.
//
// # Choosing a store
//
// In memory (the components' defaults) is for tests and small crawls that
// need not survive a restart. Pebble (storage/pebble) is the default for a
// real crawl on one machine: embedded, durable, no server, and the fastest
// by far. PostgreSQL suits several workers sharing one crawl when the URL
// database should be queryable with SQL and as durable as the database
// (every acknowledged Add and settle is committed); on a small machine it
// leases some hundreds of URLs a second one at a time (a commit each) and
// over ten thousand in batches (see BENCHMARKS.md and Config.AsyncCommit). Redis (storage/redis) suits several workers that need more
// leases per second than PostgreSQL gives and can accept Redis's durability
// (set appendonly and appendfsync on the server). Beyond one database server,
// partition the crawl by host over several nodes (the distributed example).
//
// # Consistency
//
// Every method that acknowledges something (Add, Done, Write, Put) returns
// after its transaction committed; with the server's default
// synchronous_commit=on it survives a server crash. When a worker process
// dies, its leases expire after LeaseTTL and their URLs are leased again
// (after the host's politeness delay); nothing is lost, and a URL whose
// worker died mid-fetch may be fetched twice. When the server restarts,
// operations in flight fail with an error wrapping ErrUnavailable; the pool
// reconnects on the next call. Operations that are safe to repeat (Add,
// reads, and a settle, which recognizes its own earlier success) are retried
// a few times on connection loss, deadlock or serialization failure.
//
// Lease times come from the callers' clocks (the now of NextAt and friends),
// so the clocks of the worker machines must agree to well within LeaseTTL.
package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/crawlkit/crawlkit/frontier"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// DefaultSchema is the schema Open uses when Config.Schema is empty.
const DefaultSchema = "crawlkit"

var (
	// ErrClosed is returned by operations on a closed DB, and by a
	// Queue's operations after its Close or its DB's. It matches
	// frontier.ErrClosed too (errors.Is), the error the Queue interface
	// names for a closed queue.
	ErrClosed error = closedError{}
	// ErrUnavailable is wrapped by errors that come from losing the
	// connection to the server (refused, reset, timed out); the operation
	// may or may not have been applied, except where documented.
	ErrUnavailable = errors.New("postgres: server unavailable")
	// ErrSchema is wrapped by Open's errors about the schema: an invalid
	// name, or a database whose schema is newer than this package.
	ErrSchema = errors.New("postgres: schema")
)

// Config configures Open.
type Config struct {
	// Schema is the schema holding the crawl's tables; one schema is one
	// crawl. It must be a lower-case SQL identifier (letters, digits and
	// underscores, not starting with a digit). Empty means DefaultSchema.
	Schema string
	// MaxConns bounds the connection pool. Zero keeps pgxpool's default
	// (the larger of 4 and the number of CPUs) or the pool_max_conns of
	// the connection string.
	MaxConns int32
	// AsyncCommit sets synchronous_commit=off on the DB's connections:
	// a commit returns before its write-ahead log record reaches the disk,
	// which takes the fsync out of every Add, lease and settle (several
	// times the throughput of a single worker). A server crash then loses
	// the transactions of the last moments (up to three times the server's
	// wal_writer_delay, 600 ms by default), never a part of one, and
	// always a suffix of the log: a lost settle comes with its later
	// writes, so the URL is fetched again and its links added again. A
	// worker crash loses nothing either way.
	AsyncCommit bool
	// Logger receives the warning of Open when it discards the stored
	// near-duplicate fingerprints of another simhash.Version (see
	// DB.DiscardedFingerprints). Nil discards it.
	Logger *slog.Logger
}

// DB is an open crawl state in one schema of a PostgreSQL database: a
// connection pool whose connections use the schema. It is safe for
// concurrent use.
type DB struct {
	pool   *pgxpool.Pool
	schema string
	// ctx ends with Close; the Queues' contexts derive from it, so that
	// closing the DB also ends their waits and listeners.
	ctx    context.Context
	cancel context.CancelFunc

	// discardedVersion is the simhash.Version of the fingerprints Open
	// deleted, or 0.
	discardedVersion int

	mu     sync.Mutex
	closed bool
}

var schemaName = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)

// Open connects to the database named by connString (a URL such as
// "postgres://user@127.0.0.1:5432/db" or a key=value string, as pgx
// accepts), creates the schema if needed and brings it to the current
// version. It then discards the stored near-duplicate fingerprints if they
// are of another simhash.Version than this build's (DiscardedFingerprints).
func Open(ctx context.Context, connString string, opts Config) (*DB, error) {
	schema := opts.Schema
	if schema == "" {
		schema = DefaultSchema
	}
	if !schemaName.MatchString(schema) {
		return nil, fmt.Errorf("%w: invalid schema name %q (want a lower-case identifier)", ErrSchema, schema)
	}
	cfg, err := pgxpool.ParseConfig(connString)
	if err != nil {
		return nil, fmt.Errorf("postgres: connection string: %w", err)
	}
	if opts.MaxConns > 0 {
		cfg.MaxConns = opts.MaxConns
	}
	cfg.ConnConfig.RuntimeParams["search_path"] = schema
	if opts.AsyncCommit {
		cfg.ConnConfig.RuntimeParams["synchronous_commit"] = "off"
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, wrap("connect", err)
	}
	db := &DB{pool: pool, schema: schema}
	db.ctx, db.cancel = context.WithCancel(context.Background())
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	err = db.migrate(ctx)
	if err == nil {
		err = db.checkFingerprintVersion(ctx, logger)
	}
	if err != nil {
		db.cancel()
		pool.Close()
		return nil, err
	}
	return db, nil
}

// Schema returns the schema the DB works in.
func (db *DB) Schema() string { return db.schema }

// Pool returns the DB's connection pool, whose connections have the DB's
// schema as search_path, for queries of the application's own (for
// example over the urls table).
func (db *DB) Pool() *pgxpool.Pool { return db.pool }

// Close closes the connection pool. Stores and queues taken from the DB fail
// with ErrClosed afterwards. Close is idempotent.
func (db *DB) Close() {
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.closed {
		return
	}
	db.closed = true
	db.cancel()
	db.pool.Close()
}

func (db *DB) isClosed() bool {
	db.mu.Lock()
	defer db.mu.Unlock()
	return db.closed
}

// DropSchema removes the DB's schema and everything in it, for tests and
// for discarding a finished crawl. The DB is closed afterwards.
func (db *DB) DropSchema(ctx context.Context) error {
	if db.isClosed() {
		return ErrClosed
	}
	_, err := db.pool.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{db.schema}.Sanitize()+" CASCADE")
	db.Close()
	if err != nil {
		return wrap("drop schema", err)
	}
	return nil
}

// migration is one embedded schema change.
type migration struct {
	version int
	name    string
	sql     string
}

// migrations lists the embedded migrations in version order. A file is
// named NNNN_description.sql.
func migrations() ([]migration, error) {
	names, err := fs.Glob(migrationFS, "migrations/*.sql")
	if err != nil {
		return nil, err
	}
	var out []migration
	for _, name := range names {
		base := strings.TrimPrefix(name, "migrations/")
		num, _, ok := strings.Cut(base, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil {
			return nil, fmt.Errorf("postgres: migration %s is not named NNNN_name.sql", base)
		}
		b, err := migrationFS.ReadFile(name)
		if err != nil {
			return nil, err
		}
		out = append(out, migration{version: v, name: base, sql: string(b)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].version < out[j].version })
	return out, nil
}

// migrationLockKey is the advisory lock taken while migrating, so that
// processes opening one schema at once apply each migration once.
const migrationLockKey = 0x637261776c6b6974 // "crawlkit"

// migrate creates the schema and applies the migrations it lacks, in one
// transaction. A schema already at this package's version is left alone
// without any DDL, so a role with no right to create schemas or tables (a
// worker role that may only read and write the crawl's rows) can open a
// schema an administrator migrated.
func (db *DB) migrate(ctx context.Context) error {
	ms, err := migrations()
	if err != nil {
		return fmt.Errorf("postgres: reading migrations: %w", err)
	}
	latest := ms[len(ms)-1].version
	var current int
	// Qualified, so that another tool's schema_migrations elsewhere on the
	// search_path is never read for this schema's.
	err = db.pool.QueryRow(ctx, "SELECT coalesce(max(version), 0) FROM "+
		pgx.Identifier{db.schema, "schema_migrations"}.Sanitize()).Scan(&current)
	switch {
	case err == nil && current == latest:
		return nil
	case err == nil && current > latest:
		return fmt.Errorf("%w: %s is at version %d, newer than this package's %d", ErrSchema, db.schema, current, latest)
	}
	// Missing (or unreadable) version table: migrate under the lock, which
	// reports any real problem.
	return retry(ctx, func() error {
		return pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", int64(migrationLockKey)); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, "CREATE SCHEMA IF NOT EXISTS "+pgx.Identifier{db.schema}.Sanitize()); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
				version integer PRIMARY KEY,
				name text NOT NULL,
				applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
				return err
			}
			var current int
			if err := tx.QueryRow(ctx, "SELECT coalesce(max(version), 0) FROM schema_migrations").Scan(&current); err != nil {
				return err
			}
			if current > latest {
				return fmt.Errorf("%w: %s is at version %d, newer than this package's %d", ErrSchema, db.schema, current, latest)
			}
			for _, m := range ms {
				if m.version <= current {
					continue
				}
				if _, err := tx.Exec(ctx, m.sql); err != nil {
					return fmt.Errorf("postgres: migration %s: %w", m.name, err)
				}
				if _, err := tx.Exec(ctx, "INSERT INTO schema_migrations (version, name) VALUES ($1, $2)", m.version, m.name); err != nil {
					return err
				}
			}
			return nil
		})
	}, "migrate")
}

// Version reports the schema version applied to the DB's schema. It fails
// with ErrClosed after Close.
func (db *DB) Version(ctx context.Context) (int, error) {
	if db.isClosed() {
		return 0, ErrClosed
	}
	var v int
	err := db.pool.QueryRow(ctx, "SELECT coalesce(max(version), 0) FROM schema_migrations").Scan(&v)
	if err != nil {
		return 0, wrap("version", err)
	}
	return v, nil
}

// wrap names the failed operation and marks connection failures with
// ErrUnavailable.
func wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, ErrClosed) || errors.Is(err, ErrSchema) {
		return err
	}
	if isConnError(err) {
		return fmt.Errorf("postgres: %s: %w: %w", op, ErrUnavailable, err)
	}
	return fmt.Errorf("postgres: %s: %w", op, err)
}

// isConnError reports errors of the connection rather than of the statement.
func isConnError(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		// Class 08: connection exception; 57P01-57P03: the server is
		// shutting down or starting.
		return strings.HasPrefix(pgErr.Code, "08") || strings.HasPrefix(pgErr.Code, "57P")
	}
	var netErr net.Error
	if errors.As(err, &netErr) {
		return true
	}
	var connErr *pgconn.ConnectError
	return errors.As(err, &connErr) || pgconn.Timeout(err) || errors.Is(err, net.ErrClosed)
}

// retryable reports errors after which repeating an idempotent operation may
// succeed: lost connections, deadlocks, serialization failures.
func retryable(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "40001", "40P01": // serialization_failure, deadlock_detected
			return true
		}
	}
	return pgconn.SafeToRetry(err) || isConnError(err)
}

// retryAttempts bounds the attempts of an idempotent operation.
const retryAttempts = 4

// retry runs an idempotent fn up to retryAttempts times while it fails
// retryably, pausing 25 ms, 50 ms, 100 ms between attempts, and wraps the
// last error.
func retry(ctx context.Context, fn func() error, op string) error {
	return retryIf(ctx, retryable, fn, op)
}

// safeOnly reports failures after which an operation that is not
// idempotent may be repeated: nothing reached the server, or the server
// rolled the transaction back (deadlock, serialization failure).
func safeOnly(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code == "40001" || pgErr.Code == "40P01"
	}
	return pgconn.SafeToRetry(err)
}

// retryIf is retry with the given test of retryable errors.
func retryIf(ctx context.Context, retryable func(error) bool, fn func() error, op string) error {
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
		if err = fn(); err == nil || !retryable(err) {
			break
		}
	}
	return wrap(op, err)
}

// closedError is ErrClosed: one value that errors.Is matches both as this
// package's ErrClosed and as frontier.ErrClosed.
type closedError struct{}

func (closedError) Error() string { return "postgres: closed" }

func (closedError) Is(target error) bool { return target == frontier.ErrClosed }
