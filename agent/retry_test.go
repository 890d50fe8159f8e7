package agent

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// noWait makes p's retries immediate and returns the waits it would have made.
func noWait(t *testing.T, p Provider) func() []time.Duration {
	t.Helper()
	var w *wire
	switch p := p.(type) {
	case *openAI:
		w = &p.wire
	case *anthropic:
		w = &p.wire
	default:
		t.Fatalf("noWait: unknown provider %T", p)
	}
	var (
		mu    sync.Mutex
		waits []time.Duration
	)
	w.retry.sleep = func(ctx context.Context, d time.Duration) error {
		mu.Lock()
		waits = append(waits, d)
		mu.Unlock()
		return ctx.Err()
	}
	w.retry.jitter = func() float64 { return 0.5 }
	return func() []time.Duration {
		mu.Lock()
		defer mu.Unlock()
		return append([]time.Duration(nil), waits...)
	}
}

func asProviderError(t *testing.T, err error) *ProviderError {
	t.Helper()
	var pe *ProviderError
	if !errors.As(err, &pe) {
		t.Fatalf("got %T %v, want a *ProviderError", err, err)
	}
	return pe
}

// answer is one scripted HTTP answer.
type answer struct {
	status int
	header map[string]string
	body   string
}

// sequenceServer answers requests with answers in order, repeating the last.
func sequenceServer(t *testing.T, answers ...answer) (*httptest.Server, func() int) {
	t.Helper()
	var (
		mu sync.Mutex
		n  int
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		a := answers[min(n, len(answers)-1)]
		n++
		mu.Unlock()
		for k, v := range a.header {
			w.Header().Set(k, v)
		}
		if a.status == 0 {
			a.status = 200
		}
		w.WriteHeader(a.status)
		fmt.Fprint(w, a.body)
	}))
	t.Cleanup(srv.Close)
	return srv, func() int { mu.Lock(); defer mu.Unlock(); return n }
}

const okStream = "data: {\"choices\":[{\"delta\":{\"content\":\"ok\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"

var sseHeader = map[string]string{"Content-Type": "text/event-stream"}

func TestRetryThenSuccess(t *testing.T) {
	srv, count := sequenceServer(t,
		answer{status: 429, body: `{"error":{"message":"Rate limit reached"}}`},
		answer{status: 503, body: "upstream unavailable"},
		answer{status: 200, header: sseHeader, body: okStream},
	)
	p := NewOpenAI(ProviderConfig{Name: "o", BaseURL: srv.URL}, nil)
	waits := noWait(t, p)
	resp, err := p.Stream(context.Background(), Request{Model: "m"}, nil)
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	if resp.Text != "ok" || count() != 3 {
		t.Errorf("got text %q after %d requests, want \"ok\" after 3", resp.Text, count())
	}
	// Backoff 1s then 2s, with jitter 0.5 taking three quarters of each.
	want := []time.Duration{750 * time.Millisecond, 1500 * time.Millisecond}
	if got := waits(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("waits: got %v, want %v", got, want)
	}
}

func TestRetryHonoursRetryAfter(t *testing.T) {
	tests := []struct {
		name   string
		header map[string]string
		want   time.Duration
	}{
		{"seconds", map[string]string{"Retry-After": "3"}, 3 * time.Second},
		{"milliseconds", map[string]string{"Retry-After-Ms": "250", "Retry-After": "9"}, 250 * time.Millisecond},
		{"zero", map[string]string{"Retry-After": "0"}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, _ := sequenceServer(t, answer{status: 429, header: tt.header}, answer{header: sseHeader, body: okStream})
			p := NewOpenAI(ProviderConfig{BaseURL: srv.URL}, nil)
			waits := noWait(t, p)
			if _, err := p.Stream(context.Background(), Request{Model: "m"}, nil); err != nil {
				t.Fatalf("Stream: %v", err)
			}
			if got := waits(); len(got) != 1 || got[0] != tt.want {
				t.Errorf("waits: got %v, want [%v]", got, tt.want)
			}
		})
	}
}

func TestRetryAfterHTTPDate(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	h := http.Header{"Retry-After": {now.Add(7 * time.Second).Format(http.TimeFormat)}}
	p := defaultRetry()
	p.now = func() time.Time { return now }
	if d, ok := p.wait(1, h); !ok || d != 7*time.Second {
		t.Errorf("got %v, %v; want 7s, true", d, ok)
	}
}

