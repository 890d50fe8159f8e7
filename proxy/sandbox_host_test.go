package proxy

import (
	"os"

	"github.com/remixproxy/remixproxy/sandbox"
)

// The proxy's tests run remixlets: the sandbox supervisor starts this test binary with the
// argument "sandbox-host" as the sandbox host (sandbox.SupervisorConfig's default), which must
// then serve as one instead of running the tests.
func init() {
	if len(os.Args) == 2 && os.Args[1] == "sandbox-host" {
		os.Exit(sandbox.HostMain())
	}
}
