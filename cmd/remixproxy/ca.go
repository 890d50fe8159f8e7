package main

import (
	"fmt"
	"io"
	"os"

	"github.com/remixproxy/remixproxy/certs"
)

// runCA is `remixproxy ca [--data-dir D]`: create the CA if missing and print where it is and
// how to recognise it.
func runCA(args []string) error {
	return caCommand(os.Stdout, args)
}

func caCommand(w io.Writer, args []string) error {
	var dataDir string
	fs := newFlagSet("ca", &dataDir)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q (see remixproxy ca -h)", fs.Arg(0))
	}
	ca, created, err := certs.LoadOrCreate(dataDir)
	if err != nil {
		return err
	}
	state := "existing"
	if created {
		state = "created"
	}
	fmt.Fprintf(w, "CA certificate: %s\n", ca.CertPath)
	fmt.Fprintf(w, "CA key:         %s (keep it private: whoever has it can impersonate any site to you)\n", ca.KeyPath)
	fmt.Fprintf(w, "SHA-256:        %s\n", ca.Fingerprint())
	fmt.Fprintf(w, "SPKI hash:      %s (for Chromium's --ignore-certificate-errors-spki-list)\n", ca.SPKIHash())
	fmt.Fprintf(w, "state:          %s\n", state)
	return nil
}
