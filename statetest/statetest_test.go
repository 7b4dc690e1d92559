package statetest

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"

	"github.com/crawlkit/crawlkit"
)

func TestMemoryConformance(t *testing.T) {
	var mu sync.Mutex
	stores := map[string]*Memory{}
	Run(t, func(_ *testing.T, dir string) crawlkit.StateStore {
		mu.Lock()
		defer mu.Unlock()
		if stores[dir] == nil {
			stores[dir] = &Memory{}
		}
		return stores[dir]
	})
}

// lossy loses updates: it reads, then writes without holding the record,
// as a store without a transaction would.
type lossy struct{ Memory }

func (l *lossy) UpdateState(ctx context.Context, name string, update func([]byte) ([]byte, error)) error {
	var old []byte
	_ = l.Memory.UpdateState(ctx, name, func(o []byte) ([]byte, error) { old = o; return o, nil })
	v, err := update(old)
	if err != nil {
		return err
	}
	runtime.Gosched() // let another update read the same old value
	return l.Memory.UpdateState(ctx, name, func([]byte) ([]byte, error) { return v, nil })
}

// swallowing drops the update's error.
type swallowing struct{ Memory }

func (s *swallowing) UpdateState(ctx context.Context, name string, update func([]byte) ([]byte, error)) error {
	_ = s.Memory.UpdateState(ctx, name, update)
	return nil
}

// recorder is a testing.TB that records failures; Fatal ends the check's
// goroutine as testing.T does.
type recorder struct {
	testing.TB
	mu     sync.Mutex
	failed []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failed = append(r.failed, fmt.Sprintf(format, args...))
}
func (r *recorder) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
	runtime.Goexit()
}

func runCheck(fn func(testing.TB, func() crawlkit.StateStore), s crawlkit.StateStore) []string {
	r := &recorder{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn(r, func() crawlkit.StateStore { return s })
	}()
	<-done
	return r.failed
}

// The kit catches a store that loses concurrent updates and one that
// swallows the update's error.
func TestKitCatchesBrokenStores(t *testing.T) {
	for _, c := range []struct {
		store crawlkit.StateStore
		check string
	}{{&lossy{}, "Concurrent"}, {&swallowing{}, "FailedUpdate"}} {
		for _, k := range checks {
			if k.name == c.check {
				if failed := runCheck(k.fn, c.store); len(failed) == 0 {
					t.Errorf("%s passed a %T", k.name, c.store)
				} else {
					t.Logf("%T: %s", c.store, failed[0])
				}
			}
		}
	}
}

func Example() {
	var m Memory
	add := func(old []byte) ([]byte, error) { return append(old, '+'), nil }
	m.UpdateState(context.Background(), "counter", add)
	m.UpdateState(context.Background(), "counter", add)
	err := m.UpdateState(context.Background(), "counter", func([]byte) ([]byte, error) {
		return nil, errors.New("refused")
	})
	m.UpdateState(context.Background(), "counter", func(old []byte) ([]byte, error) {
		fmt.Printf("%s %v\n", old, err)
		return old, nil
	})
	// Output: ++ refused
}
