package postgres

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/crawlkit/crawlkit/bloom"
	"github.com/crawlkit/crawlkit/frontier"
	"github.com/crawlkit/crawlkit/robots"
	"github.com/crawlkit/crawlkit/simhash"
)

// opTimeout bounds the operations of the store interfaces that take no
// context (bloom.Store, simhash.Store).
const opTimeout = 30 * time.Second

// forEachChunk is how many rows the stores' ForEach read per query.
const forEachChunk = 8192

// FrontierStore is a frontier.Store in the table frontier_kv (k bytea
// primary key, v bytea): a Write is one transaction, a Scan one SELECT ...
// WHERE k >= $1 AND k < $2 ORDER BY k LIMIT $3, which sees a Write
// entirely or not at all. PostgreSQL compares bytea byte by byte, which is the
// order the Store contract asks for. One schema holds one frontier's keys.
type FrontierStore struct {
	db *DB
}

var _ frontier.Store = (*FrontierStore)(nil)

// FrontierStore returns the DB's frontier store. Only one Frontier may use a
// schema's store at a time. Closing the store does not close the DB.
func (db *DB) FrontierStore() *FrontierStore { return &FrontierStore{db: db} }

// Write applies muts in one transaction: the deletes and the upserts of the
// batch (where a later mutation of a key replaces an earlier one) go to the
// server as one statement.
func (s *FrontierStore) Write(ctx context.Context, muts []frontier.Mutation) error {
	if s.db.isClosed() {
		return ErrClosed
	}
	if len(muts) == 0 {
		return ctx.Err()
	}
	// The last mutation of each key wins.
	last := make(map[string]int, len(muts))
	for i := range muts {
		last[string(muts[i].Key)] = i
	}
	var dels, keys, vals [][]byte
	for i := range muts {
		m := &muts[i]
		if last[string(m.Key)] != i {
			continue
		}
		if m.Delete {
			dels = append(dels, m.Key)
		} else {
			v := m.Value
			if v == nil {
				v = []byte{}
			}
			keys, vals = append(keys, m.Key), append(vals, v)
		}
	}
	// A fixed key order keeps concurrent writers from deadlocking.
	slices.SortFunc(dels, bytes.Compare)
	order := make([]int, len(keys))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return bytes.Compare(keys[a], keys[b]) })
	sk, sv := make([][]byte, len(keys)), make([][]byte, len(keys))
	for i, j := range order {
		sk[i], sv[i] = keys[j], vals[j]
	}
	// Write is idempotent: repeating it after a lost connection leaves the
	// same contents.
	return retry(ctx, func() error {
		_, err := s.db.pool.Exec(ctx, `WITH d AS (DELETE FROM frontier_kv WHERE k = ANY ($1::bytea[]))
			INSERT INTO frontier_kv (k, v) SELECT * FROM unnest($2::bytea[], $3::bytea[])
			ON CONFLICT (k) DO UPDATE SET v = excluded.v`, dels, sk, sv)
		return err
	}, "frontier write")
}

// Scan returns up to limit pairs with start <= key < end (end nil: no upper
// bound) in key order.
func (s *FrontierStore) Scan(ctx context.Context, start, end []byte, limit int) ([]frontier.KV, error) {
	if s.db.isClosed() {
		return nil, ErrClosed
	}
	if limit <= 0 {
		return nil, fmt.Errorf("postgres: frontier scan: limit %d is not positive", limit)
	}
	if start == nil {
		start = []byte{}
	}
	var out []frontier.KV
	err := retry(ctx, func() error {
		out = out[:0]
		var rows pgx.Rows
		var err error
		if end == nil {
			rows, err = s.db.pool.Query(ctx, "SELECT k, v FROM frontier_kv WHERE k >= $1 ORDER BY k LIMIT $2", start, limit)
		} else {
			rows, err = s.db.pool.Query(ctx, "SELECT k, v FROM frontier_kv WHERE k >= $1 AND k < $2 ORDER BY k LIMIT $3", start, end, limit)
		}
		if err != nil {
			return err
		}
		for rows.Next() {
			var kv frontier.KV
			if err := rows.Scan(&kv.Key, &kv.Value); err != nil {
				rows.Close()
				return err
			}
			out = append(out, kv)
		}
		return rows.Err()
	}, "frontier scan")
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Close is a no-op: the store shares the DB, which its owner closes.
func (s *FrontierStore) Close() error { return nil }

// SeenStore is the exact set behind a bloom.Set, in the table seen (key
// bigint primary key; the 64-bit keys are stored as their signed
// reinterpretation). Several processes may share it: Add is an INSERT ...
// ON CONFLICT DO NOTHING.
type SeenStore struct {
	db *DB
}

var _ bloom.Store = (*SeenStore)(nil)

// SeenStore returns the DB's seen-URL store.
func (db *DB) SeenStore() *SeenStore { return &SeenStore{db: db} }

// Contains implements bloom.Store.
func (s *SeenStore) Contains(key uint64) (bool, error) {
	if s.db.isClosed() {
		return false, ErrClosed
	}
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	var ok bool
	err := retry(ctx, func() error {
		return s.db.pool.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM seen WHERE key = $1)", int64(key)).Scan(&ok)
	}, "seen contains")
	return ok, err
}

