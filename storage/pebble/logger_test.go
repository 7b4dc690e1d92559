package pebble

import (
	"bytes"
	"log"
	"log/slog"
	"strings"
	"sync"
	"testing"
)

// syncBuffer is a bytes.Buffer safe for Pebble's background goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestPebbleLogsGoToOptionsLogger checks that Pebble's own messages (a
// write-ahead log replayed on reopening) never reach the standard logger,
// which would print them into the program's output, and go to
// Config.Logger at Debug level when one is given.
func TestPebbleLogsGoToOptionsLogger(t *testing.T) {
	var std syncBuffer
	saved := log.Writer()
	log.SetOutput(&std)
	t.Cleanup(func() { log.SetOutput(saved) })

	dir := t.TempDir()
	db, err := Open(dir, Config{})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.SeenStore().Add(42); err != nil {
		t.Fatal(err)
	}
	db.Close()

	var own syncBuffer
	logger := slog.New(slog.NewTextHandler(&own, &slog.HandlerOptions{Level: slog.LevelDebug}))
	db, err = Open(dir, Config{Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	ok, err := db.SeenStore().Contains(42)
	if err != nil || !ok {
		t.Fatalf("key after reopening: %v, %v", ok, err)
	}
	db.Close()

	if s := std.String(); s != "" {
		t.Errorf("Pebble wrote to the standard logger:\n%s", s)
	}
	if s := own.String(); !strings.Contains(s, "level=DEBUG") || !strings.Contains(s, "pebble: ") {
		t.Errorf("Config.Logger got no Pebble debug lines:\n%s", s)
	}
}
