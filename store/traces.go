package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"time"
	"unicode/utf8"
)

// Traces: what the agent did for one message, recorded only when the person turns on "Record
// agent traces" (agent.Settings.RecordTraces). A run is one message to the agent; its events are
// the model calls and tool calls in order. Everything is bounded here, whatever the caller
// passes: the newest MaxTraceRuns runs are kept (the oldest dropped), MaxTraceEvents events a
// run (later ones counted in DroppedEvents), MaxTraceBody bytes a body and MaxTraceRunBytes
// bytes of bodies a run. A run belongs to its chat: deleting the chat deletes its traces.

// Bounds on the stored traces.
const (
	MaxTraceRuns     = 200
	MaxTraceEvents   = 500
	MaxTraceBody     = 64 << 10
	MaxTraceRunBytes = 2 << 20
)

// TraceRun is one message to the agent and what followed.
type TraceRun struct {
	ID     int64
	ChatID string
	// ChatTitle is the chat's title when the run is read (the title of the page it started on).
	ChatTitle    string
	PageURL      string // the page's address when the message was sent
	Mode         string
	Provider     string
	Model        string
	UserText     string
	InputTokens  int64
	OutputTokens int64
	Started      time.Time
	Ended        time.Time
	Steps        int    // model calls
	Outcome      string // "answer", "done", "step limit", "loop", "stopped" or "error: ..."
	// EventCount is how many events are stored (set when reading); DroppedEvents how many were
	// over MaxTraceEvents and not stored.
	EventCount    int
	DroppedEvents int
	// Events are the run's events in order; set by TraceRun, not by TraceRuns.
	Events []TraceEvent
}

// Duration is how long the run took.
func (r TraceRun) Duration() time.Duration { return r.Ended.Sub(r.Started) }

// TraceEvent is one model call or one tool call of a run.
type TraceEvent struct {
	Seq  int
	Kind string // "model" or "tool"
	// Name is the model's name for a model call, the tool's for a tool call.
	Name       string
	AtMs       int64 // from the run's start
	DurationMs int64
	// InputTokens and OutputTokens are a model call's.
	InputTokens  int64
	OutputTokens int64
	IsError      bool
	// URLBefore and URLAfter are the page's address around a page tool call.
	URLBefore string
	URLAfter  string
	// Input is what was sent (a model call's messages, a tool call's arguments); Output what
	// came back (the model's text and tool calls, the tool's result).
	Input  string
	Output string
}

// clipTraceBody bounds s to max bytes, cutting on a character boundary and saying so.
func clipTraceBody(s string, max int) string {
	if len(s) <= max {
		return s
	}
	marker := "\n[... cut: " + strconv.Itoa(len(s)) + " bytes in all]"
	cut := max - len(marker)
	if cut < 0 {
		cut = 0
	}
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + marker
}

const traceRunColumns = `r.id, r.chat_id, COALESCE(c.title, ''), r.page_url, r.mode, r.provider, r.model, r.user_text,
	r.input_tokens, r.output_tokens, r.started_at, r.ended_at, r.steps, r.outcome, r.dropped_events,
	(SELECT COUNT(*) FROM trace_events e WHERE e.run_id = r.id)`

func scanTraceRun(row rowScanner) (TraceRun, error) {
	var r TraceRun
	var started, ended int64
	err := row.Scan(&r.ID, &r.ChatID, &r.ChatTitle, &r.PageURL, &r.Mode, &r.Provider, &r.Model, &r.UserText,
		&r.InputTokens, &r.OutputTokens, &started, &ended, &r.Steps, &r.Outcome, &r.DroppedEvents, &r.EventCount)
	if err != nil {
		return TraceRun{}, err
	}
	r.Started, r.Ended = fromMilli(started), fromMilli(ended)
	return r, nil
}

