//go:build !race

package distributed_test

// raceDetector is true when the tests run under -race, which slows every
// node process several times.
const raceDetector = false
