// Package cputime measures CPU time for the benchmarks that compare two
// ways of doing one thing on a shared machine, where wall-clock time would
// charge one side with whatever else ran meanwhile.
package cputime

import (
	"syscall"
	"testing"
	"time"
)

// Thread returns the CPU time the calling OS thread has used; the caller
// locks itself to its thread (runtime.LockOSThread) for the figures to mean
// anything.
func Thread(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	const rusageThread = 1 // RUSAGE_THREAD, Linux
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
