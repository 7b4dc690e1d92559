package redis

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/frontier"
	"github.com/crawlkit/crawlkit/frontier/frontiertest"
	"github.com/crawlkit/crawlkit/queuetest"
	"github.com/crawlkit/crawlkit/storage/internal/backendtest"
)

// testAddr is the server the integration tests use: CRAWLKIT_REDIS_ADDR, or
// the local server.
func testAddr() string {
	if a := os.Getenv("CRAWLKIT_REDIS_ADDR"); a != "" {
		return a
	}
	return "127.0.0.1:6379"
}

// server is the test server, probed once.
var server = &backendtest.Server{Name: "Redis", Addr: testAddr(), Env: "CRAWLKIT_REDIS_ADDR", Probe: probeServer}

// probeServer connects to the test server and reports the error, if any;
// server (once) and TestMain share it.
func probeServer() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	db, err := Open(ctx, Config{Addr: testAddr(), PoolSize: 1})
	if err == nil {
		db.Close()
	}
	return err
}

// requireServer skips the test when no server answers, or fails it when
// CI=true.
func requireServer(t testing.TB) { t.Helper(); server.Require(t) }

// crawlFor returns a crawl id unique to key.
func crawlFor(key string) string {
	sum := sha256.Sum256([]byte(key))
	return "test-" + hex.EncodeToString(sum[:10])
}

// openTestDB opens a fresh crawl for the test and deletes its keys at the
// end.
func openTestDB(t testing.TB) *DB {
	t.Helper()
	requireServer(t)
	crawl := crawlFor(t.Name() + time.Now().String())
	db, err := Open(context.Background(), Config{Addr: testAddr(), Crawl: crawl, PoolSize: 8})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		db.Close()
		dropCrawl(t, crawl)
	})
	return db
}

// dropCrawl deletes the keys of crawl through a connection of its own.
func dropCrawl(t testing.TB, crawl string) {
	t.Helper()
	db, err := Open(context.Background(), Config{Addr: testAddr(), Crawl: crawl, PoolSize: 1})
	if err != nil {
		t.Errorf("dropping crawl %s: %v", crawl, err)
		return
	}
	defer db.Close()
	if err := db.Drop(context.Background()); err != nil {
		t.Errorf("dropping crawl %s: %v", crawl, err)
	}
}

// ownedFrontierStore closes its DB with the store, so that the conformance
// kit can close and reopen a "directory" (a crawl id).
type ownedFrontierStore struct {
	*FrontierStore
}

func (s ownedFrontierStore) Close() error { return s.db.Close() }

func TestFrontierStoreConformance(t *testing.T) {
	requireServer(t)
	var mu sync.Mutex
	crawls := map[string]bool{}
	t.Cleanup(func() {
		for c := range crawls {
			dropCrawl(t, c)
		}
	})
	frontiertest.Run(t, func(t *testing.T, dir string) frontier.Store {
		crawl := crawlFor(dir)
		mu.Lock()
		crawls[crawl] = true
		mu.Unlock()
		db, err := Open(context.Background(), Config{Addr: testAddr(), Crawl: crawl, PoolSize: 4})
		if err != nil {
			t.Fatal(err)
		}
		return ownedFrontierStore{db.FrontierStore()}
	})
}

func TestQueueConformance(t *testing.T) {
	requireServer(t)
	openDB := dirOpener(t)
	queuetest.Run(t, func(t *testing.T, dir string, cfg queuetest.Config) crawlkit.Queue {
		// A handle stands for a process: it has a DB of its own on the crawl.
		db := openDB(t, dir)
		t.Cleanup(func() { db.Close() })
		q, err := db.Queue(backendtest.QueueConfig(cfg))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { q.Close() })
		return q
	})
}

func TestOpenRejectsBadCrawl(t *testing.T) {
	if _, err := Open(context.Background(), Config{Crawl: "a{b}"}); !errors.Is(err, ErrCrawl) {
		t.Fatalf("crawl id with braces: %v, want ErrCrawl", err)
	}
}

func TestUnavailableServer(t *testing.T) {
	// Nothing listens on port 1 of the loopback address.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := Open(ctx, Config{Addr: "127.0.0.1:1"})
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Open of a closed port: %v, want ErrUnavailable", err)
	}
}

// TestDropKeepsOtherCrawls checks that Drop deletes its own crawl's keys
// only, whatever glob characters the crawl ids hold: a backslash in one id
// must not turn the escape of the next character into a literal backslash
// and free a wildcard that matches other crawls' keys.
func TestDropKeepsOtherCrawls(t *testing.T) {
	requireServer(t)
	ctx := context.Background()
	base := crawlFor(t.Name() + time.Now().String())
	victimID, otherID := base+`-a\*`, base+`-a\other`
	for _, id := range []string{victimID, otherID} {
		t.Cleanup(func() { dropCrawl(t, id) })
	}
	open := func(id string) *DB {
		db, err := Open(ctx, Config{Addr: testAddr(), Crawl: id, PoolSize: 2})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}
	victim, other := open(victimID), open(otherID)
	for _, db := range []*DB{victim, other} {
		if err := db.Client().Set(ctx, db.key("probe"), "1", 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if err := victim.Drop(ctx); err != nil {
		t.Fatal(err)
	}
	if n := victim.Client().Exists(ctx, victim.key("probe")).Val(); n != 0 {
		t.Fatalf("Drop left its own key %q", victim.key("probe"))
	}
	if n := other.Client().Exists(ctx, other.key("probe")).Val(); n != 1 {
		t.Fatalf("Drop of crawl %q deleted key %q of crawl %q", victimID, other.key("probe"), otherID)
	}
}
