package postgres

import (
	"testing"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/queuetest"
)

func TestQueueConformance(t *testing.T) {
	requireServer(t)
	queuetest.Run(t, func(t *testing.T, cfg queuetest.Config) queuetest.Open {
		db := openTestDB(t)
		return func() crawlkit.Queue {
			q, err := db.Queue(QueueOptions{
				Now:          cfg.Now,
				Politeness:   cfg.Politeness,
				LeaseTTL:     cfg.LeaseTTL,
				MaxAttempts:  cfg.MaxAttempts,
				RetryBase:    cfg.RetryBase,
				RetryMax:     cfg.RetryMax,
				Schedule:     cfg.Schedule,
				PollInterval: 5e6,
			})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { q.Close() })
			return q
		}
	})
}
