// Package store is remixproxy's embedded database (SQLite through modernc.org/sqlite, pure Go,
// in the data dir): remixlets and their immutable versions, the active version, enabled and
// archived state, paused sites, a bounded log per remixlet, rmx.storage data with a quota,
// pending approvals, the agent's chats (chats.go: context and panel items, resumable after a
// restart), schedules and queued messages (schedules.go), when each remixlet last ran
// (lastrun.go), and, when the person turns the recorder on, agent traces (traces.go).
//
// Data flow: the manager UI, the CLI and (later) the agent save versions here; activation reads
// the stored manifest as the record of what the person approved; the sandbox reads the active
// version and writes logs and storage.
//
// It must never: change a saved version, lose or half-write one when the process dies mid-save,
// make a version active whose permissions were not approved, or let one remixlet read another's
// storage or log.
package store

// # Files
//
//   - store.go: Open, Close, Options, the write-transaction helper (BEGIN IMMEDIATE, retry on
//     SQLITE_BUSY). errors.go: the sentinel errors.
//   - migrate.go and migrations/NNNN_*.sql: the versioned schema (schema_migrations table).
//     migrations/0001_initial.sql is the readable schema.
//   - digest.go: Files, the canonical encoding (EncodeFiles) and Digest.
//   - remixlets.go, versions.go, activate.go, approvals.go, sites.go, logs.go, storage.go: one
//     feature each, with its test beside it. crash_test.go kills a saving child process and
//     runs two writer processes at once.
//
// # Guarantees and how they are kept
//
//   - A save is one transaction in WAL mode with synchronous=FULL: after a kill or a power
//     loss a version is either complete or absent. Each version's files are stored as their
//     canonical encoding next to its digest, and every read re-hashes them (ErrCorrupt).
//   - Versions are immutable: a trigger makes every UPDATE of the versions table fail.
//   - Activation goes through Activate or ActivateFromChat (Options.NeedsApproval decides, with
//     the chat page's host for the latter; nil means always ask)
//     or ActivateApproved (an approval the person approved, unexpired, unused, bound to the
//     version's digest, consumed by a conditional UPDATE in the activating transaction).
//     The store cannot tell who called Approve: only the person's click in the proxy's own
//     UI may call it (DESIGN invariants 1 and 6).
//   - Several processes may use one database (proxy and CLI): write transactions begin
//     IMMEDIATE, wait up to Options.BusyTimeout for the lock and are retried on SQLITE_BUSY.
//   - rmx.storage and logs are keyed by remixlet ID in every query; deleting a remixlet
//     deletes its versions, approvals, log and storage.
