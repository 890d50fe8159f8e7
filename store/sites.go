package store

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"strings"
)

// NormalizeHost returns host in the form paused sites are kept in: lowercase, without a
// port, brackets or trailing dot. It refuses empty hosts and hosts with a scheme, path,
// user info or spaces.
func NormalizeHost(host string) (string, error) {
	h := strings.TrimSpace(host)
	if h == "" {
		return "", fmt.Errorf("host is empty: %w", ErrInvalid)
	}
	if strings.ContainsAny(h, "/@ \t?#") {
		return "", fmt.Errorf("host %s is not a bare host name: %w", quote(host), ErrInvalid)
	}
	if hh, _, err := net.SplitHostPort(h); err == nil {
		h = hh
	} else if strings.HasPrefix(h, "[") && strings.HasSuffix(h, "]") {
		h = h[1 : len(h)-1]
	}
	h = strings.TrimSuffix(strings.ToLower(h), ".")
	if h == "" || strings.ContainsAny(h, "[]") {
		return "", fmt.Errorf("host %s is not a bare host name: %w", quote(host), ErrInvalid)
	}
	return h, nil
}

// PauseSite pauses every remixlet on host (exactly that host; subdomains are separate
// sites). Pausing a paused site does nothing.
func (s *Store) PauseSite(ctx context.Context, host string) error {
	h, err := NormalizeHost(host)
	if err != nil {
		return fmt.Errorf("pausing site: %w", err)
	}
	return s.write(ctx, "pausing site "+h, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO paused_sites (host, paused_at) VALUES (?, ?) ON CONFLICT (host) DO NOTHING`,
			h, s.nowMilli())
		return err
	})
}

// ResumeSite resumes a paused site. Resuming a site that is not paused does nothing.
func (s *Store) ResumeSite(ctx context.Context, host string) error {
	h, err := NormalizeHost(host)
	if err != nil {
		return fmt.Errorf("resuming site: %w", err)
	}
	return s.write(ctx, "resuming site "+h, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM paused_sites WHERE host = ?`, h)
		return err
	})
}

// PausedSites returns the paused hosts, sorted.
func (s *Store) PausedSites(ctx context.Context) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT host FROM paused_sites ORDER BY host`)
	if err != nil {
		return nil, fmt.Errorf("listing paused sites: %w", err)
	}
	defer rows.Close()
	var hosts []string
	for rows.Next() {
		var h string
		if err := rows.Scan(&h); err != nil {
			return nil, fmt.Errorf("listing paused sites: %w", err)
		}
		hosts = append(hosts, h)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("listing paused sites: %w", err)
	}
	return hosts, nil
}

// IsSitePaused reports whether host (normalized like PauseSite) is paused.
func (s *Store) IsSitePaused(ctx context.Context, host string) (bool, error) {
	h, err := NormalizeHost(host)
	if err != nil {
		return false, fmt.Errorf("checking paused site: %w", err)
	}
	var paused bool
	if err := s.db.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM paused_sites WHERE host = ?)`, h).Scan(&paused); err != nil {
		return false, fmt.Errorf("checking paused site %s: %w", h, err)
	}
	return paused, nil
}
