package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// Limits of rmx.schedule and of the message queue it feeds (rmx.onMessage).
const (
	// MaxSchedules is the most schedules one remixlet may have.
	MaxSchedules = 10
	// MaxScheduleName is the longest schedule name, in bytes.
	MaxScheduleName = 100
	// MaxScheduleAction is the largest action JSON, in bytes.
	MaxScheduleAction = 20 << 10
	// MaxMessages is the most queued messages one remixlet may have; queuing one more drops
	// the oldest.
	MaxMessages = 100
	// MaxMessageBytes is the largest queued message, in bytes of JSON.
	MaxMessageBytes = 16 << 10
)

// Schedule is one rmx.schedule entry: a fixed action the proxy runs at Next, and again every
// Every when Every > 0.
type Schedule struct {
	RemixletID string
	Name       string
	Every      time.Duration // 0: runs once, at Next
	Next       time.Time
	Action     []byte // JSON, checked by the caller
	Created    time.Time
}

// Message is one queued message for a remixlet's next page load.
type Message struct {
	ID       int64
	Schedule string
	Data     []byte // JSON
	Created  time.Time
}

func checkScheduleName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("schedule name is empty: %w", ErrInvalid)
	case len(name) > MaxScheduleName:
		return fmt.Errorf("schedule name is %d bytes, the limit is %d: %w", len(name), MaxScheduleName, ErrInvalid)
	}
	return nil
}

// PutSchedule adds sc, or replaces the remixlet's schedule of the same name. A remixlet may
// have at most MaxSchedules; one more is refused with ErrInvalid.
func (s *Store) PutSchedule(ctx context.Context, sc Schedule) error {
	op := "saving schedule " + quote(sc.Name) + " of remixlet " + quote(sc.RemixletID)
	if err := checkScheduleName(sc.Name); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if sc.Every < 0 || len(sc.Action) == 0 || len(sc.Action) > MaxScheduleAction {
		return fmt.Errorf("%s: negative interval or empty or oversized action: %w", op, ErrInvalid)
	}
	created := sc.Created
	if created.IsZero() {
		created = s.now()
	}
	return s.write(ctx, op, func(tx *sql.Tx) error {
		var exists bool
		if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM remixlets WHERE id = ?)`, sc.RemixletID).Scan(&exists); err != nil {
			return err
		}
		if !exists {
			return ErrNotFound
		}
		var others int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM schedules WHERE remixlet_id = ? AND name <> ?`,
			sc.RemixletID, sc.Name).Scan(&others); err != nil {
			return err
		}
		if others >= MaxSchedules {
			return fmt.Errorf("a remixlet may have at most %d schedules: %w", MaxSchedules, ErrInvalid)
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO schedules (remixlet_id, name, every_ms, next_at, action, created_at)
			VALUES (?, ?, ?, ?, ?, ?)
			ON CONFLICT (remixlet_id, name) DO UPDATE SET every_ms = excluded.every_ms, next_at = excluded.next_at,
				action = excluded.action, created_at = excluded.created_at`,
			sc.RemixletID, sc.Name, sc.Every.Milliseconds(), sc.Next.UnixMilli(), sc.Action, created.UnixMilli())
		return err
	})
}

// DeleteSchedule removes one schedule. A missing one is not an error.
func (s *Store) DeleteSchedule(ctx context.Context, remixletID, name string) error {
	return s.write(ctx, "deleting schedule "+quote(name)+" of remixlet "+quote(remixletID), func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM schedules WHERE remixlet_id = ? AND name = ?`, remixletID, name)
		return err
	})
}

// DeleteSchedules removes every schedule of a remixlet.
func (s *Store) DeleteSchedules(ctx context.Context, remixletID string) error {
	return s.write(ctx, "deleting the schedules of remixlet "+quote(remixletID), func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM schedules WHERE remixlet_id = ?`, remixletID)
		return err
	})
}

func scanSchedules(rows *sql.Rows) ([]Schedule, error) {
	defer rows.Close()
	var out []Schedule
	for rows.Next() {
		var sc Schedule
		var every, next, created int64
		if err := rows.Scan(&sc.RemixletID, &sc.Name, &every, &next, &sc.Action, &created); err != nil {
			return nil, err
		}
		sc.Every = time.Duration(every) * time.Millisecond
		sc.Next, sc.Created = fromMilli(next), fromMilli(created)
		out = append(out, sc)
	}
	return out, rows.Err()
}

// Schedules lists a remixlet's schedules by name.
func (s *Store) Schedules(ctx context.Context, remixletID string) ([]Schedule, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT remixlet_id, name, every_ms, next_at, action, created_at
		FROM schedules WHERE remixlet_id = ? ORDER BY name`, remixletID)
	if err != nil {
		return nil, fmt.Errorf("listing the schedules of remixlet %s: %w", quote(remixletID), err)
	}
	out, err := scanSchedules(rows)
	if err != nil {
		return nil, fmt.Errorf("listing the schedules of remixlet %s: %w", quote(remixletID), err)
	}
	return out, nil
}

