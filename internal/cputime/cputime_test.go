//go:build linux

package cputime

import (
	"runtime"
	"testing"
)

func TestThreadAdvancesWithWork(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	before := Thread(t)
	x := 0
	for i := 0; Thread(t) == before && i < 1e9; i++ {
		x += i
	}
	if Thread(t) <= before {
		t.Fatalf("thread CPU stayed at %v (%d)", before, x)
	}
}
