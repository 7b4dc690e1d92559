package postgres

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/crawlkit/crawlkit/frontier"
	"github.com/crawlkit/crawlkit/storage/internal/idle"
	"github.com/crawlkit/crawlkit/storage/internal/queuecore"
	"github.com/crawlkit/crawlkit/storage/sharedqueue"
	"github.com/crawlkit/crawlkit/urlnorm"
)

// addChunk bounds the URLs of one INSERT statement.
const addChunk = 4096

// QueueConfig configures a Queue; its fields and defaults are
// sharedqueue.Config's, the same for every shared queue.
type QueueConfig = sharedqueue.Config

// Settlement is a lease and its outcome for DoneBatchAt: sharedqueue's.
type Settlement = sharedqueue.Settlement

// Queue is a sharedqueue.Queue whose state lives in the DB's urls and hosts
// tables, shared by every process that opens the same schema. Its
// guarantees are the primary key on urls and row locks on hosts.
type Queue struct {
	db *DB
	// core is the queue's logic shared with storage/redis; the backend
	// below is its SQL.
	core *queuecore.Queue
}

// backend is the queue's queuecore.Backend: its SQL.
type backend struct {
	db   *DB
	core *queuecore.Queue
}

var _ sharedqueue.Queue = (*Queue)(nil)

var _ queuecore.Notifier = (*backend)(nil)

// statsMaxAge is how long Stats reuses crawl-wide counts: counting a large
// urls table is not free, and Stats is called often.
const statsMaxAge = time.Second

// Queue returns a handle on the crawl's shared queue. Each process (or each
// crawler) takes its own; handles on one schema share everything but their
// Stats counters. Close the Queue before the DB.
func (db *DB) Queue(opts QueueConfig) (*Queue, error) {
	if db.isClosed() {
		return nil, ErrClosed
	}
	b := &backend{db: db}
	core, err := queuecore.New(db.ctx, opts, b, queuecore.Config{
		Name: "postgres", Server: "the database", Unavailable: ErrUnavailable, Closed: ErrClosed,
		TextOnly: true, CountsMaxAge: statsMaxAge,
	})
	if err != nil {
		return nil, err
	}
	b.core = core
	return &Queue{db: db, core: core}, nil
}

// Close implements sharedqueue.Queue. Leases it did not settle expire in
// the database.
func (q *Queue) Close() error { return q.core.Close() }

// Closed reports whether the DB is closed.
func (b *backend) Closed() bool { return b.db.isClosed() }

// Round is t at PostgreSQL's resolution, microseconds.
func (b *backend) Round(t time.Time) time.Time { return t.Truncate(time.Microsecond) }

// Add implements sharedqueue.Queue.
func (q *Queue) Add(entries ...frontier.Entry) error { return q.core.Add(entries...) }

// AddAt implements sharedqueue.Queue in statements of up to 4096 URLs,
// each committed on its own. A URL or host that is not UTF-8 or holds a NUL
// byte, which PostgreSQL's text cannot store, makes an entry invalid.
func (q *Queue) AddAt(ctx context.Context, now time.Time, entries ...frontier.Entry) (int, error) {
	return q.core.AddAt(ctx, now, entries...)
}

