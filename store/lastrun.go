package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"
)

// maxRunSite bounds the stored host name of a run.
const maxRunSite = 255

// Run records that a remixlet ran on a page: when, and on which site (the page's host name,
// never its full address). The manager's list shows the newest one per remixlet.
type Run struct {
	RemixletID string
	At         time.Time
	Site       string
}

// RecordRuns stores each run as its remixlet's last run, in one transaction, keeping a newer
// one already stored. Runs of remixlets that no longer exist are skipped: the proxy records runs
// in batches, after the fact, and a remixlet may be deleted in between.
func (s *Store) RecordRuns(ctx context.Context, runs []Run) error {
	if len(runs) == 0 {
		return nil
	}
	return s.write(ctx, fmt.Sprintf("recording %d remixlet runs", len(runs)), func(tx *sql.Tx) error {
		for _, r := range runs {
			at := r.At.UnixMilli()
			if r.At.IsZero() {
				at = s.nowMilli()
			}
			site := truncate(strings.ToValidUTF8(r.Site, "\uFFFD"), maxRunSite)
			if _, err := tx.ExecContext(ctx, `INSERT INTO last_runs (remixlet_id, at, site)
				SELECT id, ?, ? FROM remixlets WHERE id = ?
				ON CONFLICT (remixlet_id) DO UPDATE SET at = excluded.at, site = excluded.site
				WHERE excluded.at >= last_runs.at`, at, site, r.RemixletID); err != nil {
				return err
			}
		}
		return nil
	})
}

// LastRuns returns every remixlet's last run, by remixlet ID. Remixlets that never ran are
// absent.
func (s *Store) LastRuns(ctx context.Context) (map[string]Run, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT remixlet_id, at, site FROM last_runs`)
	if err != nil {
		return nil, fmt.Errorf("reading last runs: %w", err)
	}
	defer rows.Close()
	out := map[string]Run{}
	for rows.Next() {
		var r Run
		var at int64
		if err := rows.Scan(&r.RemixletID, &at, &r.Site); err != nil {
			return nil, fmt.Errorf("reading last runs: %w", err)
		}
		r.At = fromMilli(at)
		out[r.RemixletID] = r
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading last runs: %w", err)
	}
	return out, nil
}

// LastRun returns the remixlet's last run; ok is false when it never ran.
func (s *Store) LastRun(ctx context.Context, remixletID string) (r Run, ok bool, err error) {
	var at int64
	err = s.db.QueryRowContext(ctx, `SELECT remixlet_id, at, site FROM last_runs WHERE remixlet_id = ?`, remixletID).
		Scan(&r.RemixletID, &at, &r.Site)
	if err == sql.ErrNoRows {
		return Run{}, false, nil
	}
	if err != nil {
		return Run{}, false, fmt.Errorf("reading last run of remixlet %s: %w", quote(remixletID), err)
	}
	r.At = fromMilli(at)
	return r, true, nil
}
