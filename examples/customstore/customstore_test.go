package customstore_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/examples/customstore"
	"github.com/crawlkit/crawlkit/frontier"
	"github.com/crawlkit/crawlkit/frontier/frontiertest"
	"github.com/crawlkit/crawlkit/queuetest"
)

// TestFileStoreConformance proves FileStore with the frontier.Store kit.
func TestFileStoreConformance(t *testing.T) {
	frontiertest.Run(t, func(t *testing.T, dir string) frontier.Store {
		s, err := customstore.OpenFileStore(filepath.Join(dir, "frontier.log"))
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

// TestDedupQueueConformance proves DedupQueue with the crawlkit.Queue kit.
// It lives in one process, so every handle is the same queue.
func TestDedupQueueConformance(t *testing.T) {
	queuetest.Run(t, queuetest.InProcess(func(t *testing.T, cfg queuetest.Config) crawlkit.Queue {
		q, err := customstore.NewDedupQueue(frontier.Config{
			Now: cfg.Now, Politeness: cfg.Politeness, LeaseTTL: cfg.LeaseTTL,
			MaxAttempts: cfg.MaxAttempts, RetryBase: cfg.RetryBase, RetryMax: cfg.RetryMax,
			Schedule: cfg.Schedule,
		}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { q.Close() })
		return q
	}))
}

// TestDedupQueueDurableConformance proves the configuration of Step 4 of
// the package documentation, the one a crawler uses: a DedupQueue whose
// frontier and seen set are both kept in FileStores.
func TestDedupQueueDurableConformance(t *testing.T) {
	queuetest.Run(t, queuetest.InProcess(func(t *testing.T, cfg queuetest.Config) crawlkit.Queue {
		dir := t.TempDir()
		front, err := customstore.OpenFileStore(filepath.Join(dir, "frontier.log"))
		if err != nil {
			t.Fatal(err)
		}
		seen, err := customstore.OpenFileStore(filepath.Join(dir, "seen.log"))
		if err != nil {
			t.Fatal(err)
		}
		q, err := customstore.NewDedupQueue(frontier.Config{
			Store: front, Now: cfg.Now, Politeness: cfg.Politeness, LeaseTTL: cfg.LeaseTTL,
			MaxAttempts: cfg.MaxAttempts, RetryBase: cfg.RetryBase, RetryMax: cfg.RetryMax,
			Schedule: cfg.Schedule,
		}, seen)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := errors.Join(q.Close(), front.Close(), seen.Close()); err != nil {
				t.Error(err)
			}
		})
		return q
	}))
}

// TestDedupQueueRestart checks that a URL finished before a restart is
// dropped when it is added again after it: the seen set is durable, like the
// frontier.
func TestDedupQueueRestart(t *testing.T) {
	dir := t.TempDir()
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	const done, fresh = "http://example.test/", "http://other.test/"

	h := openQueue(t, dir, now)
	if err := h.q.Add(frontier.Entry{URL: done}); err != nil {
		t.Fatal(err)
	}
	l, _, err := h.q.NextAt(now)
	if err != nil || l == nil || l.URL != done {
		t.Fatalf("NextAt = %v, %v; want a lease of %s", l, err, done)
	}
	if _, err := h.q.DoneAt(now, l, frontier.Success(0)); err != nil {
		t.Fatal(err)
	}
	h.close(t)

	h = openQueue(t, dir, now)
	defer h.close(t)
	if err := h.q.Add(frontier.Entry{URL: done}, frontier.Entry{URL: fresh}); err != nil {
		t.Fatal(err)
	}
	// Long after any politeness delay, only the fresh URL is leased.
	later := now.Add(time.Hour)
	l, _, err = h.q.NextAt(later)
	if err != nil || l == nil || l.URL != fresh {
		t.Fatalf("NextAt = %v, %v; want a lease of %s", l, err, fresh)
	}
	if l, _, err := h.q.NextAt(later); err != nil || l != nil {
		t.Fatalf("NextAt = %v, %v; want nothing (%s was finished before the restart)", l, err, done)
	}
}

// queueHandle is a DedupQueue with the two stores it was opened on.
type queueHandle struct {
	front, seen *customstore.FileStore
	q           *customstore.DedupQueue
}

// openQueue opens a DedupQueue over a FileStore frontier in dir, with its
// seen set in a second FileStore, on a clock stopped at now.
func openQueue(t *testing.T, dir string, now time.Time) *queueHandle {
	t.Helper()
	h := &queueHandle{}
	var err error
	if h.front, err = customstore.OpenFileStore(filepath.Join(dir, "frontier.log")); err != nil {
		t.Fatal(err)
	}
	if h.seen, err = customstore.OpenFileStore(filepath.Join(dir, "seen.log")); err != nil {
		t.Fatal(err)
	}
	opts := frontier.Config{Store: h.front, Now: func() time.Time { return now }}
	if h.q, err = customstore.NewDedupQueue(opts, h.seen); err != nil {
		t.Fatal(err)
	}
	return h
}

// close closes the queue and then its stores.
func (h *queueHandle) close(t *testing.T) {
	t.Helper()
	if err := errors.Join(h.q.Close(), h.front.Close(), h.seen.Close()); err != nil {
		t.Fatal(err)
	}
}

// TestFileStoreTornTail simulates a crash in the middle of an append: the
// torn record is cut off and every acknowledged batch is kept.
func TestFileStoreTornTail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log")
	s, err := customstore.OpenFileStore(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := s.Write(ctx, []frontier.Mutation{{Key: []byte("a"), Value: []byte("1")}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Write(ctx, []frontier.Mutation{{Key: []byte("b"), Value: []byte("2")}, {Key: []byte("a"), Delete: true}}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for cut := 1; cut < 12; cut++ {
		// Drop the last cut bytes: the second record is torn.
		if err := os.WriteFile(path, data[:len(data)-cut], 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := customstore.OpenFileStore(path)
		if err != nil {
			t.Fatalf("cut %d: %v", cut, err)
		}
		kvs, err := s.Scan(ctx, nil, nil, 10)
		s.Close()
		if err != nil || len(kvs) != 1 || string(kvs[0].Key) != "a" {
			t.Fatalf("cut %d: Scan = %v, %v; want only the first batch (a)", cut, kvs, err)
		}
	}
	// A record with a good checksum that does not decode is reported.
	payload := []byte{1, 7} // one mutation with op 7
	rec := binary.BigEndian.AppendUint32(nil, uint32(len(payload)))
	rec = binary.BigEndian.AppendUint32(rec, crc32.Checksum(payload, crc32.MakeTable(crc32.Castagnoli)))
	if err := os.WriteFile(path, append(rec, payload...), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := customstore.OpenFileStore(path); !errors.Is(err, customstore.ErrCorrupt) {
		t.Fatalf("foreign record: %v, want ErrCorrupt", err)
	}
}

// FuzzOpenFileStore checks that any log file opens without panicking: it is
// replayed up to its first torn or foreign record.
func FuzzOpenFileStore(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0, 0, 0, 5, 1, 2, 3, 4, 1, 1, 1, 'k', 0})
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(dir, "log")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := customstore.OpenFileStore(path)
		if err != nil {
			if !errors.Is(err, customstore.ErrCorrupt) {
				t.Fatalf("unexpected error kind: %v", err)
			}
			return
		}
		s.Close()
	})
}

func Example() {
	dir, _ := os.MkdirTemp("", "customstore")
	defer os.RemoveAll(dir)
	s, err := customstore.OpenFileStore(filepath.Join(dir, "frontier.log"))
	if err != nil {
		panic(err)
	}
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	f, _ := frontier.New(frontier.Config{Store: s})
	f.AddAt(now, frontier.Entry{URL: "http://example.test/"})
	f.Close()
	s.Close()

	// After a restart the URL is still queued.
	s, _ = customstore.OpenFileStore(filepath.Join(dir, "frontier.log"))
	defer s.Close()
	f, _ = frontier.New(frontier.Config{Store: s})
	defer f.Close()
	l, _, _ := f.NextAt(now)
	fmt.Println(l.URL)
	// Output: http://example.test/
}
