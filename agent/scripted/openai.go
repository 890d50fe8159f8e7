package scripted

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// openAIFormat speaks Chat Completions.
type openAIFormat struct{}

func (openAIFormat) idPrefix() string { return "call_" }

func (openAIFormat) parse(body []byte) (RecordedRequest, bool, error) {
	var req struct {
		Model    string            `json:"model"`
		Messages []json.RawMessage `json:"messages"`
		Tools    []struct {
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		} `json:"tools"`
		Stream bool `json:"stream"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return RecordedRequest{}, false, fmt.Errorf("decoding chat request: %w", err)
	}
	rec := RecordedRequest{Format: FormatOpenAI, Model: req.Model}
	var system []string
	for _, raw := range req.Messages {
		var m struct {
			Role      string          `json:"role"`
			Content   json.RawMessage `json:"content"`
			ToolCalls []struct {
				ID       string `json:"id"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
			ToolCallID string `json:"tool_call_id"`
		}
		if err := json.Unmarshal(raw, &m); err != nil {
			return RecordedRequest{}, false, fmt.Errorf("decoding chat message: %w", err)
		}
		text := textOf(m.Content)
		switch m.Role {
		case "system", "developer":
			system = append(system, text)
			continue
		case "tool":
			rec.Messages = append(rec.Messages, Message{Role: "tool", Raw: raw,
				ToolResults: []ToolResult{{CallID: m.ToolCallID, Text: text}}})
			continue
		}
		msg := Message{Role: m.Role, Text: text, Raw: raw}
		for _, c := range m.ToolCalls {
			msg.ToolCalls = append(msg.ToolCalls, Call{ID: c.ID, Name: c.Function.Name, Arguments: c.Function.Arguments})
		}
		rec.Messages = append(rec.Messages, msg)
	}
	rec.System = strings.Join(system, "\n")
	for _, t := range req.Tools {
		rec.Tools = append(rec.Tools, t.Function.Name)
	}
	return rec, req.Stream, nil
}

func (openAIFormat) writeError(w http.ResponseWriter, status int, body string) {
	if body != "" {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		fmt.Fprint(w, body)
		return
	}
	typ := "invalid_request_error"
	switch {
	case status == http.StatusTooManyRequests:
		typ = "rate_limit_exceeded"
	case status >= 500:
		typ = "server_error"
	}
	writeJSON(w, status, map[string]any{"error": map[string]any{
		"message": fmt.Sprintf("scripted error (HTTP %d)", status), "type": typ, "code": nil,
	}})
}

func (openAIFormat) writeReply(w http.ResponseWriter, model string, r reply, stream bool) {
	id := fmt.Sprintf("chatcmpl-scripted-%d", time.Now().UnixNano())
	finish := "stop"
	if len(r.calls) > 0 {
		finish = "tool_calls"
	}
	usage := map[string]int{"prompt_tokens": r.inTok, "completion_tokens": r.outTok, "total_tokens": r.inTok + r.outTok}
	if !stream {
		msg := map[string]any{"role": "assistant", "content": r.text}
		var calls []map[string]any
		for _, c := range r.calls {
			calls = append(calls, map[string]any{"id": c.ID, "type": "function",
				"function": map[string]string{"name": c.Name, "arguments": c.Arguments}})
		}
		if len(calls) > 0 {
			msg["tool_calls"] = calls
		}
		writeJSON(w, http.StatusOK, map[string]any{
			"id": id, "object": "chat.completion", "model": model,
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
			"usage":   usage,
		})
		return
	}
	out := startSSE(w)
	chunk := func(delta map[string]any, finishReason any) {
		out.event("", map[string]any{
			"id": id, "object": "chat.completion.chunk", "model": model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finishReason}},
		})
	}
	chunk(map[string]any{"role": "assistant", "content": ""}, nil)
	for _, piece := range chunks(r.text, textChunkSize) {
		chunk(map[string]any{"content": piece}, nil)
	}
	for i, c := range r.calls {
		chunk(map[string]any{"tool_calls": []any{map[string]any{
			"index": i, "id": c.ID, "type": "function",
			"function": map[string]string{"name": c.Name, "arguments": ""},
		}}}, nil)
		for _, piece := range argumentPieces(c.Arguments) {
			chunk(map[string]any{"tool_calls": []any{map[string]any{
				"index": i, "function": map[string]string{"arguments": piece},
			}}}, nil)
		}
	}
	chunk(map[string]any{}, finish)
	out.event("", map[string]any{"id": id, "object": "chat.completion.chunk", "model": model, "choices": []any{}, "usage": usage})
	out.event("", "[DONE]")
}
