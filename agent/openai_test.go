package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the testdata/*.golden.json files from the current providers")

// streamResult is what a golden file holds: the events seen, then the response or the error.
type streamResult struct {
	Events   []string     `json:"events"`
	Response *Response    `json:"response,omitempty"`
	Error    *goldenError `json:"error,omitempty"`
}

type goldenError struct {
	Kind    ErrorKind `json:"kind"`
	Status  int       `json:"status,omitempty"`
	Message string    `json:"message"`
}

// recordingServer is an httptest server answering every request with one fixed body, and
// remembering each request's path, headers and body.
type recordingServer struct {
	*httptest.Server
	mu     sync.Mutex
	bodies [][]byte
	heads  []http.Header
	paths  []string
}

func serveStream(t *testing.T, contentType string, body []byte) *recordingServer {
	t.Helper()
	rs := &recordingServer{}
	rs.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		rs.mu.Lock()
		rs.bodies = append(rs.bodies, b)
		rs.heads = append(rs.heads, r.Header.Clone())
		rs.paths = append(rs.paths, r.URL.Path)
		rs.mu.Unlock()
		w.Header().Set("Content-Type", contentType)
		w.Write(body)
	}))
	t.Cleanup(rs.Close)
	return rs
}

func (rs *recordingServer) lastBody(t *testing.T) map[string]any {
	t.Helper()
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if len(rs.bodies) == 0 {
		t.Fatal("the server got no request")
	}
	var v map[string]any
	if err := json.Unmarshal(rs.bodies[len(rs.bodies)-1], &v); err != nil {
		t.Fatalf("request body is not JSON: %v", err)
	}
	return v
}

// runStream streams req through p, collecting events.
func runStream(p Provider, req Request) streamResult {
	var res streamResult
	resp, err := p.Stream(context.Background(), req, func(e Event) {
		switch e.Kind {
		case EventText:
			res.Events = append(res.Events, "text: "+e.Text)
		case EventToolStart:
			res.Events = append(res.Events, "tool: "+e.ToolName)
		default:
			res.Events = append(res.Events, "unknown event")
		}
	})
	res.Response = resp
	if err != nil {
		var pe *ProviderError
		if errors.As(err, &pe) {
			res.Error = &goldenError{Kind: pe.Kind, Status: pe.Status, Message: pe.Error()}
		} else {
			res.Error = &goldenError{Kind: "not a ProviderError", Message: err.Error()}
		}
	}
	return res
}

// checkGoldenStreams replays each recorded stream matching glob through a provider made by
// newProvider and compares the result with the .golden.json beside it.
func checkGoldenStreams(t *testing.T, glob string, skip func(name string) bool, newProvider func(cfg ProviderConfig) Provider) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", glob))
	if err != nil {
		t.Fatal(err)
	}
	ran := 0
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".sse")
		if skip != nil && skip(name) {
			continue
		}
		ran++
		t.Run(name, func(t *testing.T) {
			stream, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			srv := serveStream(t, "text/event-stream", stream)
			p := newProvider(ProviderConfig{Name: "test", BaseURL: srv.URL, APIKey: "sk-test"})
			got := runStream(p, Request{Model: "m", Messages: []Message{{Role: RoleUser, Text: "hi"}}})
			gotJSON, err := json.MarshalIndent(got, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			gotJSON = append(gotJSON, '\n')
			golden := filepath.Join("testdata", name+".golden.json")
			if *update {
				if err := os.WriteFile(golden, gotJSON, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if !bytes.Equal(gotJSON, want) {
				t.Errorf("result differs from %s (run with -update after checking):\ngot:\n%s\nwant:\n%s", golden, gotJSON, want)
			}
		})
	}
	if ran == 0 {
		t.Fatalf("no recorded streams match %s", glob)
	}
}

func TestOpenAIGolden(t *testing.T) {
	checkGoldenStreams(t, "*.sse", func(name string) bool { return strings.HasPrefix(name, "anthropic_") },
		func(cfg ProviderConfig) Provider { return NewOpenAI(cfg, nil) })
}

// TestOpenAIGoldenSpotChecks states the key facts of some golden files in code, so a careless
// -update cannot bless a regression in them.
func TestOpenAIGoldenSpotChecks(t *testing.T) {
	tests := []struct {
		file      string
		wantText  string
		wantCalls []ToolCall
		wantStop  string
		wantUsage Usage
		wantKind  ErrorKind
	}{
		{file: "openai_text.sse", wantText: "The page has three promoted posts; I can hide them.", wantStop: "end", wantUsage: Usage{812, 14}},
		{file: "openai_text_crlf.sse", wantText: "The page has three promoted posts; I can hide them.", wantStop: "end", wantUsage: Usage{812, 14}},
		{file: "openai_tool_calls_parallel.sse", wantStop: "tool_use", wantUsage: Usage{1204, 41}, wantCalls: []ToolCall{
			{ID: "call_Xa1", Name: "outline", Arguments: `{"selector": "main"}`},
			{ID: "call_Yb2", Name: "find_text", Arguments: `{"text": "Sponsored", "limit": 5}`},
		}},
		{file: "ollama_parallel_index0.sse", wantStop: "tool_use", wantUsage: Usage{377, 52}, wantCalls: []ToolCall{
			{ID: "call_k2m9x1", Name: "outline", Arguments: `{"selector":"body"}`},
			{ID: "call_p7q3z8", Name: "find_text", Arguments: `{"text":"Sponsored"}`},
		}},
		{file: "ollama_stop_with_tool_call.sse", wantStop: "tool_use", wantCalls: []ToolCall{{ID: "call_a1", Name: "outline", Arguments: `{}`}}},
		{file: "openrouter_comments_tool_call.sse", wantText: "Let me look.", wantStop: "tool_use", wantUsage: Usage{2210, 38}, wantCalls: []ToolCall{
			{ID: "toolu_01A", Name: "outline", Arguments: `{"selector": "#feed"}`},
		}},
		{file: "llamacpp_tool_call.sse", wantText: "Hi there", wantStop: "tool_use", wantUsage: Usage{64, 11}, wantCalls: []ToolCall{
			{ID: "tfk0XyZ", Name: "click", Arguments: `{"ref":"e12"}`},
		}},
		{file: "groq_text.sse", wantText: "Done — hidden.", wantStop: "end", wantUsage: Usage{95, 5}},
		{file: "openai_length.sse", wantText: "Here is a very long", wantStop: "max_tokens", wantUsage: Usage{30, 4}},
		{file: "openai_truncated.sse", wantKind: ErrBadResponse},
		{file: "openrouter_midstream_error.sse", wantKind: ErrOverloaded},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			stream, err := os.ReadFile(filepath.Join("testdata", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			srv := serveStream(t, "text/event-stream", stream)
			resp, err := NewOpenAI(ProviderConfig{Name: "t", BaseURL: srv.URL}, nil).Stream(context.Background(), Request{Model: "m"}, nil)
			checkResponse(t, resp, err, tt.wantText, tt.wantCalls, tt.wantStop, tt.wantUsage, tt.wantKind)
		})
	}
}

func checkResponse(t *testing.T, resp *Response, err error, wantText string, wantCalls []ToolCall, wantStop string, wantUsage Usage, wantKind ErrorKind) {
	t.Helper()
	if wantKind != "" {
		var pe *ProviderError
		if !errors.As(err, &pe) || pe.Kind != wantKind {
			t.Fatalf("got %v (%#v), want a %s ProviderError", err, err, wantKind)
		}
		return
	}
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	if resp.Text != wantText {
		t.Errorf("text: got %q, want %q", resp.Text, wantText)
	}
	if resp.StopReason != wantStop {
		t.Errorf("stop reason: got %q, want %q", resp.StopReason, wantStop)
	}
	if resp.Usage != wantUsage {
		t.Errorf("usage: got %+v, want %+v", resp.Usage, wantUsage)
	}
	if len(resp.ToolCalls) != len(wantCalls) {
		t.Fatalf("tool calls: got %+v, want %+v", resp.ToolCalls, wantCalls)
	}
	for i := range wantCalls {
		if resp.ToolCalls[i] != wantCalls[i] {
			t.Errorf("tool call %d: got %+v, want %+v", i, resp.ToolCalls[i], wantCalls[i])
		}
	}
}

func TestOpenAIRequestBody(t *testing.T) {
	stream, err := os.ReadFile("testdata/openai_text.sse")
	if err != nil {
		t.Fatal(err)
	}
	srv := serveStream(t, "text/event-stream", stream)
	p := NewOpenAI(ProviderConfig{Name: "openai", BaseURL: srv.URL + "/v1/", APIKey: "sk-abc"}, srv.Client())
	req := Request{
		Model:  "gpt-4.1",
		System: "You remix pages.",
		Messages: []Message{
			{Role: RoleUser, Text: "hide ads"},
			{Role: RoleAssistant, ToolCalls: []ToolCall{
				{ID: "call_1", Name: "outline", Arguments: `{"selector":"main"}`},
				{ID: "call_2", Name: "find_text", Arguments: `{"text":`}, // malformed: sent as {}
			}},
			{Role: RoleTool, ToolCallID: "call_1", ToolName: "outline", Text: "main > article"},
			{Role: RoleTool, ToolCallID: "call_2", ToolName: "find_text", Text: "arguments are not JSON", IsError: true},
			{Role: RoleAssistant, Text: "Found them."},
			{Role: RoleUser, Text: "thanks"},
		},
		Tools: []ToolSpec{
			{Name: "outline", Description: "Outline the page.", Parameters: json.RawMessage(`{"type":"object","properties":{"selector":{"type":"string"}}}`)},
			{Name: "noargs", Description: "No parameters."},
		},
		MaxTokens: 1000,
	}
	if _, err := p.Stream(context.Background(), req, nil); err != nil {
		t.Fatalf("Stream: %v", err)
	}
	if got := srv.paths[0]; got != "/v1/chat/completions" {
		t.Errorf("path: got %q, want /v1/chat/completions", got)
	}
	if got := srv.heads[0].Get("Authorization"); got != "Bearer sk-abc" {
		t.Errorf("Authorization: got %q", got)
	}
	var got, want any
	if err := json.Unmarshal(srv.bodies[0], &got); err != nil {
		t.Fatal(err)
	}
	wantJSON := `{
	  "model": "gpt-4.1",
	  "stream": true,
	  "stream_options": {"include_usage": true},
	  "max_tokens": 1000,
	  "messages": [
	    {"role": "system", "content": "You remix pages."},
	    {"role": "user", "content": "hide ads"},
	    {"role": "assistant", "content": null, "tool_calls": [
	      {"id": "call_1", "type": "function", "function": {"name": "outline", "arguments": "{\"selector\":\"main\"}"}},
	      {"id": "call_2", "type": "function", "function": {"name": "find_text", "arguments": "{}"}}
	    ]},
	    {"role": "tool", "tool_call_id": "call_1", "name": "outline", "content": "main > article"},
	    {"role": "tool", "tool_call_id": "call_2", "name": "find_text", "content": "Error: arguments are not JSON"},
	    {"role": "assistant", "content": "Found them."},
	    {"role": "user", "content": "thanks"}
	  ],
	  "tools": [
	    {"type": "function", "function": {"name": "outline", "description": "Outline the page.",
	      "parameters": {"type":"object","properties":{"selector":{"type":"string"}}}}},
	    {"type": "function", "function": {"name": "noargs", "description": "No parameters.",
	      "parameters": {"type":"object","properties":{}}}}
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

func TestOpenAIEvents(t *testing.T) {
	stream, err := os.ReadFile("testdata/openrouter_comments_tool_call.sse")
	if err != nil {
		t.Fatal(err)
	}
	srv := serveStream(t, "text/event-stream", stream)
	got := runStream(NewOpenAI(ProviderConfig{BaseURL: srv.URL}, nil), Request{Model: "m"})
	want := []string{"text: Let me look.", "tool: outline"}
	if strings.Join(got.Events, "|") != strings.Join(want, "|") {
		t.Errorf("events: got %q, want %q", got.Events, want)
	}
}

func TestOpenAINonStreamingReply(t *testing.T) {
	body := `{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"Hello","tool_calls":[{"id":"c1","type":"function","function":{"name":"outline","arguments":"{}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":3,"completion_tokens":2}}`
	srv := serveStream(t, "application/json; charset=utf-8", []byte(body))
	resp, err := NewOpenAI(ProviderConfig{BaseURL: srv.URL}, nil).Stream(context.Background(), Request{Model: "m"}, nil)
	checkResponse(t, resp, err, "Hello", []ToolCall{{ID: "c1", Name: "outline", Arguments: "{}"}}, "tool_use", Usage{3, 2}, "")
}

func TestOpenAIToolCallAccumulation(t *testing.T) {
	chunk := func(s string) string { return "data: " + s + "\n\n" }
	tests := []struct {
		name   string
		chunks []string
		want   []ToolCall
	}{
		{
			name: "id repeated on every delta continues the call",
			chunks: []string{
				`{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"f","arguments":"{\"x\""}}]}}]}`,
				`{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"a","function":{"arguments":":1}"}}]}}]}`,
			},
			want: []ToolCall{{ID: "a", Name: "f", Arguments: `{"x":1}`}},
		},
		{
			name: "no index: an id starts a call, no id continues the last",
			chunks: []string{
				`{"choices":[{"delta":{"tool_calls":[{"id":"a","function":{"name":"f","arguments":"{"}}]}}]}`,
				`{"choices":[{"delta":{"tool_calls":[{"function":{"arguments":"}"}}]}}]}`,
				`{"choices":[{"delta":{"tool_calls":[{"id":"b","function":{"name":"g","arguments":"{}"}}]}}]}`,
			},
			want: []ToolCall{{ID: "a", Name: "f", Arguments: `{}`}, {ID: "b", Name: "g", Arguments: `{}`}},
		},
		{
			name: "missing ids are made up",
			chunks: []string{
				`{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"name":"f","arguments":"{}"}}]}}]}`,
				`{"choices":[{"delta":{"tool_calls":[{"index":1,"function":{"name":"g","arguments":"{}"}}]}}]}`,
			},
			want: []ToolCall{{ID: "call_1", Name: "f", Arguments: `{}`}, {ID: "call_2", Name: "g", Arguments: `{}`}},
		},
		{
			name: "two calls in one delta",
			chunks: []string{
				`{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"f","arguments":"{}"}},{"index":1,"id":"b","function":{"name":"g","arguments":"{}"}}]}}]}`,
			},
			want: []ToolCall{{ID: "a", Name: "f", Arguments: `{}`}, {ID: "b", Name: "g", Arguments: `{}`}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var sb strings.Builder
			for _, c := range tt.chunks {
				sb.WriteString(chunk(c))
			}
			sb.WriteString(chunk(`{"choices":[{"delta":{},"finish_reason":"tool_calls"}]}`))
			sb.WriteString(chunk("[DONE]"))
			srv := serveStream(t, "text/event-stream", []byte(sb.String()))
			resp, err := NewOpenAI(ProviderConfig{BaseURL: srv.URL}, nil).Stream(context.Background(), Request{Model: "m"}, nil)
			checkResponse(t, resp, err, "", tt.want, "tool_use", Usage{}, "")
		})
	}
}

func TestStreamCancelledMidway(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: {\"choices\":[{\"delta\":{\"content\":\"part\"}}]}\n\n")
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, err := NewOpenAI(ProviderConfig{Name: "o", BaseURL: srv.URL}, nil).Stream(ctx, Request{Model: "m"}, func(e Event) { cancel() })
	pe := asProviderError(t, err)
	if pe.Kind != ErrCanceled || !errors.Is(err, context.Canceled) {
		t.Errorf("got %s %v, want canceled wrapping context.Canceled", pe.Kind, err)
	}
}
