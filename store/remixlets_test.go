package store

import (
	"context"
	"errors"
	"strings"
	"testing"
)

func TestCreateRemixlet(t *testing.T) {
	s, _ := openTestStore(t, Options{})
	ctx := context.Background()
	mustCreate(t, s, "taken")
	tests := []struct {
		name    string
		in      string
		wantErr error
	}{
		{"plain", "hide promoted", nil},
		{"unicode", "Preis pro Kilo €", nil},
		{"duplicate", "taken", ErrDuplicateName},
		{"empty", "", ErrInvalid},
		{"padded", " x ", ErrInvalid},
		{"control character", "a\nb", ErrInvalid},
		{"looks like an ID", "rx_0123", ErrInvalid},
		{"too long", strings.Repeat("n", maxNameLen+1), ErrInvalid},
		{"not UTF-8", "a\xffb", ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := s.CreateRemixlet(ctx, tt.in)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("CreateRemixlet(%q) error = %v, want %v", tt.in, err, tt.wantErr)
			}
			if err != nil {
				return
			}
			if r.Name != tt.in || !r.Enabled || r.Archived || r.ActiveVersionID != 0 || !strings.HasPrefix(r.ID, "rx_") {
				t.Errorf("CreateRemixlet(%q) = %+v, want enabled, unarchived, inactive, rx_ ID", tt.in, r)
			}
		})
	}
}

func TestRemixletLookup(t *testing.T) {
	s, _ := openTestStore(t, Options{})
	ctx := context.Background()
	r := mustCreate(t, s, "alpha")
	tests := []struct {
		name    string
		in      string
		wantErr error
	}{
		{"by ID", r.ID, nil},
		{"by name", "alpha", nil},
		{"unknown name", "beta", ErrNotFound},
		{"unknown ID", "rx_00000000000000000000000000000000", ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.Remixlet(ctx, tt.in)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Remixlet(%q) error = %v, want %v", tt.in, err, tt.wantErr)
			}
			if err == nil && got.ID != r.ID {
				t.Errorf("Remixlet(%q).ID = %s, want %s", tt.in, got.ID, r.ID)
			}
		})
	}
}

func TestListAndFlags(t *testing.T) {
	s, _ := openTestStore(t, Options{})
	ctx := context.Background()
	b := mustCreate(t, s, "b")
	a := mustCreate(t, s, "a")

	if err := s.SetEnabled(ctx, a.ID, false); err != nil {
		t.Fatalf("SetEnabled: %v", err)
	}
	if err := s.SetArchived(ctx, b.ID, true); err != nil {
		t.Fatalf("SetArchived: %v", err)
	}
	list, err := s.ListRemixlets(ctx)
	if err != nil {
		t.Fatalf("ListRemixlets: %v", err)
	}
	var got []string
	for _, r := range list {
		got = append(got, r.Name)
	}
	if strings.Join(got, ",") != "a,b" {
		t.Fatalf("ListRemixlets names = %v, want [a b]", got)
	}
	if list[0].Enabled || list[0].Archived {
		t.Errorf("a = %+v, want disabled, not archived", list[0])
	}
	if !list[1].Enabled || !list[1].Archived {
		t.Errorf("b = %+v, want enabled, archived", list[1])
	}

	for _, tt := range []struct {
		name string
		fn   func() error
	}{
		{"SetEnabled unknown", func() error { return s.SetEnabled(ctx, "rx_nope", true) }},
		{"SetArchived unknown", func() error { return s.SetArchived(ctx, "rx_nope", true) }},
		{"DeleteRemixlet unknown", func() error { return s.DeleteRemixlet(ctx, "rx_nope") }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.fn(); !errors.Is(err, ErrNotFound) {
				t.Errorf("got %v, want ErrNotFound", err)
			}
		})
	}
}

func TestDeleteRemixletRemovesEverything(t *testing.T) {
	s, _ := openTestStore(t, Options{NeedsApproval: func(_, _ Files, _ string) (bool, string) { return false, "" }})
	ctx := context.Background()
	r := mustCreate(t, s, "doomed")
	other := mustCreate(t, s, "other")
	v := mustSave(t, s, r.ID, sampleFiles("a()"))
	ov := mustSave(t, s, other.ID, sampleFiles("b()"))
	if err := s.Activate(ctx, v.ID); err != nil {
		t.Fatalf("Activate: %v", err)
	}
	if _, err := s.RequestApproval(ctx, v.ID, "tab-1"); err != nil {
		t.Fatalf("RequestApproval: %v", err)
	}
	if err := s.AppendLog(ctx, r.ID, "info", "hello"); err != nil {
		t.Fatalf("AppendLog: %v", err)
	}
	if err := s.StorageSet(ctx, r.ID, "k", `"v"`); err != nil {
		t.Fatalf("StorageSet: %v", err)
	}
	if err := s.StorageSet(ctx, other.ID, "k", `"kept"`); err != nil {
		t.Fatalf("StorageSet other: %v", err)
	}

	if err := s.DeleteRemixlet(ctx, r.ID); err != nil {
		t.Fatalf("DeleteRemixlet: %v", err)
	}
	for _, table := range []string{"remixlets", "versions", "active", "approvals", "logs", "storage"} {
		t.Run(table, func(t *testing.T) {
			col := "remixlet_id"
			if table == "remixlets" {
				col = "id"
			}
			var n int
			if err := s.db.QueryRow(`SELECT COUNT(*) FROM `+table+` WHERE `+col+` = ?`, r.ID).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if n != 0 {
				t.Errorf("%s rows left for the deleted remixlet = %d, want 0", table, n)
			}
		})
	}
	if _, err := s.Version(ctx, ov.ID); err != nil {
		t.Errorf("other remixlet's version after delete: %v", err)
	}
	if got, ok, _ := s.StorageGet(ctx, other.ID, "k"); !ok || got != `"kept"` {
		t.Errorf("other remixlet's storage after delete = %q, %v; want %q", got, ok, `"kept"`)
	}

	// A new remixlet with the same name starts with nothing: no versions, nothing active.
	again := mustCreate(t, s, "doomed")
	if again.ID == r.ID {
		t.Errorf("recreated remixlet reuses ID %s", r.ID)
	}
	if _, ok, err := s.Active(ctx, again.ID); ok || err != nil {
		t.Errorf("Active(recreated) = _, %v, %v; want nothing active", ok, err)
	}
	if vs, _ := s.Versions(ctx, again.ID); len(vs) != 0 {
		t.Errorf("Versions(recreated) = %d versions, want 0", len(vs))
	}
}
