package redis

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/crawlkit/crawlkit/frontier"
	"github.com/crawlkit/crawlkit/storage/internal/idle"
	"github.com/crawlkit/crawlkit/storage/internal/queuecore"
	"github.com/crawlkit/crawlkit/storage/sharedqueue"
	"github.com/crawlkit/crawlkit/urlnorm"
)

// DefaultExpiryDelay is how long a host waits after a lease on it
// expired unsettled, until a settle records the host's own delay.
const DefaultExpiryDelay = frontier.DefaultDelay

// addChunk bounds the URLs of one add script call.
const addChunk = 1000

// QueueConfig configures a Queue; its fields and defaults are
// sharedqueue.Config's, the same for every shared queue.
type QueueConfig = sharedqueue.Config

// Settlement is a lease and its outcome for DoneBatchAt: sharedqueue's.
type Settlement = sharedqueue.Settlement

// Queue is a sharedqueue.Queue whose state lives in the crawl's Redis keys,
// shared by every process that opens the same crawl. Its guarantees hold
// as long as the server keeps its writes (see the package documentation):
// each change is one Lua script, which Redis runs atomically.
type Queue struct {
	// core is the queue's logic shared with storage/postgres; its
	// backend is the Lua scripts.
	core *queuecore.Queue
}

// scriptQueue is the queue's queuecore.Backend: its Lua scripts.
type scriptQueue struct {
	db   *DB
	core *queuecore.Queue
}

var _ sharedqueue.Queue = (*Queue)(nil)

// Queue returns a handle on the crawl's shared queue. Each process (or each
// crawler) takes its own; handles on one crawl share everything but their
// Stats counters. Close the Queue before the DB.
func (db *DB) Queue(opts QueueConfig) (*Queue, error) {
	if db.isClosed() {
		return nil, ErrClosed
	}
	s := &scriptQueue{db: db}
	core, err := queuecore.New(db.ctx, opts, s, queuecore.Config{
		Name: "redis", Server: "the server", Unavailable: ErrUnavailable, Closed: ErrClosed,
	})
	if err != nil {
		return nil, err
	}
	s.core = core
	return &Queue{core: core}, nil
}

// Close implements sharedqueue.Queue. Leases it did not settle expire on
// the server.
func (q *Queue) Close() error { return q.core.Close() }

// Closed reports whether the DB is closed.
func (s *scriptQueue) Closed() bool { return s.db.isClosed() }

// micros is t in microseconds since the Unix epoch, the scripts' time.
func micros(t time.Time) int64 { return t.UnixMicro() }

// Round is t at the scripts' resolution, microseconds.
func (s *scriptQueue) Round(t time.Time) time.Time { return time.UnixMicro(micros(t)) }

// urlID is the member naming a URL in the scripts' keys: its urlnorm.Key
// in hexadecimal.
func urlID(url string) string { return fmt.Sprintf("%016x", urlnorm.Key(url)) }

// Add implements sharedqueue.Queue.
func (q *Queue) Add(entries ...frontier.Entry) error { return q.core.Add(entries...) }

// AddAt implements sharedqueue.Queue in script calls of up to 1000 URLs,
// pipelined in one round trip, each applied atomically.
func (q *Queue) AddAt(ctx context.Context, now time.Time, entries ...frontier.Entry) (int, error) {
	return q.core.AddAt(ctx, now, entries...)
}

// Add runs the add script on entries, addChunk at a time, pipelined; the
// script publishes on the crawl's "added" channel.
func (s *scriptQueue) Add(ctx context.Context, now time.Time, entries []queuecore.Entry) (int, error) {
	args := make([]any, 0, 5*len(entries))
	for _, e := range entries {
		rec := record{url: e.URL, host: e.Host, depth: e.Depth, priority: e.Priority, meta: e.Meta}
		args = append(args, fmt.Sprintf("%016x", e.Key), e.Host, e.Band, micros(e.Due), rec.encode())
	}
	var cmds []*goredis.Cmd
	// Safe to repeat: the script drops URLs it already queued.
	err := retry(ctx, "add", func() error {
		cmds = cmds[:0]
		_, err := s.db.client.Pipelined(ctx, func(p goredis.Pipeliner) error {
			for rest := args; len(rest) > 0; {
				n := min(len(rest)/5, addChunk)
				a := append([]any{s.db.prefix, micros(now), n}, rest[:5*n]...)
				cmds = append(cmds, s.db.scripts.add.EvalSha(ctx, p, []string{s.db.key("ready")}, a...))
				rest = rest[5*n:]
			}
			return nil
		})
		if isNoScript(err) {
			if err := s.loadScripts(ctx); err != nil {
				return err
			}
			return errNoScript
		}
		return err
	})
	if err != nil {
		return 0, err
	}
	added := 0
	for _, c := range cmds {
		n, _ := c.Int()
		added += n
	}
	return added, nil
}

