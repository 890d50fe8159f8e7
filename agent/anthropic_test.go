package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestAnthropicGolden(t *testing.T) {
	checkGoldenStreams(t, "anthropic_*.sse", nil,
		func(cfg ProviderConfig) Provider { return NewAnthropic(cfg, nil) })
}

func TestAnthropicGoldenSpotChecks(t *testing.T) {
	tests := []struct {
		file       string
		wantText   string
		wantCalls  []ToolCall
		wantStop   string
		wantUsage  Usage
		wantKind   ErrorKind
		wantEvents []string
	}{
		{file: "anthropic_text.sse", wantText: "I found three promoted posts on this page.", wantStop: "end", wantUsage: Usage{1021, 12},
			wantEvents: []string{"text: I found", "text:  three promoted", "text:  posts on this page."}},
		{file: "anthropic_text_crlf.sse", wantText: "I found three promoted posts on this page.", wantStop: "end", wantUsage: Usage{1021, 12}},
		{file: "anthropic_tool_use.sse", wantText: "Let me check the feed.", wantStop: "tool_use", wantUsage: Usage{2345, 89},
			wantCalls: []ToolCall{
				{ID: "toolu_01T1x1fJ34qAmk2tNTrN7Up6", Name: "find_text", Arguments: `{"text": "Sponsored", "limit": 5}`},
				{ID: "toolu_01Q9b7", Name: "outline", Arguments: `{}`},
			},
			wantEvents: []string{"text: Let me check the feed.", "tool: find_text", "tool: outline"}},
		{file: "anthropic_ping_and_unknown_event.sse", wantText: "OK.", wantStop: "end", wantUsage: Usage{40, 7}},
		{file: "anthropic_max_tokens.sse", wantText: "A long answer that", wantStop: "max_tokens", wantUsage: Usage{900, 4096}},
		{file: "anthropic_midstream_error.sse", wantKind: ErrOverloaded},
		{file: "anthropic_truncated.sse", wantKind: ErrBadResponse},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			stream, err := os.ReadFile(filepath.Join("testdata", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			srv := serveStream(t, "text/event-stream", stream)
			p := NewAnthropic(ProviderConfig{Name: "t", BaseURL: srv.URL}, nil)
			var events []string
			resp, err := p.Stream(context.Background(), Request{Model: "m"}, func(e Event) {
				if e.Kind == EventText {
					events = append(events, "text: "+e.Text)
				} else {
					events = append(events, "tool: "+e.ToolName)
				}
			})
			checkResponse(t, resp, err, tt.wantText, tt.wantCalls, tt.wantStop, tt.wantUsage, tt.wantKind)
			if tt.wantEvents != nil && strings.Join(events, "|") != strings.Join(tt.wantEvents, "|") {
				t.Errorf("events: got %q, want %q", events, tt.wantEvents)
			}
		})
	}
}

