-- Migration 2: the agent's chats. A chat belongs to the tab it started on; the proxy keeps it
-- here so that it survives a proxy restart. Times are Unix milliseconds (UTC).

CREATE TABLE chats (
	id            TEXT PRIMARY KEY,
	origin        TEXT NOT NULL,
	url           TEXT NOT NULL,
	title         TEXT NOT NULL,
	mode          TEXT NOT NULL,
	provider      TEXT NOT NULL,
	model         TEXT NOT NULL,
	input_tokens  INTEGER NOT NULL DEFAULT 0,
	output_tokens INTEGER NOT NULL DEFAULT 0,
	-- cost in millionths of a US dollar; -1 when the price of a model used is unknown
	cost_micro    INTEGER NOT NULL DEFAULT 0,
	created_at    INTEGER NOT NULL,
	updated_at    INTEGER NOT NULL
);
CREATE INDEX chats_updated ON chats (updated_at);

-- chat_entries holds two streams per chat, ordered by seq: 'message' rows are the model's
-- context (JSON of agent.Message; compaction replaces them), 'item' rows are what the panel
-- shows (JSON; an item is replaced in place by its key, keeping its position).
CREATE TABLE chat_entries (
	chat_id TEXT NOT NULL REFERENCES chats (id) ON DELETE CASCADE,
	seq     INTEGER NOT NULL,
	kind    TEXT NOT NULL CHECK (kind IN ('message', 'item')),
	key     TEXT NOT NULL,
	body    BLOB NOT NULL,
	PRIMARY KEY (chat_id, seq)
);
CREATE UNIQUE INDEX chat_entries_item ON chat_entries (chat_id, key) WHERE kind = 'item';
