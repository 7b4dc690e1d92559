package backendtest

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

// CloseDuringUse checks that a backend closed while its stores are in use
// ends every call cleanly. ops are calls on the backend's stores, by name.
// Each op runs in two goroutines, which call it with i = 0, 1, 2, ...
// until it returns an error; once every goroutine has made its first
// call, closeBackend is called from two goroutines at once. Every call
// must succeed or fail with errClosed (tested with errors.Is), none may
// panic, both calls of closeBackend must return nil, and afterwards every
// op must fail with errClosed.
func CloseDuringUse(t testing.TB, closeBackend func() error, errClosed error, ops map[string]func(i int) error) {
	t.Helper()
	const perOp = 2
	var (
		calling sync.WaitGroup // the goroutines that have not made a call yet
		running sync.WaitGroup
		mu      sync.Mutex
		fails   []string // under mu
	)
	fail := func(format string, args ...any) {
		mu.Lock()
		fails = append(fails, fmt.Sprintf(format, args...))
		mu.Unlock()
	}
	// call makes one call of op, turning a panic into a failure.
	call := func(op func(int) error, i int) (err error) {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("panic: %v", r)
			}
		}()
		return op(i)
	}
	for name, op := range ops {
		for range perOp {
			calling.Add(1)
			running.Add(1)
			go func() {
				defer running.Done()
				for i := 0; ; i++ {
					err := call(op, i)
					if i == 0 {
						calling.Done()
					}
					if err == nil {
						continue
					}
					if !errors.Is(err, errClosed) {
						fail("%s call %d while closing: %v, want success or %v", name, i, err, errClosed)
					}
					return
				}
			}()
		}
	}
	calling.Wait()
	closeErrs := make(chan error, 2)
	for range 2 {
		go func() {
			defer func() {
				if r := recover(); r != nil {
					closeErrs <- fmt.Errorf("panic: %v", r)
				}
			}()
			closeErrs <- closeBackend()
		}()
	}
	ended := make(chan struct{})
	go func() {
		running.Wait()
		close(ended)
	}()
	// A call that panicked inside the backend may have left it locked, so
	// the waits are bounded (by a minute, as in WaitUntil) to report such
	// a hang with the failures that led to it.
	deadline := time.After(time.Minute)
	report := func() {
		mu.Lock()
		defer mu.Unlock()
		for _, f := range fails {
			t.Error(f)
		}
		fails = nil
	}
	for range 2 {
		select {
		case err := <-closeErrs:
			if err != nil {
				fail("Close during use: %v", err)
			}
		case <-deadline:
			report()
			t.Fatal("Close did not return within a minute")
		}
	}
	select {
	case <-ended:
	case <-deadline:
		report()
		t.Fatal("calls still running a minute after Close began")
	}
	for name, op := range ops {
		if err := call(op, 0); !errors.Is(err, errClosed) {
			fail("%s after Close: %v, want %v", name, err, errClosed)
		}
	}
	report()
}
