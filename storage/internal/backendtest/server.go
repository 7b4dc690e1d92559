package backendtest

import (
	"os"
	"sync"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/queuetest"
	"github.com/crawlkit/crawlkit/storage/sharedqueue"
)

// Server is a backend's test server: probed once, skipped without it
// except under CI=true, where a missing server fails the test.
type Server struct {
	// Name ("PostgreSQL"), Addr (where it was looked for) and Env (the
	// variable that overrides Addr) name it in the messages.
	Name, Addr, Env string
	// Probe connects to it and reports the error, if any.
	Probe func() error

	once sync.Once
	err  error
}

// Err probes the server once and reports the result.
func (s *Server) Err() error {
	s.once.Do(func() { s.err = s.Probe() })
	return s.err
}

// Require skips t when the server does not answer, or fails it when
// CI=true: CI must not pass by skipping.
func (s *Server) Require(t testing.TB) {
	t.Helper()
	if err := s.Err(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s at %s: %v (CI=true: not skipping)", s.Name, s.Addr, err)
		}
		t.Skipf("%s at %s unavailable, skipping (set %s): %v", s.Name, s.Addr, s.Env, err)
	}
}

// QueueConfig is the shared queue's configuration for a queuetest run.
func QueueConfig(cfg queuetest.Config) sharedqueue.Config {
	return sharedqueue.Config{
		Now:          cfg.Now,
		Politeness:   cfg.Politeness,
		LeaseTTL:     cfg.LeaseTTL,
		MaxAttempts:  cfg.MaxAttempts,
		RetryBase:    cfg.RetryBase,
		RetryMax:     cfg.RetryMax,
		Schedule:     cfg.Schedule,
		PollInterval: 5 * time.Millisecond,
	}
}