// errNoScript makes retry run a pipeline again after the scripts were
// loaded into a server that had lost them (after a restart).
var errNoScript = errors.New("scripts reloaded")

func isNoScript(err error) bool {
	return err != nil && goredis.HasErrorPrefix(err, "NOSCRIPT")
}

// loadScripts loads every script into the server's script cache, for
// pipelines, which cannot fall back from EVALSHA to EVAL.
func (s *scriptQueue) loadScripts(ctx context.Context) error {
	sc := s.db.scripts
	for _, script := range []*goredis.Script{sc.add, sc.lease, sc.settle, sc.extend, sc.block} {
		if err := script.Load(ctx, s.db.client).Err(); err != nil {
			return err
		}
	}
	return nil
}

// NextAt implements sharedqueue.Queue with one lease script call.
func (q *Queue) NextAt(now time.Time) (*frontier.Lease, time.Time, error) { return q.core.NextAt(now) }

// LeaseAt implements sharedqueue.Queue in one script call. Leasing is not
// repeated after a lost connection: leases whose reply was lost expire.
func (q *Queue) LeaseAt(ctx context.Context, now time.Time, n int) ([]*frontier.Lease, time.Time, error) {
	return q.core.LeaseAt(ctx, now, n)
}

// Lease runs the lease script, and drops the unreadable records it leased.
func (s *scriptQueue) Lease(ctx context.Context, now time.Time, n int, expires time.Time) (queuecore.LeaseResult, error) {
	var none queuecore.LeaseResult
	res, err := s.db.scripts.lease.Run(ctx, s.db.client, []string{s.db.key("ready")},
		s.db.prefix, micros(now), n, micros(expires), DefaultExpiryDelay.Microseconds()).Slice()
	if err != nil {
		return none, wrap("lease", err)
	}
	if len(res) < 2 || (len(res)-2)%3 != 0 {
		return none, fmt.Errorf("redis: lease: malformed reply of %d values", len(res))
	}
	expired, _ := res[0].(int64)
	var leases []*frontier.Lease
	var corrupt []any // settle arguments of leases whose record is unreadable
	for i := 2; i+2 < len(res); i += 3 {
		idStr, _ := res[i].(string)
		uid, _ := res[i+1].(string)
		blob, _ := res[i+2].(string)
		id, err := strconv.ParseUint(idStr, 10, 64)
		if err != nil {
			return none, fmt.Errorf("redis: lease: malformed lease id %q", idStr)
		}
		rec, err := decodeRecord([]byte(blob))
		if err != nil {
			// An unreadable record would come back at every expiry of
			// its lease, and failing the call would lose the good
			// leases of this batch with it. It is settled as failed
			// below, which deletes it, and counted in Stats.Corrupt.
			s.core.Logger().Warn("redis queue: dropping an unreadable URL record", "url_id", uid, "err", err)
			corrupt = append(corrupt, idStr, uid, stateFailed, 0, "", micros(now), 0)
			continue
		}
		leases = append(leases, &frontier.Lease{
			ID: id, URL: rec.url, Host: rec.host, Depth: rec.depth, Priority: rec.priority, Meta: rec.meta,
			Attempt: rec.attempts, Fingerprint: rec.fingerprint, Interval: rec.interval, Expires: expires,
		})
	}
	out := queuecore.LeaseResult{Leases: leases, Expired: int(expired), Corrupt: s.dropCorrupt(ctx, now, corrupt)}
	switch {
	case len(leases) > 0:
	case len(corrupt) > 0:
		// Every URL leased was unreadable; others may be ready.
		out.Next = now
	default:
		next, _ := res[1].(string)
		if next == "" {
			break
		}
		us, err := strconv.ParseInt(next, 10, 64)
		if err != nil {
			return none, fmt.Errorf("redis: lease: malformed time %q", next)
		}
		// Not after now: leases to expire or URLs to promote beyond one
		// call's share.
		out.Next = time.UnixMicro(us)
	}
	return out, nil
}

