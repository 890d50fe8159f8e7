package certs

import (
	"bytes"
	"crypto/elliptic"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// newTestCA makes a CA in a fresh temporary directory.
func newTestCA(t testing.TB) *CA {
	t.Helper()
	ca, created, err := LoadOrCreate(filepath.Join(t.TempDir(), "data"))
	if err != nil {
		t.Fatalf("LoadOrCreate: %v", err)
	}
	if !created {
		t.Fatalf("LoadOrCreate in an empty dir: created = false, want true")
	}
	return ca
}

func TestLoadOrCreateThenReload(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "b")
	ca, created, err := LoadOrCreate(dir)
	if err != nil || !created {
		t.Fatalf("first LoadOrCreate: created %v, err %v; want true, nil", created, err)
	}
	again, created, err := LoadOrCreate(dir)
	if err != nil || created {
		t.Fatalf("second LoadOrCreate: created %v, err %v; want false, nil", created, err)
	}
	if got, want := again.Fingerprint(), ca.Fingerprint(); got != want {
		t.Errorf("reloaded fingerprint %s, want %s", got, want)
	}
	if !again.Key.Equal(ca.Key) {
		t.Errorf("reloaded key differs from the created one")
	}
	if !bytes.Equal(again.CertPEM, ca.CertPEM) {
		t.Errorf("reloaded CertPEM differs from the created one")
	}
	if got, want := ca.CertPath, filepath.Join(dir, "remixproxy-ca.pem"); got != want {
		t.Errorf("CertPath %s, want %s", got, want)
	}
	if got, want := ca.KeyPath, filepath.Join(dir, "remixproxy-ca-key.pem"); got != want {
		t.Errorf("KeyPath %s, want %s", got, want)
	}
}

func TestCreatedFileModes(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "data")
	ca, _, err := LoadOrCreate(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		path string
		want fs.FileMode
	}{
		{"directory", dir, 0o700},
		{"key", ca.KeyPath, 0o600},
		{"certificate", ca.CertPath, 0o644},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fi, err := os.Stat(tc.path)
			if err != nil {
				t.Fatal(err)
			}
			if got := fi.Mode().Perm(); got != tc.want {
				t.Errorf("mode of %s: got %04o, want %04o", tc.path, got, tc.want)
			}
		})
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("data dir holds %d entries (%v), want exactly the two CA files", len(entries), entries)
	}
}

func TestCACertificateShape(t *testing.T) {
	ca := newTestCA(t)
	c := ca.Cert
	host, _ := os.Hostname()
	wantCN := "remixproxy CA (" + host + ", " + time.Now().Format("2006-01-02") + ")"
	checks := []struct {
		name      string
		got, want any
	}{
		{"CommonName", c.Subject.CommonName, wantCN},
		{"Organization", strings.Join(c.Subject.Organization, ","), "remixproxy"},
		{"IsCA", c.IsCA, true},
		{"BasicConstraintsValid", c.BasicConstraintsValid, true},
		{"MaxPathLen", c.MaxPathLen, 0},
		{"MaxPathLenZero", c.MaxPathLenZero, true},
		{"KeyUsage", c.KeyUsage, x509.KeyUsageCertSign | x509.KeyUsageCRLSign},
		{"curve", ca.Key.Curve, elliptic.P256()},
		{"self-signed issuer", c.Issuer.String(), c.Subject.String()},
		{"validity about 10 years", c.NotAfter.Sub(c.NotBefore).Round(24*time.Hour) / (24 * time.Hour), time.Duration(3650)},
		{"serial at most 128 bits", c.SerialNumber.BitLen() <= 128 && c.SerialNumber.Sign() > 0, true},
	}
	for _, tc := range checks {
		if tc.got != tc.want {
			t.Errorf("%s: got %v, want %v", tc.name, tc.got, tc.want)
		}
	}
	if err := c.CheckSignatureFrom(c); err != nil {
		t.Errorf("CA does not verify its own signature: %v", err)
	}
}

func TestCAUniquePerInstall(t *testing.T) {
	a, b := newTestCA(t), newTestCA(t)
	if a.Key.Equal(b.Key) {
		t.Errorf("two installs got the same key")
	}
	if a.Fingerprint() == b.Fingerprint() {
		t.Errorf("two installs got the same certificate")
	}
}

func TestConcurrentLoadOrCreateAgree(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	const n = 8
	fps := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for k := range n {
		wg.Go(func() {
			ca, _, err := LoadOrCreate(dir)
			errs[k] = err
			if err == nil {
				fps[k] = ca.Fingerprint()
			}
		})
	}
	wg.Wait()
	for k := range n {
		if errs[k] != nil {
			t.Fatalf("LoadOrCreate #%d: %v", k, errs[k])
		}
		if fps[k] != fps[0] {
			t.Errorf("LoadOrCreate #%d got CA %s, want the same as #0 (%s)", k, fps[k], fps[0])
		}
	}
	if _, err := Load(dir); err != nil {
		t.Errorf("Load after concurrent creation: %v", err)
	}
}

