package certs

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// File names of the CA inside its directory.
const (
	certFileName = "remixproxy-ca.pem"
	keyFileName  = "remixproxy-ca-key.pem"
)

// caValidity is how long a new root is valid. The root never leaves this machine; leaves are short.
const caValidity = 10 * 365 * 24 * time.Hour

// CA is the proxy's local root. Every install has its own; the key never leaves KeyPath.
type CA struct {
	Cert     *x509.Certificate
	Key      *ecdsa.PrivateKey
	CertPEM  []byte
	CertPath string // <dir>/remixproxy-ca.pem, mode 0644
	KeyPath  string // <dir>/remixproxy-ca-key.pem, mode 0600
}

// LoadOrCreate loads the CA from dir, creating dir (0700) and a new CA if none is there.
// created says whether it was just made. A half-written or mismatched pair is an error that
// names the files and says what to do; it is never silently replaced.
func LoadOrCreate(dir string) (ca *CA, created bool, err error) {
	ca, err = loadSettled(dir)
	if err == nil {
		return ca, false, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, false, err
	}
	ca, err = create(dir)
	if errors.Is(err, fs.ErrExist) {
		// Another remixproxy created the CA at the same moment: use its CA.
		ca, err = loadSettled(dir)
		return ca, false, err
	}
	if err != nil {
		return nil, false, err
	}
	return ca, true, nil
}

// loadSettled is Load, except that while another process is creating the CA in dir (its
// temporary files are there) it waits up to a second for the pair to be complete.
func loadSettled(dir string) (*CA, error) {
	ca, err := Load(dir)
	for n := 0; n < 40 && errors.Is(err, errIncomplete) && creating(dir); n++ {
		time.Sleep(25 * time.Millisecond)
		ca, err = Load(dir)
	}
	return ca, err
}

// creating reports whether dir holds fresh temporary files of a CA being created.
func creating(dir string) bool {
	tmps, _ := filepath.Glob(filepath.Join(dir, ".remixproxy-ca*.tmp-*"))
	for _, p := range tmps {
		if fi, err := os.Stat(p); err == nil && time.Since(fi.ModTime()) < 10*time.Second {
			return true
		}
	}
	return false
}

// Load loads the CA from dir without creating one. If neither file exists, the error wraps
// fs.ErrNotExist; if only one does, or they do not belong together, the error says what to do.
func Load(dir string) (*CA, error) {
	certPath, keyPath := filepath.Join(dir, certFileName), filepath.Join(dir, keyFileName)
	certPEM, certErr := os.ReadFile(certPath)
	keyPEM, keyErr := os.ReadFile(keyPath)
	switch {
	case errors.Is(certErr, fs.ErrNotExist) && errors.Is(keyErr, fs.ErrNotExist):
		return nil, fmt.Errorf("loading CA from %s: no CA there yet: %w", dir, fs.ErrNotExist)
	case certErr == nil && errors.Is(keyErr, fs.ErrNotExist):
		return nil, fmt.Errorf("loading CA: %s exists but its key %s is missing; "+
			"if you have a backup of the key, put it back; otherwise move %s away so a new CA is made "+
			"(and run `remixproxy trust` again): %w", certPath, keyPath, certPath, errIncomplete)
	case keyErr == nil && errors.Is(certErr, fs.ErrNotExist):
		return nil, fmt.Errorf("loading CA: %s exists but its certificate %s is missing; "+
			"if you have a backup of the certificate, put it back; otherwise move %s away so a new CA is made "+
			"(and run `remixproxy trust` again): %w", keyPath, certPath, keyPath, errIncomplete)
	case certErr != nil:
		return nil, fmt.Errorf("loading CA certificate %s: %w (check the file and its directory are readable)", certPath, certErr)
	case keyErr != nil:
		return nil, fmt.Errorf("loading CA key %s: %w (check the file is readable by you, mode 0600)", keyPath, keyErr)
	}
	if err := checkKeyMode(keyPath); err != nil {
		return nil, err
	}
	cert, err := parseCertPEM(certPEM)
	if err != nil {
		return nil, fmt.Errorf("loading CA certificate %s: %w; the file is damaged: restore it from a backup, "+
			"or move %s and %s away so a new CA is made (and run `remixproxy trust` again)",
			certPath, err, certPath, keyPath)
	}
	key, err := parseKeyPEM(keyPEM)
	if err != nil {
		return nil, fmt.Errorf("loading CA key %s: %w; the file is damaged: restore it from a backup, "+
			"or move %s and %s away so a new CA is made (and run `remixproxy trust` again)",
			keyPath, err, certPath, keyPath)
	}
	if pub, ok := cert.PublicKey.(*ecdsa.PublicKey); !ok || !pub.Equal(&key.PublicKey) {
		return nil, fmt.Errorf("loading CA: the key %s does not belong to the certificate %s; "+
			"put the matching pair back, or move both away so a new CA is made (and run `remixproxy trust` again): %w",
			keyPath, certPath, errMismatch)
	}
	return &CA{Cert: cert, Key: key, CertPEM: certPEM, CertPath: certPath, KeyPath: keyPath}, nil
}

