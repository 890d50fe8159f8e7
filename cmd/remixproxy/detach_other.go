//go:build !unix

package main

import "os/exec"

// detach does nothing here: on Windows a started process already outlives its console's Ctrl-C.
func detach(cmd *exec.Cmd) {}
