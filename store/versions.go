package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Author says who made a version.
type Author string

const (
	AuthorPerson  Author = "person"  // written by hand in the manager or the CLI
	AuthorAgent   Author = "agent"   // written by the AI agent
	AuthorRestore Author = "restore" // a copy of an earlier version, made by Restore
)

func (a Author) valid() bool {
	return a == AuthorPerson || a == AuthorAgent || a == AuthorRestore
}

// Version is one saved, immutable set of a remixlet's files.
type Version struct {
	ID         int64
	RemixletID string
	Number     int // 1, 2, 3 … per remixlet, in save order
	Files      Files
	Digest     string // Digest(Files)
	Author     Author
	Note       string
	CreatedAt  time.Time
}

// SaveVersion stores files as the remixlet's next version. It does not activate it.
// The save is one transaction: after a crash it is either complete or absent.
func (s *Store) SaveVersion(ctx context.Context, remixletID string, files Files, author Author, note string) (Version, error) {
	op := "saving version of remixlet " + quote(remixletID)
	if !author.valid() {
		return Version{}, fmt.Errorf("%s: author %q is not person, agent or restore: %w", op, author, ErrInvalid)
	}
	encoded := EncodeFiles(files)
	v := Version{RemixletID: remixletID, Files: cloneFiles(files), Digest: digestOf(encoded), Author: author, Note: note}
	err := s.write(ctx, op, func(tx *sql.Tx) error {
		var exists bool
		if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM remixlets WHERE id = ?)`, remixletID).Scan(&exists); err != nil {
			return err
		}
		if !exists {
			return ErrNotFound
		}
		if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(number), 0) + 1 FROM versions WHERE remixlet_id = ?`,
			remixletID).Scan(&v.Number); err != nil {
			return err
		}
		now := s.nowMilli()
		v.CreatedAt = fromMilli(now)
		res, err := tx.ExecContext(ctx, `INSERT INTO versions (remixlet_id, number, files, digest, author, note, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?)`, remixletID, v.Number, encoded, v.Digest, string(author), note, now)
		if err != nil {
			return err
		}
		v.ID, err = res.LastInsertId()
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE remixlets SET updated_at = ? WHERE id = ?`, now, remixletID)
		return err
	})
	if err != nil {
		return Version{}, err
	}
	return v, nil
}

const versionColumns = `id, remixlet_id, number, files, digest, author, note, created_at`

// scanVersion reads a version row and checks that its files still hash to its digest.
func scanVersion(row rowScanner) (Version, error) {
	var v Version
	var encoded []byte
	var author string
	var created int64
	if err := row.Scan(&v.ID, &v.RemixletID, &v.Number, &encoded, &v.Digest, &author, &v.Note, &created); err != nil {
		return Version{}, err
	}
	if got := digestOf(encoded); got != v.Digest {
		return Version{}, fmt.Errorf("version %d: files hash to %s, recorded digest is %s: %w", v.ID, got, v.Digest, ErrCorrupt)
	}
	files, err := DecodeFiles(encoded)
	if err != nil {
		return Version{}, fmt.Errorf("version %d: %w", v.ID, err)
	}
	v.Files, v.Author, v.CreatedAt = files, Author(author), fromMilli(created)
	return v, nil
}

// Version returns one version by ID.
func (s *Store) Version(ctx context.Context, versionID int64) (Version, error) {
	v, err := s.version(ctx, s.db, versionID)
	if err != nil {
		return Version{}, fmt.Errorf("reading version %d: %w", versionID, err)
	}
	return v, nil
}

func (s *Store) version(ctx context.Context, q querier, versionID int64) (Version, error) {
	v, err := scanVersion(q.QueryRowContext(ctx, `SELECT `+versionColumns+` FROM versions WHERE id = ?`, versionID))
	if errors.Is(err, sql.ErrNoRows) {
		return Version{}, ErrNotFound
	}
	return v, err
}

// Versions returns a remixlet's versions, oldest first. An unknown remixlet has none.
func (s *Store) Versions(ctx context.Context, remixletID string) ([]Version, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+versionColumns+` FROM versions WHERE remixlet_id = ? ORDER BY number`, remixletID)
	if err != nil {
		return nil, fmt.Errorf("listing versions of remixlet %s: %w", quote(remixletID), err)
	}
	defer rows.Close()
	var vs []Version
	for rows.Next() {
		v, err := scanVersion(rows)
		if err != nil {
			return nil, fmt.Errorf("listing versions of remixlet %s: %w", quote(remixletID), err)
		}
		vs = append(vs, v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("listing versions of remixlet %s: %w", quote(remixletID), err)
	}
	return vs, nil
}

// Restore saves a copy of an earlier version's files as the remixlet's next version, with
// author AuthorRestore. Like any save it does not activate: the copy goes through Activate
// (and approval, when its permissions differ from the running version's) like any other.
func (s *Store) Restore(ctx context.Context, versionID int64) (Version, error) {
	old, err := s.Version(ctx, versionID)
	if err != nil {
		return Version{}, fmt.Errorf("restoring: %w", err)
	}
	return s.SaveVersion(ctx, old.RemixletID, old.Files, AuthorRestore, fmt.Sprintf("restored from version %d", old.Number))
}

func cloneFiles(f Files) Files {
	c := make(Files, len(f))
	for name, content := range f {
		c[name] = append([]byte{}, content...)
	}
	return c
}