func TestRetryGivesUp(t *testing.T) {
	tests := []struct {
		name      string
		ans       answer
		wantKind  ErrorKind
		wantCalls int
		wantText  string
	}{
		{"rate limited", answer{status: 429, body: `{"error":{"message":"Rate limit reached for gpt-4.1"}}`}, ErrRateLimited, 4, "tried 4 times"},
		{"server error", answer{status: 500, body: `{"error":{"message":"internal"}}`}, ErrOverloaded, 4, "HTTP 500"},
		{"anthropic overloaded", answer{status: 529, body: `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`}, ErrOverloaded, 4, "Overloaded"},
		{"overloaded in a 400 body", answer{status: 400, body: `model is overloaded, try later`}, ErrOverloaded, 4, "overloaded"},
		{"retry-after too long", answer{status: 429, header: map[string]string{"Retry-After": "3600"}}, ErrRateLimited, 1, "asked to wait 1h0m0s"},
		{"not retried", answer{status: 400, body: `{"error":{"message":"bad tool schema"}}`}, ErrProviderFailure, 1, "bad tool schema"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, count := sequenceServer(t, tt.ans)
			p := NewOpenAI(ProviderConfig{Name: "o", BaseURL: srv.URL}, nil)
			noWait(t, p)
			_, err := p.Stream(context.Background(), Request{Model: "m"}, nil)
			pe := asProviderError(t, err)
			if pe.Kind != tt.wantKind || count() != tt.wantCalls || !strings.Contains(pe.Message, tt.wantText) {
				t.Errorf("got %s %q after %d requests; want %s containing %q after %d", pe.Kind, pe.Message, count(), tt.wantKind, tt.wantText, tt.wantCalls)
			}
		})
	}
}

func TestRetryWaitIsCancelled(t *testing.T) {
	srv, count := sequenceServer(t, answer{status: 429, header: map[string]string{"Retry-After": "20"}})
	p := NewOpenAI(ProviderConfig{BaseURL: srv.URL}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for count() == 0 {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	_, err := p.Stream(ctx, Request{Model: "m"}, nil) // the real sleep: must end on cancel, not after 20s
	pe := asProviderError(t, err)
	if pe.Kind != ErrCanceled || !errors.Is(err, context.Canceled) {
		t.Errorf("got %s %v, want canceled wrapping context.Canceled", pe.Kind, err)
	}
}

func TestHTTPErrorKinds(t *testing.T) {
	tests := []struct {
		name     string
		status   int
		body     string
		wantKind ErrorKind
		wantText string
	}{
		{"401", 401, `{"error":{"message":"Incorrect API key provided"}}`, ErrBadKey, "the API key was refused (HTTP 401); check it in Settings"},
		{"403", 403, `{"type":"error","error":{"type":"permission_error","message":"no access"}}`, ErrBadKey, "HTTP 403"},
		{"404", 404, `{"error":{"message":"The model gpt-9 does not exist","code":"model_not_found"}}`, ErrUnknownModel, `"gpt-9"`},
		{"ollama 404", 404, `{"error":"model \"llama9\" not found, try pulling it first"}`, ErrUnknownModel, "try pulling it first"},
		{"400 model not found", 400, `{"error":{"message":"model_not_found"}}`, ErrUnknownModel, `"gpt-9"`},
		{"openai context", 400, `{"error":{"message":"This model's maximum context length is 128000 tokens.","code":"context_length_exceeded"}}`, ErrContextTooLong, "too long"},
		{"anthropic context", 400, `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 201000 tokens > 200000 maximum"}}`, ErrContextTooLong, "prompt is too long"},
		{"too many tokens", 413, `too many tokens in request`, ErrContextTooLong, "HTTP 413"},
		{"other 400", 400, `{"error":{"message":"tools[0].name is invalid"}}`, ErrProviderFailure, "tools[0].name is invalid"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWire(ProviderConfig{Name: "p"}, nil)
			pe := w.httpError(tt.status, []byte(tt.body), "gpt-9")
			if pe.Kind != tt.wantKind || pe.Status != tt.status || !strings.Contains(pe.Message, tt.wantText) {
				t.Errorf("got %s %d %q, want %s %d containing %q", pe.Kind, pe.Status, pe.Message, tt.wantKind, tt.status, tt.wantText)
			}
		})
	}
}

func TestQuoteBody(t *testing.T) {
	long := strings.Repeat("é", 400)
	got := quoteBody([]byte(long), "")
	if len(got) > maxQuote+len("…") || !strings.HasSuffix(got, "…") || !strings.HasPrefix(got, "éé") {
		t.Errorf("long body: got %d bytes %q…, want at most %d and an ellipsis", len(got), got[:10], maxQuote)
	}
	if got := quoteBody([]byte("line one\n\tline\x00two"), ""); got != "line one line two" {
		t.Errorf("control characters: got %q", got)
	}
	// The key is redacted before cutting, so no prefix of it survives at the cut either.
	key := "sk-SECRETSECRETSECRET"
	body := strings.Repeat("x", maxQuote-5) + key
	if got := quoteBody([]byte(body), key); strings.Contains(got, "sk-SEC") {
		t.Errorf("key prefix survived the cut: %q", got)
	}
}

func TestUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	tlsSrv := httptest.NewTLSServer(http.NotFoundHandler())
	defer tlsSrv.Close()
	plainSrv := httptest.NewServer(http.NotFoundHandler())
	defer plainSrv.Close()
	tests := []struct {
		name, base, wantText string
	}{
		{"refused", "http://" + addr, "could not reach " + addr + ": the connection was refused"},
		{"untrusted certificate", tlsSrv.URL, "TLS certificate was not accepted"},
		{"http server on https", strings.Replace(plainSrv.URL, "http:", "https:", 1), "did not answer with TLS"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewOpenAI(ProviderConfig{Name: "o", BaseURL: tt.base}, nil).Stream(context.Background(), Request{Model: "m"}, nil)
			pe := asProviderError(t, err)
			if pe.Kind != ErrUnreachable || !strings.Contains(pe.Message, tt.wantText) {
				t.Errorf("got %s %q, want unreachable containing %q", pe.Kind, pe.Message, tt.wantText)
			}
		})
	}
}

