package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
)

// openAI is a Provider for OpenAI-compatible Chat Completions servers: OpenAI, Groq, OpenRouter,
// LM Studio, llama.cpp, vLLM and Ollama's /v1.
type openAI struct {
	wire
}

// NewOpenAI returns a Provider that streams from cfg.BaseURL + "/chat/completions". A nil client
// means http.DefaultClient. cfg.APIKey may be empty for local servers.
func NewOpenAI(cfg ProviderConfig, client *http.Client) Provider {
	return &openAI{wire: newWire(cfg, client)}
}

type oaiRequest struct {
	Model         string            `json:"model"`
	Messages      []oaiMessage      `json:"messages"`
	Tools         []oaiTool         `json:"tools,omitempty"`
	Stream        bool              `json:"stream"`
	StreamOptions *oaiStreamOptions `json:"stream_options,omitempty"`
	MaxTokens     int               `json:"max_tokens,omitempty"`
}

type oaiStreamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type oaiMessage struct {
	Role       string        `json:"role"`
	Content    *string       `json:"content"` // null on an assistant message that only calls tools
	ToolCalls  []oaiToolCall `json:"tool_calls,omitempty"`
	ToolCallID string        `json:"tool_call_id,omitempty"`
	Name       string        `json:"name,omitempty"`
}

type oaiToolCall struct {
	ID       string          `json:"id"`
	Type     string          `json:"type"`
	Function oaiFunctionCall `json:"function"`
}

type oaiFunctionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type oaiTool struct {
	Type     string      `json:"type"`
	Function oaiFunction `json:"function"`
}

type oaiFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}

// oaiChunk is one streamed chunk, and also (with Message) a whole non-streamed completion.
type oaiChunk struct {
	Choices []struct {
		Delta        oaiDelta  `json:"delta"`
		Message      *oaiDelta `json:"message"`
		FinishReason *string   `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
	Error json.RawMessage `json:"error"`
}

type oaiDelta struct {
	Content   *string `json:"content"`
	ToolCalls []struct {
		Index    *int   `json:"index"`
		ID       string `json:"id"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls"`
}

// openAIMessages maps the conversation to Chat Completions messages, system first.
func openAIMessages(req Request) []oaiMessage {
	var out []oaiMessage
	if req.System != "" {
		out = append(out, oaiMessage{Role: "system", Content: ptr(req.System)})
	}
	for _, m := range req.Messages {
		switch m.Role {
		case RoleAssistant:
			om := oaiMessage{Role: "assistant"}
			if m.Text != "" || len(m.ToolCalls) == 0 {
				om.Content = ptr(m.Text)
			}
			for _, tc := range m.ToolCalls {
				om.ToolCalls = append(om.ToolCalls, oaiToolCall{
					ID: tc.ID, Type: "function",
					Function: oaiFunctionCall{Name: tc.Name, Arguments: string(argumentsObject(tc.Arguments))},
				})
			}
			out = append(out, om)
		case RoleTool:
			text := m.Text
			if m.IsError && !strings.HasPrefix(strings.ToLower(text), "error") {
				// Chat Completions has no error flag on a tool result; say it in the text.
				text = "Error: " + text
			}
			out = append(out, oaiMessage{Role: "tool", Content: ptr(text), ToolCallID: m.ToolCallID, Name: m.ToolName})
		default:
			out = append(out, oaiMessage{Role: string(m.Role), Content: ptr(m.Text)})
		}
	}
	return out
}

func openAITools(specs []ToolSpec) []oaiTool {
	var out []oaiTool
	for _, t := range specs {
		out = append(out, oaiTool{Type: "function", Function: oaiFunction{
			Name: t.Name, Description: t.Description, Parameters: schemaOrEmpty(t.Parameters),
		}})
	}
	return out
}

// Stream implements Provider.
func (p *openAI) Stream(ctx context.Context, req Request, onEvent func(Event)) (*Response, error) {
	if onEvent == nil {
		onEvent = func(Event) {}
	}
	body, err := json.Marshal(oaiRequest{
		Model:         req.Model,
		Messages:      openAIMessages(req),
		Tools:         openAITools(req.Tools),
		Stream:        true,
		StreamOptions: &oaiStreamOptions{IncludeUsage: true},
		MaxTokens:     req.MaxTokens,
	})
	if err != nil {
		return nil, p.fail(ErrProviderFailure, 0, "the request could not be encoded", fmt.Errorf("encoding chat request: %w", err))
	}
	u := strings.TrimRight(p.cfg.BaseURL, "/") + "/chat/completions"
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "text/event-stream")
	if p.cfg.APIKey != "" {
		h.Set("Authorization", "Bearer "+p.cfg.APIKey)
	}
	resp, err := p.post(ctx, u, h, body, req.Model)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()

	acc := newOAIAccumulator(onEvent)
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt == "application/json" {
		// The server ignored stream:true and sent the whole completion at once.
		b, err := io.ReadAll(io.LimitReader(resp.Body, sseMaxLine))
		if err != nil {
			return nil, p.streamError(ctx, u, err)
		}
		if err := p.chunk(acc, b, true); err != nil {
			return nil, err
		}
		return acc.finish(p)
	}
	sr := newSSEReader(resp.Body)
	for {
		ev, err := sr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, p.streamError(ctx, u, err)
		}
		data := strings.TrimSpace(ev.Data)
		if data == "[DONE]" {
			break
		}
		if data == "" {
			continue
		}
		if ev.Event == "error" {
			return nil, p.midStreamError([]byte(data))
		}
		if err := p.chunk(acc, []byte(data), false); err != nil {
			return nil, err
		}
	}
	return acc.finish(p)
}

