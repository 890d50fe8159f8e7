package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/remixproxy/remixproxy/certs"
)

// runTrust is `remixproxy trust`: install the CA in the system and browser trust stores.
func runTrust(args []string) error {
	return trustCommand(os.Stdout, "trust", args, certs.Install)
}

// runUntrust is `remixproxy untrust`: remove the CA from the stores `trust` writes.
func runUntrust(args []string) error {
	return trustCommand(os.Stdout, "untrust", args, certs.Uninstall)
}

// trustCommand runs apply (certs.Install or certs.Uninstall) on the CA in --data-dir and prints
// one line per store. It fails when every store was skipped, so scripts notice.
func trustCommand(w io.Writer, name string, args []string, apply func(*certs.CA) ([]certs.StoreResult, error)) error {
	var dataDir string
	fset := newFlagSet(name, &dataDir)
	if err := fset.Parse(args); err != nil {
		return err
	}
	if fset.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q (see remixproxy %s -h)", fset.Arg(0), name)
	}
	install := name == "trust"

	var ca *certs.CA
	var err error
	if install {
		var created bool
		ca, created, err = certs.LoadOrCreate(dataDir)
		if err == nil && created {
			fmt.Fprintf(w, "created a new CA: %s\n", ca.CertPath)
		}
	} else {
		// Removing must not create a CA just to remove it.
		ca, err = certs.Load(dataDir)
		if errors.Is(err, fs.ErrNotExist) {
			fmt.Fprintf(w, "no CA in %s, so nothing to remove (pass the proxy's --data-dir if it uses another one)\n", dataDir)
			return nil
		}
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "CA %s\n   SHA-256 %s\n", ca.CertPath, ca.Fingerprint())

	results, err := apply(ca)
	if err != nil {
		return err
	}
	printStoreResults(w, results, install)
	if allSkipped(results) {
		if install {
			return errors.New("no trust store could be changed: run the fix commands above and try again, " +
				"or browse with `remixproxy browser`, which trusts the CA in its own profile without any trust store")
		}
		return errors.New("no trust store could be changed: run the fix commands above and try again")
	}
	return nil
}

// printStoreResults prints "✓ store: installed", "✓ store: already trusted" or
// "✗ store: skipped: why — fix: command", one line per store.
func printStoreResults(w io.Writer, results []certs.StoreResult, install bool) {
	for _, r := range results {
		switch {
		case r.Skipped:
			fmt.Fprintf(w, "✗ %s: skipped: %s — fix: %s\n", r.Store, r.Why, r.Fix)
		case r.Changed && install:
			fmt.Fprintf(w, "✓ %s: installed\n", r.Store)
		case r.Changed:
			fmt.Fprintf(w, "✓ %s: removed\n", r.Store)
		case r.Already && install:
			fmt.Fprintf(w, "✓ %s: already trusted\n", r.Store)
		case r.Already:
			fmt.Fprintf(w, "✓ %s: already absent\n", r.Store)
		default:
			fmt.Fprintf(w, "? %s: no change reported\n", r.Store)
		}
	}
}

// allSkipped reports whether no store is in the wanted state (an empty list counts as skipped).
func allSkipped(results []certs.StoreResult) bool {
	for _, r := range results {
		if !r.Skipped {
			return false
		}
	}
	return true
}
