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
	queuetest.Run(t, func(t *testing.T, cfg queuetest.Config) queuetest.Open {
		q, err := customstore.NewDedupQueue(frontier.Options{
			Now: cfg.Now, Politeness: cfg.Politeness, LeaseTTL: cfg.LeaseTTL,
			MaxAttempts: cfg.MaxAttempts, RetryBase: cfg.RetryBase, RetryMax: cfg.RetryMax,
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { q.Close() })
		return func() crawlkit.Queue { return q }
	})
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
	f, _ := frontier.New(frontier.Options{Store: s})
	f.AddAt(now, frontier.Entry{URL: "http://example.test/"})
	f.Close()
	s.Close()

	// After a restart the URL is still queued.
	s, _ = customstore.OpenFileStore(filepath.Join(dir, "frontier.log"))
	defer s.Close()
	f, _ = frontier.New(frontier.Options{Store: s})
	defer f.Close()
	l, _, _ := f.NextAt(now)
	fmt.Println(l.URL)
	// Output: http://example.test/
}
