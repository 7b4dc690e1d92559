package queuetest_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/frontier"
	"github.com/crawlkit/crawlkit/internal/kitrun"
	"github.com/crawlkit/crawlkit/queuetest"
)

// dedupQueue makes a *frontier.Frontier a crawlkit.Queue fit for Config.Queue:
// the frontier does not deduplicate (a seen set goes in front of it), and a
// Queue must drop URLs it already holds or finished.
type dedupQueue struct {
	*frontier.Frontier
	mu   sync.Mutex
	seen map[string]bool
}

func newDedupQueue(opts frontier.Config) (*dedupQueue, error) {
	f, err := frontier.New(opts)
	if err != nil {
		return nil, err
	}
	return &dedupQueue{Frontier: f, seen: map[string]bool{}}, nil
}

// Add queues the entries whose URLs it has not queued before. The lock
// makes the check and the Add one step.
// Deduplicates reports that Add drops URLs the queue holds or has
// finished, as crawlkit.Queue requires.
func (q *dedupQueue) Deduplicates() bool { return true }

func (q *dedupQueue) Add(entries ...frontier.Entry) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	fresh := make([]frontier.Entry, 0, len(entries))
	batch := map[string]bool{}
	for _, e := range entries {
		if !q.seen[e.URL] && !batch[e.URL] {
			batch[e.URL] = true
			fresh = append(fresh, e)
		}
	}
	if err := q.Frontier.Add(fresh...); err != nil {
		return err
	}
	for u := range batch {
		q.seen[u] = true
	}
	return nil
}

var _ crawlkit.Queue = (*dedupQueue)(nil)

// TestFrontierConformance runs the kit on the local frontier behind a
// dedup map: one process, so every handle is the same queue.
func TestFrontierConformance(t *testing.T) {
	queuetest.Run(t, frontierOpener())
}

// frontierOpener opens a dedupQueue per dir, configured by the kit.
func frontierOpener() queuetest.Opener {
	return queuetest.InProcess(func(t *testing.T, cfg queuetest.Config) crawlkit.Queue {
		q, err := newDedupQueue(frontier.Config{
			Now:         cfg.Now,
			Politeness:  cfg.Politeness,
			LeaseTTL:    cfg.LeaseTTL,
			MaxAttempts: cfg.MaxAttempts,
			RetryBase:   cfg.RetryBase,
			RetryMax:    cfg.RetryMax,
			Schedule:    cfg.Schedule,
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { q.Close() })
		return q
	})
}

// The kit run against the local frontier behind a dedup map, one queue per
// dir (queuetest.InProcess). A shared queue's own tests do the same with
// an Opener that opens a handle on the crawl named by dir:
//
//	func TestQueueConformance(t *testing.T) { queuetest.Run(t, open) }
func ExampleRun() {
	passed := kitrun.Run("ExampleRun", func(t *testing.T) { queuetest.Run(t, frontierOpener()) })
	fmt.Println("the local frontier passes:", passed)
	// Output:
	// the local frontier passes: true
}

func Example() {
	// A queue over the local frontier that drops URLs it has seen.
	q, err := newDedupQueue(frontier.Config{Politeness: frontier.FixedDelay(time.Second)})
	if err != nil {
		panic(err)
	}
	defer q.Close()
	e := frontier.Entry{URL: "http://example.test/", Host: "example.test"}
	q.Add(e, e)
	q.Add(e)
	now := time.Now()
	l, _, _ := q.NextAt(now)
	fmt.Println("leased:", l.URL)
	q.Done(l, frontier.Success(0))
	_, at, _ := q.NextAt(now.Add(time.Hour))
	fmt.Println("drained:", at.IsZero())
	// Output:
	// leased: http://example.test/
	// drained: true
}
