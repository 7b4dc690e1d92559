package crawlkit

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// A crawl on a DataDir runs over several Runs; its totals (what all the
// Runs fetched) are kept in a small file beside the store, so that a Run
// that finds the crawl finished can still say what the crawl did.

// totalsFile is the file in the DataDir holding the crawl's totals.
const totalsFile = "crawl-totals.json"

// Totals sums the Runs of a crawl on one DataDir, this one included. They
// are saved every few seconds and when Run returns, so a crash forgets at
// most the last seconds' counts.
type Totals struct {
	Runs       int              `json:"runs"`
	Discovered int64            `json:"discovered"`
	Fetched    int64            `json:"fetched"`
	Successful int64            `json:"successful"`
	Failed     int64            `json:"failed"`
	Bytes      int64            `json:"bytes"`
	NotFetched map[Reason]int64 `json:"not_fetched,omitempty"`
	// First is when the crawl's first Run began; Updated when these
	// totals were last saved.
	First   time.Time `json:"first"`
	Updated time.Time `json:"updated"`
}

// totals keeps the earlier Runs' sums and adds this Run's.
type totals struct {
	mu   sync.Mutex
	path string
	base Totals // the earlier Runs
}

// loadTotals reads the DataDir's totals file; a missing one starts a new
// crawl.
func loadTotals(dir string, now time.Time) (*totals, error) {
	t := &totals{path: filepath.Join(dir, totalsFile)}
	b, err := os.ReadFile(t.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		t.base.First = now
	case err != nil:
		return nil, fmt.Errorf("crawlkit: reading %s: %w", t.path, err)
	default:
		if err := json.Unmarshal(b, &t.base); err != nil {
			return nil, fmt.Errorf("crawlkit: reading %s: %w (delete the file to start the totals over)", t.path, err)
		}
	}
	return t, nil
}

// with returns the totals with this Run's stats s added.
func (t *totals) with(s Stats, now time.Time) Totals {
	t.mu.Lock()
	defer t.mu.Unlock()
	r := t.base
	r.Runs++
	r.Discovered += s.URLs.Discovered
	r.Fetched += s.URLs.Fetched
	r.Successful += s.URLs.Successful
	r.Failed += s.URLs.Failed
	r.Bytes += s.Bytes
	r.NotFetched = map[Reason]int64{}
	for k, v := range t.base.NotFetched {
		r.NotFetched[k] += v
	}
	for k, v := range s.URLs.NotFetched {
		r.NotFetched[k] += v
	}
	r.Updated = now
	return r
}

// save writes the totals with this Run's stats s, atomically.
func (t *totals) save(s Stats, now time.Time) error {
	b, err := json.MarshalIndent(t.with(s, now), "", "  ")
	if err != nil {
		return err
	}
	tmp := t.path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return fmt.Errorf("crawlkit: saving totals: %w", err)
	}
	if err := os.Rename(tmp, t.path); err != nil {
		return fmt.Errorf("crawlkit: saving totals: %w", err)
	}
	return nil
}
