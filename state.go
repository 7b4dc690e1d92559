package crawlkit

import (
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
// than the host allows.

// politenessState names the store record of the politeness model.
const politenessState = "politeness/v1"

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
