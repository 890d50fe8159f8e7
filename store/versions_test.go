package store

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestSaveVersion(t *testing.T) {
	s, clock := openTestStore(t, Options{})
	ctx := context.Background()
	r := mustCreate(t, s, "r")
	tests := []struct {
		name       string
		remixletID string
		files      Files
		author     Author
		wantNumber int
		wantErr    error
	}{
		{"first", r.ID, sampleFiles("one()"), AuthorPerson, 1, nil},
		{"second by agent", r.ID, sampleFiles("two()"), AuthorAgent, 2, nil},
		{"same files again is a new version", r.ID, sampleFiles("two()"), AuthorRestore, 3, nil},
		{"with style and rules", r.ID, Files{"manifest.json": []byte("{}"), "script.js": nil, "style.css": []byte("a{}"), "rules.json": []byte("[]")}, AuthorPerson, 4, nil},
		{"unknown author", r.ID, sampleFiles("x"), Author("model"), 0, ErrInvalid},
		{"unknown remixlet", "rx_nope", sampleFiles("x"), AuthorPerson, 0, ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock.Advance(time.Second)
			v, err := s.SaveVersion(ctx, tt.remixletID, tt.files, tt.author, "note "+tt.name)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("SaveVersion error = %v, want %v", err, tt.wantErr)
			}
			if err != nil {
				return
			}
			if v.Number != tt.wantNumber {
				t.Errorf("Number = %d, want %d", v.Number, tt.wantNumber)
			}
			if want := Digest(tt.files); v.Digest != want {
				t.Errorf("Digest = %s, want %s", v.Digest, want)
			}
			got, err := s.Version(ctx, v.ID)
			if err != nil {
				t.Fatalf("Version(%d): %v", v.ID, err)
			}
			if got.Digest != v.Digest || Digest(got.Files) != v.Digest || got.Author != tt.author ||
				got.Note != "note "+tt.name || got.Number != tt.wantNumber || !got.CreatedAt.Equal(clock.Now()) {
				t.Errorf("Version(%d) = %+v, want it as saved at %v", v.ID, got, clock.Now())
			}
		})
	}

	vs, err := s.Versions(ctx, r.ID)
	if err != nil {
		t.Fatalf("Versions: %v", err)
	}
	for i, v := range vs {
		if v.Number != i+1 {
			t.Errorf("Versions[%d].Number = %d, want %d", i, v.Number, i+1)
		}
	}
	if len(vs) != 4 {
		t.Errorf("len(Versions) = %d, want 4", len(vs))
	}
	if _, err := s.Version(ctx, 9999); !errors.Is(err, ErrNotFound) {
		t.Errorf("Version(9999) error = %v, want ErrNotFound", err)
	}
}

func TestSaveVersionCopiesFiles(t *testing.T) {
	s, _ := openTestStore(t, Options{})
	r := mustCreate(t, s, "r")
	files := sampleFiles("original()")
	v := mustSave(t, s, r.ID, files)
	files["script.js"][0] = 'X'
	got, err := s.Version(context.Background(), v.ID)
	if err != nil {
		t.Fatal(err)
	}
	if string(got.Files["script.js"]) != "original()" || string(v.Files["script.js"]) != "original()" {
		t.Errorf("stored script = %q, returned %q; want %q", got.Files["script.js"], v.Files["script.js"], "original()")
	}
}

func TestSaveDoesNotActivate(t *testing.T) {
	s, _ := openTestStore(t, Options{NeedsApproval: func(_, _ Files, _ string) (bool, string) { return false, "" }})
	ctx := context.Background()
	r := mustCreate(t, s, "r")
	v1 := mustSave(t, s, r.ID, sampleFiles("one()"))
	if _, ok, _ := s.Active(ctx, r.ID); ok {
		t.Fatal("a version is active after SaveVersion, want none")
	}
	if err := s.Activate(ctx, v1.ID); err != nil {
		t.Fatal(err)
	}
	mustSave(t, s, r.ID, sampleFiles("two()"))
	if a, _, _ := s.Active(ctx, r.ID); a.ID != v1.ID {
		t.Errorf("active after saving v2 = %d, want v1 (%d)", a.ID, v1.ID)
	}
}

