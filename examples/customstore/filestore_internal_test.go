package customstore

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"testing"

	"github.com/crawlkit/crawlkit/frontier"
)

var errInjected = errors.New("injected failure")

// faultyFile is a logFile whose next WriteAt, Sync or Truncate fails once
// when its flag is set, the way a full disk or an I/O error fails them.
type faultyFile struct {
	logFile
	failWrite    bool // WriteAt writes half of its bytes, then fails
	failSync     bool
	failTruncate bool
}

func (f *faultyFile) WriteAt(p []byte, off int64) (int, error) {
	if f.failWrite {
		f.failWrite = false
		n, _ := f.logFile.WriteAt(p[:len(p)/2], off)
		return n, errInjected
	}
	return f.logFile.WriteAt(p, off)
}

func (f *faultyFile) Sync() error {
	if f.failSync {
		f.failSync = false
		return errInjected
	}
	return f.logFile.Sync()
}

func (f *faultyFile) Truncate(size int64) error {
	if f.failTruncate {
		f.failTruncate = false
		return errInjected
	}
	return f.logFile.Truncate(size)
}

// openFaulty opens a FileStore at path whose file fails on demand.
func openFaulty(t *testing.T, path string) (*FileStore, *faultyFile) {
	t.Helper()
	s, err := OpenFileStore(path)
	if err != nil {
		t.Fatal(err)
	}
	f := &faultyFile{logFile: s.f}
	s.f = f
	return s, f
}

func put(key string) []frontier.Mutation {
	return []frontier.Mutation{{Key: []byte(key), Value: []byte("v")}}
}

// keys returns the keys in s, in order.
func keys(t *testing.T, s *FileStore) []string {
	t.Helper()
	kvs, err := s.Scan(context.Background(), nil, nil, 100)
	if err != nil {
		t.Fatal(err)
	}
	var ks []string
	for _, kv := range kvs {
		ks = append(ks, string(kv.Key))
	}
	return ks
}

// TestFileStoreFailedAppend checks that a Write that fails partway leaves
// nothing behind: a later acknowledged Write survives a reopen.
func TestFileStoreFailedAppend(t *testing.T) {
	for _, tc := range []struct {
		name string
		fail func(*faultyFile)
	}{
		{"write", func(f *faultyFile) { f.failWrite = true }},
		{"sync", func(f *faultyFile) { f.failSync = true }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			path := filepath.Join(t.TempDir(), "log")
			s, f := openFaulty(t, path)
			if err := s.Write(ctx, put("a")); err != nil {
				t.Fatal(err)
			}
			tc.fail(f)
			if err := s.Write(ctx, put("b")); !errors.Is(err, errInjected) {
				t.Fatalf("failing Write: %v, want the injected error", err)
			}
			if err := s.Write(ctx, put("c")); err != nil {
				t.Fatalf("Write after a failed one: %v", err)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			s, err := OpenFileStore(path)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if got, want := keys(t, s), []string{"a", "c"}; !slices.Equal(got, want) {
				t.Fatalf("keys after reopen = %q, want %q", got, want)
			}
		})
	}
}

// TestFileStoreBroken checks that a store whose torn record cannot be cut
// off refuses every later Write, and that reopening it recovers.
func TestFileStoreBroken(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "log")
	s, f := openFaulty(t, path)
	if err := s.Write(ctx, put("a")); err != nil {
		t.Fatal(err)
	}
	f.failWrite, f.failTruncate = true, true
	if err := s.Write(ctx, put("b")); !errors.Is(err, ErrBroken) || !errors.Is(err, errInjected) {
		t.Fatalf("failing Write: %v, want ErrBroken and the injected error", err)
	}
	for range 2 {
		if err := s.Write(ctx, put("c")); !errors.Is(err, ErrBroken) {
			t.Fatalf("Write on a broken store: %v, want ErrBroken", err)
		}
	}
	if got, want := keys(t, s), []string{"a"}; !slices.Equal(got, want) {
		t.Fatalf("keys = %q, want %q", got, want)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err := OpenFileStore(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Write(ctx, put("d")); err != nil {
		t.Fatalf("Write after reopening: %v", err)
	}
	if got, want := keys(t, s), []string{"a", "d"}; !slices.Equal(got, want) {
		t.Fatalf("keys after reopen = %q, want %q", got, want)
	}
}
