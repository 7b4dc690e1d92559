package crawlkit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"github.com/crawlkit/crawlkit/fetch"
)

// Crawl state beyond the queue: with a DataDir, the politeness model's
// host clocks, Retry-After blocks and Crawl-delays are saved in the store
// every few seconds and when Run returns, and restored by the next Run,
// which also spaces every host from its own start (fetch.Politeness
// Restarted), so that a restart, clean or kill -9, sends no request sooner
// than the host allows. The trap detector's learning (counts, content
// groups, verdicts) is saved and restored the same way, so that a restart
// does not fetch its traps' pages again.

// politenessState and trapState name the store records of the politeness
// model and of the trap detector's learning.
const (
	politenessState = "politeness/v1"
	trapState       = "trap/v1"
)

// trapEvery is how often the trap detector's snapshot is saved while a
// Run goes on: it holds every host's counts, so it is larger than the
// politeness record.
const trapEvery = 10 * time.Second

// restoreTraps loads the trap detector's learning an earlier Run saved.
func (cr *Crawler) restoreTraps() error {
	b, ok, err := cr.db.State(trapState)
	if err != nil || !ok {
		return err
	}
	if err := cr.traps.Restore(bytes.NewReader(b)); err != nil {
		// Learning lost costs trap fetches, not pages: go on, and say so.
		cr.cfg.Logger.Warn("spider-trap state of the earlier run unreadable; starting it over", "err", err)
	}
	return nil
}

// saveTraps writes the trap detector's learning to the store.
func (cr *Crawler) saveTraps() error {
	var buf bytes.Buffer
	if err := cr.traps.Snapshot(&buf); err != nil {
		return err
	}
	if err := cr.db.PutState(trapState, buf.Bytes()); err != nil {
		return fmt.Errorf("crawlkit: saving spider-trap state: %w", err)
	}
	return nil
}

// stateEvery is how often the crawl state is saved while a Run goes on.
const stateEvery = 2 * time.Second

// restorePoliteness loads the politeness state an earlier Run saved.
func (cr *Crawler) restorePoliteness(p *fetch.Politeness, now time.Time) error {
	b, ok, err := cr.db.State(politenessState)
	if err != nil {
		return fmt.Errorf("crawlkit: reading politeness state: %w", err)
	}
	if !ok {
		if cr.totals != nil && cr.totals.base.Runs > 0 {
			p.Restarted(now) // a DataDir from before the state was kept
		}
		return nil
	}
	var hosts []fetch.HostState
	if err := json.Unmarshal(b, &hosts); err != nil {
		return fmt.Errorf("crawlkit: reading politeness state: %w", err)
	}
	p.Import(hosts, now)
	p.Restarted(now)
	cr.restoredBlocks = cr.restoredBlocks[:0]
	for _, h := range hosts {
		if h.BlockedUntil.After(now) {
			cr.restoredBlocks = append(cr.restoredBlocks, h)
		}
	}
	return nil
}

// saveState writes the politeness state to the store.
func (cr *Crawler) saveState() error {
	b, err := json.Marshal(cr.fetcher.Politeness().Export(cr.cfg.Now()))
	if err != nil {
		return err
	}
	if err := cr.db.PutState(politenessState, b); err != nil {
		return fmt.Errorf("crawlkit: saving politeness state: %w", err)
	}
	return nil
}
