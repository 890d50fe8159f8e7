package agent

import (
	"context"
	"encoding/json"
)

// Provider streams one model turn. Implementations are safe for concurrent use.
//
// Stream sends req, calls onEvent for each piece of the reply as it arrives (text deltas and
// tool calls as they start), and returns the whole reply once the model has finished. onEvent is
// called from Stream's goroutine and must not block for long. On failure the error is a
// *ProviderError whose Message says plainly what went wrong and never contains the API key.
type Provider interface {
	Stream(ctx context.Context, req Request, onEvent func(Event)) (*Response, error)
}

// Request is one call to a model, in wire-neutral form.
type Request struct {
	Model     string
	System    string
	Messages  []Message
	Tools     []ToolSpec
	MaxTokens int // 0: the provider's default (4096)
}

// Role is who wrote a message.
type Role string

const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool" // the result of one tool call
)

// Message is one turn of a conversation.
type Message struct {
	Role Role `json:"role"`
	// Text is the user's or assistant's text, or a tool call's result.
	Text string `json:"text,omitempty"`
	// ToolCalls are the calls an assistant message made, in order.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// ToolCallID names the call a RoleTool message answers.
	ToolCallID string `json:"tool_call_id,omitempty"`
	// ToolName is the name of the tool a RoleTool message answers (Anthropic does not need it,
	// some OpenAI-compatible servers do).
	ToolName string `json:"tool_name,omitempty"`
	// IsError marks a RoleTool result that is an error.
	IsError bool `json:"is_error,omitempty"`
	// Pinned marks a message that context compaction must keep verbatim (an approved plan).
	Pinned bool `json:"pinned,omitempty"`
}

// ToolCall is one call the model made.
type ToolCall struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// Arguments is the JSON text the model produced, unparsed: it may be malformed, and the loop
	// answers that with a tool error rather than failing the turn.
	Arguments string `json:"arguments"`
}

// ToolSpec describes a tool to the model.
type ToolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"` // a JSON Schema object
}

// EventKind says what an Event carries.
type EventKind int

const (
	// EventText: Text is the next piece of the reply's text.
	EventText EventKind = iota + 1
	// EventToolStart: the model began a tool call; ToolName is known, arguments are not yet.
	EventToolStart
)

// Event is a piece of a streamed reply.
type Event struct {
	Kind     EventKind
	Text     string
	ToolName string
}

// Response is a finished model turn.
type Response struct {
	Text      string
	ToolCalls []ToolCall
	// StopReason is the provider's reason, normalised: "end", "tool_use", "max_tokens", or the
	// provider's own word when it is none of these.
	StopReason string
	Usage      Usage
}

// Usage is what a turn cost in tokens.
type Usage struct {
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
}

// ErrorKind classifies a provider failure so the panel can say what to do.
type ErrorKind string

const (
	ErrBadKey          ErrorKind = "bad_key"          // 401/403: the key is wrong or lacks access
	ErrUnknownModel    ErrorKind = "unknown_model"    // the provider does not have this model
	ErrContextTooLong  ErrorKind = "context_too_long" // the conversation does not fit the model
	ErrUnreachable     ErrorKind = "unreachable"      // could not connect (DNS, refused, TLS, timeout)
	ErrRateLimited     ErrorKind = "rate_limited"     // 429 after the retries
	ErrOverloaded      ErrorKind = "overloaded"       // 5xx / overloaded after the retries
	ErrBadResponse     ErrorKind = "bad_response"     // the reply could not be understood
	ErrProviderFailure ErrorKind = "provider_error"   // any other error the provider reported
	ErrCanceled        ErrorKind = "canceled"         // the caller's context was cancelled; Err is ctx.Err()
)

// ProviderError is the error every Provider returns. Message is written for the person and
// never contains the API key (providers redact it from anything they quote).
type ProviderError struct {
	Kind     ErrorKind
	Provider string // the configured provider's name, e.g. "openai"
	Status   int    // the HTTP status, 0 when there was none
	Message  string
	Err      error // the underlying error, if any (already redacted)
}

func (e *ProviderError) Error() string {
	if e.Provider != "" {
		return e.Provider + ": " + e.Message
	}
	return e.Message
}

func (e *ProviderError) Unwrap() error { return e.Err }
