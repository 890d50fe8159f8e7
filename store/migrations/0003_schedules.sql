-- Migration 3: rmx.schedule. A schedule is one of a remixlet's fixed actions that the proxy runs
-- later, with no remixlet code: every_ms > 0 repeats, every_ms = 0 runs once at next_at. Messages
-- are what {message} actions queued for the remixlet's next page load (rmx.onMessage), oldest
-- first. Times are Unix milliseconds (UTC).

CREATE TABLE schedules (
	remixlet_id TEXT NOT NULL REFERENCES remixlets (id) ON DELETE CASCADE,
	name        TEXT NOT NULL,
	every_ms    INTEGER NOT NULL CHECK (every_ms >= 0),
	next_at     INTEGER NOT NULL,
	-- JSON of the action: {"notify":{"title":…,"body":…}}, {"open":URL} or {"message":VALUE}
	action      BLOB NOT NULL,
	created_at  INTEGER NOT NULL,
	PRIMARY KEY (remixlet_id, name)
);
CREATE INDEX schedules_next ON schedules (next_at);

CREATE TABLE messages (
	id          INTEGER PRIMARY KEY AUTOINCREMENT,
	remixlet_id TEXT NOT NULL REFERENCES remixlets (id) ON DELETE CASCADE,
	schedule    TEXT NOT NULL,
	data        BLOB NOT NULL,
	created_at  INTEGER NOT NULL
);
CREATE INDEX messages_remixlet ON messages (remixlet_id, id);