// addSQL inserts a batch of URLs, dropping those already known, and lowers
// the due_at of their hosts. URLs are inserted in url_hash order and hosts in
// host order, so concurrent Adds of overlapping batches cannot deadlock; seq
// keeps the batch's own order.
const addSQL = `WITH b AS (SELECT nextval('url_seq') AS b),
input AS (
	SELECT t.*, (SELECT b FROM b) * 65536 + t.ord AS seq
	FROM unnest($1::bigint[], $2::text[], $3::text[], $4::bigint[], $5::integer[], $6::float8[],
		$7::smallint[], $8::bytea[], $9::timestamptz[]) WITH ORDINALITY
		AS t(url_hash, url, host, host_hash, depth, priority, band, meta, next_fetch_at, ord)
), ins AS (
	INSERT INTO urls (url_hash, url, host, host_hash, depth, source, discovered_at, priority, band, seq,
		meta, state, next_fetch_at)
	SELECT url_hash, url, host, host_hash, depth, CASE WHEN depth = 0 THEN 'seed' ELSE 'link' END, $10,
		priority, band, seq, meta, 0, next_fetch_at
	FROM input ORDER BY url_hash
	ON CONFLICT (url_hash) DO NOTHING
	RETURNING host, host_hash, next_fetch_at
), up AS (
	INSERT INTO hosts AS h (host, host_hash, due_at)
	SELECT host, min(host_hash), min(next_fetch_at) FROM ins GROUP BY host ORDER BY host
	ON CONFLICT (host) DO UPDATE SET due_at = least(h.due_at, excluded.due_at)
)
SELECT count(*) FROM ins`

// Add runs addSQL for entries in statements of up to addChunk URLs, each
// committed on its own; it returns how many the committed ones added.
func (b *backend) Add(ctx context.Context, now time.Time, entries []queuecore.Entry) (int, error) {
	added := 0
	for len(entries) > 0 {
		n := min(len(entries), addChunk)
		k, err := b.insert(ctx, now, entries[:n])
		added += k
		if err != nil {
			return added, err
		}
		entries = entries[n:]
	}
	return added, nil
}

// insert runs addSQL for entries.
func (b *backend) insert(ctx context.Context, now time.Time, entries []queuecore.Entry) (int, error) {
	n := len(entries)
	hashes, urls, hosts := make([]int64, n), make([]string, n), make([]string, n)
	hostHashes, depths := make([]int64, n), make([]int32, n)
	prios, bands := make([]float64, n), make([]int16, n)
	metas, dues := make([][]byte, n), make([]time.Time, n)
	for i, e := range entries {
		hashes[i], urls[i], hosts[i], hostHashes[i], depths[i] = int64(e.Key), e.URL, e.Host, int64(urlnorm.HostKey(e.Host)), int32(e.Depth)
		prios[i], bands[i], metas[i], dues[i] = e.Priority, int16(e.Band), e.Meta, e.Due
	}
	var added int64
	// Idempotent: a repeated insert drops what the first one wrote.
	err := retry(ctx, func() error {
		return b.db.pool.QueryRow(ctx, addSQL, hashes, urls, hosts, hostHashes, depths, prios, bands, metas, dues, now).Scan(&added)
	}, "add")
	return int(added), err
}

// NextAt implements sharedqueue.Queue with one crawlkit_lease call.
func (q *Queue) NextAt(now time.Time) (*frontier.Lease, time.Time, error) { return q.core.NextAt(now) }

// leaseSQL and nextSQL run together in one round trip: when the first leases
// nothing, the second tells when to ask again.
const (
	leaseSQL = `SELECT o_lease_id, o_url_hash, o_url, o_host, o_depth, o_priority, o_meta, o_attempts,
		o_fingerprint, o_interval, o_expired FROM crawlkit_lease($1, $2, $3)`
	nextSQL = `SELECT min(ready_at) FROM hosts WHERE due_at IS NOT NULL`
)

// LeaseAt implements sharedqueue.Queue: crawlkit_lease and the query for
// the next ready host share one round trip.
func (q *Queue) LeaseAt(ctx context.Context, now time.Time, n int) ([]*frontier.Lease, time.Time, error) {
	return q.core.LeaseAt(ctx, now, n)
}