// Add implements bloom.Store.
func (s *SeenStore) Add(key uint64) error { return s.AddBatch([]uint64{key}) }

// AddBatch records several keys in one statement (one commit), for a page's
// worth of links.
func (s *SeenStore) AddBatch(keys []uint64) error {
	if s.db.isClosed() {
		return ErrClosed
	}
	if len(keys) == 0 {
		return nil
	}
	ks := make([]int64, len(keys))
	for i, k := range keys {
		ks[i] = int64(k)
	}
	slices.Sort(ks) // a fixed order keeps concurrent batches from deadlocking
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	return retry(ctx, func() error {
		_, err := s.db.pool.Exec(ctx, "INSERT INTO seen (key) SELECT * FROM unnest($1::bigint[]) ON CONFLICT DO NOTHING", ks)
		return err
	}, "seen add")
}

// ForEach implements bloom.Store: it calls fn for every key, in the order
// of the keys' signed reinterpretation. It reads the table in queries of
// forEachChunk keys each and holds no connection while fn runs, so fn may
// use the DB (even with a pool of one connection) or close it; ForEach then
// returns ErrClosed. Closing the DB also cancels a query in flight. Keys
// added during the walk may or may not be visited.
func (s *SeenStore) ForEach(fn func(key uint64) error) error {
	var (
		buf   []int64
		after int64
		first = true
	)
	for {
		err := s.db.readChunk("seen scan", func(ctx context.Context) error {
			var rows pgx.Rows
			var err error
			if first {
				rows, err = s.db.pool.Query(ctx, "SELECT key FROM seen ORDER BY key LIMIT $1", forEachChunk)
			} else {
				rows, err = s.db.pool.Query(ctx, "SELECT key FROM seen WHERE key > $1 ORDER BY key LIMIT $2", after, forEachChunk)
			}
			if err != nil {
				return err
			}
			buf, err = pgx.AppendRows(buf[:0], rows, pgx.RowTo[int64])
			return err
		})
		if err != nil {
			return err
		}
		for _, k := range buf {
			if err := fn(uint64(k)); err != nil {
				return err
			}
		}
		if len(buf) < forEachChunk {
			return nil
		}
		after, first = buf[len(buf)-1], false
	}
}

// readChunk runs read, one query of a ForEach walk, bounded by opTimeout
// and cancelled by Close, and retries it while it fails retryably. It
// returns ErrClosed once the DB is closed.
func (db *DB) readChunk(op string, read func(ctx context.Context) error) error {
	if db.isClosed() {
		return ErrClosed
	}
	ctx, cancel := context.WithTimeout(db.ctx, opTimeout)
	defer cancel()
	err := retry(ctx, func() error { return read(ctx) }, op)
	if err != nil && db.isClosed() {
		return ErrClosed
	}
	return err
}

// FingerprintStore persists a simhash.Index in the table fingerprints
// (fingerprint, doc_id); a pair put twice is stored once. Its fingerprints
// are of this build's simhash.Version: Open discards those of another
// (DB.DiscardedFingerprints).
type FingerprintStore struct {
	db *DB
}

var _ simhash.Store = (*FingerprintStore)(nil)

// FingerprintStore returns the DB's fingerprint store.
func (db *DB) FingerprintStore() *FingerprintStore { return &FingerprintStore{db: db} }

