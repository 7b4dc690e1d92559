package postgres

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/crawlkit/crawlkit/simhash"
)

// recordingHandler keeps the records logged through it.
type recordingHandler struct {
	mu   sync.Mutex
	recs []slog.Record
}

func (h *recordingHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *recordingHandler) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *recordingHandler) WithGroup(string) slog.Handler            { return h }
func (h *recordingHandler) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.recs = append(h.recs, r.Clone())
	return nil
}

// warnings returns the Warn records with their attributes.
func (h *recordingHandler) warnings() []map[string]any {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []map[string]any
	for _, r := range h.recs {
		if r.Level != slog.LevelWarn {
			continue
		}
		m := map[string]any{"msg": r.Message}
		r.Attrs(func(a slog.Attr) bool {
			m[a.Key] = a.Value.Any()
			return true
		})
		out = append(out, m)
	}
	return out
}

// seedVersion1Schema creates schema as the package's first schema version
// made it, before fingerprint versions were recorded, holding the
// fingerprints fps (with ids 1, 2, ...), with raw SQL.
func seedVersion1Schema(t *testing.T, schema string, fps ...uint64) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, testURL())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	ms, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	if ms[0].version != 1 {
		t.Fatalf("first migration is %s", ms[0].name)
	}
	ident := pgx.Identifier{schema}.Sanitize()
	for _, q := range []string{
		"CREATE SCHEMA " + ident,
		"SET search_path TO " + ident,
		`CREATE TABLE schema_migrations (version integer PRIMARY KEY, name text NOT NULL,
			applied_at timestamptz NOT NULL DEFAULT now())`,
		ms[0].sql,
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatalf("%.60s: %v", q, err)
		}
	}
	if _, err := conn.Exec(ctx, "INSERT INTO schema_migrations (version, name) VALUES (1, $1)", ms[0].name); err != nil {
		t.Fatal(err)
	}
	for i, fp := range fps {
		if _, err := conn.Exec(ctx, "INSERT INTO fingerprints (fingerprint, doc_id) VALUES ($1, $2)", int64(fp), int64(i+1)); err != nil {
			t.Fatal(err)
		}
	}
}

func newSchema(t *testing.T) string {
	t.Helper()
	requireServer(t)
	schema := schemaFor(t.Name() + time.Now().String())
	t.Cleanup(func() { dropSchema(t, schema) })
	return schema
}

