-- Migration 4: when each remixlet last ran on a page, for the manager's list. One row per
-- remixlet, overwritten on every run (written in batches by the proxy, not per page load). site
-- is the page's host name, never its full address. Times are Unix milliseconds (UTC).

CREATE TABLE last_runs (
	remixlet_id TEXT PRIMARY KEY REFERENCES remixlets (id) ON DELETE CASCADE,
	at          INTEGER NOT NULL,
	site        TEXT NOT NULL
);
