package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// MaxStorageKey is the longest rmx.storage key, in bytes.
const MaxStorageKey = 512

func checkStorageKey(key string) error {
	switch {
	case key == "":
		return fmt.Errorf("storage key is empty: %w", ErrInvalid)
	case len(key) > MaxStorageKey:
		return fmt.Errorf("storage key is %d bytes, the limit is %d: %w", len(key), MaxStorageKey, ErrInvalid)
	}
	return nil
}

// StorageSet sets key to value (a JSON text, stored byte for byte) in the remixlet's
// rmx.storage. If the remixlet's keys plus values would then exceed Options.StorageQuota
// bytes, nothing changes and the error is a *QuotaError (errors.Is ErrQuotaExceeded).
func (s *Store) StorageSet(ctx context.Context, remixletID, key, value string) error {
	op := "setting storage key " + quote(key) + " of remixlet " + quote(remixletID)
	if err := checkStorageKey(key); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	size := int64(len(key) + len(value))
	return s.write(ctx, op, func(tx *sql.Tx) error {
		var exists bool
		if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM remixlets WHERE id = ?)`, remixletID).Scan(&exists); err != nil {
			return err
		}
		if !exists {
			return ErrNotFound
		}
		var others int64
		if err := tx.QueryRowContext(ctx, `SELECT COALESCE(SUM(size), 0) FROM storage WHERE remixlet_id = ? AND key <> ?`,
			remixletID, key).Scan(&others); err != nil {
			return err
		}
		if used := others + size; used > s.opt.StorageQuota {
			return &QuotaError{Used: used, Limit: s.opt.StorageQuota}
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO storage (remixlet_id, key, value, size) VALUES (?, ?, ?, ?)
			ON CONFLICT (remixlet_id, key) DO UPDATE SET value = excluded.value, size = excluded.size`,
			remixletID, key, value, size)
		return err
	})
}

// StorageGet returns the value of key in the remixlet's rmx.storage; ok is false when
// the key is not set.
func (s *Store) StorageGet(ctx context.Context, remixletID, key string) (value string, ok bool, err error) {
	err = s.db.QueryRowContext(ctx, `SELECT value FROM storage WHERE remixlet_id = ? AND key = ?`, remixletID, key).Scan(&value)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("reading storage key %s of remixlet %s: %w", quote(key), quote(remixletID), err)
	}
	return value, true, nil
}

// StorageDelete removes key from the remixlet's rmx.storage. A missing key is not an error.
func (s *Store) StorageDelete(ctx context.Context, remixletID, key string) error {
	return s.write(ctx, "deleting storage key "+quote(key)+" of remixlet "+quote(remixletID), func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM storage WHERE remixlet_id = ? AND key = ?`, remixletID, key)
		return err
	})
}

// StorageKeys returns the keys of the remixlet's rmx.storage, sorted bytewise.
func (s *Store) StorageKeys(ctx context.Context, remixletID string) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT key FROM storage WHERE remixlet_id = ? ORDER BY key`, remixletID)
	if err != nil {
		return nil, fmt.Errorf("listing storage keys of remixlet %s: %w", quote(remixletID), err)
	}
	defer rows.Close()
	keys := []string{}
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			return nil, fmt.Errorf("listing storage keys of remixlet %s: %w", quote(remixletID), err)
		}
		keys = append(keys, k)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("listing storage keys of remixlet %s: %w", quote(remixletID), err)
	}
	return keys, nil
}

// StorageUsage returns the bytes the remixlet's rmx.storage uses and its quota.
func (s *Store) StorageUsage(ctx context.Context, remixletID string) (used, limit int64, err error) {
	if err := s.db.QueryRowContext(ctx, `SELECT COALESCE(SUM(size), 0) FROM storage WHERE remixlet_id = ?`,
		remixletID).Scan(&used); err != nil {
		return 0, 0, fmt.Errorf("reading storage usage of remixlet %s: %w", quote(remixletID), err)
	}
	return used, s.opt.StorageQuota, nil
}
