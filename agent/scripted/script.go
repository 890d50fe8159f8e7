package scripted

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
)

// Script is what the server replays. See the package documentation for the JSON form.
type Script struct {
	Turns []Turn `json:"turns"`
	// RepeatLast answers every request after the last turn with the last turn again, instead
	// of "(script finished)".
	RepeatLast bool `json:"repeat_last,omitempty"`
}

// Turn is the answer to one request.
type Turn struct {
	// Text is the reply's text; it may hold {{grab:REGEXP}} templates.
	Text string `json:"text,omitempty"`
	// ToolCalls are the calls the reply makes, after the text.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// Error, when set, answers the request with an HTTP error instead.
	Error *ErrorReply `json:"error,omitempty"`
	// Expect is a substring the last message of the request must contain.
	Expect string `json:"expect,omitempty"`
}

// ToolCall is one scripted tool call.
type ToolCall struct {
	Name string `json:"name"`
	// Arguments is a JSON object whose string values may hold {{grab:REGEXP}} templates.
	// Empty means {}.
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// RawArguments, when set, is sent as the call's argument text exactly as written (no
	// templates), so a script can play a model that sends malformed or huge arguments.
	// It excludes Arguments.
	RawArguments *string `json:"raw_arguments,omitempty"`
}

// ErrorReply is an HTTP error a turn answers with.
type ErrorReply struct {
	// Status is the HTTP status, 400..599.
	Status int `json:"status"`
	// Body is sent as is; empty means an error in the wire format's own shape.
	Body string `json:"body,omitempty"`
	// RetryAfter is the Retry-After header in seconds; nil means 0.
	RetryAfter *int `json:"retry_after,omitempty"`
}

// ParseScript reads a script from JSON and checks it: unknown fields, tool calls without a
// name, arguments that are not an object, error statuses outside 400..599 and templates whose
// regexp does not compile are errors naming the turn.
func ParseScript(b []byte) (Script, error) {
	var s Script
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		var (
			syn *json.SyntaxError
			typ *json.UnmarshalTypeError
		)
		switch {
		case errors.As(err, &syn):
			return Script{}, fmt.Errorf("parsing script: broken JSON at %s: %w", position(b, syn.Offset), err)
		case errors.As(err, &typ):
			return Script{}, fmt.Errorf("parsing script: wrong type at %s: %w", position(b, typ.Offset), err)
		case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
			return Script{}, fmt.Errorf("parsing script: the JSON ends too early: %w", err)
		}
		return Script{}, fmt.Errorf("parsing script: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return Script{}, errors.New("parsing script: unexpected content after the script object")
	}
	if err := s.validate(); err != nil {
		return Script{}, fmt.Errorf("parsing script: %w", err)
	}
	return s, nil
}

func position(b []byte, off int64) string {
	off = min(off, int64(len(b)))
	before := b[:off]
	line := bytes.Count(before, []byte("\n")) + 1
	col := int(off) - bytes.LastIndexByte(before, '\n')
	return fmt.Sprintf("line %d, column %d", line, col)
}

func (s Script) validate() error {
	for i, t := range s.Turns {
		what := fmt.Sprintf("turn %d", i+1)
		if t.Error != nil {
			if t.Error.Status < 400 || t.Error.Status > 599 {
				return fmt.Errorf("%s: error status %d is not between 400 and 599", what, t.Error.Status)
			}
			if t.Error.RetryAfter != nil && *t.Error.RetryAfter < 0 {
				return fmt.Errorf("%s: retry_after cannot be negative", what)
			}
		}
		if err := checkTemplates(t.Text); err != nil {
			return fmt.Errorf("%s: text: %w", what, err)
		}
		for j, c := range t.ToolCalls {
			what := fmt.Sprintf("%s, tool call %d", what, j+1)
			if c.Name == "" {
				return fmt.Errorf("%s: it has no name", what)
			}
			if c.RawArguments != nil {
				if len(c.Arguments) > 0 {
					return fmt.Errorf("%s (%s): arguments and raw_arguments exclude each other", what, c.Name)
				}
				continue
			}
			args, err := argumentsOf(c)
			if err != nil {
				return fmt.Errorf("%s (%s): %w", what, c.Name, err)
			}
			var walkErr error
			walkStrings(args, func(s string) string {
				if err := checkTemplates(s); err != nil && walkErr == nil {
					walkErr = err
				}
				return s
			})
			if walkErr != nil {
				return fmt.Errorf("%s (%s): arguments: %w", what, c.Name, walkErr)
			}
		}
	}
	return nil
}

// argumentsOf decodes a call's arguments, which must be a JSON object.
func argumentsOf(c ToolCall) (map[string]any, error) {
	if len(bytes.TrimSpace(c.Arguments)) == 0 {
		return map[string]any{}, nil
	}
	var args map[string]any
	if err := json.Unmarshal(c.Arguments, &args); err != nil || args == nil {
		return nil, fmt.Errorf("arguments must be a JSON object, got %s", c.Arguments)
	}
	return args, nil
}

// walkStrings replaces every string inside v (a decoded JSON value) with f of it.
func walkStrings(v any, f func(string) string) any {
	switch v := v.(type) {
	case string:
		return f(v)
	case map[string]any:
		for k, e := range v {
			v[k] = walkStrings(e, f)
		}
		return v
	case []any:
		for i, e := range v {
			v[i] = walkStrings(e, f)
		}
		return v
	}
	return v
}

const grabOpen, grabClose = "{{grab:", "}}"

// checkTemplates reports a template that is unclosed or whose regexp does not compile.
func checkTemplates(s string) error {
	for {
		i := strings.Index(s, grabOpen)
		if i < 0 {
			return nil
		}
		rest := s[i+len(grabOpen):]
		j := strings.Index(rest, grabClose)
		if j < 0 {
			return fmt.Errorf("%s is not closed with %s", grabOpen, grabClose)
		}
		if _, err := regexp.Compile(rest[:j]); err != nil {
			return fmt.Errorf("template %s%s%s: %w", grabOpen, rest[:j], grabClose, err)
		}
		s = rest[j+len(grabClose):]
	}
}

// expand replaces the {{grab:REGEXP}} templates of s with what they find in source.
func expand(s, source string) string {
	var out strings.Builder
	for {
		i := strings.Index(s, grabOpen)
		if i < 0 {
			out.WriteString(s)
			return out.String()
		}
		rest := s[i+len(grabOpen):]
		j := strings.Index(rest, grabClose)
		if j < 0 {
			out.WriteString(s)
			return out.String()
		}
		out.WriteString(s[:i])
		out.WriteString(grab(rest[:j], source))
		s = rest[j+len(grabClose):]
	}
}

func grab(expr, source string) string {
	re, err := regexp.Compile(expr)
	if err != nil {
		return "(bad grab regexp: " + err.Error() + ")"
	}
	m := re.FindStringSubmatch(source)
	switch {
	case m == nil:
		return ""
	case len(m) > 1:
		return m[1]
	}
	return m[0]
}