// TestVersionsImmutable proves the triggers: no UPDATE, REPLACE or DELETE of a version row
// succeeds, even through raw SQL, while its remixlet exists.
func TestVersionsImmutable(t *testing.T) {
	s, _ := openTestStore(t, Options{})
	r := mustCreate(t, s, "r")
	v := mustSave(t, s, r.ID, sampleFiles("one()"))
	other := EncodeFiles(sampleFiles("evil()"))
	tests := []struct {
		name string
		sql  string
		args []any
	}{
		{"files", `UPDATE versions SET files = ? WHERE id = ?`, []any{other, v.ID}},
		{"files and digest", `UPDATE versions SET files = ?, digest = ? WHERE id = ?`, []any{other, digestOf(other), v.ID}},
		{"note", `UPDATE versions SET note = 'changed' WHERE id = ?`, []any{v.ID}},
		{"number", `UPDATE versions SET number = 7 WHERE id = ?`, []any{v.ID}},
		{"author", `UPDATE versions SET author = 'agent' WHERE id = ?`, []any{v.ID}},
		{"upsert", `INSERT INTO versions (id, remixlet_id, number, files, digest, author, note, created_at)
			VALUES (?, ?, 1, ?, ?, 'person', '', 0) ON CONFLICT (id) DO UPDATE SET files = excluded.files`,
			[]any{v.ID, r.ID, other, digestOf(other)}},
		{"insert or replace by id", `INSERT OR REPLACE INTO versions (id, remixlet_id, number, files, digest, author, note, created_at)
			VALUES (?, ?, 1, ?, ?, 'person', '', 0)`, []any{v.ID, r.ID, other, digestOf(other)}},
		{"replace by number", `REPLACE INTO versions (remixlet_id, number, files, digest, author, note, created_at)
			VALUES (?, 1, ?, ?, 'person', '', 0)`, []any{r.ID, other, digestOf(other)}},
		{"delete while the remixlet exists", `DELETE FROM versions WHERE id = ?`, []any{v.ID}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.db.Exec(tt.sql, tt.args...)
			if err == nil || !strings.Contains(err.Error(), "versions are immutable") {
				t.Errorf("raw UPDATE error = %v, want %q", err, "versions are immutable")
			}
		})
	}
	got, err := s.Version(context.Background(), v.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Digest != v.Digest || string(got.Files["script.js"]) != "one()" || got.Note != "test" {
		t.Errorf("version after UPDATE attempts = %+v, want unchanged", got)
	}
}

// TestVersionCorruptionDetected shows a row whose files no longer hash to its digest is
// refused on read (written with the trigger dropped, as a disk or hand edit could).
func TestVersionCorruptionDetected(t *testing.T) {
	s, _ := openTestStore(t, Options{})
	r := mustCreate(t, s, "r")
	v := mustSave(t, s, r.ID, sampleFiles("one()"))
	if _, err := s.db.Exec(`DROP TRIGGER versions_immutable`); err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.Exec(`UPDATE versions SET files = ? WHERE id = ?`, EncodeFiles(sampleFiles("evil()")), v.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Version(context.Background(), v.ID); !errors.Is(err, ErrCorrupt) {
		t.Errorf("Version of a tampered row error = %v, want ErrCorrupt", err)
	}
}

func TestRestore(t *testing.T) {
	s, _ := openTestStore(t, Options{})
	ctx := context.Background()
	r := mustCreate(t, s, "r")
	v1 := mustSave(t, s, r.ID, sampleFiles("one()"))
	mustSave(t, s, r.ID, sampleFiles("two()"))
	got, err := s.Restore(ctx, v1.ID)
	if err != nil {
		t.Fatalf("Restore: %v", err)
	}
	if got.Number != 3 || got.Author != AuthorRestore || got.Digest != v1.Digest || got.Note != "restored from version 1" {
		t.Errorf("Restore = number %d, author %s, digest %s, note %q; want 3, restore, %s, %q",
			got.Number, got.Author, got.Digest, got.Note, v1.Digest, "restored from version 1")
	}
	if _, ok, _ := s.Active(ctx, r.ID); ok {
		t.Error("Restore activated a version, want it only saved")
	}
	if _, err := s.Restore(ctx, 9999); !errors.Is(err, ErrNotFound) {
		t.Errorf("Restore(unknown) = %v, want ErrNotFound", err)
	}
}
