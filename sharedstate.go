package crawlkit

import (
	"bytes"
	"context"
	"fmt"
	"time"
)

// StateStore keeps crawl state that the processes of a shared crawl
// share: today the spider-trap detector's learning, so that a trap one
// process found is a trap for all, and a process killed and started again
// does not fetch its traps' pages once more. Implementations: the
// PostgreSQL and Redis stores (storage/postgres DB.StateStore,
// storage/redis DB.StateStore); statetest checks one.
type StateStore interface {
	// UpdateState replaces the record name with what update returns for
	// its current value (nil when there is none), atomically with respect
	// to other processes' updates of it. update may be called more than
	// once (an optimistic store retries it on a conflict), so it must not
	// have effects beyond computing the new value.
	UpdateState(ctx context.Context, name string, update func(old []byte) ([]byte, error)) error
}

// sharedTrapState names the shared record of the trap detector's
// learning: a trap.Detector Snapshot that each process merges into its
// detector and writes back with its own learning merged in.
const sharedTrapState = "crawlkit/trap/v1"

// stateTimeout bounds one exchange with the StateStore.
const stateTimeout = 10 * time.Second

// shareTraps merges the shared trap record into the detector and writes
// the merged learning back.
func (cr *Crawler) shareTraps() error {
	ctx, cancel := context.WithTimeout(context.Background(), stateTimeout)
	defer cancel()
	var changes uint64
	err := cr.cfg.StateStore.UpdateState(ctx, sharedTrapState, func(old []byte) ([]byte, error) {
		if len(old) > 0 {
			if err := cr.traps.Merge(bytes.NewReader(old)); err != nil {
				// A record this version cannot read is replaced, not
				// kept: learning lost costs trap fetches, not pages.
				cr.cfg.Logger.Warn("shared spider-trap state unreadable; replacing it", "err", err)
			}
		}
		// Read after the merge and before the snapshot: a change after
		// it moves the counter, so maybeShareTraps shares it.
		changes = cr.traps.Changes()
		var buf bytes.Buffer
		if err := cr.traps.Snapshot(&buf); err != nil {
			return nil, err
		}
		return buf.Bytes(), nil
	})
	if err != nil {
		return fmt.Errorf("crawlkit: sharing spider-trap state: %w", err)
	}
	cr.sharedChanges.Store(changes)
	return nil
}

// trapShareMin is the least time between two shares of changed trap
// learning: a kill loses what the process learned since its last share,
// paid in trap fetches by the others.
const trapShareMin = 250 * time.Millisecond

// maybeShareTraps asks for a share when the trap learning changed since
// the last one and trapShareMin has passed; the monitor's tick asks every
// second regardless, to take in the other processes' learning.
func (cr *Crawler) maybeShareTraps(now time.Time) {
	if cr.sharePoke == nil || now.Before(cr.nextTrapShare) || cr.traps.Changes() == cr.sharedChanges.Load() {
		return
	}
	cr.nextTrapShare = now.Add(trapShareMin)
	select {
	case cr.sharePoke <- struct{}{}:
	default:
	}
}

// startSharing shares the trap state on a goroutine of its own, each time
// saveCrawlState asks, until ctx ends, so that a StateStore that stalls (up
// to stateTimeout an exchange) delays neither the stats samples nor the
// noticing of the crawl's end. The returned function waits for it to stop.
func (cr *Crawler) startSharing(ctx context.Context) (wait func()) {
	if cr.cfg.StateStore == nil {
		return func() {}
	}
	cr.sharePoke = make(chan struct{}, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-ctx.Done():
				return
			case <-cr.sharePoke:
				if err := cr.shareTraps(); err != nil {
					cr.cfg.Logger.Warn("sharing the spider-trap state", "err", err)
				}
			}
		}
	}()
	return func() { <-done }
}
