package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/remixproxy/remixproxy/certs"
)

func TestCACommandCreatesThenReports(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	tests := []struct {
		name      string
		wantState string
	}{
		{"first run", "state:          created"},
		{"second run", "state:          existing"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			if err := caCommand(&out, []string{"--data-dir", dir}); err != nil {
				t.Fatalf("caCommand: %v", err)
			}
			ca, err := certs.Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{
				"CA certificate: " + ca.CertPath + "\n",
				"CA key:         " + ca.KeyPath + " ",
				"SHA-256:        " + ca.Fingerprint() + "\n",
				"SPKI hash:      " + ca.SPKIHash() + " ",
				tc.wantState + "\n",
			} {
				if !strings.Contains(out.String(), want) {
					t.Errorf("output does not contain %q; got:\n%s", want, out.String())
				}
			}
		})
	}
}

func TestCACommandRejectsArguments(t *testing.T) {
	err := caCommand(&bytes.Buffer{}, []string{"--data-dir", t.TempDir(), "extra"})
	if err == nil || !strings.Contains(err.Error(), `unexpected argument "extra"`) {
		t.Errorf("got %v, want an unexpected-argument error", err)
	}
}
