package redis

import (
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

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

// warnings returns the Warn records' attributes.
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

// rawClient is a client of the test server of its own.
func rawClient(t *testing.T) *goredis.Client {
	t.Helper()
	c := goredis.NewClient(&goredis.Options{Addr: testAddr(), PoolSize: 2})
	t.Cleanup(func() { c.Close() })
	return c
}

// newCrawl returns a fresh crawl id whose keys are deleted at the end.
func newCrawl(t *testing.T) string {
	t.Helper()
	requireServer(t)
	crawl := crawlFor(t.Name() + time.Now().String())
	t.Cleanup(func() { dropCrawl(t, crawl) })
	return crawl
}

// seedVersion1 writes the fingerprints fps (ids 1, 2, ...) as a crawl of
// before the version record held them, with raw commands.
func seedVersion1(t *testing.T, crawl string, fps ...uint64) {
	t.Helper()
	c, ctx := rawClient(t), context.Background()
	for i, fp := range fps {
		var b [16]byte
		binary.BigEndian.PutUint64(b[:8], fp)
		binary.BigEndian.PutUint64(b[8:], uint64(i+1))
		key := fmt.Sprintf("crawlkit:{%s}:fp:%02x", crawl, byte(fp))
		if err := c.SAdd(ctx, key, string(b[:])).Err(); err != nil {
			t.Fatal(err)
		}
	}
}

func openCrawl(t *testing.T, crawl string, logger *slog.Logger) *DB {
	t.Helper()
	db, err := Open(context.Background(), Config{Addr: testAddr(), Crawl: crawl, PoolSize: 2, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
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
	slices.SortFunc(out, func(a, b simhash.Entry) int {
		return cmp.Or(cmp.Compare(a.Fingerprint, b.Fingerprint), cmp.Compare(a.ID, b.ID))
	})
	return out
}

// recordedVersion reads the crawl's fingerprint version record raw.
func recordedVersion(t *testing.T, crawl string) string {
	t.Helper()
	v, err := rawClient(t).Get(context.Background(), "crawlkit:{"+crawl+"}:fpv").Result()
	if err != nil {
		t.Fatalf("reading the fingerprint version: %v", err)
	}
	return v
}

var current = strconv.Itoa(simhash.Version)

// TestFingerprintVersion1Discarded: a crawl holding fingerprints and no
// version record holds version 1; Open deletes them, records the current
// version and warns, and the fingerprints put afterwards survive a reopen.
func TestFingerprintVersion1Discarded(t *testing.T) {
	crawl := newCrawl(t)
	seedVersion1(t, crawl, 7, 8, 0x1ff)
	h := &recordingHandler{}
	db := openCrawl(t, crawl, slog.New(h))
	if got := db.DiscardedFingerprints(); got != 1 {
		t.Fatalf("DiscardedFingerprints = %d, want 1", got)
	}
	n, err := rawClient(t).Exists(context.Background(), "crawlkit:{"+crawl+"}:fp:07", "crawlkit:{"+crawl+"}:fp:08", "crawlkit:{"+crawl+"}:fp:ff").Result()
	if err != nil || n != 0 {
		t.Fatalf("%d fingerprint sets of version 1 left after Open (%v)", n, err)
	}
	if v := recordedVersion(t, crawl); v != current {
		t.Fatalf("recorded fingerprint version %q, want %q", v, current)
	}
	ws := h.warnings()
	if len(ws) != 1 || ws[0]["stored_version"] != int64(1) || ws[0]["version"] != int64(simhash.Version) {
		t.Fatalf("warnings %v, want one naming stored_version 1 and version %d", ws, simhash.Version)
	}

	want := []simhash.Entry{{Fingerprint: 7, ID: 100}, {Fingerprint: 11, ID: 101}}
	if err := db.FingerprintStore().Put(want); err != nil {
		t.Fatal(err)
	}
	db.Close()
	h2 := &recordingHandler{}
	db = openCrawl(t, crawl, slog.New(h2))
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

// TestFingerprintVersionFresh: a new crawl records the current version and
// discards nothing.
func TestFingerprintVersionFresh(t *testing.T) {
	crawl := newCrawl(t)
	db := openCrawl(t, crawl, nil)
	if got := db.DiscardedFingerprints(); got != 0 {
		t.Fatalf("DiscardedFingerprints = %d, want 0", got)
	}
	if v := recordedVersion(t, crawl); v != current {
		t.Fatalf("recorded fingerprint version %q, want %q", v, current)
	}
}

// TestFingerprintVersionNewerDiscarded: fingerprints recorded with a
// version this build does not know (a newer one) are discarded too, as
// storage/pebble does.
func TestFingerprintVersionNewerDiscarded(t *testing.T) {
	crawl := newCrawl(t)
	db := openCrawl(t, crawl, nil)
	if err := db.FingerprintStore().Put([]simhash.Entry{{Fingerprint: 5, ID: 1}}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	newer := simhash.Version + 1
	if err := rawClient(t).Set(context.Background(), "crawlkit:{"+crawl+"}:fpv", newer, 0).Err(); err != nil {
		t.Fatal(err)
	}
	h := &recordingHandler{}
	db = openCrawl(t, crawl, slog.New(h))
	if got := db.DiscardedFingerprints(); got != newer {
		t.Fatalf("DiscardedFingerprints = %d, want %d", got, newer)
	}
	if got := storedFingerprints(t, db); len(got) != 0 {
		t.Fatalf("fingerprints of version %d left after Open: %v", newer, got)
	}
	if v := recordedVersion(t, crawl); v != current {
		t.Fatalf("recorded fingerprint version %q, want %q", v, current)
	}
	if ws := h.warnings(); len(ws) != 1 || ws[0]["stored_version"] != int64(newer) {
		t.Fatalf("warnings %v, want one naming stored_version %d", ws, newer)
	}
}

// TestFingerprintVersionMalformed: a version record that is not a
// positive integer fails Open and deletes nothing.
func TestFingerprintVersionMalformed(t *testing.T) {
	crawl := newCrawl(t)
	seedVersion1(t, crawl, 5)
	c := rawClient(t)
	if err := c.Set(context.Background(), "crawlkit:{"+crawl+"}:fpv", "x", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if db, err := Open(context.Background(), Config{Addr: testAddr(), Crawl: crawl, PoolSize: 1}); err == nil {
		db.Close()
		t.Fatal("Open of a crawl with fingerprint version \"x\" succeeded")
	}
	if n := c.SCard(context.Background(), "crawlkit:{"+crawl+"}:fp:05").Val(); n != 1 {
		t.Fatalf("the failed Open left %d fingerprints, want 1", n)
	}
	// Repaired by hand, the crawl opens with its fingerprints (and can be
	// dropped).
	if err := c.Set(context.Background(), "crawlkit:{"+crawl+"}:fpv", current, 0).Err(); err != nil {
		t.Fatal(err)
	}
	db := openCrawl(t, crawl, nil)
	if got := storedFingerprints(t, db); !slices.Equal(got, []simhash.Entry{{Fingerprint: 5, ID: 1}}) {
		t.Fatalf("fingerprints after the repair: %v", got)
	}
}

// TestFingerprintVersionConcurrentOpens: processes opening a version-1
// crawl at once discard its fingerprints once: exactly one reports it.
func TestFingerprintVersionConcurrentOpens(t *testing.T) {
	crawl := newCrawl(t)
	seedVersion1(t, crawl, 1, 2, 3)
	const n = 4
	dbs := make([]*DB, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range dbs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dbs[i], errs[i] = Open(context.Background(), Config{Addr: testAddr(), Crawl: crawl, PoolSize: 1})
		}()
	}
	wg.Wait()
	discards := 0
	for i, db := range dbs {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		t.Cleanup(func() { db.Close() })
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

// TestFingerprintVersionNew: a DB made by New, which does not contact the
// server, checks the version at its FingerprintStore's first use.
func TestFingerprintVersionNew(t *testing.T) {
	crawl := newCrawl(t)
	seedVersion1(t, crawl, 9)
	db, err := New(rawClient(t), crawl)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if got := db.DiscardedFingerprints(); got != 0 {
		t.Fatalf("DiscardedFingerprints before any use = %d, want 0", got)
	}
	if got := storedFingerprints(t, db); len(got) != 0 {
		t.Fatalf("ForEach returned fingerprints of version 1: %v", got)
	}
	if got := db.DiscardedFingerprints(); got != 1 {
		t.Fatalf("DiscardedFingerprints after ForEach = %d, want 1", got)
	}
	if v := recordedVersion(t, crawl); v != current {
		t.Fatalf("recorded fingerprint version %q, want %q", v, current)
	}
}