// DueSchedules lists every schedule whose time has come (Next at or before now), earliest
// first, at most limit of them.
func (s *Store) DueSchedules(ctx context.Context, now time.Time, limit int) ([]Schedule, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT remixlet_id, name, every_ms, next_at, action, created_at
		FROM schedules WHERE next_at <= ? ORDER BY next_at, remixlet_id, name LIMIT ?`, now.UnixMilli(), limit)
	if err != nil {
		return nil, fmt.Errorf("listing due schedules: %w", err)
	}
	out, err := scanSchedules(rows)
	if err != nil {
		return nil, fmt.Errorf("listing due schedules: %w", err)
	}
	return out, nil
}

// FinishSchedule records that sc ran: a repeating schedule moves to next, a one-time one
// (next zero) is deleted. It does nothing when the schedule was replaced or deleted meanwhile
// (its Next is no longer sc.Next), and reports whether it changed anything.
func (s *Store) FinishSchedule(ctx context.Context, sc Schedule, next time.Time) (bool, error) {
	var changed bool
	err := s.write(ctx, "finishing schedule "+quote(sc.Name)+" of remixlet "+quote(sc.RemixletID), func(tx *sql.Tx) error {
		var res sql.Result
		var err error
		if next.IsZero() {
			res, err = tx.ExecContext(ctx, `DELETE FROM schedules WHERE remixlet_id = ? AND name = ? AND next_at = ?`,
				sc.RemixletID, sc.Name, sc.Next.UnixMilli())
		} else {
			res, err = tx.ExecContext(ctx, `UPDATE schedules SET next_at = ? WHERE remixlet_id = ? AND name = ? AND next_at = ?`,
				next.UnixMilli(), sc.RemixletID, sc.Name, sc.Next.UnixMilli())
		}
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		changed = n > 0
		return err
	})
	return changed, err
}

// QueueMessage queues data (JSON, at most MaxMessageBytes) for the remixlet's next page load.
// When the remixlet already has MaxMessages queued, the oldest are dropped; dropped says how
// many.
func (s *Store) QueueMessage(ctx context.Context, remixletID, schedule string, data []byte) (dropped int, err error) {
	op := "queuing a message of schedule " + quote(schedule) + " for remixlet " + quote(remixletID)
	if len(data) == 0 || len(data) > MaxMessageBytes {
		return 0, fmt.Errorf("%s: the message is empty or larger than %d bytes: %w", op, MaxMessageBytes, ErrInvalid)
	}
	err = s.write(ctx, op, func(tx *sql.Tx) error {
		dropped = 0
		if _, err := tx.ExecContext(ctx, `INSERT INTO messages (remixlet_id, schedule, data, created_at) VALUES (?, ?, ?, ?)`,
			remixletID, schedule, data, s.nowMilli()); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM messages WHERE remixlet_id = ? AND id NOT IN
			(SELECT id FROM messages WHERE remixlet_id = ? ORDER BY id DESC LIMIT ?)`, remixletID, remixletID, MaxMessages)
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		dropped = int(n)
		return err
	})
	return dropped, err
}

// TakeMessages removes and returns the remixlet's queued messages, oldest first: each is
// handed out once.
func (s *Store) TakeMessages(ctx context.Context, remixletID string) ([]Message, error) {
	var out []Message
	err := s.write(ctx, "taking the messages of remixlet "+quote(remixletID), func(tx *sql.Tx) error {
		out = nil
		rows, err := tx.QueryContext(ctx, `SELECT id, schedule, data, created_at FROM messages WHERE remixlet_id = ? ORDER BY id`, remixletID)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var m Message
			var created int64
			if err := rows.Scan(&m.ID, &m.Schedule, &m.Data, &created); err != nil {
				return err
			}
			m.Created = fromMilli(created)
			out = append(out, m)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		if len(out) == 0 {
			return nil
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM messages WHERE remixlet_id = ? AND id <= ?`, remixletID, out[len(out)-1].ID)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// QueuedMessages counts the remixlet's messages waiting for its next page load.
func (s *Store) QueuedMessages(ctx context.Context, remixletID string) (int, error) {
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM messages WHERE remixlet_id = ?`, remixletID).Scan(&n); err != nil {
		return 0, fmt.Errorf("counting the messages of remixlet %s: %w", quote(remixletID), err)
	}
	return n, nil
}
