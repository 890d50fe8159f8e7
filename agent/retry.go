package agent

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"mime"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"
)

// This file is the HTTP half shared by the providers: sending a request with retries, and turning
// every failure into a *ProviderError that says plainly what happened and never holds the key.

// retryPolicy says how often, and how long between tries, a provider retries a request the
// provider refused for now (429, 5xx, 529, "overloaded").
type retryPolicy struct {
	attempts int           // tries in all, including the first; 4
	base     time.Duration // the first backoff; 1s, doubled on each retry
	max      time.Duration // the longest wait; a Retry-After above it ends the retries; 30s
	// sleep waits d or until ctx is done. Tests replace it to run without waiting.
	sleep func(ctx context.Context, d time.Duration) error
	// jitter returns a number in [0, 1) that spreads the backoff; rand.Float64 by default.
	jitter func() float64
	now    func() time.Time // for HTTP-date Retry-After values; time.Now by default
}

// defaultRetry is the policy providers use unless a test replaces it.
func defaultRetry() retryPolicy {
	return retryPolicy{
		attempts: 4,
		base:     time.Second,
		max:      30 * time.Second,
		sleep:    sleepCtx,
		jitter:   rand.Float64,
		now:      time.Now,
	}
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// wait returns how long to wait before attempt+1, after attempt (counted from 1) was refused
// with header h. ok is false when the provider asked for a wait longer than p.max.
func (p retryPolicy) wait(attempt int, h http.Header) (d time.Duration, ok bool) {
	if ra, found := retryAfter(h, p.now()); found {
		if ra > p.max {
			return ra, false
		}
		return ra, true
	}
	d = p.base << (attempt - 1)
	if d > p.max || d <= 0 {
		d = p.max
	}
	// "Equal jitter": at least half the backoff, so retries never bunch at zero.
	half := d / 2
	return half + time.Duration(p.jitter()*float64(d-half)), true
}

// retryAfter reads retry-after-ms (OpenAI) or Retry-After (seconds or an HTTP date).
func retryAfter(h http.Header, now time.Time) (time.Duration, bool) {
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 {
			return time.Duration(ms * float64(time.Millisecond)), true
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 {
		return time.Duration(s * float64(time.Second)), true
	}
	if t, err := http.ParseTime(v); err == nil {
		d := t.Sub(now)
		if d < 0 {
			d = 0
		}
		return d, true
	}
	return 0, false
}

// retryable reports whether a refused request is worth sending again.
func retryable(status int, body []byte) bool {
	return status == http.StatusTooManyRequests || status >= 500 ||
		bytes.Contains(bytes.ToLower(body), []byte("overloaded"))
}

// wire is what both providers share: the configuration, the HTTP client and the retry policy.
type wire struct {
	cfg    ProviderConfig
	client *http.Client
	retry  retryPolicy
}

func newWire(cfg ProviderConfig, client *http.Client) wire {
	if client == nil {
		client = http.DefaultClient
	}
	return wire{cfg: cfg, client: client, retry: defaultRetry()}
}

// maxErrorBody is how much of a refusal's body is read; only maxQuote bytes of it are quoted.
const (
	maxErrorBody = 64 << 10
	maxQuote     = 300
)

// post sends body to u with header, retrying what retryable allows. It returns a 2xx response
// (the caller closes its body) or a *ProviderError.
func (w *wire) post(ctx context.Context, u string, header http.Header, body []byte, model string) (*http.Response, error) {
	for attempt := 1; ; attempt++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
		if err != nil {
			return nil, w.fail(ErrProviderFailure, 0, "the provider's base URL is not usable; check it in Settings",
				fmt.Errorf("building request: %w", err))
		}
		req.Header = header.Clone()
		resp, err := w.client.Do(req)
		if err != nil {
			return nil, w.transportError(ctx, u, err)
		}
		if resp.StatusCode >= 200 && resp.StatusCode < 300 {
			if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt == "text/html" {
				// A web page, not a model: a login portal, or a base URL missing its /v1.
				resp.Body.Close()
				return nil, w.fail(ErrBadResponse, resp.StatusCode,
					fmt.Sprintf("%s answered with a web page instead of a model reply; check the base URL in Settings", hostOf(u)), nil)
			}
			return resp, nil
		}
		b, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		resp.Body.Close()
		perr := w.httpError(resp.StatusCode, b, model)
		if !retryable(resp.StatusCode, b) {
			return nil, perr
		}
		if attempt >= w.retry.attempts {
			perr.Message += fmt.Sprintf(" (tried %d times)", attempt)
			return nil, perr
		}
		d, ok := w.retry.wait(attempt, resp.Header)
		if !ok {
			perr.Message += fmt.Sprintf(" (it asked to wait %s; try again later)", d.Round(time.Second))
			return nil, perr
		}
		if err := w.retry.sleep(ctx, d); err != nil {
			return nil, w.ctxError(u, err)
		}
	}
}

// fail builds a *ProviderError, redacting the key from the message and the cause.
func (w *wire) fail(kind ErrorKind, status int, msg string, err error) *ProviderError {
	return &ProviderError{
		Kind:     kind,
		Provider: w.cfg.Name,
		Status:   status,
		Message:  redact(msg, w.cfg.APIKey),
		Err:      redactErr(err, w.cfg.APIKey),
	}
}

// ctxError reports a request ended by its context.
func (w *wire) ctxError(u string, err error) *ProviderError {
	if errors.Is(err, context.DeadlineExceeded) {
		return w.fail(ErrUnreachable, 0, fmt.Sprintf("%s did not answer in time", hostOf(u)), err)
	}
	return w.fail(ErrCanceled, 0, "the request was cancelled", err)
}

// transportError reports a request that got no HTTP answer.
func (w *wire) transportError(ctx context.Context, u string, err error) *ProviderError {
	if ctx.Err() != nil {
		return w.ctxError(u, ctx.Err())
	}
	return w.fail(ErrUnreachable, 0, fmt.Sprintf("could not reach %s: %s", hostOf(u), netReason(err)), err)
}

// netReason says in a few words why a connection failed.
func netReason(err error) string {
	var (
		dnsErr   *net.DNSError
		certErr  *tls.CertificateVerificationError
		unknown  x509.UnknownAuthorityError
		hostErr  x509.HostnameError
		invalid  x509.CertificateInvalidError
		recErr   tls.RecordHeaderError
		netErr   net.Error
		alertErr tls.AlertError
	)
	switch {
	case errors.As(err, &dnsErr):
		if dnsErr.IsNotFound {
			return "the host name does not exist"
		}
		return "the host name could not be looked up"
	case errors.As(err, &certErr), errors.As(err, &unknown), errors.As(err, &hostErr), errors.As(err, &invalid):
		return "its TLS certificate was not accepted"
	case errors.As(err, &recErr), strings.Contains(err.Error(), "server gave HTTP response to HTTPS client"):
		return "it did not answer with TLS (is the base URL http rather than https?)"
	case errors.As(err, &alertErr):
		return "the TLS handshake failed"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "the connection was refused (is the server running?)"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "the connection was closed before it answered"
	case errors.As(err, &netErr) && netErr.Timeout():
		return "the connection timed out"
	}
	return "the connection failed"
}

func hostOf(u string) string {
	p, err := url.Parse(u)
	if err != nil || p.Host == "" {
		return "the provider"
	}
	return p.Host
}

var (
	contextTooLongRE = regexp.MustCompile(`(?i)context.length|context.window|maximum context|too many tokens|prompt is too long|input is too long|exceeds? the (model's )?(maximum )?context`)
	unknownModelRE   = regexp.MustCompile(`(?i)model.{0,100}(not found|does not exist|not exist|is not available|not supported)|model_not_found|no such model|unknown model|invalid model`)
)

// httpError classifies a refusal by its status and body.
func (w *wire) httpError(status int, body []byte, model string) *ProviderError {
	quote := quoteBody(body, w.cfg.APIKey)
	said := ""
	if quote != "" {
		said = ". The provider said: " + quote
	}
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return w.fail(ErrBadKey, status, fmt.Sprintf("the API key was refused (HTTP %d); check it in Settings%s", status, said), nil)
	case (status == http.StatusBadRequest || status == http.StatusRequestEntityTooLarge || status == http.StatusUnprocessableEntity) &&
		contextTooLongRE.Match(body):
		return w.fail(ErrContextTooLong, status, fmt.Sprintf("the conversation is too long for model %q (HTTP %d); start a new chat or pick a model with a larger context%s", model, status, said), nil)
	case status == http.StatusNotFound || (status < 500 && status != http.StatusTooManyRequests && unknownModelRE.Match(body)):
		return w.fail(ErrUnknownModel, status, fmt.Sprintf("the provider does not know the model %q (HTTP %d); pick another model or check the base URL in Settings%s", model, status, said), nil)
	case status == http.StatusTooManyRequests:
		return w.fail(ErrRateLimited, status, fmt.Sprintf("the provider is limiting requests (HTTP %d); wait a minute and try again%s", status, said), nil)
	case status >= 500 || bytes.Contains(bytes.ToLower(body), []byte("overloaded")):
		return w.fail(ErrOverloaded, status, fmt.Sprintf("the provider is overloaded or failing (HTTP %d); try again in a while%s", status, said), nil)
	}
	return w.fail(ErrProviderFailure, status, fmt.Sprintf("the provider refused the request (HTTP %d)%s", status, said), nil)
}

