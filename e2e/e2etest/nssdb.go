package e2etest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// writeNSSDB creates $home/.pki/nssdb, the NSS database Chromium on Linux reads its user trust
// from (the same one truststore's NSS option writes), trusting each CA in cas for TLS servers.
func writeNSSDB(home string, cas map[string][]byte) error {
	if _, err := exec.LookPath("certutil"); err != nil {
		return fmt.Errorf("certutil not found (apt-get install -y libnss3-tools): %w", err)
	}
	db := filepath.Join(home, ".pki", "nssdb")
	if err := os.MkdirAll(db, 0o700); err != nil {
		return fmt.Errorf("creating nssdb dir: %w", err)
	}
	if out, err := exec.Command("certutil", "-N", "--empty-password", "-d", "sql:"+db).CombinedOutput(); err != nil {
		return fmt.Errorf("certutil -N: %w: %s", err, out)
	}
	for name, pemBytes := range cas {
		file := filepath.Join(home, name+".pem")
		if err := os.WriteFile(file, pemBytes, 0o600); err != nil {
			return fmt.Errorf("writing %s: %w", file, err)
		}
		out, err := exec.Command("certutil", "-A", "-t", "C,,", "-n", name, "-i", file, "-d", "sql:"+db).CombinedOutput()
		if err != nil {
			return fmt.Errorf("certutil -A %s: %w: %s", name, err, out)
		}
	}
	return nil
}
