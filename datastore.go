package crawlkit

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/crawlkit/crawlkit/frontier"
	"github.com/crawlkit/crawlkit/robots"
	"github.com/crawlkit/crawlkit/simhash"
)

// DataStore is a crawl's state on disk, as Config.DataDir opens it: the
// frontier, the seen URLs, the robots.txt files, the near-duplicate
// tables, the names of indexed pages and the crawl state records
// (politeness clocks, Retry-After blocks, trap verdicts). Package storage/datadir
// provides the one on Pebble; the root package does not link it, so that an
// in-memory crawler stays light.
type DataStore interface {
	Frontier() frontier.Store
	Robots() robots.Store
	// Fingerprints holds the near-duplicate index's tables; Legacy
	// yields the fingerprints an older data directory kept in a flat
	// store (none for a new one), imported once into the tables.
	Fingerprints() simhash.TableStore
	LegacyFingerprints(fn func(simhash.Entry) error) error
	Seen() SeenStore
	Names() NameStore
	// State and PutState read and write a named crawl state record.
	State(name string) (value []byte, ok bool, err error)
	PutState(name string, value []byte) error
	Close() error
}

// SeenStore keeps the keys of the URLs a crawl has queued. AddBatch is
// durable when it returns; AddLazy may lose its keys in a crash (a URL
// then is fetched again, never lost).
type SeenStore interface {
	Contains(key uint64) (bool, error)
	AddBatch(keys []uint64) error
	AddLazy(keys []uint64) error
	ForEach(fn func(key uint64) error) error
}

// NameStore maps the id of an indexed page to its URL, so that a
// near-duplicate can name its original.
type NameStore interface {
	Put(id uint64, name string) error
	Get(id uint64) (name string, ok bool, err error)
}

// DataDirConfig is what Config passes to the DataStore opener.
type DataDirConfig struct {
	// CacheBytes is Config.DataDirCacheBytes (0: the store's default).
	CacheBytes int64
	Logger     *slog.Logger
}

// DataDirOpener opens (creating if needed) the DataStore in dir.
type DataDirOpener func(dir string, opts DataDirConfig) (DataStore, error)

// ErrNoDataStore is returned by New for a Config.DataDir when no DataStore
// is linked into the program.
var ErrNoDataStore = errors.New(`crawlkit: Config.DataDir needs a disk store: import _ "github.com/crawlkit/crawlkit/storage/datadir"`)

var (
	dataDirMu     sync.Mutex
	dataDirOpener DataDirOpener
)

// RegisterDataDir makes open the way Config.DataDir is opened. Package
// datadir calls it when it is imported, as database/sql drivers register
// themselves; a second registration replaces the first.
func RegisterDataDir(open DataDirOpener) {
	dataDirMu.Lock()
	defer dataDirMu.Unlock()
	dataDirOpener = open
}

func registeredDataDir() DataDirOpener {
	dataDirMu.Lock()
	defer dataDirMu.Unlock()
	return dataDirOpener
}

// openDataDir opens cfg.DataDir with the registered opener.
func openDataDir(cfg Config) (DataStore, error) {
	open := registeredDataDir()
	if open == nil {
		return nil, ErrNoDataStore
	}
	ds, err := open(cfg.DataDir, DataDirConfig{CacheBytes: cfg.DataDirCacheBytes, Logger: cfg.Logger})
	if err != nil {
		return nil, fmt.Errorf("crawlkit: opening data directory: %w", err)
	}
	return ds, nil
}
