//go:build !race

// Package racebuild tells tests whether the race detector is on, for the
// checks it makes meaningless: allocation counts (it makes sync.Pool drop
// items on purpose) and runs it makes too slow.
package racebuild

// Enabled reports whether the build has the race detector.
const Enabled = false