// TestKeyNeverInErrors runs every failure path of both providers with a distinctive key, against
// servers that echo the key back, and looks for the key in every rendering of the error.
func TestKeyNeverInErrors(t *testing.T) {
	const key = "sk-KEYSECRET-7f3a9c1e5b"
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadAddr := ln.Addr().String()
	ln.Close()
	echo := map[string]string{"X-Your-Key": key, "Retry-After": key, "Content-Type": "application/json"}
	echoSSE := map[string]string{"X-Your-Key": key, "Content-Type": "text/event-stream"}
	paths := []struct {
		name string
		ans  *answer // nil: nothing listens
	}{
		{"bad key", &answer{status: 401, header: echo, body: `{"error":{"message":"Incorrect API key provided: ` + key + `"}}`}},
		{"unknown model", &answer{status: 404, header: echo, body: `{"error":{"message":"model not found for key ` + key + `"}}`}},
		{"context too long", &answer{status: 400, header: echo, body: `{"error":{"message":"maximum context length exceeded (` + key + `)"}}`}},
		{"500", &answer{status: 500, header: echo, body: "internal error, key=" + key}},
		{"429", &answer{status: 429, header: echo, body: key}},
		{"other 400 with a long body", &answer{status: 400, header: echo, body: strings.Repeat("a", 250) + key + strings.Repeat("b", 100)}},
		{"key JSON-escaped", &answer{status: 400, header: echo, body: `{"error":{"message":"bad \u0073k-KEYSECRET-7f3a9c1e5b"}}`}},
		{"openai mid-stream error", &answer{header: echoSSE, body: "data: {\"choices\":[{\"delta\":{\"content\":\"x\"}}]}\n\ndata: {\"error\":{\"message\":\"boom " + key + "\"}}\n\n"}},
		{"openai error event", &answer{header: echoSSE, body: "event: error\ndata: {\"message\":\"boom " + key + "\"}\n\n"}},
		{"anthropic mid-stream error", &answer{header: echoSSE, body: "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"" + key + "\"}}\n\n"}},
		{"cut stream", &answer{header: echoSSE, body: "data: {\"choices\":[{\"delta\":{\"content\":\"" + key + "\"}}]}\n\n"}},
		{"not JSON", &answer{header: echoSSE, body: "data: " + key + "\n\n"}},
		{"unreachable", nil},
	}
	kinds := map[string]func(ProviderConfig) Provider{
		"openai":    func(c ProviderConfig) Provider { return NewOpenAI(c, nil) },
		"anthropic": func(c ProviderConfig) Provider { return NewAnthropic(c, nil) },
	}
	for kindName, newP := range kinds {
		for _, path := range paths {
			t.Run(kindName+"/"+path.name, func(t *testing.T) {
				base := "http://" + deadAddr
				if path.ans != nil {
					srv, _ := sequenceServer(t, *path.ans)
					base = srv.URL
				}
				p := newP(ProviderConfig{Name: kindName, BaseURL: base, APIKey: key})
				noWait(t, p)
				_, err := p.Stream(context.Background(), Request{Model: "m", Messages: []Message{{Role: RoleUser, Text: "hi"}}}, nil)
				if err == nil {
					t.Fatal("Stream succeeded; this path must fail")
				}
				asProviderError(t, err)
				for e := err; e != nil; e = errors.Unwrap(e) {
					for _, s := range []string{e.Error(), fmt.Sprintf("%+v", e), fmt.Sprintf("%#v", e), fmt.Sprintf("%v", e)} {
						if strings.Contains(s, key) || strings.Contains(s, "KEYSECRET") {
							t.Fatalf("the key leaked in %T: %s", e, s)
						}
					}
				}
			})
		}
	}
}

func TestWebPageInsteadOfStream(t *testing.T) {
	srv, _ := sequenceServer(t, answer{header: map[string]string{"Content-Type": "text/html; charset=utf-8"}, body: "<html>Sign in to the Wi-Fi</html>"})
	_, err := NewOpenAI(ProviderConfig{Name: "o", BaseURL: srv.URL}, nil).Stream(context.Background(), Request{Model: "m"}, nil)
	pe := asProviderError(t, err)
	if pe.Kind != ErrBadResponse || !strings.Contains(pe.Message, "web page") {
		t.Errorf("got %s %q, want a bad-response error about a web page", pe.Kind, pe.Message)
	}
}