// quoteBody returns the provider's own error message from body (the "message" of the usual JSON
// shapes, else the text), with key redacted, control characters flattened and at most maxQuote
// bytes long.
func quoteBody(body []byte, key string) string {
	text := errorMessageOf(body)
	if text == "" {
		text = string(body)
	}
	text = redact(text, key)
	text = strings.Join(strings.FieldsFunc(text, func(r rune) bool {
		return r < ' ' || r == 0x7f || r == ' ' || r == utf8.RuneError
	}), " ")
	if len(text) > maxQuote {
		cut := maxQuote
		for cut > 0 && !utf8.RuneStart(text[cut]) {
			cut--
		}
		text = text[:cut] + "…"
	}
	return text
}

// errorMessageOf finds the message in {"error":{"message":…}}, {"error":"…"} or {"message":…}.
func errorMessageOf(body []byte) string {
	var v struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Detail  string          `json:"detail"`
	}
	if json.Unmarshal(body, &v) != nil {
		return ""
	}
	if len(v.Error) > 0 {
		var s string
		if json.Unmarshal(v.Error, &s) == nil && s != "" {
			return s
		}
		var obj struct {
			Message string `json:"message"`
		}
		if json.Unmarshal(v.Error, &obj) == nil && obj.Message != "" {
			return obj.Message
		}
	}
	if v.Message != "" {
		return v.Message
	}
	return v.Detail
}

