package distributed_test

import (
	"os/exec"
	"syscall"
)

// dieWithParent makes a child process get SIGKILL when the test process
// dies, so an interrupted test leaves no node or server behind.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
