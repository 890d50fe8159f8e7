package store

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

func TestMigrationFiles(t *testing.T) {
	ms, err := migrations()
	if err != nil {
		t.Fatalf("migrations: %v", err)
	}
	if len(ms) == 0 {
		t.Fatal("no migrations embedded")
	}
	for i, m := range ms {
		if m.version != i+1 {
			t.Errorf("migration %d is %s, want version %d", i, m.name, i+1)
		}
	}
}

func schemaVersions(t *testing.T, s *Store) []int {
	t.Helper()
	rows, err := s.db.Query(`SELECT version FROM schema_migrations ORDER BY version`)
	if err != nil {
		t.Fatalf("reading schema_migrations: %v", err)
	}
	defer rows.Close()
	var vs []int
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		vs = append(vs, v)
	}
	return vs
}

func TestMigrate(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "remixproxy.db")

	t.Run("empty database gets every migration", func(t *testing.T) {
		s, err := Open(path, Options{})
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		defer s.Close()
		got := schemaVersions(t, s)
		if len(got) != SchemaVersion() || got[0] != 1 || got[len(got)-1] != SchemaVersion() {
			t.Errorf("schema_migrations = %v, want 1..%d", got, SchemaVersion())
		}
		if _, err := s.CreateRemixlet(ctx, "kept"); err != nil {
			t.Fatalf("CreateRemixlet: %v", err)
		}
	})

	t.Run("reopening is a no-op", func(t *testing.T) {
		s, err := Open(path, Options{})
		if err != nil {
			t.Fatalf("Open again: %v", err)
		}
		defer s.Close()
		if got := schemaVersions(t, s); len(got) != SchemaVersion() {
			t.Errorf("schema_migrations after reopen = %v, want %d rows", got, SchemaVersion())
		}
		if _, err := s.Remixlet(ctx, "kept"); err != nil {
			t.Errorf("Remixlet(kept) after reopen: %v", err)
		}
	})

	t.Run("newer database is refused", func(t *testing.T) {
		s, err := Open(path, Options{})
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		if _, err := s.db.Exec(`INSERT INTO schema_migrations (version, applied_at) VALUES (?, 0)`, SchemaVersion()+1); err != nil {
			t.Fatalf("faking a newer schema: %v", err)
		}
		s.Close()
		s, err = Open(path, Options{})
		if err == nil {
			s.Close()
			t.Fatal("Open of a newer database succeeded, want ErrNewerSchema")
		}
		if !errors.Is(err, ErrNewerSchema) {
			t.Errorf("Open error = %v, want ErrNewerSchema", err)
		}
		if !strings.Contains(err.Error(), "newer remixproxy; upgrade") {
			t.Errorf("Open error = %q, want it to say %q", err, "newer remixproxy; upgrade")
		}
	})
}
