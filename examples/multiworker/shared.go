package main

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/fetch"
	"github.com/crawlkit/crawlkit/robots"
	"github.com/crawlkit/crawlkit/simhash"
	"github.com/crawlkit/crawlkit/storage/postgres"
	"github.com/crawlkit/crawlkit/storage/redis"
)

// shared is what the processes of one crawl share: the queue and the
// component stores, in PostgreSQL or in Redis.
type shared struct {
	queue        crawlkit.Queue
	robots       robots.Store
	fingerprints simhash.Store
	state        crawlkit.StateStore
	close        func() error
}

func openPostgres(ctx context.Context, url, schema string, workers int, polite *fetch.Politeness, leaseTTL time.Duration, log *slog.Logger) (shared, error) {
	db, err := postgres.Open(ctx, url, postgres.Config{Schema: schema, MaxConns: int32(workers + 2)})
	if err != nil {
		return shared{}, err
	}
	q, err := db.Queue(postgres.QueueConfig{Politeness: polite, LeaseTTL: leaseTTL, PollInterval: 50 * time.Millisecond, Logger: log})
	if err != nil {
		db.Close()
		return shared{}, err
	}
	return shared{queue: q, robots: db.RobotsStore(), fingerprints: db.FingerprintStore(), state: db.StateStore(),
		close: func() error { err := q.Close(); db.Close(); return err }}, nil
}

func openRedis(ctx context.Context, addr, crawl string, workers int, polite *fetch.Politeness, leaseTTL time.Duration, log *slog.Logger) (shared, error) {
	db, err := redis.Open(ctx, redis.Config{Addr: addr, Crawl: crawl, PoolSize: workers + 2, Logger: log})
	if err != nil {
		return shared{}, err
	}
	q, err := db.Queue(redis.QueueConfig{Politeness: polite, LeaseTTL: leaseTTL, PollInterval: 50 * time.Millisecond, Logger: log})
	if err != nil {
		db.Close()
		return shared{}, err
	}
	return shared{queue: q, robots: db.RobotsStore(), fingerprints: db.FingerprintStore(), state: db.StateStore(),
		close: func() error { return errors.Join(q.Close(), db.Close()) }}, nil
}
