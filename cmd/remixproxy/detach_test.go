//go:build unix

package main

import (
	"os/exec"
	"testing"
)

func TestDetachStartsANewSession(t *testing.T) {
	cmd := exec.Command("true")
	detach(cmd)
	if cmd.SysProcAttr == nil || !cmd.SysProcAttr.Setsid {
		t.Fatal("the browser would stay in the terminal's process group")
	}
}
