package store

import (
	"context"
	"errors"
	"testing"
)

func TestActivate(t *testing.T) {
	ctx := context.Background()
	// policy: activation needs approval when the manifest changes.
	policy := func(active, next Files, _ string) (bool, string) {
		if active == nil {
			return true, "first activation"
		}
		if string(active["manifest.json"]) != string(next["manifest.json"]) {
			return true, "manifest changed"
		}
		return false, ""
	}
	manifestB := Files{"manifest.json": []byte(`{"permissions":[{"name":"storage"}]}`), "script.js": []byte("b()")}

	tests := []struct {
		name       string
		policy     func(active, next Files, chatHost string) (bool, string)
		preActive  bool // activate v1 (bypassing the policy) before the call
		next       Files
		wantErr    error
		wantReason string
		wantActive string // script.js of the active version after the call; "" for none
	}{
		{"nil policy refuses first activation", nil, false, sampleFiles("a()"), ErrApprovalRequired, "no approval policy is configured, so every activation needs approval", ""},
		{"nil policy refuses a script-only change", nil, true, sampleFiles("a2()"), ErrApprovalRequired, "no approval policy is configured, so every activation needs approval", "a()"},
		{"policy sees nil active first", policy, false, sampleFiles("a()"), ErrApprovalRequired, "first activation", ""},
		{"script-only change activates", policy, true, sampleFiles("a2()"), nil, "", "a2()"},
		{"manifest change needs approval", policy, true, manifestB, ErrApprovalRequired, "manifest changed", "a()"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, _ := openTestStore(t, Options{NeedsApproval: tt.policy})
			r := mustCreate(t, s, "r")
			if tt.preActive {
				v1 := mustSave(t, s, r.ID, sampleFiles("a()"))
				forceActive(t, s, r.ID, v1.ID)
			}
			v := mustSave(t, s, r.ID, tt.next)
			err := s.Activate(ctx, v.ID)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Activate error = %v, want %v", err, tt.wantErr)
			}
			var are *ApprovalRequiredError
			if errors.As(err, &are) && are.Reason != tt.wantReason {
				t.Errorf("Activate reason = %q, want %q", are.Reason, tt.wantReason)
			}
			assertActiveScript(t, s, r.ID, tt.wantActive)
		})
	}
}

func TestActivateErrors(t *testing.T) {
	s, _ := openTestStore(t, Options{NeedsApproval: func(_, _ Files, _ string) (bool, string) { return false, "" }})
	ctx := context.Background()
	r := mustCreate(t, s, "r")
	v := mustSave(t, s, r.ID, sampleFiles("a()"))
	if err := s.Activate(ctx, 424242); !errors.Is(err, ErrNotFound) {
		t.Errorf("Activate(unknown) = %v, want ErrNotFound", err)
	}
	if err := s.Activate(ctx, v.ID); err != nil {
		t.Fatalf("Activate: %v", err)
	}
	if err := s.Activate(ctx, v.ID); err != nil {
		t.Errorf("Activate(already active) = %v, want nil", err)
	}
	got, err := s.Remixlet(ctx, r.ID)
	if err != nil || got.ActiveVersionID != v.ID {
		t.Errorf("Remixlet.ActiveVersionID = %d, %v; want %d", got.ActiveVersionID, err, v.ID)
	}
}

// TestActiveBelongsToRemixlet: the schema refuses pointing a remixlet at another's version.
func TestActiveBelongsToRemixlet(t *testing.T) {
	s, _ := openTestStore(t, Options{})
	a := mustCreate(t, s, "a")
	b := mustCreate(t, s, "b")
	vb := mustSave(t, s, b.ID, sampleFiles("b()"))
	if _, err := s.db.Exec(`INSERT INTO active (remixlet_id, version_id, activated_at) VALUES (?, ?, 0)`, a.ID, vb.ID); err == nil {
		t.Error("raw insert of another remixlet's version into active succeeded, want a foreign key error")
	}
}

// forceActive activates a version bypassing the approval policy, for test setup.
func forceActive(t *testing.T, s *Store, remixletID string, versionID int64) {
	t.Helper()
	if _, err := s.db.Exec(`INSERT INTO active (remixlet_id, version_id, activated_at) VALUES (?, ?, 0)
		ON CONFLICT (remixlet_id) DO UPDATE SET version_id = excluded.version_id`, remixletID, versionID); err != nil {
		t.Fatalf("forcing active version: %v", err)
	}
}

// assertActiveScript checks the active version's script.js; want "" means none is active.
func assertActiveScript(t *testing.T, s *Store, remixletID, want string) {
	t.Helper()
	v, ok, err := s.Active(context.Background(), remixletID)
	if err != nil {
		t.Fatalf("Active: %v", err)
	}
	got := ""
	if ok {
		got = string(v.Files["script.js"])
	}
	if got != want {
		t.Errorf("active script.js = %q, want %q", got, want)
	}
}

// TestActivateFromChat: the chat's host reaches the policy, so a remixlet for the chat's own
// site activates at once while the same version from the manager needs approval.
func TestActivateFromChat(t *testing.T) {
	var hosts []string
	s, _ := openTestStore(t, Options{NeedsApproval: func(_, _ Files, chatHost string) (bool, string) {
		hosts = append(hosts, chatHost)
		return chatHost != "shop.test", "not the chat's site"
	}})
	ctx := context.Background()
	r := mustCreate(t, s, "r")
	v := mustSave(t, s, r.ID, sampleFiles("a()"))
	if err := s.Activate(ctx, v.ID); !errors.Is(err, ErrApprovalRequired) {
		t.Fatalf("Activate = %v, want ErrApprovalRequired", err)
	}
	if err := s.ActivateFromChat(ctx, v.ID, "shop.test"); err != nil {
		t.Fatalf("ActivateFromChat = %v", err)
	}
	if len(hosts) != 2 || hosts[0] != "" || hosts[1] != "shop.test" {
		t.Errorf("policy saw hosts %q, want [\"\" \"shop.test\"]", hosts)
	}
}