var (
	errIncomplete = errors.New("incomplete CA")
	errMismatch   = errors.New("CA key and certificate do not match")
)

// checkKeyMode refuses a key file that group or others can read. Windows has no such bits.
func checkKeyMode(keyPath string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	fi, err := os.Stat(keyPath)
	if err != nil {
		return fmt.Errorf("loading CA key %s: %w", keyPath, err)
	}
	if mode := fi.Mode().Perm(); mode&0o077 != 0 {
		return fmt.Errorf("loading CA key %s: its mode is %04o, so other users may read it; "+
			"run `chmod 600 %s` (and, if others did read it, move the CA files away and make a new CA)",
			keyPath, mode, keyPath)
	}
	return nil
}

func parseCertPEM(data []byte) (*x509.Certificate, error) {
	block, rest := pem.Decode(data)
	if block == nil || block.Type != "CERTIFICATE" {
		return nil, errors.New("no PEM CERTIFICATE block")
	}
	if len(strings.TrimSpace(string(rest))) != 0 {
		return nil, errors.New("unexpected data after the certificate")
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return nil, err
	}
	if !cert.IsCA {
		return nil, errors.New("the certificate is not a CA")
	}
	if _, ok := cert.PublicKey.(*ecdsa.PublicKey); !ok {
		return nil, fmt.Errorf("the certificate's key is %T, want ECDSA", cert.PublicKey)
	}
	return cert, nil
}

func parseKeyPEM(data []byte) (*ecdsa.PrivateKey, error) {
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, errors.New("no PEM block")
	}
	switch block.Type {
	case "PRIVATE KEY":
		k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
		if err != nil {
			return nil, err
		}
		ec, ok := k.(*ecdsa.PrivateKey)
		if !ok {
			return nil, fmt.Errorf("the key is %T, want ECDSA", k)
		}
		return ec, nil
	case "EC PRIVATE KEY":
		return x509.ParseECPrivateKey(block.Bytes)
	default:
		return nil, fmt.Errorf("PEM block is %q, want PRIVATE KEY", block.Type)
	}
}

