package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/remixproxy/remixproxy/internal/plain"
)

// Remixlet is a remixlet's identity and switches. Its code lives in its versions.
type Remixlet struct {
	ID       string // "rx_" + 32 hex digits, assigned by CreateRemixlet
	Name     string // unique
	Enabled  bool   // false: switched off, nothing runs
	Archived bool   // hidden from the default list, nothing runs
	// ActiveVersionID is the active version's ID, or 0 when none is active.
	ActiveVersionID int64
	CreatedAt       time.Time
	UpdatedAt       time.Time
}

const (
	remixletIDPrefix = "rx_"
	maxNameLen       = 200
)

// checkName refuses names that are empty, too long, not UTF-8, padded with spaces, made
// with control or invisible characters (plain.CheckName), or shaped like an ID (so Remixlet(idOrName) is unambiguous).
func checkName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("remixlet name is empty: %w", ErrInvalid)
	case len(name) > maxNameLen:
		return fmt.Errorf("remixlet name is %d bytes, the limit is %d: %w", len(name), maxNameLen, ErrInvalid)
	case !utf8.ValidString(name):
		return fmt.Errorf("remixlet name is not UTF-8: %w", ErrInvalid)
	case strings.TrimSpace(name) != name:
		return fmt.Errorf("remixlet name %q starts or ends with spaces: %w", name, ErrInvalid)
	case strings.HasPrefix(name, remixletIDPrefix):
		return fmt.Errorf("remixlet name %q starts with %q, which is kept for IDs: %w", name, remixletIDPrefix, ErrInvalid)
	}
	// The name is shown on the cards where the person decides: it must read as what it is.
	if err := plain.CheckName(name); err != nil {
		return fmt.Errorf("remixlet name %q %v: %w", name, err, ErrInvalid)
	}
	return nil
}

// CreateRemixlet creates an enabled, unarchived remixlet with no versions.
// A name already in use fails with ErrDuplicateName.
func (s *Store) CreateRemixlet(ctx context.Context, name string) (Remixlet, error) {
	if err := checkName(name); err != nil {
		return Remixlet{}, fmt.Errorf("creating remixlet: %w", err)
	}
	now := s.now()
	r := Remixlet{ID: newID(remixletIDPrefix), Name: name, Enabled: true,
		CreatedAt: fromMilli(now.UnixMilli()), UpdatedAt: fromMilli(now.UnixMilli())}
	err := s.write(ctx, "creating remixlet "+quote(name), func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO remixlets (id, name, enabled, archived, created_at, updated_at)
			VALUES (?, ?, 1, 0, ?, ?)`, r.ID, name, now.UnixMilli(), now.UnixMilli())
		if isUniqueViolation(err) {
			return ErrDuplicateName
		}
		return err
	})
	if err != nil {
		return Remixlet{}, err
	}
	return r, nil
}

const remixletColumns = `r.id, r.name, r.enabled, r.archived, COALESCE(a.version_id, 0), r.created_at, r.updated_at`

const remixletFrom = `remixlets r LEFT JOIN active a ON a.remixlet_id = r.id`

type rowScanner interface{ Scan(dest ...any) error }

func scanRemixlet(row rowScanner) (Remixlet, error) {
	var r Remixlet
	var created, updated int64
	if err := row.Scan(&r.ID, &r.Name, &r.Enabled, &r.Archived, &r.ActiveVersionID, &created, &updated); err != nil {
		return Remixlet{}, err
	}
	r.CreatedAt, r.UpdatedAt = fromMilli(created), fromMilli(updated)
	return r, nil
}

// Remixlet returns the remixlet with the given ID or name.
func (s *Store) Remixlet(ctx context.Context, idOrName string) (Remixlet, error) {
	r, err := s.remixlet(ctx, s.db, idOrName)
	if err != nil {
		return Remixlet{}, fmt.Errorf("reading remixlet %s: %w", quote(idOrName), err)
	}
	return r, nil
}

type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func (s *Store) remixlet(ctx context.Context, q querier, idOrName string) (Remixlet, error) {
	col := "r.name"
	if strings.HasPrefix(idOrName, remixletIDPrefix) {
		col = "r.id"
	}
	r, err := scanRemixlet(q.QueryRowContext(ctx,
		`SELECT `+remixletColumns+` FROM `+remixletFrom+` WHERE `+col+` = ?`, idOrName))
	if errors.Is(err, sql.ErrNoRows) {
		return Remixlet{}, ErrNotFound
	}
	return r, err
}

// ListRemixlets returns every remixlet, archived ones included, sorted by name.
func (s *Store) ListRemixlets(ctx context.Context) ([]Remixlet, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+remixletColumns+` FROM `+remixletFrom+` ORDER BY r.name`)
	if err != nil {
		return nil, fmt.Errorf("listing remixlets: %w", err)
	}
	defer rows.Close()
	var rs []Remixlet
	for rows.Next() {
		r, err := scanRemixlet(rows)
		if err != nil {
			return nil, fmt.Errorf("listing remixlets: %w", err)
		}
		rs = append(rs, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("listing remixlets: %w", err)
	}
	return rs, nil
}

// SetEnabled switches a remixlet on or off.
func (s *Store) SetEnabled(ctx context.Context, remixletID string, enabled bool) error {
	return s.setFlag(ctx, "enabled", remixletID, enabled)
}

// SetArchived archives or unarchives a remixlet.
func (s *Store) SetArchived(ctx context.Context, remixletID string, archived bool) error {
	return s.setFlag(ctx, "archived", remixletID, archived)
}

// setFlag sets column (a constant from this file, never caller input) on one remixlet.
func (s *Store) setFlag(ctx context.Context, column, remixletID string, v bool) error {
	return s.write(ctx, fmt.Sprintf("setting %s=%t on remixlet %s", column, v, quote(remixletID)), func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE remixlets SET `+column+` = ?, updated_at = ? WHERE id = ?`,
			v, s.nowMilli(), remixletID)
		if err != nil {
			return err
		}
		return oneRow(res)
	})
}

// DeleteRemixlet deletes a remixlet with its versions, active version, approvals, log and
// storage. What its manifests allowed goes with it: a new remixlet with the same name
// starts with nothing approved.
func (s *Store) DeleteRemixlet(ctx context.Context, remixletID string) error {
	return s.write(ctx, "deleting remixlet "+quote(remixletID), func(tx *sql.Tx) error {
		// Foreign keys cascade from remixlets to every other table; the explicit
		// deletes keep this correct even on a connection without foreign_keys. The
		// remixlet row goes first: the versions_no_delete trigger allows deleting a
		// version only once its remixlet is gone.
		res, err := tx.ExecContext(ctx, `DELETE FROM remixlets WHERE id = ?`, remixletID)
		if err != nil {
			return err
		}
		if err := oneRow(res); err != nil {
			return err
		}
		for _, table := range []string{"active", "approvals", "logs", "storage", "versions"} {
			if _, err := tx.ExecContext(ctx, `DELETE FROM `+table+` WHERE remixlet_id = ?`, remixletID); err != nil {
				return fmt.Errorf("deleting from %s: %w", table, err)
			}
		}
		return nil
	})
}

// oneRow returns ErrNotFound unless res affected at least one row.
func oneRow(res sql.Result) error {
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n == 0 {
		return ErrNotFound
	}
	return nil
}

// quote formats caller-supplied text for an error message.
func quote(s string) string {
	const max = 100
	if len(s) > max {
		s = s[:max] + "…"
	}
	return fmt.Sprintf("%q", s)
}