// Lease runs leaseSQL and nextSQL.
func (b *backend) Lease(ctx context.Context, now time.Time, n int, expires time.Time) (queuecore.LeaseResult, error) {
	var (
		leases  []*frontier.Lease
		next    pgtype.Timestamptz
		expired int
	)
	// Leasing is not idempotent (a repeat after a lost reply leaves the
	// first leases to expire), so only failures before the statement ran
	// are retried.
	err := retryIf(ctx, safeOnly, func() error {
		leases, expired = leases[:0], 0
		bt := &pgx.Batch{}
		bt.Queue(leaseSQL, now, n, expires)
		bt.Queue(nextSQL)
		br := b.db.pool.SendBatch(ctx, bt)
		defer br.Close()
		rows, err := br.Query()
		if err != nil {
			return err
		}
		for rows.Next() {
			var (
				id, hash, fp, interval int64
				l                      frontier.Lease
				depth, attempts        int32
				wasExpired             bool
			)
			if err := rows.Scan(&id, &hash, &l.URL, &l.Host, &depth, &l.Priority, &l.Meta, &attempts, &fp, &interval, &wasExpired); err != nil {
				rows.Close()
				return err
			}
			l.ID, l.Depth, l.Attempt = uint64(id), int(depth), int(attempts)
			l.Fingerprint, l.Interval, l.Expires = uint64(fp), time.Duration(interval)*time.Microsecond, expires
			if wasExpired {
				expired++
			}
			leases = append(leases, &l)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		if err := br.QueryRow().Scan(&next); err != nil {
			return err
		}
		return br.Close()
	}, "lease")
	if err != nil {
		return queuecore.LeaseResult{}, err
	}
	res := queuecore.LeaseResult{Leases: leases, Expired: expired}
	switch {
	case !next.Valid:
	case next.InfinityModifier != pgtype.Finite:
		// A ready host that another worker holds locked right now.
		res.Next = now
	default:
		res.Next = next.Time
	}
	return res, nil
}

// Next implements sharedqueue.Queue; other processes' Adds are heard
// through LISTEN on the schema's channel.
func (q *Queue) Next(ctx context.Context) (*frontier.Lease, error) { return q.core.Next(ctx) }

// Done implements sharedqueue.Queue.
func (q *Queue) Done(l *frontier.Lease, o frontier.Outcome) (frontier.Settlement, error) {
	return q.core.Done(l, o)
}

// DoneAt implements sharedqueue.Queue with one crawlkit_settle call.
func (q *Queue) DoneAt(ctx context.Context, now time.Time, l *frontier.Lease, o frontier.Outcome) (frontier.Settlement, error) {
	return q.core.DoneAt(ctx, now, l, o)
}

// settleSQL settles one lease (see crawlkit_settle in the migration).
const settleSQL = `SELECT crawlkit_settle($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`

// DoneBatchAt implements sharedqueue.Queue in one transaction: when it
// fails, none of the leases was settled.
func (q *Queue) DoneBatchAt(ctx context.Context, now time.Time, batch []Settlement) error {
	return q.core.DoneBatchAt(ctx, now, batch)
}

// Settle sends the settles of work in one batch (one implicit transaction),
// hosts in order, so that batches lock them in one order and cannot
// deadlock each other.
func (b *backend) Settle(ctx context.Context, now time.Time, work []queuecore.Planned) ([]queuecore.Code, bool, error) {
	slices.SortFunc(work, func(a, b queuecore.Planned) int { return strings.Compare(a.Lease.Host, b.Lease.Host) })
	codes := make([]int32, len(work))
	// A settle reports 2 when the lease had settled the URL already. That
	// is this call's own success only when an earlier attempt failed in a
	// way that may have committed it (a lost reply); after no attempt, or
	// after attempts that were rolled back (deadlock, serialization
	// failure) or never sent, it is an earlier call's settle.
	mayHaveCommitted, ownEarlier := false, false
	err := retry(ctx, func() error {
		ownEarlier = mayHaveCommitted
		err := b.sendSettles(ctx, now, work, codes)
		if err != nil && !safeOnly(err) {
			mayHaveCommitted = true
		}
		return err
	}, "settle")
	if err != nil {
		return nil, false, err
	}
	out := make([]queuecore.Code, len(codes))
	for i, c := range codes {
		out[i] = queuecore.CodeOf(int64(c))
	}
	return out, ownEarlier, nil
}

// sendSettles runs one attempt of Settle, setting codes to the results.
func (b *backend) sendSettles(ctx context.Context, now time.Time, work []queuecore.Planned, codes []int32) error {
	bt := &pgx.Batch{}
	for _, w := range work {
		l := w.Lease
		var next *time.Time
		if dbState(&w.Plan) == 0 {
			t := w.Plan.At
			next = &t
		}
		pol := w.Polite.Truncate(time.Microsecond)
		delay := pgtype.Interval{Microseconds: pol.Sub(now).Microseconds(), Valid: true}
		bt.Queue(settleSQL, now, int64(l.ID), int64(urlnorm.Key(l.URL)), l.Host, dbState(&w.Plan), next,
			w.Plan.Attempt, int64(w.Plan.Fingerprint), w.Plan.Interval.Microseconds(), fetched(&w.Plan), pol, delay)
	}
	br := b.db.pool.SendBatch(ctx, bt)
	for i := range work {
		if err := br.QueryRow().Scan(&codes[i]); err != nil {
			br.Close()
			return err
		}
	}
	return br.Close()
}

// Extend implements sharedqueue.Queue.
func (q *Queue) Extend(l *frontier.Lease, ttl time.Duration) error { return q.core.Extend(l, ttl) }

// ExtendAt implements sharedqueue.Queue, moving the URL's and its host's
// expiry in one transaction.
func (q *Queue) ExtendAt(ctx context.Context, now time.Time, l *frontier.Lease, ttl time.Duration) error {
	return q.core.ExtendAt(ctx, now, l, ttl)
}

// Extend moves the lease's expiry, and its host's, in one transaction.
func (b *backend) Extend(ctx context.Context, now time.Time, l *frontier.Lease, expires time.Time) (queuecore.Code, error) {
	var ok, settled bool
	err := retry(ctx, func() error {
		ok, settled = false, false
		return pgx.BeginFunc(ctx, b.db.pool, func(tx pgx.Tx) error {
			// Host first, as leasing and settling lock.
			if _, err := tx.Exec(ctx, "SELECT 1 FROM hosts WHERE host = $1 FOR UPDATE", l.Host); err != nil {
				return err
			}
			hash := int64(urlnorm.Key(l.URL))
			tag, err := tx.Exec(ctx, `UPDATE urls SET lease_expires = $3, next_fetch_at = $3
				WHERE url_hash = $1 AND lease_id = $2 AND state = 1 AND lease_expires > $4`,
				hash, int64(l.ID), expires, now)
			if err != nil {
				return err
			}
			if tag.RowsAffected() == 0 {
				return tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM urls WHERE url_hash = $1 AND settled_lease = $2)`,
					hash, int64(l.ID)).Scan(&settled)
			}
			ok = true
			_, err = tx.Exec(ctx, `UPDATE hosts SET lease_expires = $2, polite_at = $2::timestamptz + expiry_delay
				WHERE host = $1 AND lease_id = $3`, l.Host, expires, int64(l.ID))
			return err
		})
	}, "extend")
	switch {
	case err != nil:
		return 0, err
	case settled:
		return queuecore.Settled, nil
	case !ok:
		return queuecore.Expired, nil
	}
	return queuecore.Applied, nil
}

// BlockHost implements sharedqueue.Queue; the block is the host row's
// blocked_until.
func (q *Queue) BlockHost(host string, until time.Time) { q.core.BlockHost(host, until) }

// BlockHostAt implements sharedqueue.Queue.
func (q *Queue) BlockHostAt(ctx context.Context, host string, until time.Time) error {
	return q.core.BlockHostAt(ctx, host, until)
}

// Block upserts the host's blocked_until.
func (b *backend) Block(ctx context.Context, host string, until time.Time) error {
	return retry(ctx, func() error {
		_, err := b.db.pool.Exec(ctx, `INSERT INTO hosts AS h (host, host_hash, blocked_until) VALUES ($1, $2, $3)
			ON CONFLICT (host) DO UPDATE SET blocked_until = greatest(h.blocked_until, excluded.blocked_until)`,
			host, int64(urlnorm.HostKey(host)), until)
		return err
	}, "block host")
}

// Record stores a fetch's HTTP status code and content hash in the URL's
// row (last_status_code, last_content_hash), for applications that query
// the URL database. The queue itself does not use them.
func (q *Queue) Record(ctx context.Context, url string, status int, contentHash uint64) error {
	if err := q.core.Check(); err != nil {
		return err
	}
	return retry(ctx, func() error {
		_, err := q.db.pool.Exec(ctx, "UPDATE urls SET last_status_code = $2, last_content_hash = $3 WHERE url_hash = $1",
			int64(urlnorm.Key(url)), status, int64(contentHash))
		return err
	}, "record")
}

// Stats implements sharedqueue.Queue; the shared counts are one query
// over the urls and hosts tables.
func (q *Queue) Stats() frontier.Stats { return q.core.Stats() }

// Counts counts the hosts with work and the queued URLs.
func (b *backend) Counts(ctx context.Context, now time.Time) (queuecore.Counts, error) {
	var c queuecore.Counts
	err := b.db.pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM hosts WHERE due_at IS NOT NULL),
			count(*) FILTER (WHERE state = 0 OR lease_expires <= $1),
			count(*) FILTER (WHERE state = 0 AND next_fetch_at > $1)
		FROM urls WHERE state IN (0, 1)`, now).Scan(&c.Hosts, &c.Queued, &c.Delayed)
	return c, wrap("stats", err)
}

// Deduplicates implements sharedqueue.Queue: the urls table's primary key
// drops a URL seen before.
func (q *Queue) Deduplicates() bool { return true }

// Listen runs the listener until ctx ends: it keeps a connection listening
// on the schema's channel, and wakes g at every notification. A lost
// connection is opened again after a pause that doubles from 100 ms to 5 s.
func (b *backend) Listen(ctx context.Context, g *idle.Gate) {
	pause := idle.Backoff{Min: 100 * time.Millisecond, Max: 5 * time.Second}
	for {
		err := b.listenConn(ctx, g, pause.Reset)
		if ctx.Err() != nil {
			return
		}
		b.core.Logger().Warn("postgres queue: listener lost, polling until it is back", "err", err, "retry_in", pause.Current())
		if !pause.Wait(ctx) {
			return
		}
	}
}

// listenApplication is the application_name of the listener's connection,
// which tells it apart in pg_stat_activity.
func listenApplication(schema string) string { return "crawlkit listener " + schema }

// listenConn opens a connection, listens on it and wakes g at every
// notification until the connection fails or ctx ends. It calls listening
// once the LISTEN has succeeded.
func (b *backend) listenConn(qctx context.Context, g *idle.Gate, listening func()) error {
	cfg := b.db.pool.Config().ConnConfig.Copy()
	cfg.RuntimeParams["application_name"] = listenApplication(b.db.schema)
	ctx, cancel := context.WithTimeout(qctx, b.core.Options().OpTimeout)
	defer cancel()
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return wrap("listener: connect", err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		conn.Close(ctx)
	}()
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{b.db.schema}.Sanitize()); err != nil {
		return wrap("listener: listen", err)
	}
	listening()
	g.Listening()
	for {
		if _, err := conn.WaitForNotification(qctx); err != nil {
			return wrap("listener: wait", err)
		}
		g.Wake()
	}
}

// notifySQL tells the listeners of the schema's channel that URLs were
// added. It is a transaction of its own, committed without waiting for the
// disk: PostgreSQL serializes the commits of notifying transactions, which
// made concurrent Adds that notified themselves half as fast, and a
// notification lost in a server crash costs only a poll interval.
const notifySQL = `SELECT set_config('synchronous_commit', 'off', true), pg_notify($1, '')`

// Notify tells the other processes' listeners that URLs were added.
func (b *backend) Notify(ctx context.Context) error {
	_, err := b.db.pool.Exec(ctx, notifySQL, b.db.schema)
	return err
}
