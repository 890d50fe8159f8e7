package scripted

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// anthropicFormat speaks the Messages API.
type anthropicFormat struct{}

func (anthropicFormat) idPrefix() string { return "toolu_" }

type antBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

func (anthropicFormat) parse(body []byte) (RecordedRequest, bool, error) {
	var req struct {
		Model    string            `json:"model"`
		System   json.RawMessage   `json:"system"`
		Messages []json.RawMessage `json:"messages"`
		Tools    []struct {
			Name string `json:"name"`
		} `json:"tools"`
		Stream bool `json:"stream"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return RecordedRequest{}, false, fmt.Errorf("decoding messages request: %w", err)
	}
	rec := RecordedRequest{Format: FormatAnthropic, Model: req.Model, System: textOf(req.System)}
	for _, raw := range req.Messages {
		var m struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		}
		if err := json.Unmarshal(raw, &m); err != nil {
			return RecordedRequest{}, false, fmt.Errorf("decoding message: %w", err)
		}
		msg := Message{Role: m.Role, Raw: raw}
		var s string
		var blocks []antBlock
		if json.Unmarshal(m.Content, &s) == nil {
			msg.Text = s
		} else if err := json.Unmarshal(m.Content, &blocks); err != nil {
			return RecordedRequest{}, false, fmt.Errorf("decoding message content: %w", err)
		}
		var texts []string
		for _, b := range blocks {
			switch b.Type {
			case "text":
				texts = append(texts, b.Text)
			case "tool_use":
				msg.ToolCalls = append(msg.ToolCalls, Call{ID: b.ID, Name: b.Name, Arguments: string(b.Input)})
			case "tool_result":
				msg.ToolResults = append(msg.ToolResults, ToolResult{CallID: b.ToolUseID, Text: textOf(b.Content), IsError: b.IsError})
			}
		}
		if len(texts) > 0 {
			msg.Text = strings.Join(texts, "\n")
		}
		rec.Messages = append(rec.Messages, msg)
	}
	for _, t := range req.Tools {
		rec.Tools = append(rec.Tools, t.Name)
	}
	return rec, req.Stream, nil
}

func (anthropicFormat) writeError(w http.ResponseWriter, status int, body string) {
	if body != "" {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		fmt.Fprint(w, body)
		return
	}
	typ := map[int]string{
		400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
		404: "not_found_error", 413: "request_too_large", 429: "rate_limit_error", 529: "overloaded_error",
	}[status]
	if typ == "" {
		typ = "api_error"
	}
	writeJSON(w, status, map[string]any{"type": "error", "error": map[string]any{
		"type": typ, "message": fmt.Sprintf("scripted error (HTTP %d)", status),
	}})
}

func (anthropicFormat) writeReply(w http.ResponseWriter, model string, r reply, stream bool) {
	id := fmt.Sprintf("msg_scripted_%d", time.Now().UnixNano())
	stop := "end_turn"
	if len(r.calls) > 0 {
		stop = "tool_use"
	}
	if !stream {
		var content []any
		if r.text != "" {
			content = append(content, map[string]any{"type": "text", "text": r.text})
		}
		for _, c := range r.calls {
			input := json.RawMessage(c.Arguments)
			if !json.Valid(input) {
				input = json.RawMessage("{}") // raw_arguments that are not JSON cannot be a whole input object
			}
			content = append(content, map[string]any{"type": "tool_use", "id": c.ID, "name": c.Name, "input": input})
		}
		writeJSON(w, http.StatusOK, map[string]any{
			"id": id, "type": "message", "role": "assistant", "model": model, "content": content,
			"stop_reason": stop, "stop_sequence": nil,
			"usage": map[string]int{"input_tokens": r.inTok, "output_tokens": r.outTok},
		})
		return
	}
	out := startSSE(w)
	out.event("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": id, "type": "message", "role": "assistant", "model": model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]int{"input_tokens": r.inTok, "output_tokens": 1},
	}})
	out.event("ping", map[string]string{"type": "ping"})
	index := 0
	if r.text != "" {
		out.event("content_block_start", map[string]any{"type": "content_block_start", "index": index,
			"content_block": map[string]string{"type": "text", "text": ""}})
		for _, piece := range chunks(r.text, textChunkSize) {
			out.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": index,
				"delta": map[string]string{"type": "text_delta", "text": piece}})
		}
		out.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": index})
		index++
	}
	for _, c := range r.calls {
		out.event("content_block_start", map[string]any{"type": "content_block_start", "index": index,
			"content_block": map[string]any{"type": "tool_use", "id": c.ID, "name": c.Name, "input": map[string]any{}}})
		for _, piece := range argumentPieces(c.Arguments) {
			out.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": index,
				"delta": map[string]string{"type": "input_json_delta", "partial_json": piece}})
		}
		out.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": index})
		index++
	}
	out.event("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]int{"output_tokens": r.outTok}})
	out.event("message_stop", map[string]string{"type": "message_stop"})
}
