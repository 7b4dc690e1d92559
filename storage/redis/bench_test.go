package redis

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/crawlkit/crawlkit/frontier"
)

// benchHosts spreads the benchmark URLs over enough hosts that a batch of
// leases (one per host) always finds ready hosts.
const benchHosts = 2000

func benchEntries(n int) []frontier.Entry {
	es := make([]frontier.Entry, n)
	for i := range es {
		h := fmt.Sprintf("h%d.test", i%benchHosts)
		es[i] = frontier.Entry{URL: fmt.Sprintf("http://%s/p%d", h, i), Host: h, Depth: 1}
	}
	return es
}

// benchQueue returns a queue on a fresh crawl holding n URLs, with no
// politeness delay so that a settled host is ready again at once.
func benchQueue(b *testing.B, n int) *Queue {
	b.Helper()
	db := openTestDB(b)
	q, err := db.Queue(QueueConfig{Politeness: frontier.FixedDelay(0), LeaseTTL: time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { q.Close() })
	if _, err := q.AddAt(context.Background(), time.Now(), benchEntries(n)...); err != nil {
		b.Fatal(err)
	}
	return q
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

// BenchmarkLease measures leases per second, each lease settled, one at a
// time and in batches, against the naive Redis Streams queue (XREADGROUP
// and XACK; no hosts, no politeness, no dedup) on the same server.
func BenchmarkLease(b *testing.B) {
	ctx := context.Background()
	for _, batch := range []int{1, 100} {
		b.Run(fmt.Sprintf("queue/batch=%d", batch), func(b *testing.B) {
			q := benchQueue(b, b.N+batch)
			b.ResetTimer()
			for done := 0; done < b.N; {
				done += leaseAndSettle(b, q, min(batch, b.N-done))
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "leases/s")
		})
		b.Run(fmt.Sprintf("naive-stream/batch=%d", batch), func(b *testing.B) {
			db := openTestDB(b)
			c, stream := db.client, db.key("naive")
			if err := c.XGroupCreateMkStream(ctx, stream, "g", "0").Err(); err != nil {
				b.Fatal(err)
			}
			es := benchEntries(b.N + batch)
			for i := 0; i < len(es); i += 1000 {
				if _, err := c.Pipelined(ctx, func(p goredis.Pipeliner) error {
					for _, e := range es[i:min(i+1000, len(es))] {
						p.XAdd(ctx, &goredis.XAddArgs{Stream: stream, Values: []string{"url", e.URL}})
					}
					return nil
				}); err != nil {
					b.Fatal(err)
				}
			}
			b.ResetTimer()
			for done := 0; done < b.N; {
				res, err := c.XReadGroup(ctx, &goredis.XReadGroupArgs{Group: "g", Consumer: "c", Streams: []string{stream, ">"},
					Count: int64(min(batch, b.N-done))}).Result()
				if err != nil || len(res) == 0 || len(res[0].Messages) == 0 {
					b.Fatalf("naive lease: %v", err)
				}
				ids := make([]string, len(res[0].Messages))
				for i, m := range res[0].Messages {
					ids[i] = m.ID
				}
				if err := c.XAck(ctx, stream, "g", ids...).Err(); err != nil {
					b.Fatal(err)
				}
				done += len(ids)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "leases/s")
		})
	}
}

// BenchmarkLeaseParallel is BenchmarkLease with 8 concurrent workers each
// leasing and settling one URL at a time, as a crawler's workers do.
func BenchmarkLeaseParallel(b *testing.B) {
	q := benchQueue(b, b.N+64)
	b.SetParallelism(4) // 4 × GOMAXPROCS(2) = 8 workers
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			leaseAndSettle(b, q, 1)
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "leases/s")
}

// BenchmarkAdd measures discovered-URL inserts per second (new URLs, each
// deduplicated on the server): through AddAt in batches (a page's links
// arrive together), and naively with a round trip per URL (SADD to a seen
// set, then XADD when new).
func BenchmarkAdd(b *testing.B) {
	ctx := context.Background()
	for _, batch := range []int{1, 100, 1000} {
		b.Run(fmt.Sprintf("queue/batch=%d", batch), func(b *testing.B) {
			q := benchQueue(b, 0)
			es := benchEntries(b.N)
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
		c := db.client
		es := benchEntries(b.N)
		b.ResetTimer()
		for i, e := range es {
			n, err := c.SAdd(ctx, db.key("naive-seen"), strconv.Itoa(i)).Result()
			if err != nil {
				b.Fatal(err)
			}
			if n == 1 {
				if err := c.XAdd(ctx, &goredis.XAddArgs{Stream: db.key("naive"), Values: []string{"url", e.URL}}).Err(); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "urls/s")
	})
}
