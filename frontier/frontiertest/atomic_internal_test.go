package frontiertest

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/crawlkit/crawlkit/frontier"
)

// recorder is a testing.TB that records failures instead of failing the
// test it runs in, so that a check can be shown to fail. Only the methods
// the checks call are implemented; Fatal ends the calling goroutine, as it
// does on a real test.
type recorder struct {
	testing.TB
	mu     sync.Mutex
	failed []string
}

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	r.failed = append(r.failed, fmt.Sprintf(format, args...))
	r.mu.Unlock()
}

func (r *recorder) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
	runtime.Goexit()
}

func (r *recorder) Fatal(args ...any) {
	r.Errorf("%s", fmt.Sprint(args...))
	runtime.Goexit()
}

// run runs check with r as its testing.TB and returns the failures.
func (r *recorder) run(check func(testing.TB)) []string {
	done := make(chan struct{})
	go func() {
		defer close(done)
		check(r)
	}()
	<-done
	return r.failed
}

// nonAtomicStore applies each mutation of a Write on its own. After the
// first mutation of every Write it waits until a Scan begun after that
// mutation has returned, so the partial batch is there to be seen for as
// long as one Scan takes, and one is seen whenever the kit scans while the
// batch is written: the kit must catch it every time, not by luck. (A Scan
// runs under mu, so it either precedes the first mutation or sees it.)
type nonAtomicStore struct {
	*frontier.MemoryStore
	mu      sync.Mutex
	cond    *sync.Cond
	partial bool // a Write is paused after its first mutation
	seen    int  // Scans made while partial was set
}

func newNonAtomicStore() *nonAtomicStore {
	s := &nonAtomicStore{MemoryStore: frontier.NewMemoryStore()}
	s.cond = sync.NewCond(&s.mu)
	return s
}

func (s *nonAtomicStore) Write(ctx context.Context, muts []frontier.Mutation) error {
	for i, m := range muts {
		if i > 0 {
			if err := s.MemoryStore.Write(ctx, []frontier.Mutation{m}); err != nil {
				return err
			}
			continue
		}
		s.mu.Lock()
		err := s.MemoryStore.Write(ctx, []frontier.Mutation{m})
		if err == nil && len(muts) > 1 {
			s.partial = true
			for n := s.seen; s.seen == n; {
				s.cond.Wait()
			}
			s.partial = false
		}
		s.mu.Unlock()
		if err != nil {
			return err
		}
	}
	return nil
}

func (s *nonAtomicStore) Scan(ctx context.Context, start, end []byte, limit int) ([]frontier.KV, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.partial {
		s.seen++
		s.cond.Broadcast()
	}
	return s.MemoryStore.Scan(ctx, start, end, limit)
}

func TestAtomicWriteCatchesNonAtomicStore(t *testing.T) {
	for run := range 20 {
		r := &recorder{}
		failed := r.run(func(tb testing.TB) { checkAtomicWrite(tb, newNonAtomicStore(), 200) })
		if len(failed) == 0 {
			t.Fatalf("run %d: the atomicity check passed a store that applies a Write one mutation at a time", run)
		}
		if !strings.Contains(failed[0], "not atomic") {
			t.Fatalf("run %d: the check failed for another reason: %q", run, failed)
		}
	}
}

func TestAtomicWritePassesAtomicStore(t *testing.T) {
	r := &recorder{}
	if failed := r.run(func(tb testing.TB) { checkAtomicWrite(tb, frontier.NewMemoryStore(), 200) }); len(failed) != 0 {
		t.Fatalf("the atomicity check failed MemoryStore: %q", failed)
	}
}
