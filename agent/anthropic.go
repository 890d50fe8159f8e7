package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
)

// anthropicDefaultBaseURL is used when the configuration has no BaseURL.
const anthropicDefaultBaseURL = "https://api.anthropic.com"

// anthropicVersion is the API version header the wire format below follows.
const anthropicVersion = "2023-06-01"

// defaultMaxTokens is sent when the Request does not say (Anthropic requires max_tokens).
const defaultMaxTokens = 4096

// anthropic is a Provider for the Anthropic Messages API.
type anthropic struct {
	wire
}

// NewAnthropic returns a Provider that streams from cfg.BaseURL + "/v1/messages"; an empty
// BaseURL means https://api.anthropic.com. A nil client means http.DefaultClient.
func NewAnthropic(cfg ProviderConfig, client *http.Client) Provider {
	if cfg.BaseURL == "" {
		cfg.BaseURL = anthropicDefaultBaseURL
	}
	return &anthropic{wire: newWire(cfg, client)}
}

type antRequest struct {
	Model     string       `json:"model"`
	MaxTokens int          `json:"max_tokens"`
	System    string       `json:"system,omitempty"`
	Messages  []antMessage `json:"messages"`
	Tools     []antTool    `json:"tools,omitempty"`
	Stream    bool         `json:"stream"`
}

type antMessage struct {
	Role    string     `json:"role"`
	Content []antBlock `json:"content"`
}

// antBlock is a content block of any type; only the fields of its Type are set.
type antBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   string          `json:"content,omitempty"`
	IsError   bool            `json:"is_error,omitempty"`
}

type antTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema"`
}

// anthropicMessages maps the conversation to Messages API turns. Tool results become
// tool_result blocks of a user turn, and consecutive user-side messages (several tool results,
// then perhaps the person's text) merge into one turn, as the API wants. Empty text is dropped:
// the API refuses empty text blocks.
func anthropicMessages(msgs []Message) []antMessage {
	var out []antMessage
	add := func(role string, blocks ...antBlock) {
		if len(blocks) == 0 {
			return
		}
		if n := len(out); n > 0 && out[n-1].Role == role {
			out[n-1].Content = append(out[n-1].Content, blocks...)
			return
		}
		out = append(out, antMessage{Role: role, Content: blocks})
	}
	for _, m := range msgs {
		var blocks []antBlock
		switch m.Role {
		case RoleAssistant:
			if m.Text != "" {
				blocks = append(blocks, antBlock{Type: "text", Text: m.Text})
			}
			for _, tc := range m.ToolCalls {
				blocks = append(blocks, antBlock{Type: "tool_use", ID: tc.ID, Name: tc.Name, Input: argumentsObject(tc.Arguments)})
			}
			add("assistant", blocks...)
		case RoleTool:
			add("user", antBlock{Type: "tool_result", ToolUseID: m.ToolCallID, Content: m.Text, IsError: m.IsError})
		default:
			if m.Text != "" {
				blocks = append(blocks, antBlock{Type: "text", Text: m.Text})
			}
			add("user", blocks...)
		}
	}
	return out
}

func anthropicTools(specs []ToolSpec) []antTool {
	var out []antTool
	for _, t := range specs {
		out = append(out, antTool{Name: t.Name, Description: t.Description, InputSchema: schemaOrEmpty(t.Parameters)})
	}
	return out
}

// antEvent is any streamed event; only the fields of its Type are set.
type antEvent struct {
	Type    string `json:"type"`
	Index   int    `json:"index"`
	Message *struct {
		Usage antUsage `json:"usage"`
	} `json:"message"`
	ContentBlock *struct {
		Type string `json:"type"`
		ID   string `json:"id"`
		Name string `json:"name"`
		Text string `json:"text"`
	} `json:"content_block"`
	Delta *struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		PartialJSON string `json:"partial_json"`
		StopReason  string `json:"stop_reason"`
	} `json:"delta"`
	Usage *antUsage `json:"usage"`
	Error *struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
}