// chunk feeds one chunk (or a whole completion) to acc.
func (p *openAI) chunk(acc *oaiAccumulator, data []byte, whole bool) error {
	var c oaiChunk
	if err := json.Unmarshal(data, &c); err != nil {
		return p.fail(ErrBadResponse, 0, "the reply could not be understood (a chunk is not JSON)", fmt.Errorf("decoding chat chunk: %w", err))
	}
	if len(c.Error) > 0 && string(c.Error) != "null" {
		return p.midStreamError(data)
	}
	for _, ch := range c.Choices {
		d := ch.Delta
		if whole && ch.Message != nil {
			d = *ch.Message
		}
		acc.delta(d)
		if ch.FinishReason != nil && *ch.FinishReason != "" {
			acc.finishReason = *ch.FinishReason
		}
	}
	if c.Usage != nil {
		acc.usage = Usage{InputTokens: c.Usage.PromptTokens, OutputTokens: c.Usage.CompletionTokens}
	}
	return nil
}

// midStreamError reports an error the server sent inside a 200 stream.
func (p *openAI) midStreamError(data []byte) *ProviderError {
	quote := quoteBody(data, p.cfg.APIKey)
	kind := ErrProviderFailure
	switch lower := strings.ToLower(string(data)); {
	case strings.Contains(lower, "overloaded"):
		kind = ErrOverloaded
	case strings.Contains(lower, "rate limit") || strings.Contains(lower, "rate_limit"):
		kind = ErrRateLimited
	case contextTooLongRE.MatchString(lower):
		kind = ErrContextTooLong
	}
	return p.fail(kind, 0, "the provider reported an error while replying: "+quote, nil)
}

// oaiAccumulator assembles a streamed reply.
type oaiAccumulator struct {
	onEvent      func(Event)
	text         strings.Builder
	calls        []*ToolCall
	atIndex      map[int]*ToolCall // the call each stream index is currently filling
	finishReason string
	usage        Usage
}

func newOAIAccumulator(onEvent func(Event)) *oaiAccumulator {
	return &oaiAccumulator{onEvent: onEvent, atIndex: map[int]*ToolCall{}}
}

func (a *oaiAccumulator) delta(d oaiDelta) {
	if d.Content != nil && *d.Content != "" {
		a.text.WriteString(*d.Content)
		a.onEvent(Event{Kind: EventText, Text: *d.Content})
	}
	for _, tc := range d.ToolCalls {
		index := -1 // servers that send no index: an id starts a call, no id continues the last
		if tc.Index != nil {
			index = *tc.Index
		}
		cur := a.atIndex[index]
		if index == -1 && cur == nil && len(a.calls) > 0 && tc.ID == "" {
			cur = a.calls[len(a.calls)-1]
		}
		// A new id at a used index starts a new call: Ollama sends parallel calls all at index 0.
		if cur == nil || (tc.ID != "" && cur.ID != "" && tc.ID != cur.ID) {
			cur = &ToolCall{}
			a.calls = append(a.calls, cur)
			a.atIndex[index] = cur
		}
		if cur.ID == "" {
			cur.ID = tc.ID
		}
		if cur.Name == "" && tc.Function.Name != "" {
			cur.Name = tc.Function.Name
			a.onEvent(Event{Kind: EventToolStart, ToolName: cur.Name})
		}
		cur.Arguments += tc.Function.Arguments
	}
}

func (a *oaiAccumulator) finish(p *openAI) (*Response, error) {
	if a.finishReason == "" {
		return nil, p.unfinished()
	}
	r := &Response{Text: a.text.String(), Usage: a.usage}
	for i, c := range a.calls {
		tc := *c
		if tc.ID == "" {
			tc.ID = fmt.Sprintf("call_%d", i+1)
		}
		r.ToolCalls = append(r.ToolCalls, tc)
	}
	switch a.finishReason {
	case "stop", "eos", "end_turn":
		r.StopReason = "end"
		if len(r.ToolCalls) > 0 {
			r.StopReason = "tool_use" // older Ollama says "stop" after tool calls
		}
	case "tool_calls", "function_call":
		r.StopReason = "tool_use"
	case "length":
		r.StopReason = "max_tokens"
	default:
		r.StopReason = a.finishReason
	}
	return r, nil
}

func ptr[T any](v T) *T { return &v }

// argumentsObject returns args if it is a JSON object, else {} (the loop has already told the
// model its arguments were malformed; servers reject a call whose arguments do not parse).
func argumentsObject(args string) json.RawMessage {
	var obj map[string]json.RawMessage
	if json.Unmarshal([]byte(args), &obj) != nil || obj == nil {
		return json.RawMessage("{}")
	}
	return json.RawMessage(args)
}

// schemaOrEmpty returns a tool's schema, or an empty object schema when it has none.
func schemaOrEmpty(s json.RawMessage) json.RawMessage {
	if len(strings.TrimSpace(string(s))) == 0 || string(s) == "null" {
		return json.RawMessage(`{"type":"object","properties":{}}`)
	}
	return s
}

var _ Provider = (*openAI)(nil)
