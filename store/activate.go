package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// Activate makes versionID its remixlet's active version, when Options.NeedsApproval says
// the move from the active version's files needs no approval. Otherwise it changes nothing
// and returns an *ApprovalRequiredError (errors.Is ErrApprovalRequired) with the reason;
// the caller then uses RequestApproval and ActivateApproved. Activating the version that
// is already active does nothing.
func (s *Store) Activate(ctx context.Context, versionID int64) error {
	return s.ActivateFromChat(ctx, versionID, "")
}

// ActivateFromChat is Activate for a version the agent saved from a chat on a page of
// chatHost: Options.NeedsApproval is asked with that host, so a new remixlet for the chat's
// own site and without permissions activates at once. chatHost must come from the proxy's
// record of the chat's page session, never from the model.
func (s *Store) ActivateFromChat(ctx context.Context, versionID int64, chatHost string) error {
	return s.write(ctx, fmt.Sprintf("activating version %d", versionID), func(tx *sql.Tx) error {
		next, err := s.version(ctx, tx, versionID)
		if err != nil {
			return err
		}
		active, ok, err := s.active(ctx, tx, next.RemixletID)
		if err != nil {
			return err
		}
		if ok && active.ID == next.ID {
			return nil
		}
		if needs, reason := s.needsApproval(active.Files, next.Files, chatHost); needs {
			return &ApprovalRequiredError{VersionID: versionID, Reason: reason}
		}
		return s.setActive(ctx, tx, next.RemixletID, next.ID)
	})
}

// needsApproval applies Options.NeedsApproval; active is nil when no version is active.
func (s *Store) needsApproval(active, next Files, chatHost string) (bool, string) {
	if s.opt.NeedsApproval == nil {
		return true, "no approval policy is configured, so every activation needs approval"
	}
	return s.opt.NeedsApproval(active, next, chatHost)
}

// setActive points the remixlet at versionID. The schema's composite foreign key refuses
// a version of another remixlet.
func (s *Store) setActive(ctx context.Context, tx *sql.Tx, remixletID string, versionID int64) error {
	now := s.nowMilli()
	if _, err := tx.ExecContext(ctx, `INSERT INTO active (remixlet_id, version_id, activated_at) VALUES (?, ?, ?)
		ON CONFLICT (remixlet_id) DO UPDATE SET version_id = excluded.version_id, activated_at = excluded.activated_at`,
		remixletID, versionID, now); err != nil {
		return fmt.Errorf("setting active version: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE remixlets SET updated_at = ? WHERE id = ?`, now, remixletID); err != nil {
		return fmt.Errorf("setting active version: %w", err)
	}
	return nil
}

// Active returns the remixlet's active version; ok is false when none is active.
func (s *Store) Active(ctx context.Context, remixletID string) (v Version, ok bool, err error) {
	v, ok, err = s.active(ctx, s.db, remixletID)
	if err != nil {
		return Version{}, false, fmt.Errorf("reading active version of remixlet %s: %w", quote(remixletID), err)
	}
	return v, ok, nil
}

func (s *Store) active(ctx context.Context, q querier, remixletID string) (Version, bool, error) {
	v, err := scanVersion(q.QueryRowContext(ctx, `SELECT `+prefixed("v.", versionColumns)+`
		FROM active a JOIN versions v ON v.id = a.version_id WHERE a.remixlet_id = ?`, remixletID))
	if errors.Is(err, sql.ErrNoRows) {
		return Version{}, false, nil
	}
	if err != nil {
		return Version{}, false, err
	}
	return v, true, nil
}
