package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
)

// ApprovalState is where an approval is in its life.
type ApprovalState string

const (
	ApprovalPending  ApprovalState = "pending"  // waiting for the person
	ApprovalApproved ApprovalState = "approved" // the person clicked "Allow and apply"
	ApprovalDeclined ApprovalState = "declined" // the person clicked "Don't allow"
	ApprovalUsed     ApprovalState = "used"     // ActivateApproved consumed it
)

// Approval is a request for the person's permission to activate one exact version.
// It is bound to the version's digest, single use, and expires after ApprovalLifetime.
type Approval struct {
	ID         string // "ap_" + 32 hex digits; unguessable
	RemixletID string
	VersionID  int64
	Digest     string // the digest of the version the person is asked about
	// BaseVersionID is the version that was active when the person was asked (0: none). What
	// they were shown — the policy's reasons, the diff — is the change from it, so the approval
	// is for that change only: ActivateApproved refuses once another version is active.
	BaseVersionID int64
	PageSession   string // the chat tab's page session; empty when not tied to a tab
	Reason        string // from Options.NeedsApproval, for logs; not shown as permission text
	State         ApprovalState
	CreatedAt     time.Time
	ExpiresAt     time.Time
}

// Expired reports whether the approval can no longer be approved or used at now.
func (a Approval) Expired(now time.Time) bool { return !now.Before(a.ExpiresAt) }

const approvalColumns = `id, remixlet_id, version_id, digest, base_version_id, page_session, reason, state, created_at, expires_at`

func scanApproval(row rowScanner) (Approval, error) {
	var a Approval
	var state string
	var created, expires int64
	if err := row.Scan(&a.ID, &a.RemixletID, &a.VersionID, &a.Digest, &a.BaseVersionID, &a.PageSession, &a.Reason, &state, &created, &expires); err != nil {
		return Approval{}, err
	}
	a.State, a.CreatedAt, a.ExpiresAt = ApprovalState(state), fromMilli(created), fromMilli(expires)
	return a, nil
}

