package proxy

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// loadSecret reads the per-install secret from dir, creating it (0600) if missing. With no dir, a
// fresh random secret is returned.
func loadSecret(dir string) ([]byte, error) {
	fresh := func() ([]byte, error) {
		b := make([]byte, 32)
		if _, err := rand.Read(b); err != nil {
			return nil, fmt.Errorf("making secret: %w", err)
		}
		return b, nil
	}
	if dir == "" {
		return fresh()
	}
	path := filepath.Join(dir, "secret")
	if b, err := os.ReadFile(path); err == nil {
		raw, derr := hex.DecodeString(strings.TrimSpace(string(b)))
		if derr != nil || len(raw) < 32 {
			return nil, fmt.Errorf("reading secret %s: not 64 hex digits; delete the file to make a new one (open pages will reconnect after a reload)", path)
		}
		return raw, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("reading secret: %w", err)
	}
	b, err := fresh()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating data dir: %w", err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(hex.EncodeToString(b)+"\n"), 0o600); err != nil {
		return nil, fmt.Errorf("writing secret: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return nil, fmt.Errorf("writing secret: %w", err)
	}
	return b, nil
}
