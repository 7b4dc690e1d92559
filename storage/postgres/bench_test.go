package postgres

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/crawlkit/crawlkit/frontier"
)

// benchHosts spreads the benchmark URLs over enough hosts that a batch of
// leases (one per host) always finds ready hosts.
const benchHosts = 2000

func benchEntries(n, offset int) []frontier.Entry {
	es := make([]frontier.Entry, n)
	for i := range es {
		k := offset + i
		h := fmt.Sprintf("h%d.test", k%benchHosts)
		es[i] = frontier.Entry{URL: fmt.Sprintf("http://%s/p%d", h, k), Host: h, Depth: 1}
	}
	return es
}

// benchQueue returns a queue on a fresh schema holding n URLs, with no
// politeness delay so that a settled host is ready again at once.
func benchQueue(b *testing.B, n int, async bool) *Queue {
	b.Helper()
	db := openTestDB(b)
	if async {
		// Reopen the schema with asynchronous commits.
		adb, err := Open(context.Background(), testURL(), Config{Schema: db.Schema(), MaxConns: 8, AsyncCommit: true})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(adb.Close)
		db = adb
	}
	q, err := db.Queue(QueueConfig{Politeness: frontier.FixedDelay(0), LeaseTTL: time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { q.Close() })
	if _, err := q.AddAt(context.Background(), time.Now(), benchEntries(n, 0)...); err != nil {
		b.Fatal(err)
	}
	return q
}

// BenchmarkLease measures leases per second, each lease settled, one at a
// time and in batches, against the naive SKIP LOCKED queue (no hosts, no
// politeness) in the same database.
func BenchmarkLease(b *testing.B) {
	ctx := context.Background()
	for _, batch := range []int{1, 100} {
		for _, async := range []bool{false, true} {
			name := fmt.Sprintf("queue/batch=%d", batch)
			if async {
				name += "/async"
			}
			b.Run(name, func(b *testing.B) {
				q := benchQueue(b, b.N+batch, async)
				b.ResetTimer()
				for done := 0; done < b.N; {
					done += leaseAndSettle(b, q, min(batch, b.N-done))
				}
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "leases/s")
			})
		}
		b.Run(fmt.Sprintf("naive/batch=%d", batch), func(b *testing.B) {
			db := openTestDB(b)
			if _, err := db.Pool().Exec(ctx, `CREATE TABLE naive (url_hash bigint PRIMARY KEY, url text NOT NULL, state smallint NOT NULL);
				CREATE INDEX naive_queued ON naive (url_hash) WHERE state = 0`); err != nil {
				b.Fatal(err)
			}
			if _, err := db.Pool().Exec(ctx, `INSERT INTO naive SELECT g, 'http://h' || (g % 2000) || '.test/p' || g, 0
				FROM generate_series(1, $1::bigint) g`, b.N+batch); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for done := 0; done < b.N; {
				rows, err := db.Pool().Query(ctx, `UPDATE naive SET state = 1 WHERE url_hash IN (
					SELECT url_hash FROM naive WHERE state = 0 LIMIT $1 FOR UPDATE SKIP LOCKED) RETURNING url_hash`, min(batch, b.N-done))
				if err != nil {
					b.Fatal(err)
				}
				ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
				if err != nil || len(ids) == 0 {
					b.Fatalf("naive lease: %d, %v", len(ids), err)
				}
				if _, err := db.Pool().Exec(ctx, "UPDATE naive SET state = 2 WHERE url_hash = ANY ($1)", ids); err != nil {
					b.Fatal(err)
				}
				done += len(ids)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "leases/s")
		})
	}
}

// BenchmarkLeaseParallel is BenchmarkLease with 8 concurrent workers each
// leasing and settling one URL at a time, as a crawler's workers do: their
// commits share write-ahead log flushes.
func BenchmarkLeaseParallel(b *testing.B) {
	q := benchQueue(b, b.N+64, false)
	b.SetParallelism(4) // 4 × GOMAXPROCS(2) = 8 workers
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			leaseAndSettle(b, q, 1)
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "leases/s")
}

// leaseAndSettle leases up to n URLs and settles them as successes.
func leaseAndSettle(b *testing.B, q *Queue, n int) int {
	ctx := context.Background()
	now := time.Now()
	ls, _, err := q.LeaseAt(ctx, now, n)
	if err != nil || len(ls) == 0 {
		b.Fatalf("lease: %d leases, %v", len(ls), err)
	}
	s := make([]Settlement, len(ls))
	for i, l := range ls {
		s[i] = Settlement{Lease: l, Outcome: frontier.Success(0)}
	}
	if err := q.DoneBatchAt(ctx, now, s); err != nil {
		b.Fatal(err)
	}
	for _, st := range s {
		if st.Err != nil {
			b.Fatal(st.Err)
		}
	}
	return len(ls)
}

// BenchmarkAdd measures discovered-URL inserts per second (new URLs, each
// deduplicated by the database): through AddAt in batches (a page's links
// arrive together), and naively with one INSERT ... ON CONFLICT DO NOTHING
// statement per URL.
func BenchmarkAdd(b *testing.B) {
	ctx := context.Background()
	for _, batch := range []int{1, 100, 1000} {
		b.Run(fmt.Sprintf("queue/batch=%d", batch), func(b *testing.B) {
			q := benchQueue(b, 0, false)
			es := benchEntries(b.N, 0)
			b.ResetTimer()
			for i := 0; i < len(es); i += batch {
				if _, err := q.AddAt(ctx, time.Now(), es[i:min(i+batch, len(es))]...); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "urls/s")
		})
	}
	b.Run("naive/batch=1", func(b *testing.B) {
		db := openTestDB(b)
		if _, err := db.Pool().Exec(ctx, "CREATE TABLE naive (url_hash bigint PRIMARY KEY, url text NOT NULL, host text NOT NULL, state smallint NOT NULL)"); err != nil {
			b.Fatal(err)
		}
		es := benchEntries(b.N, 0)
		b.ResetTimer()
		for i, e := range es {
			if _, err := db.Pool().Exec(ctx, "INSERT INTO naive VALUES ($1, $2, $3, 0) ON CONFLICT DO NOTHING", int64(i), e.URL, e.Host); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "urls/s")
	})
}