// Put implements simhash.Store in one statement.
func (s *FingerprintStore) Put(entries []simhash.Entry) error {
	if s.db.isClosed() {
		return ErrClosed
	}
	if len(entries) == 0 {
		return nil
	}
	fps, ids := make([]int64, len(entries)), make([]int64, len(entries))
	for i, e := range entries {
		fps[i], ids[i] = int64(e.Fingerprint), int64(e.ID)
	}
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	return retry(ctx, func() error {
		_, err := s.db.pool.Exec(ctx, `INSERT INTO fingerprints (fingerprint, doc_id)
			SELECT * FROM unnest($1::bigint[], $2::bigint[]) ORDER BY 1, 2 ON CONFLICT DO NOTHING`, fps, ids)
		return err
	}, "fingerprint put")
}

// ForEach implements simhash.Store, in the order of the entries' signed
// reinterpretation. Like SeenStore.ForEach it reads forEachChunk entries per
// query and holds no connection while fn runs, so fn may use the DB or
// close it (ForEach then returns ErrClosed); entries put during the walk
// may or may not be visited.
func (s *FingerprintStore) ForEach(fn func(simhash.Entry) error) error {
	type pair struct{ fp, id int64 }
	var (
		buf   []pair
		after pair
		first = true
	)
	for {
		err := s.db.readChunk("fingerprint scan", func(ctx context.Context) error {
			var rows pgx.Rows
			var err error
			if first {
				rows, err = s.db.pool.Query(ctx, `SELECT fingerprint, doc_id FROM fingerprints
					ORDER BY fingerprint, doc_id LIMIT $1`, forEachChunk)
			} else {
				rows, err = s.db.pool.Query(ctx, `SELECT fingerprint, doc_id FROM fingerprints
					WHERE (fingerprint, doc_id) > ($1, $2) ORDER BY fingerprint, doc_id LIMIT $3`,
					after.fp, after.id, forEachChunk)
			}
			if err != nil {
				return err
			}
			buf, err = pgx.AppendRows(buf[:0], rows, func(row pgx.CollectableRow) (pair, error) {
				var p pair
				err := row.Scan(&p.fp, &p.id)
				return p, err
			})
			return err
		})
		if err != nil {
			return err
		}
		for _, p := range buf {
			if err := fn(simhash.Entry{Fingerprint: uint64(p.fp), ID: uint64(p.id)}); err != nil {
				return err
			}
		}
		if len(buf) < forEachChunk {
			return nil
		}
		after, first = buf[len(buf)-1], false
	}
}

// RobotsStore is a robots.Store in the table robots_cache: one row per
// origin holding the record's binary form (robots.Record.MarshalBinary) and,
// for inspection with SQL, its status and times. Workers sharing the table
// share fetched robots.txt files.
type RobotsStore struct {
	db *DB
}

var _ robots.Store = (*RobotsStore)(nil)

// RobotsStore returns the DB's robots.txt store.
func (db *DB) RobotsStore() *RobotsStore { return &RobotsStore{db: db} }

// Get implements robots.Store.
func (s *RobotsStore) Get(ctx context.Context, origin string) (robots.Record, bool, error) {
	if s.db.isClosed() {
		return robots.Record{}, false, ErrClosed
	}
	var b []byte
	err := retry(ctx, func() error {
		return s.db.pool.QueryRow(ctx, "SELECT record FROM robots_cache WHERE origin = $1", origin).Scan(&b)
	}, "robots get "+origin)
	if errors.Is(err, pgx.ErrNoRows) {
		return robots.Record{}, false, nil
	}
	if err != nil {
		return robots.Record{}, false, err
	}
	var rec robots.Record
	if err := rec.UnmarshalBinary(b); err != nil {
		return robots.Record{}, false, fmt.Errorf("postgres: robots get %s: %w", origin, err)
	}
	return rec, true, nil
}

// Put implements robots.Store: it inserts or replaces origin's record.
func (s *RobotsStore) Put(ctx context.Context, origin string, rec robots.Record) error {
	if s.db.isClosed() {
		return ErrClosed
	}
	b, err := rec.MarshalBinary()
	if err != nil {
		return fmt.Errorf("postgres: robots put %s: %w", origin, err)
	}
	return retry(ctx, func() error {
		_, err := s.db.pool.Exec(ctx, `INSERT INTO robots_cache (origin, status, fetched_at, expires, record)
			VALUES ($1, $2, $3, $4, $5)
			ON CONFLICT (origin) DO UPDATE SET status = excluded.status, fetched_at = excluded.fetched_at,
				expires = excluded.expires, record = excluded.record`,
			origin, rec.Status, nullTime(rec.FetchedAt), nullTime(rec.Expires), b)
		return err
	}, "robots put "+origin)
}

// nullTime maps the zero time to SQL NULL.
func nullTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}
