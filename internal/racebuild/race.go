//go:build race

package racebuild

// Enabled reports whether the build has the race detector.
const Enabled = true
