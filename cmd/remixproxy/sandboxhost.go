package main

import (
	"errors"
	"os"

	"github.com/remixproxy/remixproxy/sandbox"
)

// runSandboxHost is the hidden "sandbox-host" command: the child process the proxy's sandbox
// supervisor starts (sandbox.SupervisorConfig.Command defaults to this binary with this
// argument). It speaks the sandbox host protocol on stdin and stdout and is not for people.
func runSandboxHost(args []string) error {
	if len(args) != 0 {
		return errors.New("sandbox-host takes no arguments; it is started by the proxy")
	}
	os.Exit(sandbox.HostMain())
	return nil
}
