-- Migration 5: the agent's traces, recorded only when the person turns on "Record agent traces"
-- in Settings. One run per message to the agent; its events are the model calls and tool calls
-- in order. A run belongs to its chat: deleting the chat deletes its traces. Bounded by the
-- store (store/traces.go): the newest 200 runs, 500 events a run, 64 KiB a body. Times are Unix
-- milliseconds (UTC); at_ms and duration_ms are relative to the run's start.

CREATE TABLE trace_runs (
	id             INTEGER PRIMARY KEY AUTOINCREMENT,
	chat_id        TEXT NOT NULL REFERENCES chats (id) ON DELETE CASCADE,
	page_url       TEXT NOT NULL,
	mode           TEXT NOT NULL,
	provider       TEXT NOT NULL,
	model          TEXT NOT NULL,
	user_text      TEXT NOT NULL,
	input_tokens   INTEGER NOT NULL DEFAULT 0,
	output_tokens  INTEGER NOT NULL DEFAULT 0,
	started_at     INTEGER NOT NULL,
	ended_at       INTEGER NOT NULL,
	-- steps counts the model calls; outcome is how the run ended ("answer", "done", "error: ...")
	steps          INTEGER NOT NULL DEFAULT 0,
	outcome        TEXT NOT NULL,
	dropped_events INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX trace_runs_chat ON trace_runs (chat_id);

-- trace_events: kind 'model' (input: the messages sent, output: the reply's text and tool
-- calls) or 'tool' (input: the arguments, output: the result).
CREATE TABLE trace_events (
	run_id        INTEGER NOT NULL REFERENCES trace_runs (id) ON DELETE CASCADE,
	seq           INTEGER NOT NULL,
	kind          TEXT NOT NULL CHECK (kind IN ('model', 'tool')),
	name          TEXT NOT NULL,
	at_ms         INTEGER NOT NULL,
	duration_ms   INTEGER NOT NULL,
	input_tokens  INTEGER NOT NULL DEFAULT 0,
	output_tokens INTEGER NOT NULL DEFAULT 0,
	is_error      INTEGER NOT NULL DEFAULT 0,
	url_before    TEXT NOT NULL,
	url_after     TEXT NOT NULL,
	input         TEXT NOT NULL,
	output        TEXT NOT NULL,
	PRIMARY KEY (run_id, seq)
);
