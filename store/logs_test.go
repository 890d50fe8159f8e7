package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestLogBound(t *testing.T) {
	const limit = 5
	s, _ := openTestStore(t, Options{LogLimit: limit})
	ctx := context.Background()
	r := mustCreate(t, s, "r")
	other := mustCreate(t, s, "other")
	mustOK(t, "AppendLog other", s.AppendLog(ctx, other.ID, "info", "other's line"))
	for i := range 12 {
		mustOK(t, "AppendLog", s.AppendLog(ctx, r.ID, "info", fmt.Sprintf("line %d", i)))
	}
	tests := []struct {
		name  string
		limit int
		want  []string
	}{
		{"all kept, newest first", 0, []string{"line 11", "line 10", "line 9", "line 8", "line 7"}},
		{"limit", 2, []string{"line 11", "line 10"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			es, err := s.Log(ctx, r.ID, tt.limit)
			if err != nil {
				t.Fatalf("Log: %v", err)
			}
			var got []string
			for _, e := range es {
				got = append(got, e.Message)
			}
			if strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Errorf("Log = %q, want %q", got, tt.want)
			}
		})
	}
	es, err := s.Log(ctx, other.ID, 0)
	if err != nil || len(es) != 1 || es[0].Message != "other's line" {
		t.Errorf("Log(other) = %+v, %v; want its one line, untouched by r's bound", es, err)
	}
	var n int
	if err := s.db.QueryRow(`SELECT COUNT(*) FROM logs WHERE remixlet_id = ?`, r.ID).Scan(&n); err != nil || n != limit {
		t.Errorf("rows kept = %d, %v; want %d", n, err, limit)
	}
}

func TestLogTruncation(t *testing.T) {
	s, clock := openTestStore(t, Options{})
	ctx := context.Background()
	r := mustCreate(t, s, "r")
	tests := []struct {
		name     string
		level    string
		message  string
		wantLen  int // bytes of the stored message
		wantTail string
	}{
		{"short", "warn", "hello", 5, "hello"},
		{"exactly the limit", "info", strings.Repeat("a", MaxLogMessage), MaxLogMessage, "a"},
		{"over the limit", "info", strings.Repeat("a", MaxLogMessage+1), MaxLogMessage, "…"},
		{"cut inside a rune", "info", strings.Repeat("é", MaxLogMessage), MaxLogMessage - 1, "é…"},
		{"invalid UTF-8", "info", "a\xffb", len("a\uFFFDb"), "\uFFFDb"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mustOK(t, "AppendLog", s.AppendLog(ctx, r.ID, tt.level, tt.message))
			es, err := s.Log(ctx, r.ID, 1)
			if err != nil || len(es) != 1 {
				t.Fatalf("Log = %v, %v", es, err)
			}
			e := es[0]
			if len(e.Message) != tt.wantLen || !strings.HasSuffix(e.Message, tt.wantTail) || !utf8.ValidString(e.Message) {
				t.Errorf("stored message: %d bytes ending %q, want %d bytes ending %q, valid UTF-8",
					len(e.Message), e.Message[max(0, len(e.Message)-8):], tt.wantLen, tt.wantTail)
			}
			if e.Level != tt.level || e.RemixletID != r.ID || !e.Time.Equal(clock.Now()) {
				t.Errorf("entry = %+v, want level %q, remixlet %s, time %v", e, tt.level, r.ID, clock.Now())
			}
		})
	}
	if err := s.AppendLog(ctx, "rx_nope", "info", "x"); !errors.Is(err, ErrNotFound) {
		t.Errorf("AppendLog(unknown remixlet) = %v, want ErrNotFound", err)
	}
}
