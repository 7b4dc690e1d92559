//go:build !linux

package distributed_test

import "os/exec"

// dieWithParent is a no-op where the platform cannot tie a child's life to
// its parent's; the tests' cleanups still kill their children.
func dieWithParent(*exec.Cmd) {}
