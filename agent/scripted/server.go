package scripted

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Formats a request can arrive in.
const (
	FormatOpenAI    = "openai"
	FormatAnthropic = "anthropic"
)

// FinishedText is the reply to every request after the last turn (without repeat_last).
const FinishedText = "(script finished)"

// maxRequestBody bounds what the server reads of one request.
const maxRequestBody = 32 << 20

// Server replays a Script to whoever POSTs to it. It is safe for concurrent use; requests are
// answered in the order they take their turn.
type Server struct {
	mu       sync.Mutex
	script   Script
	next     int // the next turn to answer
	ids      int // the last tool-call id number given
	requests []RecordedRequest
}

// RecordedRequest is what one request told the model, in either format.
type RecordedRequest struct {
	Format   string    // FormatOpenAI or FormatAnthropic
	Model    string    // the model asked for
	System   string    // the system prompt (OpenAI: the system messages' text)
	Messages []Message // the conversation as received, system messages excluded
	Tools    []string  // the names of the tools offered
	// Turn is the index of the script turn that answered, or -1 after the script finished.
	Turn int
}

// Message is one message of a recorded request, in a form common to both formats.
type Message struct {
	Role        string       // "user", "assistant" or "tool" (OpenAI tool results)
	Text        string       // the text parts, joined by "\n"
	ToolCalls   []Call       // an assistant message's calls
	ToolResults []ToolResult // OpenAI: the one result of a "tool" message; Anthropic: tool_result blocks
	Raw         json.RawMessage
}

// Call is a tool call in a recorded message.
type Call struct {
	ID, Name, Arguments string
}

// ToolResult is a tool result in a recorded message.
type ToolResult struct {
	CallID  string
	Text    string
	IsError bool
}

// New returns a server replaying script.
func New(script Script) *Server {
	return &Server{script: script}
}

// Reset replaces the script, starts it from its first turn and forgets the recorded requests.
// Tool-call ids keep counting, so they stay unique.
func (s *Server) Reset(script Script) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script, s.next, s.requests = script, 0, nil
}

// Requests returns the requests received since New or Reset, oldest first.
func (s *Server) Requests() []RecordedRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]RecordedRequest(nil), s.requests...)
}

// Start serves on addr ("" means 127.0.0.1:0) and returns the server's base URL (http://host:port,
// no trailing slash) and a function that stops it.
func (s *Server) Start(addr string) (url string, stop func(), err error) {
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, fmt.Errorf("starting scripted model server: %w", err)
	}
	hs := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		hs.Serve(ln) // returns http.ErrServerClosed on stop
	}()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			if hs.Shutdown(ctx) != nil {
				hs.Close()
			}
			<-done
		})
	}
	return "http://" + ln.Addr().String(), stop, nil
}

// wireFormat is one of the two APIs the server speaks.
type wireFormat interface {
	// parse reads a request body.
	parse(body []byte) (rec RecordedRequest, stream bool, err error)
	// idPrefix is the prefix of tool-call ids: "call_" or "toolu_".
	idPrefix() string
	// writeError answers with an HTTP error in the format's own shape when body is "".
	writeError(w http.ResponseWriter, status int, body string)
	// writeReply answers with r, streamed or whole.
	writeReply(w http.ResponseWriter, model string, r reply, stream bool)
}

// reply is a turn made concrete for one request.
type reply struct {
	text          string
	calls         []Call
	inTok, outTok int
}

// ServeHTTP implements http.Handler: POST /v1/chat/completions (or /chat/completions) in the
// OpenAI format, POST /v1/messages (or /messages) in the Anthropic format.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var f wireFormat
	switch strings.TrimSuffix(r.URL.Path, "/") {
	case "/v1/chat/completions", "/chat/completions":
		f = openAIFormat{}
	case "/v1/messages", "/messages":
		f = anthropicFormat{}
	default:
		http.Error(w, "scripted model server: POST /v1/chat/completions or /v1/messages", http.StatusNotFound)
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "scripted model server: POST only", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxRequestBody))
	if err != nil {
		http.Error(w, "scripted model server: reading request: "+err.Error(), http.StatusBadRequest)
		return
	}
	rec, stream, err := f.parse(body)
	if err != nil {
		f.writeError(w, http.StatusBadRequest, "")
		return
	}

	s.mu.Lock()
	turn, index, finished := s.take()
	rec.Turn = index
	s.requests = append(s.requests, rec)
	var rep reply
	if !finished && turn.Error == nil {
		rep = makeReply(turn, index, rec.Messages)
		for i := range rep.calls {
			s.ids++
			rep.calls[i].ID = f.idPrefix() + strconv.Itoa(s.ids)
		}
	}
	s.mu.Unlock()

	if finished {
		rep = reply{text: FinishedText}
	}
	if turn.Error != nil && !finished {
		e := turn.Error
		retry := 0
		if e.RetryAfter != nil {
			retry = *e.RetryAfter
		}
		w.Header().Set("Retry-After", strconv.Itoa(retry))
		f.writeError(w, e.Status, e.Body)
		return
	}
	rep.inTok = approxTokens(rec.System, rec.Messages)
	n := len(rep.text)
	for _, c := range rep.calls {
		n += len(c.Name) + len(c.Arguments)
	}
	rep.outTok = max(1, n/4)
	f.writeReply(w, rec.Model, rep, stream)
}

