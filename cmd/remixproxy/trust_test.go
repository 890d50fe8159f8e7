package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/remixproxy/remixproxy/certs"
)

func TestTrustCommandPrintsEachStore(t *testing.T) {
	skippedNSS := certs.StoreResult{Store: "nss (Chrome/Chromium profile ~/.pki/nssdb)", Skipped: true,
		Why: "certutil (the NSS tools) is not installed", Fix: "sudo apt-get install -y libnss3-tools"}
	tests := []struct {
		name      string
		command   string
		results   []certs.StoreResult
		applyErr  error
		wantLines []string
		wantErrIn string // "" means no error
	}{
		{
			name:    "install mixed",
			command: "trust",
			results: []certs.StoreResult{
				{Store: "system", Changed: true},
				{Store: "firefox (1 profile)", Already: true},
				skippedNSS,
			},
			wantLines: []string{
				"✓ system: installed",
				"✓ firefox (1 profile): already trusted",
				"✗ nss (Chrome/Chromium profile ~/.pki/nssdb): skipped: certutil (the NSS tools) is not installed — fix: sudo apt-get install -y libnss3-tools",
			},
		},
		{
			name:      "install all skipped",
			command:   "trust",
			results:   []certs.StoreResult{skippedNSS, {Store: "system", Skipped: true, Why: "no sudo", Fix: "su -c 'x'"}},
			wantLines: []string{"✗ system: skipped: no sudo — fix: su -c 'x'"},
			wantErrIn: "remixproxy browser",
		},
		{
			name:    "uninstall mixed",
			command: "untrust",
			results: []certs.StoreResult{
				{Store: "system", Changed: true},
				{Store: "java", Already: true},
			},
			wantLines: []string{"✓ system: removed", "✓ java: already absent"},
		},
		{
			name:      "uninstall all skipped",
			command:   "untrust",
			results:   []certs.StoreResult{skippedNSS},
			wantErrIn: "no trust store could be changed",
		},
		{
			name:      "apply error",
			command:   "trust",
			applyErr:  errors.New("changing trust stores: boom"),
			wantErrIn: "boom",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "data")
			if _, _, err := certs.LoadOrCreate(dir); err != nil {
				t.Fatal(err)
			}
			var gotCA *certs.CA
			apply := func(ca *certs.CA) ([]certs.StoreResult, error) {
				gotCA = ca
				return tc.results, tc.applyErr
			}
			var out bytes.Buffer
			err := trustCommand(&out, tc.command, []string{"--data-dir", dir}, apply)
			switch {
			case tc.wantErrIn == "" && err != nil:
				t.Errorf("got error %v, want none", err)
			case tc.wantErrIn != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErrIn)):
				t.Errorf("got error %v, want one containing %q", err, tc.wantErrIn)
			}
			if gotCA == nil || gotCA.CertPath != filepath.Join(dir, "remixproxy-ca.pem") {
				t.Errorf("apply got CA %+v, want the one in %s", gotCA, dir)
			}
			lines := strings.Split(out.String(), "\n")
			for _, want := range tc.wantLines {
				found := false
				for _, l := range lines {
					found = found || l == want
				}
				if !found {
					t.Errorf("output has no line %q; got:\n%s", want, out.String())
				}
			}
		})
	}
}

func TestUntrustWithoutCACreatesNothing(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	called := false
	apply := func(*certs.CA) ([]certs.StoreResult, error) { called = true; return nil, nil }
	var out bytes.Buffer
	if err := trustCommand(&out, "untrust", []string{"--data-dir", dir}, apply); err != nil {
		t.Fatalf("got %v, want no error", err)
	}
	if called {
		t.Errorf("Uninstall was called without a CA")
	}
	if !strings.Contains(out.String(), "nothing to remove") {
		t.Errorf("output %q, want it to say there is nothing to remove", out.String())
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("untrust created %s (stat: %v), want nothing created", dir, err)
	}
}

func TestTrustCreatesCAWhenMissing(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	apply := func(*certs.CA) ([]certs.StoreResult, error) {
		return []certs.StoreResult{{Store: "system", Changed: true}}, nil
	}
	var out bytes.Buffer
	if err := trustCommand(&out, "trust", []string{"--data-dir", dir}, apply); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "created a new CA: "+filepath.Join(dir, "remixproxy-ca.pem")) {
		t.Errorf("output %q, want it to say a new CA was created", out.String())
	}
}
