// Command remixproxy is the local intercepting proxy that lets a person remix the websites they
// use. This package is the command line only: flags become a configuration, the configuration is
// wired to the packages that do the work. It holds no proxy, certificate or rewriting logic.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

// command is one subcommand of the CLI.
type command struct {
	summary string
	run     func(args []string) error
}

func commands() map[string]command {
	return map[string]command{
		"run":            {"start the proxy (the default)", runProxy},
		"ca":             {"create the local CA if missing; print its path and fingerprint", runCA},
		"trust":          {"install the CA in the system and browser trust stores", runTrust},
		"untrust":        {"remove the CA from the system and browser trust stores", runUntrust},
		"sysproxy":       {"on|off|status: point the system proxy setting at remixproxy", runSysproxy},
		"browser":        {"launch Chromium/Chrome with a profile that uses the proxy and trusts its CA", runBrowser},
		"version":        {"print the version", runVersion},
		"remixlet":       {"add DIR | list | show | log | pause | resume | delete NAME: manage remixlets", runRemixlet},
		"site":           {"pause | resume HOST | list: stop or restart every remixlet on a site", runSite},
		"scripted-model": {"[SCRIPT.json]: serve a scripted model to try the chat offline (see --model-url)", runScriptedModel},
		"sandbox-host":   {"(internal) remixlet sandbox host child; started by the proxy", runSandboxHost},
	}
}

func main() {
	args := os.Args[1:]
	name := "run"
	if len(args) > 0 && len(args[0]) > 0 && args[0][0] != '-' {
		name, args = args[0], args[1:]
	}
	if name == "help" {
		usage()
		return
	}
	cmd, ok := commands()[name]
	if !ok {
		fmt.Fprintf(os.Stderr, "remixproxy: unknown command %q\n\n", name)
		usage()
		os.Exit(2)
	}
	if err := cmd.run(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		fmt.Fprintf(os.Stderr, "remixproxy %s: %v\n", name, err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintf(os.Stderr, "usage: remixproxy [command] [flags]\n\ncommands:\n")
	cmds := commands()
	names := make([]string, 0, len(cmds))
	for n := range cmds {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if strings.HasPrefix(cmds[n].summary, "(internal)") {
			continue
		}
		fmt.Fprintf(os.Stderr, "  %-9s %s\n", n, cmds[n].summary)
	}
	fmt.Fprintf(os.Stderr, "\nRun 'remixproxy COMMAND -h' for a command's flags.\n")
}

// defaultDataDir is where the CA, settings and store live unless --data-dir says otherwise:
// "remixproxy" under the user's config directory (~/.config/remixproxy on Linux).
func defaultDataDir() string {
	if d, err := os.UserConfigDir(); err == nil {
		return filepath.Join(d, "remixproxy")
	}
	return "remixproxy-data"
}

// newFlagSet returns a flag set for a subcommand with the --data-dir flag every command shares.
func newFlagSet(name string, dataDir *string) *flag.FlagSet {
	fs := flag.NewFlagSet("remixproxy "+name, flag.ContinueOnError)
	fs.StringVar(dataDir, "data-dir", defaultDataDir(), "directory for the CA, settings and store")
	return fs
}

func runVersion(args []string) error {
	fmt.Println("remixproxy", version)
	return nil
}