type antUsage struct {
	InputTokens              int `json:"input_tokens"`
	OutputTokens             int `json:"output_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
}

// Stream implements Provider.
func (p *anthropic) Stream(ctx context.Context, req Request, onEvent func(Event)) (*Response, error) {
	if onEvent == nil {
		onEvent = func(Event) {}
	}
	maxTokens := req.MaxTokens
	if maxTokens <= 0 {
		maxTokens = defaultMaxTokens
	}
	body, err := json.Marshal(antRequest{
		Model:     req.Model,
		MaxTokens: maxTokens,
		System:    req.System,
		Messages:  anthropicMessages(req.Messages),
		Tools:     anthropicTools(req.Tools),
		Stream:    true,
	})
	if err != nil {
		return nil, p.fail(ErrProviderFailure, 0, "the request could not be encoded", fmt.Errorf("encoding messages request: %w", err))
	}
	u := strings.TrimRight(p.cfg.BaseURL, "/") + "/v1/messages"
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "text/event-stream")
	h.Set("Anthropic-Version", anthropicVersion)
	if p.cfg.APIKey != "" {
		h.Set("X-Api-Key", p.cfg.APIKey)
	}
	resp, err := p.post(ctx, u, h, body, req.Model)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()

	var (
		text       strings.Builder
		calls      = map[int]*ToolCall{} // by content block index
		args       = map[int]*strings.Builder{}
		usage      Usage
		stopReason string
		stopped    bool
	)
	sr := newSSEReader(resp.Body)
	for !stopped {
		ev, err := sr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, p.streamError(ctx, u, err)
		}
		if strings.TrimSpace(ev.Data) == "" {
			continue
		}
		var e antEvent
		if err := json.Unmarshal([]byte(ev.Data), &e); err != nil {
			return nil, p.fail(ErrBadResponse, 0, "the reply could not be understood (an event is not JSON)", fmt.Errorf("decoding %q event: %w", ev.Event, err))
		}
		if e.Type == "" {
			e.Type = ev.Event
		}
		switch e.Type {
		case "message_start":
			if e.Message != nil {
				u := e.Message.Usage
				usage.InputTokens = u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens
				usage.OutputTokens = u.OutputTokens
			}
		case "content_block_start":
			if b := e.ContentBlock; b != nil && b.Type == "tool_use" {
				calls[e.Index] = &ToolCall{ID: b.ID, Name: b.Name}
				args[e.Index] = &strings.Builder{}
				onEvent(Event{Kind: EventToolStart, ToolName: b.Name})
			} else if b != nil && b.Type == "text" && b.Text != "" {
				text.WriteString(b.Text)
				onEvent(Event{Kind: EventText, Text: b.Text})
			}
		case "content_block_delta":
			if e.Delta == nil {
				continue
			}
			switch e.Delta.Type {
			case "text_delta":
				if e.Delta.Text != "" {
					text.WriteString(e.Delta.Text)
					onEvent(Event{Kind: EventText, Text: e.Delta.Text})
				}
			case "input_json_delta":
				if b := args[e.Index]; b != nil {
					b.WriteString(e.Delta.PartialJSON)
				}
			}
			// thinking_delta, signature_delta and later kinds are not part of the reply.
		case "content_block_stop":
		case "message_delta":
			if e.Delta != nil && e.Delta.StopReason != "" {
				stopReason = e.Delta.StopReason
			}
			if e.Usage != nil {
				usage.OutputTokens = e.Usage.OutputTokens
				if in := e.Usage.InputTokens + e.Usage.CacheCreationInputTokens + e.Usage.CacheReadInputTokens; in > 0 {
					usage.InputTokens = in
				}
			}
		case "message_stop":
			stopped = true
		case "error":
			return nil, p.eventError(e, []byte(ev.Data))
		default:
			// ping, and event types added after this was written.
		}
	}
	if !stopped && stopReason == "" {
		return nil, p.unfinished()
	}
	r := &Response{Text: text.String(), Usage: usage}
	indexes := make([]int, 0, len(calls))
	for i := range calls {
		indexes = append(indexes, i)
	}
	sort.Ints(indexes)
	for _, i := range indexes {
		tc := *calls[i]
		tc.Arguments = args[i].String()
		if strings.TrimSpace(tc.Arguments) == "" {
			tc.Arguments = "{}" // a call with no parameters streams no input_json_delta
		}
		r.ToolCalls = append(r.ToolCalls, tc)
	}
	switch stopReason {
	case "end_turn", "stop_sequence":
		r.StopReason = "end"
	case "tool_use":
		r.StopReason = "tool_use"
	case "max_tokens":
		r.StopReason = "max_tokens"
	case "":
		r.StopReason = "end"
	default:
		r.StopReason = stopReason
	}
	return r, nil
}

// eventError reports an error event sent inside a 200 stream.
func (p *anthropic) eventError(e antEvent, data []byte) *ProviderError {
	typ, msg := "", ""
	if e.Error != nil {
		typ, msg = e.Error.Type, e.Error.Message
	}
	if msg == "" {
		msg = string(data)
	}
	quote := quoteBody([]byte(msg), p.cfg.APIKey)
	switch typ {
	case "overloaded_error":
		return p.fail(ErrOverloaded, 0, "the provider is overloaded and stopped replying; try again in a while. The provider said: "+quote, nil)
	case "rate_limit_error":
		return p.fail(ErrRateLimited, 0, "the provider is limiting requests and stopped replying; wait a minute and try again. The provider said: "+quote, nil)
	case "authentication_error", "permission_error":
		return p.fail(ErrBadKey, 0, "the API key was refused; check it in Settings. The provider said: "+quote, nil)
	case "not_found_error":
		return p.fail(ErrUnknownModel, 0, "the provider does not know this model. The provider said: "+quote, nil)
	}
	if typ == "invalid_request_error" && contextTooLongRE.MatchString(msg) {
		return p.fail(ErrContextTooLong, 0, "the conversation is too long for this model; start a new chat. The provider said: "+quote, nil)
	}
	return p.fail(ErrProviderFailure, 0, "the provider reported an error while replying: "+quote, nil)
}

var _ Provider = (*anthropic)(nil)