// AddTraceRun stores a run with its events (within the bounds above) and drops the oldest runs
// beyond MaxTraceRuns. It returns the run's ID. The chat must exist.
func (s *Store) AddTraceRun(ctx context.Context, r TraceRun) (int64, error) {
	if r.ChatID == "" {
		return 0, fmt.Errorf("saving trace: %w: no chat", ErrInvalid)
	}
	events := r.Events
	dropped := r.DroppedEvents
	if len(events) > MaxTraceEvents {
		dropped += len(events) - MaxTraceEvents
		events = events[:MaxTraceEvents]
	}
	var id int64
	err := s.write(ctx, "saving trace", func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO trace_runs (chat_id, page_url, mode, provider, model, user_text,
			input_tokens, output_tokens, started_at, ended_at, steps, outcome, dropped_events)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			r.ChatID, clipTraceBody(r.PageURL, 4096), r.Mode, r.Provider, r.Model, clipTraceBody(r.UserText, MaxTraceBody),
			r.InputTokens, r.OutputTokens, r.Started.UnixMilli(), r.Ended.UnixMilli(), r.Steps, clipTraceBody(r.Outcome, 4096), dropped)
		if err != nil {
			return err
		}
		if id, err = res.LastInsertId(); err != nil {
			return err
		}
		budget := MaxTraceRunBytes
		body := func(s string) string {
			s = clipTraceBody(s, MaxTraceBody)
			if len(s) > budget {
				return "[not kept: this run's traces reached " + strconv.Itoa(MaxTraceRunBytes>>20) + " MiB]"
			}
			budget -= len(s)
			return s
		}
		for i, e := range events {
			in, out := body(e.Input), body(e.Output)
			if _, err := tx.ExecContext(ctx, `INSERT INTO trace_events (run_id, seq, kind, name, at_ms, duration_ms,
				input_tokens, output_tokens, is_error, url_before, url_after, input, output)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
				id, i+1, e.Kind, clipTraceBody(e.Name, 200), e.AtMs, e.DurationMs, e.InputTokens, e.OutputTokens, e.IsError,
				clipTraceBody(e.URLBefore, 4096), clipTraceBody(e.URLAfter, 4096), in, out); err != nil {
				return fmt.Errorf("event %d: %w", i+1, err)
			}
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM trace_runs WHERE id <= (
			SELECT id FROM trace_runs ORDER BY id DESC LIMIT 1 OFFSET ?)`, MaxTraceRuns)
		return err
	})
	if err != nil {
		return 0, err
	}
	return id, nil
}

// TraceRuns lists runs without their events, newest first, at most limit of them.
func (s *Store) TraceRuns(ctx context.Context, limit int) ([]TraceRun, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+traceRunColumns+` FROM trace_runs r LEFT JOIN chats c ON c.id = r.chat_id
		ORDER BY r.id DESC LIMIT ?`, limit)
	if err != nil {
		return nil, fmt.Errorf("listing traces: %w", err)
	}
	defer rows.Close()
	var out []TraceRun
	for rows.Next() {
		r, err := scanTraceRun(rows)
		if err != nil {
			return nil, fmt.Errorf("listing traces: %w", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("listing traces: %w", err)
	}
	return out, nil
}

// TraceRun returns a run with its events (ErrNotFound when there is none).
func (s *Store) TraceRun(ctx context.Context, id int64) (TraceRun, error) {
	r, err := scanTraceRun(s.db.QueryRowContext(ctx, `SELECT `+traceRunColumns+` FROM trace_runs r LEFT JOIN chats c ON c.id = r.chat_id
		WHERE r.id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return TraceRun{}, fmt.Errorf("reading trace %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return TraceRun{}, fmt.Errorf("reading trace %d: %w", id, err)
	}
	rows, err := s.db.QueryContext(ctx, `SELECT seq, kind, name, at_ms, duration_ms, input_tokens, output_tokens, is_error,
		url_before, url_after, input, output FROM trace_events WHERE run_id = ? ORDER BY seq`, id)
	if err != nil {
		return TraceRun{}, fmt.Errorf("reading trace %d: %w", id, err)
	}
	defer rows.Close()
	for rows.Next() {
		var e TraceEvent
		if err := rows.Scan(&e.Seq, &e.Kind, &e.Name, &e.AtMs, &e.DurationMs, &e.InputTokens, &e.OutputTokens, &e.IsError,
			&e.URLBefore, &e.URLAfter, &e.Input, &e.Output); err != nil {
			return TraceRun{}, fmt.Errorf("reading trace %d: %w", id, err)
		}
		r.Events = append(r.Events, e)
	}
	if err := rows.Err(); err != nil {
		return TraceRun{}, fmt.Errorf("reading trace %d: %w", id, err)
	}
	return r, nil
}

// DeleteAllTraceRuns deletes every run and its events; it returns how many runs there were.
func (s *Store) DeleteAllTraceRuns(ctx context.Context) (int64, error) {
	var n int64
	err := s.write(ctx, "deleting traces", func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM trace_runs`)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	return n, err
}
