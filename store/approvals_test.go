package store

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

func TestRequestApproval(t *testing.T) {
	s, clock := openTestStore(t, Options{NeedsApproval: func(active, _ Files, _ string) (bool, string) {
		if active == nil {
			return true, "new remixlet"
		}
		return true, "changed"
	}})
	ctx := context.Background()
	r := mustCreate(t, s, "r")
	v := mustSave(t, s, r.ID, sampleFiles("a()"))
	a, err := s.RequestApproval(ctx, v.ID, "tab-1")
	if err != nil {
		t.Fatalf("RequestApproval: %v", err)
	}
	want := Approval{ID: a.ID, RemixletID: r.ID, VersionID: v.ID, Digest: v.Digest, PageSession: "tab-1",
		Reason: "new remixlet", State: ApprovalPending, CreatedAt: clock.Now(), ExpiresAt: clock.Now().Add(10 * time.Minute)}
	if a != want {
		t.Errorf("RequestApproval = %+v, want %+v", a, want)
	}
	got, err := s.Approval(ctx, a.ID)
	if err != nil || got != want {
		t.Errorf("Approval(%s) = %+v, %v; want %+v", a.ID, got, err, want)
	}
	if _, err := s.RequestApproval(ctx, 9999, "tab-1"); !errors.Is(err, ErrNotFound) {
		t.Errorf("RequestApproval(unknown version) = %v, want ErrNotFound", err)
	}
}

// TestApprovalRules walks each rule: approve then activate; pending, expired, declined,
// used, dropped and digest-mismatched approvals do not activate, and the previous
// version stays active.
func TestApprovalRules(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name string
		// steps runs between RequestApproval and ActivateApproved.
		steps   func(t *testing.T, s *Store, clock *fakeClock, a Approval)
		wantErr error
	}{
		{"approved activates", func(t *testing.T, s *Store, _ *fakeClock, a Approval) {
			mustOK(t, "Approve", s.Approve(ctx, a.ID))
		}, nil},
		{"approving twice is harmless", func(t *testing.T, s *Store, _ *fakeClock, a Approval) {
			mustOK(t, "Approve", s.Approve(ctx, a.ID))
			mustOK(t, "Approve again", s.Approve(ctx, a.ID))
		}, nil},
		{"just before expiry", func(t *testing.T, s *Store, clock *fakeClock, a Approval) {
			mustOK(t, "Approve", s.Approve(ctx, a.ID))
			clock.Advance(ApprovalLifetime - time.Millisecond)
		}, nil},
		{"not yet approved", func(t *testing.T, s *Store, _ *fakeClock, a Approval) {}, ErrApprovalPending},
		{"expired after approval", func(t *testing.T, s *Store, clock *fakeClock, a Approval) {
			mustOK(t, "Approve", s.Approve(ctx, a.ID))
			clock.Advance(ApprovalLifetime)
		}, ErrApprovalExpired},
		{"approve after expiry fails", func(t *testing.T, s *Store, clock *fakeClock, a Approval) {
			clock.Advance(ApprovalLifetime + time.Second)
			if err := s.Approve(ctx, a.ID); !errors.Is(err, ErrApprovalExpired) {
				t.Errorf("Approve after expiry = %v, want ErrApprovalExpired", err)
			}
		}, ErrApprovalExpired},
		{"declined", func(t *testing.T, s *Store, _ *fakeClock, a Approval) {
			mustOK(t, "Decline", s.Decline(ctx, a.ID))
			if err := s.Approve(ctx, a.ID); !errors.Is(err, ErrApprovalDeclined) {
				t.Errorf("Approve after Decline = %v, want ErrApprovalDeclined", err)
			}
		}, ErrApprovalDeclined},
		{"declined after approval", func(t *testing.T, s *Store, _ *fakeClock, a Approval) {
			mustOK(t, "Approve", s.Approve(ctx, a.ID))
			mustOK(t, "Decline", s.Decline(ctx, a.ID))
		}, ErrApprovalDeclined},
		{"session dropped", func(t *testing.T, s *Store, _ *fakeClock, a Approval) {
			mustOK(t, "Approve", s.Approve(ctx, a.ID))
			mustOK(t, "DropApprovalsForSession", s.DropApprovalsForSession(ctx, "tab-1"))
		}, ErrNotFound},
		{"other session dropped", func(t *testing.T, s *Store, _ *fakeClock, a Approval) {
			mustOK(t, "Approve", s.Approve(ctx, a.ID))
			mustOK(t, "DropApprovalsForSession", s.DropApprovalsForSession(ctx, "tab-2"))
		}, nil},
		{"digest mismatch", func(t *testing.T, s *Store, _ *fakeClock, a Approval) {
			mustOK(t, "Approve", s.Approve(ctx, a.ID))
			if _, err := s.db.Exec(`UPDATE approvals SET digest = ? WHERE id = ?`, Digest(sampleFiles("other()")), a.ID); err != nil {
				t.Fatal(err)
			}
		}, ErrDigestMismatch},
		// Red-team pass 5b: the person was shown the change from v1; once another version runs,
		// the change this would make is not the one they allowed.
		{"another version became active", func(t *testing.T, s *Store, _ *fakeClock, a Approval) {
			mustOK(t, "Approve", s.Approve(ctx, a.ID))
			v3 := mustSave(t, s, a.RemixletID, sampleFiles("v1()"))
			forceActive(t, s, a.RemixletID, v3.ID)
		}, ErrBaseChanged},
		{"another version became active before the approval", func(t *testing.T, s *Store, _ *fakeClock, a Approval) {
			v3 := mustSave(t, s, a.RemixletID, sampleFiles("v1()"))
			forceActive(t, s, a.RemixletID, v3.ID)
			mustOK(t, "Approve", s.Approve(ctx, a.ID))
		}, ErrBaseChanged},
		{"unknown approval", func(t *testing.T, s *Store, _ *fakeClock, a Approval) {
			if _, err := s.db.Exec(`DELETE FROM approvals WHERE id = ?`, a.ID); err != nil {
				t.Fatal(err)
			}
		}, ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, clock := openTestStore(t, Options{NeedsApproval: func(_, _ Files, _ string) (bool, string) { return true, "always" }})
			r := mustCreate(t, s, "r")
			v1 := mustSave(t, s, r.ID, sampleFiles("v1()"))
			forceActive(t, s, r.ID, v1.ID)
			v2 := mustSave(t, s, r.ID, sampleFiles("v2()"))
			a, err := s.RequestApproval(ctx, v2.ID, "tab-1")
			if err != nil {
				t.Fatalf("RequestApproval: %v", err)
			}
			tt.steps(t, s, clock, a)
			err = s.ActivateApproved(ctx, a.ID)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("ActivateApproved error = %v, want %v", err, tt.wantErr)
			}
			if a.BaseVersionID != v1.ID {
				t.Errorf("the approval's base version = %d, want the active %d", a.BaseVersionID, v1.ID)
			}
			if tt.wantErr != nil {
				assertActiveScript(t, s, r.ID, "v1()")
				return
			}
			assertActiveScript(t, s, r.ID, "v2()")
			if err := s.ActivateApproved(ctx, a.ID); !errors.Is(err, ErrApprovalUsed) {
				t.Errorf("second ActivateApproved = %v, want ErrApprovalUsed", err)
			}
			if err := s.Decline(ctx, a.ID); !errors.Is(err, ErrApprovalUsed) {
				t.Errorf("Decline after use = %v, want ErrApprovalUsed", err)
			}
		})
	}
}

