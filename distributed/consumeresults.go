package distributed

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// ResultsConfig configures ConsumeResults.
type ResultsConfig struct {
	// Durable names the consumer (default "jsonl"): a consumer started
	// again with the same name goes on where the last one stopped.
	Durable string
	// Replicas and DuplicateWindow configure the results stream if the
	// consumer creates it (before any node): as the nodes' Config (0:
	// DefaultReplicas of the servers it sees).
	Replicas        int
	DuplicateWindow time.Duration
	// UntilDone makes ConsumeResults return once the crawl is finished
	// (nothing pending in any partition) and every Result is written.
	UntilDone bool
	// Batch is how many Results one write gets at most (default 256).
	Batch int
}

// ConsumeResults reads the crawl's results stream (Config.Results) and
// hands the encoded Results to write, a batch at a time; it acknowledges a
// batch's messages only after write returned nil. A message is delivered
// again if the consumer dies before its ack, so write must drop IDs it has
// written: ResultsWriter.Write does, which makes the pair exactly-once. It
// returns when ctx ends (nil), when write fails, or with UntilDone when
// the crawl is finished.
func ConsumeResults(ctx context.Context, js jetstream.JetStream, crawlID string, opts ResultsConfig, write func(lines [][]byte) error) error {
	if !namePattern.MatchString(crawlID) {
		return fmt.Errorf("%w: crawl id %q", ErrConfig, crawlID)
	}
	if opts.Durable == "" {
		opts.Durable = "jsonl"
	}
	if opts.Replicas == 0 {
		opts.Replicas = DefaultReplicas(len(js.Conn().Servers()))
	}
	if opts.DuplicateWindow == 0 {
		opts.DuplicateWindow = DefaultDuplicateWindow
	}
	if opts.Batch <= 0 {
		opts.Batch = 256
	}
	nm := namesFor(crawlID)
	var cons jetstream.Consumer
	err := retry(ctx, "results consumer", nil, func(ctx context.Context) error {
		s, err := ensureResultsStream(ctx, js, nm, opts.Replicas, opts.DuplicateWindow)
		if err != nil {
			return err
		}
		cons, err = s.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{
			Durable:       opts.Durable,
			AckPolicy:     jetstream.AckExplicitPolicy,
			AckWait:       30 * time.Second,
			MaxAckPending: 4 * opts.Batch,
			DeliverPolicy: jetstream.DeliverAllPolicy,
		})
		return err
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	for ctx.Err() == nil {
		batch, err := cons.Fetch(opts.Batch, jetstream.FetchMaxWait(time.Second))
		if err != nil {
			wait(ctx, 250*time.Millisecond)
			continue
		}
		var msgs []jetstream.Msg
		var lines [][]byte
		for m := range batch.Messages() {
			msgs = append(msgs, m)
			lines = append(lines, m.Data())
		}
		if len(msgs) == 0 {
			if opts.UntilDone && resultsDone(ctx, js, nm, cons) {
				return nil
			}
			continue
		}
		if err := write(lines); err != nil {
			return err
		}
		for _, m := range msgs {
			// A lost ack is a redelivery, which write drops.
			_ = m.Ack()
		}
	}
	return nil
}

// resultsDone reports whether the crawl is finished and the results
// consumer has nothing left: the URL stream's partition consumers are
// settled (partitionsSettled; a node publishes a page's Result before
// acknowledging its URL), and the results consumer has nothing pending or
// unacknowledged either. The partition consumers are named from the
// stream's assignment, not listed with their state.
func resultsDone(ctx context.Context, js jetstream.JetStream, nm names, results jetstream.Consumer) bool {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	s, err := js.Stream(ctx, nm.stream)
	if err != nil || s.CachedInfo().State.Msgs == 0 {
		return false // no crawl yet
	}
	lister := s.ConsumerNames(ctx)
	var parts []string
	for name := range lister.Name() {
		if _, ok := partitionOfConsumer(name); ok {
			parts = append(parts, name) // not a replay's ordered consumer
		}
	}
	if lister.Err() != nil || len(parts) == 0 {
		return false
	}
	done, _, _, err := partitionsSettled(ctx, s, len(parts), func(ctx context.Context, i int) (*jetstream.ConsumerInfo, error) {
		c, err := s.Consumer(ctx, parts[i])
		if err != nil {
			return nil, err
		}
		return c.CachedInfo(), nil
	})
	if !done || err != nil {
		return false
	}
	ri, err := results.Info(ctx)
	return err == nil && ri.NumPending == 0 && ri.NumAckPending == 0
}

// wait sleeps for d or until ctx ends.
func wait(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
