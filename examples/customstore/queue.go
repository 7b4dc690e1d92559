package customstore

import (
	"context"
	"fmt"
	"sync"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/frontier"
)

// DedupQueue is a crawlkit.Queue for one process: a frontier.Frontier (which
// does not deduplicate: crawlers put a seen set in front of it) plus the
// set of URLs it was ever given, so that a URL added twice is queued once,
// as Config.Queue requires. Its other methods are the Frontier's.
//
// The seen set must last as long as the frontier: a durable frontier
// forgets a URL when it finishes (its keys are deleted), so a seen set that
// a restart empties would queue finished URLs again when they are added
// again. DedupQueue therefore records every URL it queues in a store of its
// own, the seen store (a second FileStore, say), and reads them back when it
// is made. The seen store must not be the frontier's: a Frontier owns its
// Store's whole key space.
//
// It shows the shape of a Queue adapter; a Queue shared by processes keeps
// the set and the queue in a shared store instead (storage/postgres,
// storage/redis).
type DedupQueue struct {
	*frontier.Frontier
	store frontier.Store // the seen store; nil: the set is in memory only
	mu    sync.Mutex
	seen  map[string]bool
}

var _ crawlkit.Queue = (*DedupQueue)(nil)

// seenPage is how many URLs NewDedupQueue reads from the seen store at once.
const seenPage = 1024

// NewDedupQueue returns a DedupQueue over a new Frontier made with opts. Its
// seen set is kept in seen, one key per URL (with an empty value), and
// starts as the URLs already there. With seen nil the set is kept in memory
// only, which suits a frontier without a durable Store (opts.Store nil or a
// MemoryStore). Whoever opened seen closes it, after closing the queue.
func NewDedupQueue(opts frontier.Config, seen frontier.Store) (*DedupQueue, error) {
	q := &DedupQueue{store: seen, seen: map[string]bool{}}
	if seen != nil {
		var start []byte
		for {
			kvs, err := seen.Scan(context.Background(), start, nil, seenPage)
			if err != nil {
				return nil, fmt.Errorf("customstore: reading the seen store: %w", err)
			}
			for _, kv := range kvs {
				q.seen[string(kv.Key)] = true
			}
			if len(kvs) < seenPage {
				break
			}
			start = append(kvs[len(kvs)-1].Key, 0) // the next key after the last one
		}
	}
	f, err := frontier.New(opts)
	if err != nil {
		return nil, err
	}
	q.Frontier = f
	return q, nil
}

// Add queues the entries whose URLs were never added before. The lock makes
// the check and the Add one step, so concurrent Adds of one URL queue it
// once.
//
// The new URLs are queued first, all or none, and then recorded in the seen
// store, so that a crash between the two writes can make a URL be queued
// twice after a restart (it is then fetched twice), never lost. If only the
// recording fails, Add returns an error although the entries are queued.
// Deduplicates reports that Add drops URLs the queue holds or has
// finished, as crawlkit.Queue requires.
func (q *DedupQueue) Deduplicates() bool { return true }

func (q *DedupQueue) Add(entries ...frontier.Entry) error {
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
	muts := make([]frontier.Mutation, 0, len(batch))
	for u := range batch {
		q.seen[u] = true
		muts = append(muts, frontier.Mutation{Key: []byte(u)})
	}
	if q.store != nil && len(muts) > 0 {
		if err := q.store.Write(context.Background(), muts); err != nil {
			return fmt.Errorf("customstore: entries queued, but recording them as seen failed: %w", err)
		}
	}
	return nil
}