func TestDropApprovalsForSessionRefusesEmpty(t *testing.T) {
	s, _ := openTestStore(t, Options{})
	if err := s.DropApprovalsForSession(context.Background(), ""); !errors.Is(err, ErrInvalid) {
		t.Errorf("DropApprovalsForSession(\"\") = %v, want ErrInvalid", err)
	}
}

// TestActivateApprovedSingleUse: 20 concurrent ActivateApproved calls on one approval,
// through two Store handles on the same file (so the in-process write lock does not hide
// a race in the SQL), and exactly one succeeds.
func TestActivateApprovedSingleUse(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "remixproxy.db")
	var stores [2]*Store
	for i := range stores {
		s, err := Open(path, Options{})
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		t.Cleanup(func() { s.Close() })
		stores[i] = s
	}
	s := stores[0]
	r := mustCreate(t, s, "r")
	v := mustSave(t, s, r.ID, sampleFiles("a()"))
	a, err := s.RequestApproval(ctx, v.ID, "tab-1")
	if err != nil {
		t.Fatal(err)
	}
	mustOK(t, "Approve", s.Approve(ctx, a.ID))

	const calls = 20
	errs := make([]error, calls)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			errs[i] = stores[i%2].ActivateApproved(ctx, a.ID)
		}()
	}
	close(start)
	wg.Wait()
	ok, used := 0, 0
	for _, err := range errs {
		switch {
		case err == nil:
			ok++
		case errors.Is(err, ErrApprovalUsed):
			used++
		default:
			t.Errorf("ActivateApproved: unexpected error %v", err)
		}
	}
	if ok != 1 || used != calls-1 {
		t.Errorf("got %d successes and %d ErrApprovalUsed, want 1 and %d", ok, used, calls-1)
	}
	assertActiveScript(t, s, r.ID, "a()")
}

func mustOK(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}
