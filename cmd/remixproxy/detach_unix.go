//go:build unix

package main

import (
	"os/exec"
	"syscall"
)

// detach makes cmd the leader of a session of its own, so the browser keeps running when the
// terminal that launched it closes or gets Ctrl-C (which signals the whole process group).
func detach(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
}