// take picks the turn for the next request; s.mu is held.
func (s *Server) take() (turn Turn, index int, finished bool) {
	switch {
	case s.next < len(s.script.Turns):
		s.next++
		return s.script.Turns[s.next-1], s.next - 1, false
	case s.script.RepeatLast && len(s.script.Turns) > 0:
		return s.script.Turns[len(s.script.Turns)-1], len(s.script.Turns) - 1, false
	}
	return Turn{}, -1, true
}

// makeReply applies the turn's expectation and templates to one request's messages.
func makeReply(t Turn, index int, msgs []Message) reply {
	if t.Expect != "" {
		last := ""
		if len(msgs) > 0 {
			last = messageText(msgs[len(msgs)-1])
		}
		if !strings.Contains(last, t.Expect) {
			return reply{text: fmt.Sprintf("(script expectation failed: turn %d expected the last message to contain %q, but it was %q)",
				index+1, t.Expect, clip(last, 300))}
		}
	}
	source := lastToolResult(msgs)
	rep := reply{text: expand(t.Text, source)}
	for _, c := range t.ToolCalls {
		if c.RawArguments != nil {
			rep.calls = append(rep.calls, Call{Name: c.Name, Arguments: *c.RawArguments})
			continue
		}
		args, err := argumentsOf(c)
		if err != nil {
			args = map[string]any{} // ParseScript refuses this; a hand-built Script gets {}
		}
		walkStrings(args, func(s string) string { return expand(s, source) })
		b, _ := json.Marshal(args)
		rep.calls = append(rep.calls, Call{Name: c.Name, Arguments: string(b)})
	}
	return rep
}

// messageText is a message's text and the text of its tool results.
func messageText(m Message) string {
	parts := []string{}
	if m.Text != "" {
		parts = append(parts, m.Text)
	}
	for _, r := range m.ToolResults {
		parts = append(parts, r.Text)
	}
	return strings.Join(parts, "\n")
}

// lastToolResult is the text of the most recent tool result in msgs, or "".
func lastToolResult(msgs []Message) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if rs := msgs[i].ToolResults; len(rs) > 0 {
			return rs[len(rs)-1].Text
		}
	}
	return ""
}

func approxTokens(system string, msgs []Message) int {
	n := len(system)
	for _, m := range msgs {
		n += len(m.Text)
		for _, c := range m.ToolCalls {
			n += len(c.Name) + len(c.Arguments)
		}
		for _, r := range m.ToolResults {
			n += len(r.Text)
		}
	}
	return max(1, n/4)
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// chunks splits s into pieces of at most size bytes, on rune boundaries.
func chunks(s string, size int) []string {
	var out []string
	for len(s) > size {
		n := size
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		if n == 0 {
			_, n = utf8.DecodeRuneInString(s)
		}
		out = append(out, s[:n])
		s = s[n:]
	}
	if s != "" {
		out = append(out, s)
	}
	return out
}

// argumentPieces splits a call's arguments into at least two pieces (when it has two bytes).
func argumentPieces(args string) []string {
	size := max(1, (len(args)+2)/3)
	return chunks(args, size)
}

// textChunkSize is the size of streamed text pieces: small, so streaming is exercised.
const textChunkSize = 8

// sse writes server-sent events, flushing after each.
type sse struct {
	w http.ResponseWriter
	f http.Flusher
}

func startSSE(w http.ResponseWriter) sse {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	f, _ := w.(http.Flusher)
	return sse{w: w, f: f}
}

// event writes one event; name may be "" (no event: line). v is marshalled unless it is a string.
func (s sse) event(name string, v any) {
	data, ok := v.(string)
	if !ok {
		b, _ := json.Marshal(v)
		data = string(b)
	}
	if name != "" {
		fmt.Fprintf(s.w, "event: %s\n", name)
	}
	fmt.Fprintf(s.w, "data: %s\n\n", data)
	if s.f != nil {
		s.f.Flush()
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// textOf reads content that is a string, null, or a list of parts with "text" fields.
func textOf(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return ""
	}
	var texts []string
	for _, p := range parts {
		if p.Text != "" {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n")
}