// minRedactLen is the shortest key that is redacted. Shorter "keys" are placeholders local
// servers accept ("ollama", "x"); replacing every "x" would only garble the message.
const minRedactLen = 8

// redact removes key from s.
func redact(s, key string) string {
	if len(key) < minRedactLen {
		return s
	}
	return strings.ReplaceAll(s, key, "[redacted]")
}

// redactErr returns err, or a plain error with the key removed if any error in its chain
// mentions the key.
func redactErr(err error, key string) error {
	if err == nil || len(key) < minRedactLen || !chainMentions(err, key) {
		return err
	}
	return errors.New(redact(err.Error(), key))
}

func chainMentions(err error, key string) bool {
	if err == nil {
		return false
	}
	if strings.Contains(err.Error(), key) || strings.Contains(fmt.Sprintf("%+v", err), key) {
		return true
	}
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		return chainMentions(u.Unwrap(), key)
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			if chainMentions(e, key) {
				return true
			}
		}
	}
	return false
}

// streamError reports a reply that broke off while being read.
func (w *wire) streamError(ctx context.Context, u string, err error) *ProviderError {
	if ctx.Err() != nil {
		return w.ctxError(u, ctx.Err())
	}
	return w.fail(ErrBadResponse, 0, "the reply stopped before it finished (the connection broke)", err)
}

// unfinished reports a stream that ended without saying it was done.
func (w *wire) unfinished() *ProviderError {
	return w.fail(ErrBadResponse, 0, "the reply stopped before it finished", nil)
}