// dropCorrupt settles as failed the leases described by args (seven
// settle-script arguments per lease) and returns how many it settled. A
// failure is logged, not returned: those leases then expire, and their
// records are met, and dropped, again.
func (s *scriptQueue) dropCorrupt(ctx context.Context, now time.Time, args []any) int {
	n := len(args) / 7
	if n == 0 {
		return 0
	}
	head := []any{s.db.prefix, micros(now), DefaultExpiryDelay.Microseconds(), n}
	codes, err := s.db.scripts.settle.Run(ctx, s.db.client, []string{s.db.key("ready")}, append(head, args...)...).Int64Slice()
	if err != nil {
		s.core.Logger().Warn("redis queue: dropping unreadable URL records", "err", wrap("settle", err))
		return 0
	}
	dropped := 0
	for _, c := range codes {
		if c == 0 {
			dropped++
		}
	}
	return dropped
}

// Next implements sharedqueue.Queue; other processes' Adds are heard
// through a subscription to the crawl's "added" channel.
func (q *Queue) Next(ctx context.Context) (*frontier.Lease, error) { return q.core.Next(ctx) }

// Done implements sharedqueue.Queue.
func (q *Queue) Done(l *frontier.Lease, o frontier.Outcome) (frontier.Settlement, error) {
	return q.core.Done(l, o)
}

// DoneAt implements sharedqueue.Queue with one settle script call.
func (q *Queue) DoneAt(ctx context.Context, now time.Time, l *frontier.Lease, o frontier.Outcome) (frontier.Settlement, error) {
	return q.core.DoneAt(ctx, now, l, o)
}

// DoneBatchAt implements sharedqueue.Queue in one script call, which is
// atomic: when it fails, none or all of the leases were settled.
func (q *Queue) DoneBatchAt(ctx context.Context, now time.Time, batch []Settlement) error {
	return q.core.DoneBatchAt(ctx, now, batch)
}

// Settle runs the settle script once for the whole batch.
func (s *scriptQueue) Settle(ctx context.Context, now time.Time, work []queuecore.Planned) ([]queuecore.Code, bool, error) {
	args := []any{s.db.prefix, micros(now), DefaultExpiryDelay.Microseconds(), len(work)}
	for _, w := range work {
		l := w.Lease
		var due int64
		var blob []byte
		if dbState(&w.Plan) == "q" {
			due = micros(w.Plan.At)
			rec := record{url: l.URL, host: l.Host, depth: l.Depth, priority: l.Priority, meta: l.Meta,
				attempts: w.Plan.Attempt, fingerprint: w.Plan.Fingerprint, interval: w.Plan.Interval}
			blob = rec.encode()
		}
		args = append(args, strconv.FormatUint(l.ID, 10), urlID(l.URL), dbState(&w.Plan), due, blob,
			micros(w.Polite), w.Polite.Sub(now).Microseconds())
	}
	var codes []int64
	attempt := 0
	// One script call settles the whole batch atomically; repeating it
	// after a lost reply is safe, since it recognizes its own settles.
	err := retry(ctx, "settle", func() error {
		attempt++
		var err error
		codes, err = s.db.scripts.settle.Run(ctx, s.db.client, []string{s.db.key("ready")}, args...).Int64Slice()
		if err == nil && len(codes) != len(work) {
			err = fmt.Errorf("%d codes for %d leases", len(codes), len(work))
		}
		return err
	})
	if err != nil {
		return nil, false, err
	}
	out := make([]queuecore.Code, len(codes))
	for i, c := range codes {
		out[i] = queuecore.CodeOf(c)
	}
	return out, attempt > 1, nil
}

// Extend implements sharedqueue.Queue.
func (q *Queue) Extend(l *frontier.Lease, ttl time.Duration) error { return q.core.Extend(l, ttl) }

// ExtendAt implements sharedqueue.Queue with one extend script call.
func (q *Queue) ExtendAt(ctx context.Context, now time.Time, l *frontier.Lease, ttl time.Duration) error {
	return q.core.ExtendAt(ctx, now, l, ttl)
}