// create makes a new CA in dir. It never replaces existing files: if one appeared meanwhile,
// the error wraps fs.ErrExist.
func create(dir string) (*CA, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating CA directory %s: %w (choose another one with --data-dir)", dir, err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("creating CA key: %w", err)
	}
	serial, err := randomSerial()
	if err != nil {
		return nil, fmt.Errorf("creating CA: %w", err)
	}
	hostname, err := os.Hostname()
	if err != nil || hostname == "" {
		hostname = "unknown host"
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject: pkix.Name{
			CommonName:   fmt.Sprintf("remixproxy CA (%s, %s)", hostname, now.Format("2006-01-02")),
			Organization: []string{"remixproxy"},
		},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(caValidity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLen:            0,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("creating CA certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("creating CA certificate: %w", err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("creating CA key: %w", err)
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})

	ca := &CA{
		Cert: cert, Key: key, CertPEM: certPEM,
		CertPath: filepath.Join(dir, certFileName),
		KeyPath:  filepath.Join(dir, keyFileName),
	}
	// Both temporary files exist until both final names do, which tells a concurrent
	// LoadOrCreate to wait. Key first: a crash in between leaves a key without a certificate,
	// which Load reports.
	tmpKey, err := writeTemp(ca.KeyPath, keyPEM, 0o600)
	if err != nil {
		return nil, fmt.Errorf("writing CA key: %w", err)
	}
	defer os.Remove(tmpKey)
	tmpCert, err := writeTemp(ca.CertPath, certPEM, 0o644)
	if err != nil {
		return nil, fmt.Errorf("writing CA certificate: %w", err)
	}
	defer os.Remove(tmpCert)
	if err := linkNew(tmpKey, ca.KeyPath); err != nil {
		return nil, fmt.Errorf("writing CA key: %w", err)
	}
	if err := linkNew(tmpCert, ca.CertPath); err != nil {
		if errors.Is(err, fs.ErrExist) {
			// Someone else's certificate with our key would be a mismatched pair: take our key back.
			os.Remove(ca.KeyPath)
		}
		return nil, fmt.Errorf("writing CA certificate: %w", err)
	}
	return ca, nil
}

// writeTemp writes data with the given mode to a new temporary file next to path and
// returns its name.
func writeTemp(path string, data []byte, mode fs.FileMode) (string, error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return "", fmt.Errorf("creating temp file next to %s: %w", path, err)
	}
	tmp := f.Name()
	err = f.Chmod(mode)
	if runtime.GOOS == "windows" {
		err = nil
	}
	if err == nil {
		_, err = f.Write(data)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("writing %s: %w", tmp, err)
	}
	return tmp, nil
}

// linkNew gives the complete temporary file tmp its final name path, atomically, and never
// replaces an existing file (the error then wraps fs.ErrExist). A hard link fails if path
// exists, so two processes creating a CA at once cannot mix their files; where links are not
// supported it falls back to rename after a check.
func linkNew(tmp, path string) error {
	err := os.Link(tmp, path)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, fs.ErrExist):
		return fmt.Errorf("%s appeared while creating it: %w", path, err)
	}
	if _, statErr := os.Lstat(path); statErr == nil {
		return fmt.Errorf("%s appeared while creating it: %w", path, fs.ErrExist)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("moving %s to %s: %w", tmp, path, err)
	}
	return nil
}

// randomSerial returns a positive random serial number of up to 128 bits.
func randomSerial() (*big.Int, error) {
	limit := new(big.Int).Lsh(big.NewInt(1), 128)
	for {
		n, err := rand.Int(rand.Reader, limit)
		if err != nil {
			return nil, fmt.Errorf("generating serial number: %w", err)
		}
		if n.Sign() > 0 {
			return n, nil
		}
	}
}

// Fingerprint is the SHA-256 of the DER certificate, uppercase hex with colons
// ("AB:CD:…"), as browsers show it.
func (ca *CA) Fingerprint() string {
	sum := sha256.Sum256(ca.Cert.Raw)
	h := strings.ToUpper(hex.EncodeToString(sum[:]))
	var b strings.Builder
	for i := 0; i < len(h); i += 2 {
		if i > 0 {
			b.WriteByte(':')
		}
		b.WriteString(h[i : i+2])
	}
	return b.String()
}

// SPKIHash is the standard base64 of the SHA-256 of the CA's SubjectPublicKeyInfo: the value for
// Chromium's --ignore-certificate-errors-spki-list. Leaves share the CA's key, so it matches them too.
func (ca *CA) SPKIHash() string {
	sum := sha256.Sum256(ca.Cert.RawSubjectPublicKeyInfo)
	return base64.StdEncoding.EncodeToString(sum[:])
}
