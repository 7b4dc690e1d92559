package postgres

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/frontier"
	"github.com/crawlkit/crawlkit/frontier/frontiertest"
	"github.com/crawlkit/crawlkit/storage/internal/backendtest"
)

// testURL is the database the integration tests use: CRAWLKIT_POSTGRES_URL,
// or the local server.
func testURL() string {
	if u := os.Getenv("CRAWLKIT_POSTGRES_URL"); u != "" {
		return u
	}
	return "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
}

// server is the test server, probed once.
var server = &backendtest.Server{Name: "PostgreSQL", Addr: testURL(), Env: "CRAWLKIT_POSTGRES_URL", Probe: probeServer}

// probeServer connects to the test server and reports the error, if any;
// server (once) and TestMain share it.
func probeServer() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	db, err := Open(ctx, testURL(), Config{Schema: "crawlkit_probe", MaxConns: 1})
	if err == nil {
		err = db.DropSchema(ctx)
	}
	return err
}

// requireServer skips the test when no server answers, or fails it when
// CI=true.
func requireServer(t testing.TB) { t.Helper(); server.Require(t) }

// schemaFor returns a schema name unique to key.
func schemaFor(key string) string {
	sum := sha256.Sum256([]byte(key))
	return "t_" + hex.EncodeToString(sum[:10])
}

// openTestDB opens a fresh schema for the test and drops it at the end.
func openTestDB(t testing.TB) *DB {
	t.Helper()
	requireServer(t)
	schema := schemaFor(t.Name() + time.Now().String())
	db, err := Open(context.Background(), testURL(), Config{Schema: schema, MaxConns: 8})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		db.Close()
		dropSchema(t, schema)
	})
	return db
}

// dropSchema removes schema through a connection of its own.
func dropSchema(t testing.TB, schema string) {
	t.Helper()
	db, err := Open(context.Background(), testURL(), Config{Schema: schema, MaxConns: 1})
	if err != nil {
		t.Errorf("dropping schema %s: %v", schema, err)
		return
	}
	if err := db.DropSchema(context.Background()); err != nil {
		t.Errorf("dropping schema %s: %v", schema, err)
	}
}

// ownedFrontierStore closes its DB with the store, so that the conformance
// kit can close and reopen a "directory" (a schema).
type ownedFrontierStore struct {
	*FrontierStore
}

func (s ownedFrontierStore) Close() error {
	s.db.Close()
	return nil
}

func TestFrontierStoreConformance(t *testing.T) {
	requireServer(t)
	var mu sync.Mutex
	schemas := map[string]bool{}
	t.Cleanup(func() {
		for s := range schemas {
			dropSchema(t, s)
		}
	})
	frontiertest.Run(t, func(t *testing.T, dir string) frontier.Store {
		schema := schemaFor(dir)
		mu.Lock()
		schemas[schema] = true
		mu.Unlock()
		db, err := Open(context.Background(), testURL(), Config{Schema: schema, MaxConns: 4})
		if err != nil {
			t.Fatal(err)
		}
		return ownedFrontierStore{db.FrontierStore()}
	})
}

func TestOpenRejectsBadSchema(t *testing.T) {
	for _, s := range []string{"Upper", "1abc", "has-dash", "x; DROP TABLE y", strings.Repeat("a", 64)} {
		if _, err := Open(context.Background(), testURL(), Config{Schema: s}); !errors.Is(err, ErrSchema) {
			t.Errorf("schema %q: %v, want ErrSchema", s, err)
		}
	}
}

func TestMigrationsApplyOnceConcurrently(t *testing.T) {
	requireServer(t)
	schema := schemaFor(t.Name() + time.Now().String())
	t.Cleanup(func() { dropSchema(t, schema) })
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			db, err := Open(context.Background(), testURL(), Config{Schema: schema, MaxConns: 1})
			if err == nil {
				db.Close()
			}
			errs[i] = err
		}(i)
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	db, err := Open(context.Background(), testURL(), Config{Schema: schema, MaxConns: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	v, err := db.Version(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ms, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	if want := ms[len(ms)-1].version; v != want {
		t.Fatalf("schema version %d, want %d", v, want)
	}
	var n int
	if err := db.Pool().QueryRow(context.Background(), "SELECT count(*) FROM schema_migrations").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != len(ms) {
		t.Fatalf("%d migrations recorded, want %d", n, len(ms))
	}
}

func TestUnavailableServer(t *testing.T) {
	// Nothing listens on port 1 of the loopback address.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := Open(ctx, "postgres://postgres@127.0.0.1:1/test?sslmode=disable&connect_timeout=2", Config{})
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Open of a closed port: %v, want ErrUnavailable", err)
	}
}
