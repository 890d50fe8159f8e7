package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// fakeClock is a settable clock for Options.Now.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// openTestStore opens a store in a temp dir, closed when the test ends.
// If opt.Now is nil it gets a fake clock, returned too.
func openTestStore(t *testing.T, opt Options) (*Store, *fakeClock) {
	t.Helper()
	clock := newFakeClock()
	if opt.Now == nil {
		opt.Now = clock.Now
	}
	s, err := Open(filepath.Join(t.TempDir(), "remixproxy.db"), opt)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s, clock
}

// mustCreate creates a remixlet or fails the test.
func mustCreate(t *testing.T, s *Store, name string) Remixlet {
	t.Helper()
	r, err := s.CreateRemixlet(context.Background(), name)
	if err != nil {
		t.Fatalf("CreateRemixlet(%q): %v", name, err)
	}
	return r
}

// mustSave saves a version or fails the test.
func mustSave(t *testing.T, s *Store, remixletID string, files Files) Version {
	t.Helper()
	v, err := s.SaveVersion(context.Background(), remixletID, files, AuthorPerson, "test")
	if err != nil {
		t.Fatalf("SaveVersion: %v", err)
	}
	return v
}

func sampleFiles(script string) Files {
	return Files{
		"manifest.json": []byte(`{"name":"hide promoted","api":1,"matches":["https://example.com/*"]}`),
		"script.js":     []byte(script),
	}
}

func TestOpenPragmas(t *testing.T) {
	s, _ := openTestStore(t, Options{})
	ctx := context.Background()
	tests := []struct {
		pragma string
		want   string
	}{
		{"journal_mode", "wal"},
		{"synchronous", "2"}, // FULL
		{"foreign_keys", "1"},
		{"busy_timeout", "5000"},
	}
	for _, tt := range tests {
		t.Run(tt.pragma, func(t *testing.T) {
			var got string
			if err := s.db.QueryRowContext(ctx, "PRAGMA "+tt.pragma).Scan(&got); err != nil {
				t.Fatalf("PRAGMA %s: %v", tt.pragma, err)
			}
			if got != tt.want {
				t.Errorf("PRAGMA %s = %q, want %q", tt.pragma, got, tt.want)
			}
		})
	}
}

func TestOpenRefusesBadPaths(t *testing.T) {
	tests := []struct {
		name string
		path string
	}{
		{"empty", ""},
		{"query", filepath.Join(t.TempDir(), "x.db?mode=ro")},
		{"uri", "file:x.db"},
		{"missing dir", filepath.Join(t.TempDir(), "no", "such", "dir", "x.db")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Open(tt.path, Options{})
			if err == nil {
				s.Close()
				t.Fatalf("Open(%q) succeeded, want an error", tt.path)
			}
		})
	}
}

func TestOpenCreatesPrivateFiles(t *testing.T) {
	s, _ := openTestStore(t, Options{})
	r := mustCreate(t, s, "r") // a write makes the -wal file exist
	if err := s.StorageSet(context.Background(), r.ID, "k", "1"); err != nil {
		t.Fatal(err)
	}
	for _, suffix := range []string{"", "-wal", "-shm"} {
		t.Run("file"+suffix, func(t *testing.T) {
			fi, err := os.Stat(s.path + suffix)
			if err != nil {
				t.Fatal(err)
			}
			if got := fi.Mode().Perm(); got != 0o600 {
				t.Errorf("mode of %s = %v, want -rw-------", filepath.Base(s.path+suffix), got)
			}
		})
	}
}

// TestWriteRetriesWhenBusy holds the write lock from another connection for longer than
// the busy timeout; the write waits, retries and succeeds instead of surfacing
// "database is locked".
func TestWriteRetriesWhenBusy(t *testing.T) {
	path := filepath.Join(t.TempDir(), "remixproxy.db")
	s, err := Open(path, Options{BusyTimeout: 30 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()

	other, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	conn, err := other.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatalf("taking the write lock: %v", err)
	}
	released := make(chan struct{})
	go func() {
		time.Sleep(150 * time.Millisecond)
		conn.ExecContext(ctx, "COMMIT")
		close(released)
	}()
	_, err = s.CreateRemixlet(ctx, "waited")
	<-released
	if err != nil {
		t.Fatalf("CreateRemixlet while another connection held the lock: %v", err)
	}
}

func TestIsBusy(t *testing.T) {
	path := filepath.Join(t.TempDir(), "remixproxy.db")
	s, err := Open(path, Options{BusyTimeout: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	conn, err := s.db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	defer conn.ExecContext(ctx, "ROLLBACK")
	_, err = s.db.ExecContext(ctx, "INSERT INTO paused_sites (host, paused_at) VALUES ('x', 0)")
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"locked insert", err, true},
		{"wrapped", fmt.Errorf("op: %w", err), true},
		{"other error", errors.New("database is locked"), false},
		{"nil", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := isBusy(tt.err); got != tt.want {
				t.Errorf("isBusy(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}