func openSchema(t *testing.T, schema string, logger *slog.Logger) *DB {
	t.Helper()
	db, err := Open(context.Background(), testURL(), Config{Schema: schema, MaxConns: 2, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	return db
}

func storedFingerprints(t *testing.T, db *DB) []simhash.Entry {
	t.Helper()
	var out []simhash.Entry
	if err := db.FingerprintStore().ForEach(func(e simhash.Entry) error {
		out = append(out, e)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

func recordedFingerprintVersion(t *testing.T, db *DB) int64 {
	t.Helper()
	var v int64
	if err := db.Pool().QueryRow(context.Background(), "SELECT value FROM meta WHERE name = $1",
		fingerprintVersionName).Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestFingerprintVersion1Discarded: a schema of the first schema version
// holds fingerprints of simhash version 1 and no record of it; Open
// migrates it, deletes them, records the current version and warns, and
// the fingerprints put afterwards survive a reopen.
func TestFingerprintVersion1Discarded(t *testing.T) {
	schema := newSchema(t)
	seedVersion1Schema(t, schema, 7, 8, 1<<63|9)
	h := &recordingHandler{}
	db := openSchema(t, schema, slog.New(h))
	if got := db.DiscardedFingerprints(); got != 1 {
		t.Fatalf("DiscardedFingerprints = %d, want 1", got)
	}
	if got := storedFingerprints(t, db); len(got) != 0 {
		t.Fatalf("fingerprints of version 1 left after Open: %v", got)
	}
	if v := recordedFingerprintVersion(t, db); v != simhash.Version {
		t.Fatalf("recorded fingerprint version %d, want %d", v, simhash.Version)
	}
	ws := h.warnings()
	if len(ws) != 1 || ws[0]["stored_version"] != int64(1) || ws[0]["version"] != int64(simhash.Version) || ws[0]["schema"] != schema {
		t.Fatalf("warnings %v, want one naming stored_version 1 and version %d", ws, simhash.Version)
	}

	want := []simhash.Entry{{Fingerprint: 7, ID: 100}, {Fingerprint: 11, ID: 101}}
	if err := db.FingerprintStore().Put(want); err != nil {
		t.Fatal(err)
	}
	db.Close()
	h2 := &recordingHandler{}
	db = openSchema(t, schema, slog.New(h2))
	if got := db.DiscardedFingerprints(); got != 0 {
		t.Fatalf("reopen: DiscardedFingerprints = %d, want 0", got)
	}
	if got := storedFingerprints(t, db); !slices.Equal(got, want) {
		t.Fatalf("reopen: fingerprints %v, want %v", got, want)
	}
	if ws := h2.warnings(); len(ws) != 0 {
		t.Fatalf("reopen warned: %v", ws)
	}
}

// TestFingerprintVersionFresh: a new schema records the current version
// and discards nothing.
func TestFingerprintVersionFresh(t *testing.T) {
	db := openSchema(t, newSchema(t), nil)
	if got := db.DiscardedFingerprints(); got != 0 {
		t.Fatalf("DiscardedFingerprints = %d, want 0", got)
	}
	if v := recordedFingerprintVersion(t, db); v != simhash.Version {
		t.Fatalf("recorded fingerprint version %d, want %d", v, simhash.Version)
	}
}

// TestFingerprintVersionNewerDiscarded: fingerprints recorded with a
// version this build does not know (a newer one) are discarded too, as
// storage/pebble does.
func TestFingerprintVersionNewerDiscarded(t *testing.T) {
	schema := newSchema(t)
	db := openSchema(t, schema, nil)
	if err := db.FingerprintStore().Put([]simhash.Entry{{Fingerprint: 5, ID: 1}}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Pool().Exec(context.Background(), "UPDATE meta SET value = $1 WHERE name = $2",
		simhash.Version+1, fingerprintVersionName); err != nil {
		t.Fatal(err)
	}
	db.Close()
	h := &recordingHandler{}
	db = openSchema(t, schema, slog.New(h))
	if got := db.DiscardedFingerprints(); got != simhash.Version+1 {
		t.Fatalf("DiscardedFingerprints = %d, want %d", got, simhash.Version+1)
	}
	if got := storedFingerprints(t, db); len(got) != 0 {
		t.Fatalf("fingerprints of version %d left after Open: %v", simhash.Version+1, got)
	}
	if v := recordedFingerprintVersion(t, db); v != simhash.Version {
		t.Fatalf("recorded fingerprint version %d, want %d", v, simhash.Version)
	}
	if ws := h.warnings(); len(ws) != 1 || ws[0]["stored_version"] != int64(simhash.Version+1) {
		t.Fatalf("warnings %v, want one naming stored_version %d", ws, simhash.Version+1)
	}
}

// TestFingerprintVersionMalformed: a recorded version below 1 is an error
// of Open (ErrSchema), not a reason to delete.
func TestFingerprintVersionMalformed(t *testing.T) {
	schema := newSchema(t)
	db := openSchema(t, schema, nil)
	if err := db.FingerprintStore().Put([]simhash.Entry{{Fingerprint: 5, ID: 1}}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Pool().Exec(context.Background(), "UPDATE meta SET value = 0 WHERE name = $1", fingerprintVersionName); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if db, err := Open(context.Background(), testURL(), Config{Schema: schema, MaxConns: 1}); !errors.Is(err, ErrSchema) {
		if err == nil {
			db.Close()
		}
		t.Fatalf("Open of a schema with fingerprint version 0: %v, want ErrSchema", err)
	}
	// Repair the record by hand: the fingerprints are still there.
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, testURL())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "UPDATE "+pgx.Identifier{schema, "meta"}.Sanitize()+" SET value = $1 WHERE name = $2",
		simhash.Version, fingerprintVersionName); err != nil {
		t.Fatal(err)
	}
	db = openSchema(t, schema, nil)
	if got := storedFingerprints(t, db); !slices.Equal(got, []simhash.Entry{{Fingerprint: 5, ID: 1}}) {
		t.Fatalf("fingerprints after the failed Open: %v", got)
	}
}

// TestFingerprintVersionConcurrentOpens: processes opening a version-1
// schema at once discard its fingerprints once: exactly one of them
// reports it, and the others find the version current.
func TestFingerprintVersionConcurrentOpens(t *testing.T) {
	schema := newSchema(t)
	seedVersion1Schema(t, schema, 1, 2, 3)
	const n = 4
	dbs := make([]*DB, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range dbs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dbs[i], errs[i] = Open(context.Background(), testURL(), Config{Schema: schema, MaxConns: 1})
		}()
	}
	wg.Wait()
	discards := 0
	for i, db := range dbs {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		t.Cleanup(db.Close)
		switch db.DiscardedFingerprints() {
		case 0:
		case 1:
			discards++
		default:
			t.Fatalf("DiscardedFingerprints = %d", db.DiscardedFingerprints())
		}
	}
	if discards != 1 {
		t.Fatalf("%d of %d concurrent Opens discarded the fingerprints, want 1", discards, n)
	}
	if got := storedFingerprints(t, dbs[0]); len(got) != 0 {
		t.Fatalf("fingerprints left: %v", got)
	}
}