// Extend runs the extend script.
func (s *scriptQueue) Extend(ctx context.Context, now time.Time, l *frontier.Lease, expires time.Time) (queuecore.Code, error) {
	var code int64
	err := retry(ctx, "extend", func() error {
		var err error
		code, err = s.db.scripts.extend.Run(ctx, s.db.client, []string{s.db.key("ready")},
			s.db.prefix, micros(now), strconv.FormatUint(l.ID, 10), micros(expires), urlID(l.URL)).Int64()
		return err
	})
	return queuecore.CodeOf(code), err
}

// BlockHost implements sharedqueue.Queue with the block script.
func (q *Queue) BlockHost(host string, until time.Time) { q.core.BlockHost(host, until) }

// BlockHostAt implements sharedqueue.Queue.
func (q *Queue) BlockHostAt(ctx context.Context, host string, until time.Time) error {
	return q.core.BlockHostAt(ctx, host, until)
}

// Block runs the block script.
func (s *scriptQueue) Block(ctx context.Context, host string, until time.Time) error {
	return retry(ctx, "block host", func() error {
		return s.db.scripts.block.Run(ctx, s.db.client, []string{s.db.key("ready")}, s.db.prefix, host, micros(until)).Err()
	})
}

// Stats implements sharedqueue.Queue. Its Corrupt counts the unreadable
// URL records this handle leased and dropped.
func (q *Queue) Stats() frontier.Stats { return q.core.Stats() }

// Counts reads the crawl's counters and key sizes in one round trip.
func (s *scriptQueue) Counts(ctx context.Context, now time.Time) (queuecore.Counts, error) {
	var queued *goredis.StringCmd
	var delayed, ready, leased *goredis.IntCmd
	_, err := s.db.client.Pipelined(ctx, func(p goredis.Pipeliner) error {
		queued = p.HGet(ctx, s.db.key("n"), "q")
		delayed = p.ZCard(ctx, s.db.key("dl"))
		ready = p.ZCard(ctx, s.db.key("ready"))
		leased = p.HLen(ctx, s.db.key("hl"))
		return nil
	})
	if err != nil && !errors.Is(err, goredis.Nil) {
		return queuecore.Counts{}, wrap("stats", err)
	}
	nq, _ := queued.Int()
	d := int(delayed.Val())
	return queuecore.Counts{Hosts: int(ready.Val() + leased.Val()), Queued: nq + d, Delayed: d}, nil
}

// Deduplicates implements sharedqueue.Queue: the crawl's seen hash drops a
// URL queued before.
func (q *Queue) Deduplicates() bool { return true }

// listenCheck is how long the listener's subscription may be quiet before
// it is pinged, so that a connection that died without a word is noticed
// and replaced.
const listenCheck = 30 * time.Second

// Listen runs the listener until ctx ends (the Queue or the DB closes): a
// subscription to the crawl's "added" channel whose every message, and
// every (re)subscription, wakes g. The client reopens a lost connection,
// and subscribes again, at the next receive, which comes after a pause that
// doubles from 100 ms to 5 s.
func (s *scriptQueue) Listen(ctx context.Context, g *idle.Gate) {
	log := s.core.Logger()
	ps := s.db.client.Subscribe(ctx, s.db.key("added"))
	stop := context.AfterFunc(ctx, func() { ps.Close() }) // ends a blocked receive
	defer func() {
		if stop() {
			ps.Close()
		}
	}()
	pause := idle.Backoff{Min: 100 * time.Millisecond, Max: 5 * time.Second}
	for {
		msg, err := ps.ReceiveTimeout(ctx, listenCheck)
		if ctx.Err() != nil {
			return
		}
		var nerr net.Error
		switch m := msg.(type) {
		case *goredis.Subscription:
			if m.Kind == "subscribe" {
				pause.Reset()
				g.Listening()
			}
		case *goredis.Message:
			g.Wake()
		}
		switch {
		case err == nil:
		case errors.As(err, &nerr) && nerr.Timeout():
			// Quiet: ask the server for a pong, which fails, and so
			// replaces the connection, if it is gone.
			if err := ps.Ping(ctx); err != nil && ctx.Err() == nil {
				log.Warn("redis queue: listener ping failed", "err", err)
			}
		default:
			log.Warn("redis queue: listener lost, polling until it is back", "err", err, "retry_in", pause.Current())
			if !pause.Wait(ctx) {
				return
			}
		}
	}
}