// RequestApproval records a pending approval for activating versionID, bound to its
// digest, to the version active now (BaseVersionID: a caller shows the person the change from
// that version) and to pageSession, expiring ApprovalLifetime from now.
func (s *Store) RequestApproval(ctx context.Context, versionID int64, pageSession string) (Approval, error) {
	var a Approval
	err := s.write(ctx, fmt.Sprintf("requesting approval for version %d", versionID), func(tx *sql.Tx) error {
		v, err := s.version(ctx, tx, versionID)
		if err != nil {
			return err
		}
		active, ok, err := s.active(ctx, tx, v.RemixletID)
		if err != nil {
			return err
		}
		var activeFiles Files
		if ok {
			activeFiles = active.Files
		}
		_, reason := s.needsApproval(activeFiles, v.Files, "")
		now := s.now()
		a = Approval{
			ID: newID("ap_"), RemixletID: v.RemixletID, VersionID: v.ID, Digest: v.Digest, BaseVersionID: active.ID,
			PageSession: pageSession, Reason: reason, State: ApprovalPending,
			CreatedAt: fromMilli(now.UnixMilli()), ExpiresAt: fromMilli(now.Add(ApprovalLifetime).UnixMilli()),
		}
		// Keep the table small: forget approvals that ended more than a day ago.
		if _, err := tx.ExecContext(ctx, `DELETE FROM approvals WHERE expires_at < ?`,
			now.Add(-24*time.Hour).UnixMilli()); err != nil {
			return fmt.Errorf("pruning old approvals: %w", err)
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO approvals (`+approvalColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			a.ID, a.RemixletID, a.VersionID, a.Digest, a.BaseVersionID, a.PageSession, a.Reason, string(a.State),
			a.CreatedAt.UnixMilli(), a.ExpiresAt.UnixMilli())
		return err
	})
	if err != nil {
		return Approval{}, err
	}
	return a, nil
}

// Approval returns one approval by ID.
func (s *Store) Approval(ctx context.Context, approvalID string) (Approval, error) {
	a, err := s.approval(ctx, s.db, approvalID)
	if err != nil {
		return Approval{}, fmt.Errorf("reading approval %s: %w", quote(approvalID), err)
	}
	return a, nil
}

func (s *Store) approval(ctx context.Context, q querier, approvalID string) (Approval, error) {
	a, err := scanApproval(q.QueryRowContext(ctx, `SELECT `+approvalColumns+` FROM approvals WHERE id = ?`, approvalID))
	if errors.Is(err, sql.ErrNoRows) {
		return Approval{}, ErrNotFound
	}
	return a, err
}

// Approve records the person's "Allow and apply" click. Only a pending, unexpired
// approval can be approved. It does not activate; ActivateApproved does.
func (s *Store) Approve(ctx context.Context, approvalID string) error {
	return s.write(ctx, "approving "+quote(approvalID), func(tx *sql.Tx) error {
		now := s.nowMilli()
		res, err := tx.ExecContext(ctx, `UPDATE approvals SET state = 'approved', decided_at = ?
			WHERE id = ? AND state = 'pending' AND expires_at > ?`, now, approvalID, now)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 1 {
			return err
		}
		return s.whyUnusable(ctx, tx, approvalID, ApprovalPending)
	})
}

// Decline records the person's "Don't allow" click. The active version stays as it was.
// Declining a declined approval does nothing; a used one cannot be declined.
func (s *Store) Decline(ctx context.Context, approvalID string) error {
	return s.write(ctx, "declining "+quote(approvalID), func(tx *sql.Tx) error {
		a, err := s.approval(ctx, tx, approvalID)
		if err != nil {
			return err
		}
		switch a.State {
		case ApprovalDeclined:
			return nil
		case ApprovalUsed:
			return ErrApprovalUsed
		}
		_, err = tx.ExecContext(ctx, `UPDATE approvals SET state = 'declined', decided_at = ? WHERE id = ?`,
			s.nowMilli(), approvalID)
		return err
	})
}

// ActivateApproved activates the approval's version if the approval is approved,
// unexpired and unused, the version's digest still equals the approved digest, and the
// version active now is the one the person was asked against (BaseVersionID; else
// ErrBaseChanged: the change they allowed is not the change this would make).
// It consumes the approval in the same transaction, with a conditional UPDATE, so of
// any number of concurrent calls (in any number of processes) at most one succeeds.
func (s *Store) ActivateApproved(ctx context.Context, approvalID string) error {
	return s.write(ctx, "activating with approval "+quote(approvalID), func(tx *sql.Tx) error {
		now := s.nowMilli()
		res, err := tx.ExecContext(ctx, `UPDATE approvals SET state = 'used', decided_at = ?
			WHERE id = ? AND state = 'approved' AND expires_at > ?
			AND digest = (SELECT v.digest FROM versions v WHERE v.id = approvals.version_id AND v.remixlet_id = approvals.remixlet_id)
			AND base_version_id = COALESCE((SELECT a.version_id FROM active a WHERE a.remixlet_id = approvals.remixlet_id), 0)`,
			now, approvalID, now)
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		if err != nil {
			return err
		}
		if n != 1 {
			return s.whyUnusable(ctx, tx, approvalID, ApprovalApproved)
		}
		a, err := s.approval(ctx, tx, approvalID)
		if err != nil {
			return err
		}
		// Re-read the version through its digest check: what activates is what was approved.
		v, err := s.version(ctx, tx, a.VersionID)
		if err != nil {
			return err
		}
		if v.Digest != a.Digest {
			return ErrDigestMismatch
		}
		return s.setActive(ctx, tx, a.RemixletID, a.VersionID)
	})
}

// whyUnusable explains why an approval was not in state want (or was expired, or its
// digest no longer matches), as one of the Err… sentinels.
func (s *Store) whyUnusable(ctx context.Context, q querier, approvalID string, want ApprovalState) error {
	a, err := s.approval(ctx, q, approvalID)
	if err != nil {
		return err
	}
	switch {
	case a.State == ApprovalUsed:
		return ErrApprovalUsed
	case a.State == ApprovalDeclined:
		return ErrApprovalDeclined
	case a.Expired(s.now()):
		return fmt.Errorf("expired at %s: %w", a.ExpiresAt.Format(time.RFC3339), ErrApprovalExpired)
	case a.State == ApprovalPending && want == ApprovalApproved:
		return ErrApprovalPending
	case a.State == ApprovalApproved && want == ApprovalPending:
		return nil // approving twice is harmless
	}
	var digest string
	err = q.QueryRowContext(ctx, `SELECT digest FROM versions WHERE id = ?`, a.VersionID).Scan(&digest)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && digest != a.Digest) {
		return ErrDigestMismatch
	}
	if err != nil {
		return err
	}
	if want == ApprovalApproved {
		if active, _, err := s.active(ctx, q, a.RemixletID); err != nil {
			return err
		} else if active.ID != a.BaseVersionID {
			return fmt.Errorf("version %d is active, the person was asked against version %d: %w", active.ID, a.BaseVersionID, ErrBaseChanged)
		}
	}
	return fmt.Errorf("approval in state %q: %w", a.State, ErrInvalid)
}

// DropApprovalsForSession forgets the pending and approved approvals of a page session,
// for when the chat's tab leaves the site or closes.
func (s *Store) DropApprovalsForSession(ctx context.Context, pageSession string) error {
	if pageSession == "" {
		return fmt.Errorf("dropping approvals: empty page session: %w", ErrInvalid)
	}
	return s.write(ctx, "dropping approvals of page session "+quote(pageSession), func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM approvals WHERE page_session = ? AND state IN ('pending', 'approved')`, pageSession)
		return err
	})
}

// prefixed qualifies each column in a comma-separated list with p.
func prefixed(p, columns string) string {
	parts := strings.Split(columns, ", ")
	for i := range parts {
		parts[i] = p + parts[i]
	}
	return strings.Join(parts, ", ")
}
