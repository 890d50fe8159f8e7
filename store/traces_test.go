package store

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func traceChat(t *testing.T, s *Store) Chat {
	t.Helper()
	c, err := s.CreateChat(context.Background(), Chat{Origin: "https://shop.test", URL: "https://shop.test/a", Title: "Shop", Mode: "act", Provider: "p", Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func countRows(t *testing.T, s *Store, table string) int {
	t.Helper()
	var n int
	if err := s.db.QueryRow(`SELECT COUNT(*) FROM ` + table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestTraceRoundTrip(t *testing.T) {
	s, _ := openTestStore(t, Options{})
	ctx := context.Background()
	c := traceChat(t, s)
	start := time.UnixMilli(1_700_000_000_000).UTC()
	in := TraceRun{ChatID: c.ID, PageURL: "https://shop.test/a", Mode: "act", Provider: "p", Model: "m", UserText: "buy it",
		InputTokens: 30, OutputTokens: 5, Started: start, Ended: start.Add(1500 * time.Millisecond), Steps: 2, Outcome: "done",
		Events: []TraceEvent{
			{Kind: "model", Name: "m", AtMs: 0, DurationMs: 700, InputTokens: 10, OutputTokens: 2, Input: `[{"role":"user"}]`, Output: `{"text":"ok"}`},
			{Kind: "tool", Name: "click", AtMs: 700, DurationMs: 100, IsError: true, URLBefore: "https://shop.test/a", URLAfter: "https://shop.test/b", Input: `{"ref":"e1"}`, Output: "no"},
		}}
	id, err := s.AddTraceRun(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.TraceRun(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if got.ChatTitle != "Shop" || got.UserText != "buy it" || got.Outcome != "done" || !got.Started.Equal(start) ||
		got.Duration() != 1500*time.Millisecond || got.EventCount != 2 || got.InputTokens != 30 || got.Steps != 2 {
		t.Errorf("run = %+v", got)
	}
	if len(got.Events) != 2 || got.Events[1] != (TraceEvent{Seq: 2, Kind: "tool", Name: "click", AtMs: 700, DurationMs: 100, IsError: true,
		URLBefore: "https://shop.test/a", URLAfter: "https://shop.test/b", Input: `{"ref":"e1"}`, Output: "no"}) || got.Events[0].Seq != 1 {
		t.Errorf("events = %+v", got.Events)
	}
	list, err := s.TraceRuns(ctx, 10)
	if err != nil || len(list) != 1 || list[0].ID != id || list[0].Events != nil || list[0].EventCount != 2 {
		t.Errorf("TraceRuns = %+v, %v", list, err)
	}
	if _, err := s.TraceRun(ctx, id+1); !errors.Is(err, ErrNotFound) {
		t.Errorf("a missing run: %v, want ErrNotFound", err)
	}
	if _, err := s.AddTraceRun(ctx, TraceRun{Outcome: "x"}); !errors.Is(err, ErrInvalid) {
		t.Errorf("a run without a chat: %v, want ErrInvalid", err)
	}
	if _, err := s.AddTraceRun(ctx, TraceRun{ChatID: "ch_nope", Outcome: "x"}); err == nil {
		t.Error("a run of a chat that does not exist was stored")
	}
}

func TestTraceBounds(t *testing.T) {
	s, _ := openTestStore(t, Options{})
	ctx := context.Background()
	c := traceChat(t, s)

	// One body over the limit is cut on a character boundary and says so; events beyond the
	// limit are counted, not stored; the run's bytes are bounded.
	big := strings.Repeat("é", MaxTraceBody) // 2 bytes a character
	var events []TraceEvent
	for i := 0; i < MaxTraceEvents+7; i++ {
		events = append(events, TraceEvent{Kind: "tool", Name: "outline", Output: big})
	}
	id, err := s.AddTraceRun(ctx, TraceRun{ChatID: c.ID, Outcome: "answer", Events: events})
	if err != nil {
		t.Fatal(err)
	}
	run, err := s.TraceRun(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if run.EventCount != MaxTraceEvents || len(run.Events) != MaxTraceEvents || run.DroppedEvents != 7 {
		t.Errorf("events = %d stored (%d read), %d dropped; want %d, 7", run.EventCount, len(run.Events), run.DroppedEvents, MaxTraceEvents)
	}
	first := run.Events[0].Output
	if len(first) > MaxTraceBody || !utf8.ValidString(first) || !strings.Contains(first, "[... cut:") {
		t.Errorf("first body: %d bytes, valid %v, ends %q", len(first), utf8.ValidString(first), first[len(first)-40:])
	}
	total := 0
	for _, e := range run.Events {
		total += len(e.Input) + len(e.Output)
	}
	if total > MaxTraceRunBytes+MaxTraceEvents*100 {
		t.Errorf("the run keeps %d bytes of bodies, over the %d bound", total, MaxTraceRunBytes)
	}
	if !strings.Contains(run.Events[MaxTraceEvents-1].Output, "not kept") {
		t.Errorf("the last body = %.60q, want a not-kept marker", run.Events[MaxTraceEvents-1].Output)
	}

	// At most MaxTraceRuns runs: the oldest go first.
	if _, err := s.DeleteAllTraceRuns(ctx); err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for i := 0; i < MaxTraceRuns+3; i++ {
		id, err := s.AddTraceRun(ctx, TraceRun{ChatID: c.ID, Outcome: "answer", Events: []TraceEvent{{Kind: "model", Name: "m"}}})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	list, err := s.TraceRuns(ctx, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != MaxTraceRuns || list[0].ID != ids[len(ids)-1] || list[len(list)-1].ID != ids[3] {
		t.Errorf("kept %d runs, newest %d, oldest %d; want %d, %d, %d", len(list), list[0].ID, list[len(list)-1].ID, MaxTraceRuns, ids[len(ids)-1], ids[3])
	}
	if n := countRows(t, s, "trace_events"); n != MaxTraceRuns {
		t.Errorf("%d events left, want %d (the dropped runs' events go with them)", n, MaxTraceRuns)
	}
}

func TestTraceCascade(t *testing.T) {
	s, _ := openTestStore(t, Options{})
	ctx := context.Background()
	keep, gone := traceChat(t, s), traceChat(t, s)
	for _, c := range []Chat{keep, gone, gone} {
		if _, err := s.AddTraceRun(ctx, TraceRun{ChatID: c.ID, Outcome: "answer", Events: []TraceEvent{{Kind: "model"}, {Kind: "tool"}}}); err != nil {
			t.Fatal(err)
		}
	}
	// Deleting a chat deletes its runs and their events.
	if err := s.DeleteChat(ctx, gone.ID); err != nil {
		t.Fatal(err)
	}
	if runs, events := countRows(t, s, "trace_runs"), countRows(t, s, "trace_events"); runs != 1 || events != 2 {
		t.Errorf("after deleting a chat: %d runs, %d events; want 1, 2", runs, events)
	}
	// Deleting every run deletes every event; the chats stay.
	n, err := s.DeleteAllTraceRuns(ctx)
	if err != nil || n != 1 {
		t.Errorf("DeleteAllTraceRuns = %d, %v; want 1", n, err)
	}
	if runs, events := countRows(t, s, "trace_runs"), countRows(t, s, "trace_events"); runs != 0 || events != 0 {
		t.Errorf("after deleting all: %d runs, %d events", runs, events)
	}
	if _, err := s.Chat(ctx, keep.ID); err != nil {
		t.Errorf("the chat went with its traces: %v", err)
	}
}