func TestLoadErrorsNameFilesAndNeverReplace(t *testing.T) {
	other := newTestCA(t)
	otherKey, err := os.ReadFile(other.KeyPath)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		damage   func(ca *CA) error
		wantIn   []string // substrings of the error; "CERT"/"KEY" stand for the paths
		wantErr  error    // errors.Is target, if any
		noKeyMod bool
	}{
		{
			name:   "corrupt certificate",
			damage: func(ca *CA) error { return os.WriteFile(ca.CertPath, []byte("garbage"), 0o644) },
			wantIn: []string{"CERT", "damaged", "move"},
		},
		{
			name:   "truncated certificate",
			damage: func(ca *CA) error { return os.WriteFile(ca.CertPath, ca.CertPEM[:len(ca.CertPEM)/2], 0o644) },
			wantIn: []string{"CERT", "damaged"},
		},
		{
			name: "corrupt key",
			damage: func(ca *CA) error {
				return os.WriteFile(ca.KeyPath, []byte("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"), 0o600)
			},
			wantIn: []string{"KEY", "damaged"},
		},
		{
			name:    "missing key",
			damage:  func(ca *CA) error { return os.Remove(ca.KeyPath) },
			wantIn:  []string{"CERT", "KEY", "missing", "backup"},
			wantErr: errIncomplete,
		},
		{
			name:    "missing certificate",
			damage:  func(ca *CA) error { return os.Remove(ca.CertPath) },
			wantIn:  []string{"CERT", "KEY", "missing", "backup"},
			wantErr: errIncomplete,
		},
		{
			name:    "key from another CA",
			damage:  func(ca *CA) error { return os.WriteFile(ca.KeyPath, otherKey, 0o600) },
			wantIn:  []string{"CERT", "KEY", "does not belong"},
			wantErr: errMismatch,
		},
		{
			name:     "key readable by others",
			damage:   func(ca *CA) error { return os.Chmod(ca.KeyPath, 0o644) },
			wantIn:   []string{"chmod 600 KEY", "0644"},
			noKeyMod: true,
		},
		{
			name:     "key readable by group",
			damage:   func(ca *CA) error { return os.Chmod(ca.KeyPath, 0o640) },
			wantIn:   []string{"chmod 600 KEY"},
			noKeyMod: true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ca := newTestCA(t)
			dir := filepath.Dir(ca.CertPath)
			if err := tc.damage(ca); err != nil {
				t.Fatal(err)
			}
			before := snapshot(t, dir)
			_, created, err := LoadOrCreate(dir)
			if err == nil {
				t.Fatalf("LoadOrCreate: got no error, want one")
			}
			if created {
				t.Errorf("created = true, want false")
			}
			for _, w := range tc.wantIn {
				w = strings.ReplaceAll(w, "CERT", ca.CertPath)
				w = strings.ReplaceAll(w, "KEY", ca.KeyPath)
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
				t.Errorf("error %v is not %v", err, tc.wantErr)
			}
			if errors.Is(err, fs.ErrNotExist) {
				t.Errorf("error %v wraps fs.ErrNotExist, so a caller could mistake it for 'no CA yet'", err)
			}
			if after := snapshot(t, dir); after != before {
				t.Errorf("files changed after the failed load:\nbefore %s\nafter  %s", before, after)
			}
		})
	}
}

// snapshot describes the files in dir (names, modes, contents) to detect any change.
func snapshot(t *testing.T, dir string) string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, e := range entries {
		fi, _ := e.Info()
		data, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		sum := sha256.Sum256(data)
		b.WriteString(e.Name() + " " + fi.Mode().String() + " " + base64.StdEncoding.EncodeToString(sum[:4]) + "; ")
	}
	return b.String()
}

func TestLoadWithoutCAIsNotExist(t *testing.T) {
	dir := t.TempDir()
	_, err := Load(dir)
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Load of an empty dir: got %v, want an error wrapping fs.ErrNotExist", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("Load created %d files, want none", len(entries))
	}
}

func TestFingerprintAndSPKIHash(t *testing.T) {
	ca := newTestCA(t)

	sum := sha256.Sum256(ca.Cert.Raw)
	fp := ca.Fingerprint()
	if ok, _ := regexp.MatchString(`^([0-9A-F]{2}:){31}[0-9A-F]{2}$`, fp); !ok {
		t.Errorf("Fingerprint %q is not 32 uppercase hex pairs joined by colons", fp)
	}
	if got, want := strings.ReplaceAll(fp, ":", ""), strings.ToUpper(hex.EncodeToString(sum[:])); got != want {
		t.Errorf("Fingerprint digits %s, want %s", got, want)
	}

	// Independent computation: marshal the public key ourselves instead of using the cert's bytes.
	spki, err := x509.MarshalPKIXPublicKey(&ca.Key.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	spkiSum := sha256.Sum256(spki)
	if got, want := ca.SPKIHash(), base64.StdEncoding.EncodeToString(spkiSum[:]); got != want {
		t.Errorf("SPKIHash %s, want %s", got, want)
	}
}

func TestLoadAcceptsSEC1Key(t *testing.T) {
	// A key written by other tools (openssl ecparam) is "EC PRIVATE KEY"; it loads too.
	ca := newTestCA(t)
	der, err := x509.MarshalECPrivateKey(ca.Key)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ca.KeyPath, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := Load(filepath.Dir(ca.KeyPath))
	if err != nil {
		t.Fatalf("Load with a SEC 1 key: %v", err)
	}
	if !got.Key.Equal(ca.Key) {
		t.Errorf("loaded key differs")
	}
}
