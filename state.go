package crawlkit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"github.com/cespare/xxhash/v2"

	"github.com/crawlkit/crawlkit/fetch"
)

// Crawl state beyond the queue: with a DataDir, the politeness model's
// host clocks, Retry-After blocks and Crawl-delays are saved in the store
// every second and when Run returns (trap learning up to four times a
// second), and restored by the next Run,
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

// saveTraps writes the trap detector's learning to the store, unless it
// has not changed since the last save (trap.Detector.Changes): a Snapshot
// encodes every host, four times a second.
func (cr *Crawler) saveTraps() error {
	changes := cr.traps.Changes()
	if cr.trapSaved.Load() && changes == cr.trapChanges.Load() {
		return nil
	}
	var buf bytes.Buffer
	if err := cr.traps.Snapshot(&buf); err != nil {
		return err
	}
	if err := cr.putState(trapState, buf.Bytes()); err != nil {
		return err
	}
	cr.trapChanges.Store(changes)
	cr.trapSaved.Store(true)
	return nil
}

// putState writes a state record unless it holds what was last written,
// so that an idle crawl does not rewrite it every second.
func (cr *Crawler) putState(name string, b []byte) error {
	sum := xxhash.Sum64(b)
	cr.stateMu.Lock()
	defer cr.stateMu.Unlock()
	if cr.stateSums[name] == sum && sum != 0 {
		return nil
	}
	if err := cr.db.PutState(name, b); err != nil {
		return fmt.Errorf("crawlkit: saving %s: %w", name, err)
	}
	if cr.stateSums == nil {
		cr.stateSums = map[string]uint64{}
	}
	cr.stateSums[name] = sum
	return nil
}

// stateEvery is how often the politeness state is saved while a Run goes
// on (the monitor's tick, which also samples the stats); a Retry-After
// block is saved when it is set, and a restart spaces every host from its
// start, so nothing the host asked for is lost between saves.
const stateEvery = time.Second

// saveCrawlState saves the politeness and trap state, and asks for the trap
// state to be shared through the StateStore (startSharing); errors are logged, as a missed save costs
// only what a crash before the next one would forget.
func (cr *Crawler) saveCrawlState() {
	if cr.sharePoke != nil {
		select {
		case cr.sharePoke <- struct{}{}:
		default: // a share is under way or asked for already
		}
	}
	if cr.db == nil {
		return
	}
	if err := cr.saveState(); err != nil {
		cr.cfg.Logger.Warn("saving the crawl state", "err", err)
	}
}

// Trap learning is saved more often than the rest: what a kill -9 loses
// of it is paid in trap fetches after the restart, so it is saved every
// trapSaveMin when it changed, or as often as keeps the snapshot's cost
// (encoding every host) under 1/trapSaveCost of the time.
const (
	trapSaveMin  = 250 * time.Millisecond
	trapSaveCost = 20
)

// maybeSaveTraps saves the trap detector's learning to the DataDir when
// its interval has passed.
func (cr *Crawler) maybeSaveTraps(now time.Time) {
	if cr.db == nil || now.Before(cr.nextTrapSave) {
		return
	}
	start := time.Now()
	if err := cr.saveTraps(); err != nil {
		cr.cfg.Logger.Warn("saving the spider-trap state", "err", err)
	}
	cr.nextTrapSave = now.Add(max(trapSaveMin, trapSaveCost*time.Since(start)))
}

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
		// Written before the first request, so that a process killed
		// before its first periodic save still leaves a record, and the
		// next Run knows it restarts.
		return cr.putPoliteness(p, now)
	}
	var hosts []fetch.HostState
	if err := json.Unmarshal(b, &hosts); err != nil {
		// The queue and the rest of the state are intact: go on with
		// nothing imported, every host spaced from this start by
		// Restarted as after a crash, and say what was lost (a
		// Retry-After block of the earlier run may be among it). The
		// next periodic save replaces the record.
		cr.cfg.Logger.Warn("politeness state of the earlier run unreadable; every host waits its delay from this start",
			"err", err)
		hosts = nil
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
	return cr.putPoliteness(cr.fetcher.Politeness(), cr.cfg.Now())
}

// putPoliteness writes p's state to the store.
func (cr *Crawler) putPoliteness(p *fetch.Politeness, now time.Time) error {
	b, err := json.Marshal(p.Export(now))
	if err != nil {
		return err
	}
	return cr.putState(politenessState, b)
}
