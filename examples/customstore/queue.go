package customstore

import (
	"sync"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/frontier"
)

// DedupQueue is a crawlkit.Queue for one process: a frontier.Frontier (which
// does not deduplicate: crawlers put a seen set in front of it) plus the
// set of URLs it was ever given, so that a URL added twice is queued once,
// as Config.Queue requires. Its other methods are the Frontier's.
//
// It shows the shape of a Queue adapter; a Queue shared by processes keeps
// the set and the queue in a shared store instead (storage/postgres,
// storage/redis).
type DedupQueue struct {
	*frontier.Frontier
	mu   sync.Mutex
	seen map[string]bool
}

var _ crawlkit.Queue = (*DedupQueue)(nil)

// NewDedupQueue returns a DedupQueue over a new Frontier made with opts.
func NewDedupQueue(opts frontier.Options) (*DedupQueue, error) {
	f, err := frontier.New(opts)
	if err != nil {
		return nil, err
	}
	return &DedupQueue{Frontier: f, seen: map[string]bool{}}, nil
}

// Add queues the entries whose URLs were never added before: all of them or,
// on error, none. The lock makes the check and the Add one step, so
// concurrent Adds of one URL queue it once.
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
	for u := range batch {
		q.seen[u] = true
	}
	return nil
}
