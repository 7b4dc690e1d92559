// Package datadir stores a Crawler's state on disk, in Pebble
// (storage/pebble), for Config.DataDir. Importing it registers it:
//
//	import _ "github.com/crawlkit/crawlkit/storage/datadir"
//
// The root package does not import it, so that a crawler that keeps its
// state in memory does not link Pebble.
package datadir

import (
	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/frontier"
	"github.com/crawlkit/crawlkit/robots"
	"github.com/crawlkit/crawlkit/simhash"
	"github.com/crawlkit/crawlkit/storage/pebble"
)

func init() { crawlkit.RegisterDataDir(Open) }

// Open opens (creating if needed) the Pebble store in dir as a crawl's
// DataStore. The Crawler calls it for Config.DataDir.
func Open(dir string, opts crawlkit.DataDirConfig) (crawlkit.DataStore, error) {
	db, err := pebble.Open(dir, pebble.Config{CacheBytes: opts.CacheBytes, Logger: opts.Logger})
	if err != nil {
		return nil, err
	}
	return store{db}, nil
}

type store struct{ db *pebble.DB }

func (s store) Frontier() frontier.Store                { return s.db.Frontier() }
func (s store) Robots() robots.Store                    { return s.db.RobotsStore() }
func (s store) Fingerprints() simhash.TableStore        { return s.db.FingerprintTables() }
func (s store) Seen() crawlkit.SeenStore                { return s.db.SeenStore() }
func (s store) Names() crawlkit.NameStore               { return s.db.NameStore() }
func (s store) State(name string) ([]byte, bool, error) { return s.db.State(name) }
func (s store) PutState(name string, v []byte) error    { return s.db.PutState(name, v) }
func (s store) Close() error                            { return s.db.Close() }

func (s store) LegacyFingerprints(fn func(simhash.Entry) error) error {
	return s.db.FingerprintStore().ForEach(fn)
}
