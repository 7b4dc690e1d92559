package distributed

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/urlnorm"
)

// Results: every page a node handles is published, as a Result, to the
// crawl's results stream, so that one consumer (ConsumeResults, the
// crawlresults command) can write the whole crawl's output in one place.
//
// A page's Result is published by Queue.Done, before the URL's message is
// acknowledged, and only for a final outcome (finished, failed, given up):
// a page fetched again after a retry replaces its record rather than adding
// one. If the node dies between the publish and the ack, the URL is
// fetched again by the partition's next owner and published again under
// the same ID (the URL's key): the stream's duplicate window drops the
// repeat when it comes soon, and the consumer's writer drops it by ID
// whenever it comes. A publish that fails hands the URL's message back, so
// that a page is never acknowledged without its Result stored.

// Result is one handled page, as published to the results stream and
// written by ResultsWriter: crawlkit's PageRecord (a JSONLSink's line) with
// the page's ID and the node that fetched it.
type Result struct {
	// ID is the URL's urlnorm.Key in hex (for a recrawl, msgKey of the
	// key and Gen): the same for every fetch of the URL's generation, so
	// that a page published twice (a node killed after publishing and
	// before acknowledging) is recognised.
	ID   string `json:"id"`
	Node string `json:"node"`
	// Gen is the recrawl generation of the fetch (0: the URL's first);
	// a recrawl's ID is the key of the URL and its generation.
	Gen uint32 `json:"gen,omitempty"`
	crawlkit.PageRecord
}

// resultsStream names a crawl's results stream; resultsSubject is its one
// subject.
func (n names) resultsStream() string  { return "RESULTS_" + n.crawl }
func (n names) resultsSubject() string { return "crawl." + n.crawl + ".results" }

// ensureResultsStream creates the crawl's results stream, or returns it if
// it exists. Nodes and the results consumer both call it, in either order.
func ensureResultsStream(ctx context.Context, js jetstream.JetStream, nm names, replicas int, dup time.Duration) (jetstream.Stream, error) {
	s, err := js.Stream(ctx, nm.resultsStream())
	if !errors.Is(err, jetstream.ErrStreamNotFound) {
		return s, err
	}
	return js.CreateStream(ctx, jetstream.StreamConfig{
		Name:        nm.resultsStream(),
		Description: "crawlkit page results of crawl " + nm.crawl,
		Subjects:    []string{nm.resultsSubject()},
		Retention:   jetstream.LimitsPolicy,
		Storage:     jetstream.FileStorage,
		Replicas:    replicas,
		Duplicates:  dup,
	})
}

// resultStash holds the Result of each page the node's Crawler handed to
// its Sink, until Queue.Done publishes it (a final outcome) or drops it (a
// retry). It is the node's Sink, in front of the user's own.
type resultStash struct {
	node string
	user crawlkit.Sink // the Crawler's own Sink, if any

	mu      sync.Mutex
	pending map[string][]byte // lease URL -> encoded Result
}

func newResultStash(node string, user crawlkit.Sink) *resultStash {
	return &resultStash{node: node, user: user, pending: map[string][]byte{}}
}

var _ crawlkit.Sink = (*resultStash)(nil)

// Write records p's Result for Done, then hands p to the user's Sink.
func (s *resultStash) Write(ctx context.Context, p *crawlkit.Page) error {
	r := Result{ID: msgID(urlnorm.Key(p.URL)), Node: s.node, PageRecord: *crawlkit.JSONLConfig{}.Record(p)}
	b, err := json.Marshal(r)
	if err == nil {
		s.mu.Lock()
		s.pending[p.URL] = b
		s.mu.Unlock()
	}
	if s.user != nil {
		return errors.Join(err, s.user.Write(ctx, p))
	}
	return err
}

// Close closes the user's Sink.
func (s *resultStash) Close() error {
	if s.user != nil {
		return s.user.Close()
	}
	return nil
}

// take removes and returns url's stashed Result (nil if none).
func (s *resultStash) take(url string) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.pending[url]
	delete(s.pending, url)
	return b
}

// publishResult publishes the stashed Result of url's fetch of recrawl
// generation gen, if the page has one, and reports whether it is stored (or
// there was none): Done acknowledges the URL's message only then. A recrawl
// (gen > 0) is a record of its own, with the generation's key as its ID.
func (q *Queue) publishResult(url string, gen uint32, b []byte) error {
	if b == nil {
		return nil
	}
	id := msgID(msgKey(urlnorm.Key(url), gen))
	if gen > 0 {
		var r Result
		if err := json.Unmarshal(b, &r); err != nil {
			return err
		}
		r.ID, r.Gen = id, gen
		var err error
		if b, err = json.Marshal(r); err != nil {
			return err
		}
	}
	m := nats.NewMsg(q.names.resultsSubject())
	m.Header.Set(jetstream.MsgIDHeader, id)
	m.Data = b
	return q.publishAll([]*nats.Msg{m})
}