func TestAnthropicRequestBody(t *testing.T) {
	stream, err := os.ReadFile("testdata/anthropic_text.sse")
	if err != nil {
		t.Fatal(err)
	}
	srv := serveStream(t, "text/event-stream", stream)
	p := NewAnthropic(ProviderConfig{Name: "anthropic", BaseURL: srv.URL, APIKey: "sk-ant-abc"}, srv.Client())
	req := Request{
		Model:  "claude-sonnet-4-5",
		System: "You remix pages.",
		Messages: []Message{
			{Role: RoleUser, Text: "hide ads"},
			{Role: RoleAssistant, Text: "Looking.", ToolCalls: []ToolCall{
				{ID: "toolu_1", Name: "outline", Arguments: `{"selector":"main"}`},
				{ID: "toolu_2", Name: "find_text", Arguments: `{"text":`}, // malformed: sent as {}
				{ID: "toolu_3", Name: "click", Arguments: `[1]`},          // not an object: sent as {}
			}},
			{Role: RoleTool, ToolCallID: "toolu_1", ToolName: "outline", Text: "main > article"},
			{Role: RoleTool, ToolCallID: "toolu_2", Text: "arguments are not JSON", IsError: true},
			{Role: RoleTool, ToolCallID: "toolu_3", Text: "clicked"},
			{Role: RoleUser, Text: "also the banner"},
			{Role: RoleAssistant, Text: ""}, // empty: dropped, the API refuses empty content
		},
		Tools: []ToolSpec{
			{Name: "outline", Description: "Outline the page.", Parameters: json.RawMessage(`{"type":"object","properties":{"selector":{"type":"string"}}}`)},
		},
	}
	if _, err := p.Stream(context.Background(), req, nil); err != nil {
		t.Fatalf("Stream: %v", err)
	}
	if got := srv.paths[0]; got != "/v1/messages" {
		t.Errorf("path: got %q, want /v1/messages", got)
	}
	h := srv.heads[0]
	if h.Get("X-Api-Key") != "sk-ant-abc" || h.Get("Anthropic-Version") != "2023-06-01" || h.Get("Authorization") != "" {
		t.Errorf("headers: x-api-key %q, anthropic-version %q, authorization %q", h.Get("X-Api-Key"), h.Get("Anthropic-Version"), h.Get("Authorization"))
	}
	var got, want any
	if err := json.Unmarshal(srv.bodies[0], &got); err != nil {
		t.Fatal(err)
	}
	wantJSON := `{
	  "model": "claude-sonnet-4-5",
	  "max_tokens": 4096,
	  "system": "You remix pages.",
	  "stream": true,
	  "messages": [
	    {"role": "user", "content": [{"type": "text", "text": "hide ads"}]},
	    {"role": "assistant", "content": [
	      {"type": "text", "text": "Looking."},
	      {"type": "tool_use", "id": "toolu_1", "name": "outline", "input": {"selector": "main"}},
	      {"type": "tool_use", "id": "toolu_2", "name": "find_text", "input": {}},
	      {"type": "tool_use", "id": "toolu_3", "name": "click", "input": {}}
	    ]},
	    {"role": "user", "content": [
	      {"type": "tool_result", "tool_use_id": "toolu_1", "content": "main > article"},
	      {"type": "tool_result", "tool_use_id": "toolu_2", "content": "arguments are not JSON", "is_error": true},
	      {"type": "tool_result", "tool_use_id": "toolu_3", "content": "clicked"},
	      {"type": "text", "text": "also the banner"}
	    ]}
	  ],
	  "tools": [
	    {"name": "outline", "description": "Outline the page.",
	     "input_schema": {"type":"object","properties":{"selector":{"type":"string"}}}}
	  ]
	}`
	if err := json.Unmarshal([]byte(wantJSON), &want); err != nil {
		t.Fatal(err)
	}
	g, _ := json.MarshalIndent(got, "", " ")
	w, _ := json.MarshalIndent(want, "", " ")
	if !bytes.Equal(g, w) {
		t.Errorf("request body:\ngot  %s\nwant %s", g, w)
	}
}

func TestAnthropicDefaultBaseURL(t *testing.T) {
	p := NewAnthropic(ProviderConfig{Name: "anthropic"}, nil).(*anthropic)
	if p.cfg.BaseURL != "https://api.anthropic.com" {
		t.Errorf("base URL: got %q, want https://api.anthropic.com", p.cfg.BaseURL)
	}
}

func TestAnthropicErrorEvents(t *testing.T) {
	tests := []struct {
		errType string
		message string
		want    ErrorKind
	}{
		{"overloaded_error", "Overloaded", ErrOverloaded},
		{"rate_limit_error", "slow down", ErrRateLimited},
		{"invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum", ErrContextTooLong},
		{"api_error", "Internal server error", ErrProviderFailure},
	}
	for _, tt := range tests {
		t.Run(tt.errType, func(t *testing.T) {
			ev, _ := json.Marshal(map[string]any{"type": "error", "error": map[string]string{"type": tt.errType, "message": tt.message}})
			srv := serveStream(t, "text/event-stream", []byte("event: error\ndata: "+string(ev)+"\n\n"))
			_, err := NewAnthropic(ProviderConfig{Name: "a", BaseURL: srv.URL}, nil).Stream(context.Background(), Request{Model: "m"}, nil)
			pe := asProviderError(t, err)
			if pe.Kind != tt.want || !strings.Contains(pe.Message, tt.message) {
				t.Errorf("got %s %q, want kind %s quoting %q", pe.Kind, pe.Message, tt.want, tt.message)
			}
		})
	}
}
