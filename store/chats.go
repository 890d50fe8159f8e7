package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Chat is one conversation with the agent, started on a page of Origin.
type Chat struct {
	ID           string // "ch_" + 32 hex digits
	Origin       string // the origin of the page the chat started on, e.g. "https://shop.test"
	URL          string // the page it was last used on
	Title        string
	Mode         string // "ask", "build" or "act"
	Provider     string
	Model        string
	InputTokens  int64
	OutputTokens int64
	CostMicro    int64 // millionths of a US dollar; -1 when a model's price is unknown
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

// ChatItem is one thing the panel shows, in order; Body is the panel's JSON.
type ChatItem struct {
	Key  string
	Body []byte
}

// Bounds on one chat's stored entries, so that a chat that runs for days cannot grow without
// limit: the oldest items are dropped first (the model's context is compacted by the agent).
const (
	maxChatItems     = 2000
	maxChatEntrySize = 1 << 20
)

const chatColumns = `id, origin, url, title, mode, provider, model, input_tokens, output_tokens, cost_micro, created_at, updated_at`

func scanChat(row rowScanner) (Chat, error) {
	var c Chat
	var created, updated int64
	err := row.Scan(&c.ID, &c.Origin, &c.URL, &c.Title, &c.Mode, &c.Provider, &c.Model,
		&c.InputTokens, &c.OutputTokens, &c.CostMicro, &created, &updated)
	if err != nil {
		return Chat{}, err
	}
	c.CreatedAt, c.UpdatedAt = fromMilli(created), fromMilli(updated)
	return c, nil
}

// CreateChat stores a new chat; its ID and times are set here and returned.
func (s *Store) CreateChat(ctx context.Context, c Chat) (Chat, error) {
	if c.Origin == "" {
		return Chat{}, fmt.Errorf("creating chat: %w: no origin", ErrInvalid)
	}
	c.ID = newID("ch_")
	now := s.nowMilli()
	c.CreatedAt, c.UpdatedAt = fromMilli(now), fromMilli(now)
	err := s.write(ctx, "creating chat", func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO chats (`+chatColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			c.ID, c.Origin, c.URL, c.Title, c.Mode, c.Provider, c.Model, c.InputTokens, c.OutputTokens, c.CostMicro, now, now)
		return err
	})
	if err != nil {
		return Chat{}, err
	}
	return c, nil
}

// Chat returns a chat by ID (ErrNotFound when there is none).
func (s *Store) Chat(ctx context.Context, id string) (Chat, error) {
	c, err := scanChat(s.db.QueryRowContext(ctx, `SELECT `+chatColumns+` FROM chats WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Chat{}, fmt.Errorf("reading chat %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return Chat{}, fmt.Errorf("reading chat %s: %w", id, err)
	}
	return c, nil
}

// ListChats returns the most recently used chats first, at most limit of them.
func (s *Store) ListChats(ctx context.Context, limit int) ([]Chat, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+chatColumns+` FROM chats ORDER BY updated_at DESC, id LIMIT ?`, limit)
	if err != nil {
		return nil, fmt.Errorf("listing chats: %w", err)
	}
	defer rows.Close()
	var out []Chat
	for rows.Next() {
		c, err := scanChat(rows)
		if err != nil {
			return nil, fmt.Errorf("listing chats: %w", err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("listing chats: %w", err)
	}
	return out, nil
}

// UpdateChat saves a chat's URL, title, mode, model and counts. The origin and creation time
// never change.
func (s *Store) UpdateChat(ctx context.Context, c Chat) error {
	return s.write(ctx, "updating chat "+c.ID, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE chats SET url = ?, title = ?, mode = ?, provider = ?, model = ?,
			input_tokens = ?, output_tokens = ?, cost_micro = ?, updated_at = ? WHERE id = ?`,
			c.URL, c.Title, c.Mode, c.Provider, c.Model, c.InputTokens, c.OutputTokens, c.CostMicro, s.nowMilli(), c.ID)
		if err != nil {
			return err
		}
		return oneRow(res)
	})
}

// DeleteChat deletes a chat and everything in it.
func (s *Store) DeleteChat(ctx context.Context, id string) error {
	return s.write(ctx, "deleting chat "+id, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM chats WHERE id = ?`, id)
		if err != nil {
			return err
		}
		return oneRow(res)
	})
}

// DeleteAllChats deletes every chat; it returns how many there were.
func (s *Store) DeleteAllChats(ctx context.Context) (int64, error) {
	var n int64
	err := s.write(ctx, "deleting all chats", func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM chats`)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	return n, err
}

func checkEntry(body []byte) error {
	if len(body) > maxChatEntrySize {
		return fmt.Errorf("%w: a chat entry of %d bytes is over the %d-byte limit", ErrInvalid, len(body), maxChatEntrySize)
	}
	return nil
}

func nextSeq(ctx context.Context, tx *sql.Tx, chatID string) (int64, error) {
	var seq int64
	err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(seq), 0) + 1 FROM chat_entries WHERE chat_id = ?`, chatID).Scan(&seq)
	return seq, err
}

// AppendChatMessages adds messages (the model's context, JSON) to the end of a chat.
func (s *Store) AppendChatMessages(ctx context.Context, chatID string, bodies ...[]byte) error {
	return s.write(ctx, "saving chat messages", func(tx *sql.Tx) error {
		return appendMessages(ctx, tx, chatID, bodies)
	})
}

func appendMessages(ctx context.Context, tx *sql.Tx, chatID string, bodies [][]byte) error {
	seq, err := nextSeq(ctx, tx, chatID)
	if err != nil {
		return err
	}
	for _, b := range bodies {
		if err := checkEntry(b); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO chat_entries (chat_id, seq, kind, key, body) VALUES (?, ?, 'message', '', ?)`,
			chatID, seq, b); err != nil {
			return err
		}
		seq++
	}
	return nil
}

// ReplaceChatMessages replaces a chat's whole context (after the agent compacted it).
func (s *Store) ReplaceChatMessages(ctx context.Context, chatID string, bodies ...[]byte) error {
	return s.write(ctx, "replacing chat messages", func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM chat_entries WHERE chat_id = ? AND kind = 'message'`, chatID); err != nil {
			return err
		}
		return appendMessages(ctx, tx, chatID, bodies)
	})
}

