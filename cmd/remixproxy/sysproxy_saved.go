package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// What `sysproxy on` found set before it, so that `sysproxy off` puts the person's own proxy
// back instead of leaving them with none: <data-dir>/sysproxy-before.json, backend name → the
// backend's saved keys. Written before anything is changed; removed once everything is back.

const savedProxyFile = "sysproxy-before.json"

func savedFile(dataDir string) string {
	if dataDir == "" {
		return ""
	}
	return filepath.Join(dataDir, savedProxyFile)
}

// loadSaved reads the saved settings; a missing or unreadable file is an empty set.
func loadSaved(path string) map[string]map[string]string {
	out := map[string]map[string]string{}
	if path == "" {
		return out
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return out
	}
	if json.Unmarshal(b, &out) != nil || out == nil {
		return map[string]map[string]string{}
	}
	return out
}

// storeSaved writes the saved settings, or removes the file when there are none.
func storeSaved(path string, saved map[string]map[string]string) error {
	if path == "" {
		return nil
	}
	if len(saved) == 0 {
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("removing %s: %w", path, err)
		}
		return nil
	}
	b, err := json.MarshalIndent(saved, "", "  ")
	if err != nil {
		return fmt.Errorf("saving the proxy set before: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("saving the proxy set before: %w", err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		return fmt.Errorf("saving the proxy set before: %w", err)
	}
	return nil
}

// pointsAt reports whether a saved setting is remixproxy's own (from an `on` whose record is gone).
func pointsAt(saved map[string]string, host, port string) bool {
	return saved["host"] == host && saved["port"] == port
}

// describeSaved says what a saved setting was, for the person.
func describeSaved(saved map[string]string) string {
	if saved["host"] != "" {
		return net.JoinHostPort(saved["host"], saved["port"])
	}
	keys := make([]string, 0, len(saved))
	for k := range saved {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return strings.Join(keys, ", ")
}
