package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// Log bounds.
const (
	MaxLogMessage = 4 << 10 // bytes; longer messages are cut at a UTF-8 boundary and marked
	maxLogLevel   = 32      // bytes
)

// LogEntry is one line of a remixlet's log.
type LogEntry struct {
	ID         int64
	RemixletID string
	Time       time.Time
	Level      string // e.g. "info", "warn", "error"; the store does not interpret it
	Message    string
}

// truncate cuts s to at most max bytes without splitting a UTF-8 sequence, ending a cut
// string with "…" (within max).
func truncate(s string, max int) string {
	if len(s) <= max {
		return s
	}
	const mark = "…"
	cut := max - len(mark)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + mark
}

// AppendLog adds a line to the remixlet's log and drops lines beyond the newest
// Options.LogLimit. Messages longer than MaxLogMessage bytes are truncated;
// invalid UTF-8 becomes U+FFFD.
func (s *Store) AppendLog(ctx context.Context, remixletID, level, message string) error {
	level = truncate(strings.ToValidUTF8(level, "\uFFFD"), maxLogLevel)
	message = truncate(strings.ToValidUTF8(message, "\uFFFD"), MaxLogMessage)
	return s.write(ctx, "appending to log of remixlet "+quote(remixletID), func(tx *sql.Tx) error {
		var exists bool
		if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM remixlets WHERE id = ?)`, remixletID).Scan(&exists); err != nil {
			return err
		}
		if !exists {
			return ErrNotFound
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO logs (remixlet_id, at, level, message) VALUES (?, ?, ?, ?)`,
			remixletID, s.nowMilli(), level, message)
		if err != nil {
			return err
		}
		id, err := res.LastInsertId()
		if err != nil {
			return err
		}
		// With one insert per call, at most one row is over the limit; deleting by the
		// id range keeps this one index seek.
		_, err = tx.ExecContext(ctx, `DELETE FROM logs WHERE remixlet_id = ? AND id <= (
			SELECT id FROM logs WHERE remixlet_id = ? AND id <= ? ORDER BY id DESC LIMIT 1 OFFSET ?)`,
			remixletID, remixletID, id, s.opt.LogLimit)
		return err
	})
}

// Log returns up to limit of the remixlet's newest log lines, newest first.
// A limit of zero or less means all that are kept.
func (s *Store) Log(ctx context.Context, remixletID string, limit int) ([]LogEntry, error) {
	if limit <= 0 {
		limit = -1 // SQLite: no limit
	}
	rows, err := s.db.QueryContext(ctx, `SELECT id, remixlet_id, at, level, message FROM logs
		WHERE remixlet_id = ? ORDER BY id DESC LIMIT ?`, remixletID, limit)
	if err != nil {
		return nil, fmt.Errorf("reading log of remixlet %s: %w", quote(remixletID), err)
	}
	defer rows.Close()
	var es []LogEntry
	for rows.Next() {
		var e LogEntry
		var at int64
		if err := rows.Scan(&e.ID, &e.RemixletID, &at, &e.Level, &e.Message); err != nil {
			return nil, fmt.Errorf("reading log of remixlet %s: %w", quote(remixletID), err)
		}
		e.Time = fromMilli(at)
		es = append(es, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading log of remixlet %s: %w", quote(remixletID), err)
	}
	return es, nil
}

// NewLogEntry is one line for AppendLogs. A zero Time means now.
type NewLogEntry struct {
	RemixletID string
	Time       time.Time
	Level      string
	Message    string
}

// AppendLogs adds lines to the logs of their remixlets in one transaction (one sync for the
// whole batch), in order, with the same truncation as AppendLog, then drops each remixlet's
// lines beyond the newest Options.LogLimit. Lines of remixlets that no longer exist are skipped,
// not refused: a batch is written after the fact, and a remixlet may be deleted in between.
func (s *Store) AppendLogs(ctx context.Context, entries []NewLogEntry) error {
	if len(entries) == 0 {
		return nil
	}
	return s.write(ctx, fmt.Sprintf("appending %d log lines", len(entries)), func(tx *sql.Tx) error {
		written := map[string]bool{}
		for _, e := range entries {
			at := e.Time.UnixMilli()
			if e.Time.IsZero() {
				at = s.nowMilli()
			}
			level := truncate(strings.ToValidUTF8(e.Level, "\uFFFD"), maxLogLevel)
			message := truncate(strings.ToValidUTF8(e.Message, "\uFFFD"), MaxLogMessage)
			res, err := tx.ExecContext(ctx, `INSERT INTO logs (remixlet_id, at, level, message)
				SELECT id, ?, ?, ? FROM remixlets WHERE id = ?`, at, level, message, e.RemixletID)
			if err != nil {
				return err
			}
			if n, err := res.RowsAffected(); err != nil {
				return err
			} else if n > 0 {
				written[e.RemixletID] = true
			}
		}
		for id := range written {
			if _, err := tx.ExecContext(ctx, `DELETE FROM logs WHERE remixlet_id = ? AND id <= (
				SELECT id FROM logs WHERE remixlet_id = ? ORDER BY id DESC LIMIT 1 OFFSET ?)`,
				id, id, s.opt.LogLimit); err != nil {
				return err
			}
		}
		return nil
	})
}