// ChatMessages returns a chat's context, oldest first.
func (s *Store) ChatMessages(ctx context.Context, chatID string) ([][]byte, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT body FROM chat_entries WHERE chat_id = ? AND kind = 'message' ORDER BY seq`, chatID)
	if err != nil {
		return nil, fmt.Errorf("reading chat messages: %w", err)
	}
	defer rows.Close()
	var out [][]byte
	for rows.Next() {
		var b []byte
		if err := rows.Scan(&b); err != nil {
			return nil, fmt.Errorf("reading chat messages: %w", err)
		}
		out = append(out, b)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading chat messages: %w", err)
	}
	return out, nil
}

// PutChatItem stores an item the panel shows: a new key goes at the end, a known key is
// replaced in place. Beyond maxChatItems the oldest items are dropped.
func (s *Store) PutChatItem(ctx context.Context, chatID, key string, body []byte) error {
	if key == "" {
		return fmt.Errorf("saving chat item: %w: empty key", ErrInvalid)
	}
	if err := checkEntry(body); err != nil {
		return fmt.Errorf("saving chat item: %w", err)
	}
	return s.write(ctx, "saving chat item", func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE chat_entries SET body = ? WHERE chat_id = ? AND kind = 'item' AND key = ?`, body, chatID, key)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n > 0 {
			return nil
		}
		seq, err := nextSeq(ctx, tx, chatID)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO chat_entries (chat_id, seq, kind, key, body) VALUES (?, ?, 'item', ?, ?)`,
			chatID, seq, key, body); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM chat_entries WHERE chat_id = ? AND kind = 'item' AND seq <= (
			SELECT seq FROM chat_entries WHERE chat_id = ? AND kind = 'item' ORDER BY seq DESC LIMIT 1 OFFSET ?)`,
			chatID, chatID, maxChatItems)
		return err
	})
}

// ChatItems returns a chat's items in the order they were first put.
func (s *Store) ChatItems(ctx context.Context, chatID string) ([]ChatItem, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT key, body FROM chat_entries WHERE chat_id = ? AND kind = 'item' ORDER BY seq`, chatID)
	if err != nil {
		return nil, fmt.Errorf("reading chat items: %w", err)
	}
	defer rows.Close()
	var out []ChatItem
	for rows.Next() {
		var it ChatItem
		if err := rows.Scan(&it.Key, &it.Body); err != nil {
			return nil, fmt.Errorf("reading chat items: %w", err)
		}
		out = append(out, it)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading chat items: %w", err)
	}
	return out, nil
}
