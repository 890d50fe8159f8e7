package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// Defaults for the zero values of Options.
const (
	DefaultLogLimit     = 1000
	DefaultStorageQuota = 1 << 20
	DefaultBusyTimeout  = 5 * time.Second
	// ApprovalLifetime is how long a requested approval stays usable.
	ApprovalLifetime = 10 * time.Minute
)

// Options configures a Store. The zero value is usable and safe.
type Options struct {
	// NeedsApproval reports whether moving a remixlet from the active version's files
	// (nil when no version is active) to next needs the person's approval, and why.
	// chatHost is the host of the page a chat's save came from (ActivateFromChat), "" for
	// saves from the manager or the CLI. It is called inside a write transaction, so it must
	// be quick and must not use the Store. If nil, every activation needs approval.
	NeedsApproval func(active, next Files, chatHost string) (bool, string)

	// Now is the clock. If nil, time.Now.
	Now func() time.Time

	// LogLimit is how many log entries are kept per remixlet, newest first.
	// If zero, DefaultLogLimit (1000).
	LogLimit int

	// StorageQuota bounds the bytes of keys plus values in one remixlet's rmx.storage.
	// If zero, DefaultStorageQuota (1 MiB).
	StorageQuota int64

	// BusyTimeout is how long SQLite waits for another connection or process holding
	// the write lock before a statement fails. If zero, DefaultBusyTimeout (5s).
	BusyTimeout time.Duration
}

// Store is remixproxy's database. It is safe for concurrent use by many goroutines,
// and by several processes on the same file (the proxy and the CLI).
type Store struct {
	db   *sql.DB
	opt  Options
	path string

	// writeMu serializes this process's write transactions, so in-process writers queue
	// in Go instead of sleeping in SQLite's busy handler. Other processes are held off
	// by SQLite's lock, busy_timeout and the retry in write.
	writeMu sync.Mutex
	// gen counts this process's committed write transactions (Generation).
	gen atomic.Uint64
}

// Generation is a number that changes after every write transaction this process commits
// (and only then): a cache of what the store holds is current while it is unchanged, as far as
// this process's writes go. Another process's writes (the CLI's) do not change it.
func (s *Store) Generation() uint64 { return s.gen.Load() }

// Open opens (creating if needed) the database at path and brings its schema up to date.
//
// Pragmas: journal_mode=WAL (readers never block the writer); synchronous=FULL, so a
// committed save survives power loss as well as a killed process; foreign_keys=ON;
// busy_timeout=Options.BusyTimeout. Write transactions start with BEGIN IMMEDIATE, so a
// transaction never has to upgrade a read lock to a write lock (which fails at once with
// SQLITE_BUSY instead of waiting).
func Open(path string, opt Options) (*Store, error) {
	if path == "" {
		return nil, errors.New("opening store: empty path")
	}
	if strings.ContainsAny(path, "?#") || strings.HasPrefix(path, "file:") {
		return nil, fmt.Errorf("opening store %q: path must not contain '?' or '#' or start with \"file:\"", path)
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.LogLimit <= 0 {
		opt.LogLimit = DefaultLogLimit
	}
	if opt.StorageQuota <= 0 {
		opt.StorageQuota = DefaultStorageQuota
	}
	if opt.BusyTimeout <= 0 {
		opt.BusyTimeout = DefaultBusyTimeout
	}

	// The database holds remixlets' storage and logs: create it readable by its owner
	// only. SQLite gives the -wal and -shm files the same permissions.
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening store: %w", err)
	}
	f.Close()

	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", opt.BusyTimeout.Milliseconds()))
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(FULL)")
	q.Add("_pragma", "foreign_keys(1)")
	q.Set("_txlock", "immediate")
	db, err := sql.Open("sqlite", path+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("opening store %s: %w", path, err)
	}
	// A small pool: WAL lets readers run beside the one writer.
	db.SetMaxOpenConns(4)
	db.SetMaxIdleConns(4)

	s := &Store{db: db, opt: opt, path: path}
	if err := s.migrate(context.Background()); err != nil {
		db.Close()
		return nil, fmt.Errorf("opening store %s: %w", path, err)
	}
	return s, nil
}

// Close closes the database.
func (s *Store) Close() error {
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("closing store: %w", err)
	}
	return nil
}

func (s *Store) now() time.Time { return s.opt.Now() }

func (s *Store) nowMilli() int64 { return s.opt.Now().UnixMilli() }

func fromMilli(ms int64) time.Time { return time.UnixMilli(ms).UTC() }

// Retry bounds for SQLITE_BUSY that outlasts busy_timeout (another process holding the
// write lock for long, or WAL recovery after a crash).
const (
	busyRetries = 8
	busyBackoff = 20 * time.Millisecond
)

// write runs fn in a write transaction (BEGIN IMMEDIATE), retrying the whole transaction
// when SQLite reports the database busy or locked. fn may run more than once, so it must
// only assign results, not accumulate them. Errors are prefixed with op.
func (s *Store) write(ctx context.Context, op string, fn func(tx *sql.Tx) error) error {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	var err error
	backoff := busyBackoff
	for attempt := 0; ; attempt++ {
		err = s.writeOnce(ctx, fn)
		if err == nil {
			s.gen.Add(1)
			return nil
		}
		if !isBusy(err) || attempt == busyRetries {
			break
		}
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%s: %w", op, ctx.Err())
		case <-t.C:
		}
		backoff *= 2
	}
	return fmt.Errorf("%s: %w", op, err)
}

func (s *Store) writeOnce(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

// isBusy reports whether err is SQLITE_BUSY or SQLITE_LOCKED (any extended code).
func isBusy(err error) bool {
	var e *sqlite.Error
	if !errors.As(err, &e) {
		return false
	}
	switch e.Code() & 0xff {
	case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
		return true
	}
	return false
}

// isUniqueViolation reports whether err is a UNIQUE or PRIMARY KEY constraint failure.
func isUniqueViolation(err error) bool {
	var e *sqlite.Error
	if !errors.As(err, &e) {
		return false
	}
	return e.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE || e.Code() == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY
}

// newID returns prefix followed by 16 random bytes in hex.
func newID(prefix string) string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("store: reading random bytes: " + err.Error()) // crypto/rand never fails on supported systems
	}
	return prefix + hex.EncodeToString(b[:])
}
