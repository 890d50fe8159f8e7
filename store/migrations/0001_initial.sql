-- Migration 1: the first schema. Times are Unix milliseconds (UTC).
-- Never edit a released migration; add the next numbered file instead.

CREATE TABLE remixlets (
	id         TEXT PRIMARY KEY,
	name       TEXT NOT NULL UNIQUE,
	enabled    INTEGER NOT NULL DEFAULT 1 CHECK (enabled IN (0, 1)),
	archived   INTEGER NOT NULL DEFAULT 0 CHECK (archived IN (0, 1)),
	created_at INTEGER NOT NULL,
	updated_at INTEGER NOT NULL
);

-- versions holds every saved set of files. files is the canonical encoding
-- (see digest.go) and digest is "sha256:" + hex(SHA-256(files)).
CREATE TABLE versions (
	id          INTEGER PRIMARY KEY,
	remixlet_id TEXT NOT NULL REFERENCES remixlets (id) ON DELETE CASCADE,
	number      INTEGER NOT NULL CHECK (number >= 1),
	files       BLOB NOT NULL,
	digest      TEXT NOT NULL,
	author      TEXT NOT NULL CHECK (author IN ('person', 'agent', 'restore')),
	note        TEXT NOT NULL,
	created_at  INTEGER NOT NULL,
	UNIQUE (remixlet_id, number),
	UNIQUE (remixlet_id, id)
);

-- A saved version never changes: any UPDATE fails, whatever its columns; an INSERT that
-- would replace a row (INSERT OR REPLACE) fails; and a version is deleted only with its
-- remixlet (the cascade runs after the remixlet row is gone).
CREATE TRIGGER versions_immutable BEFORE UPDATE ON versions
BEGIN
	SELECT RAISE(ABORT, 'versions are immutable');
END;
CREATE TRIGGER versions_no_replace BEFORE INSERT ON versions
WHEN EXISTS (SELECT 1 FROM versions WHERE id = NEW.id OR (remixlet_id = NEW.remixlet_id AND number = NEW.number))
BEGIN
	SELECT RAISE(ABORT, 'versions are immutable');
END;
CREATE TRIGGER versions_no_delete BEFORE DELETE ON versions
WHEN EXISTS (SELECT 1 FROM remixlets WHERE id = OLD.remixlet_id)
BEGIN
	SELECT RAISE(ABORT, 'versions are immutable; delete the remixlet instead');
END;

-- active names each remixlet's active version. The composite key makes it
-- impossible to point a remixlet at another remixlet's version.
CREATE TABLE active (
	remixlet_id  TEXT PRIMARY KEY REFERENCES remixlets (id) ON DELETE CASCADE,
	version_id   INTEGER NOT NULL,
	activated_at INTEGER NOT NULL,
	FOREIGN KEY (remixlet_id, version_id) REFERENCES versions (remixlet_id, id) ON DELETE CASCADE
);

CREATE TABLE approvals (
	id           TEXT PRIMARY KEY,
	remixlet_id  TEXT NOT NULL REFERENCES remixlets (id) ON DELETE CASCADE,
	version_id   INTEGER NOT NULL,
	digest       TEXT NOT NULL,
	page_session TEXT NOT NULL,
	reason       TEXT NOT NULL,
	state        TEXT NOT NULL CHECK (state IN ('pending', 'approved', 'declined', 'used')),
	created_at   INTEGER NOT NULL,
	expires_at   INTEGER NOT NULL,
	decided_at   INTEGER,
	FOREIGN KEY (remixlet_id, version_id) REFERENCES versions (remixlet_id, id) ON DELETE CASCADE
);
CREATE INDEX approvals_page_session ON approvals (page_session);
CREATE INDEX approvals_version ON approvals (remixlet_id, version_id);

CREATE TABLE paused_sites (
	host      TEXT PRIMARY KEY,
	paused_at INTEGER NOT NULL
);

CREATE TABLE logs (
	id          INTEGER PRIMARY KEY,
	remixlet_id TEXT NOT NULL REFERENCES remixlets (id) ON DELETE CASCADE,
	at          INTEGER NOT NULL,
	level       TEXT NOT NULL,
	message     TEXT NOT NULL
);
CREATE INDEX logs_remixlet ON logs (remixlet_id, id);

-- storage is rmx.storage. size = len(key) + len(value) in bytes, summed for the quota.
CREATE TABLE storage (
	remixlet_id TEXT NOT NULL REFERENCES remixlets (id) ON DELETE CASCADE,
	key         TEXT NOT NULL,
	value       TEXT NOT NULL,
	size        INTEGER NOT NULL,
	PRIMARY KEY (remixlet_id, key)
);
