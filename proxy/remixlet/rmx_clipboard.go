package remixlet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/remixproxy/remixproxy/panel"
	"github.com/remixproxy/remixproxy/proxy/internal/httpx"
	"github.com/remixproxy/remixproxy/sandbox"
)

// rmx.clipboard.write(text): text only, at most maxClipboardBytes, written by the page agent
// with the clipboard API it captured at start-up, and only while the page has a user gesture
// (panel.Clipboard). The clipboard is never read.
//
// This file also holds the helpers the small rmx services share (rmx_notify.go, rmx_menu.go,
// schedule.go): argument parsing, asking the page agent and waiting for its answer, and
// delivering an event to a callback in the sandbox.

// maxClipboardBytes is the most text rmx.clipboard.write copies.
const maxClipboardBytes = 100 << 10

func rmxClipboardWrite(ctx context.Context, h *remixletHost, args []json.RawMessage) (json.RawMessage, error) {
	if !h.manifest.HasPermission(sandbox.PermClipboard) {
		return nil, &httpx.Refusal{Why: "rmx.clipboard.write needs the clipboard permission in manifest.json"}
	}
	text, err := rmxString(args, 0, "the text", maxClipboardBytes, false)
	if err != nil {
		return nil, err
	}
	return h.p.ask(ctx, h, func(id uint64) any {
		return panel.Clipboard{Type: panel.TypeClipboard, ID: id, Remixlet: h.id, Text: text}
	})
}

// rmxString returns argument i, which must be a string of at most max bytes of valid UTF-8
// (what names it in the refusal). A missing optional argument, or null, is "".
func rmxString(args []json.RawMessage, i int, what string, max int, optional bool) (string, error) {
	if i >= len(args) || string(args[i]) == "null" {
		if optional {
			return "", nil
		}
		return "", &httpx.Refusal{Why: what + " is missing"}
	}
	var s string
	if err := json.Unmarshal(args[i], &s); err != nil {
		return "", &httpx.Refusal{Why: what + " must be a string"}
	}
	if len(s) > max {
		return "", &httpx.Refusal{Why: fmt.Sprintf("%s is %d bytes, more than the %d allowed", what, len(s), max)}
	}
	if !utf8.ValidString(s) {
		return "", &httpx.Refusal{Why: what + " is not valid text"}
	}
	return s, nil
}

// ask sends the message build makes (with a fresh operation ID) to the page agent for h, and
// waits for the page agent's Result with that ID, as relay does for dom operations.
func (p *pageRun) ask(ctx context.Context, h *remixletHost, build func(id uint64) any) (json.RawMessage, error) {
	return p.askWithin(ctx, h, p.r.opTimeout, build)
}

// askWithin is ask with its own wait for the answer (dom.waitFor's is its timeout and more).
func (p *pageRun) askWithin(ctx context.Context, h *remixletHost, wait time.Duration, build func(id uint64) any) (json.RawMessage, error) {
	ch := make(chan opResult, 1)
	p.mu.Lock()
	if p.ended {
		p.mu.Unlock()
		return nil, errors.New("the page went away")
	}
	if h.stopped {
		p.mu.Unlock()
		return nil, errors.New("the page no longer matches the remixlet")
	}
	p.nextOp++
	id := p.nextOp
	p.pending[id] = pendingOp{remixlet: h.id, ch: ch}
	p.mu.Unlock()
	drop := func() {
		p.mu.Lock()
		delete(p.pending, id)
		p.mu.Unlock()
	}
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	if err := p.pc.send(ctx, build(id)); err != nil {
		drop()
		return nil, errors.New("the page is not connected")
	}
	select {
	case res := <-ch:
		if !res.ok {
			if res.err == "" {
				res.err = "the page agent refused it"
			}
			return nil, &httpx.Refusal{Why: res.err}
		}
		if len(res.value) == 0 {
			return json.RawMessage("null"), nil
		}
		return res.value, nil
	case <-ctx.Done():
		drop()
		return nil, fmt.Errorf("the page did not answer within %v", wait)
	}
}

// errTellGone is tell's error when the page or the remixlet ended.
var errTellGone = errors.New("the page no longer runs the remixlet")

// gone reports whether the page ended or h no longer runs on it.
func (p *pageRun) gone(h *remixletHost) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.ended || h.stopped
}

// tell sends one message to h's page without waiting for an answer.
func (p *pageRun) tell(ctx context.Context, h *remixletHost, msg any) error {
	if p.gone(h) {
		return errTellGone
	}
	ctx, cancel := context.WithTimeout(ctx, p.r.opTimeout)
	defer cancel()
	if err := p.pc.send(ctx, msg); err != nil {
		return errors.New("the page is not connected")
	}
	return nil
}

// listenerArg returns argument i as the {"$listener": N} the sandbox made of a callback.
func listenerArg(args []json.RawMessage, i int, what string) (int64, error) {
	var l struct {
		ID int64 `json:"$listener"`
	}
	if i >= len(args) || json.Unmarshal(args[i], &l) != nil || l.ID <= 0 {
		return 0, &httpx.Refusal{Why: what + " must be a function"}
	}
	return l.ID, nil
}

// dispatch delivers event to a callback h registered, in h's sandbox. A call can arrive before
// the sandbox's handle is recorded (the script runs as it starts), so it waits, at most
// opTimeout, for the start to be over.
func (p *pageRun) dispatch(h *remixletHost, listener int64, event any) error {
	raw, err := json.Marshal(event)
	if err != nil {
		return fmt.Errorf("encoding an event: %w", err)
	}
	// running returns h's running remixlet, or nil when it no longer runs on the page.
	running := func() *runningRemixlet {
		p.mu.Lock()
		defer p.mu.Unlock()
		rr := p.running[h.id]
		if p.ended || h.stopped || rr == nil || rr.host != h {
			return nil
		}
		return rr
	}
	rr := running()
	if rr == nil {
		return errors.New("the remixlet no longer runs on the page")
	}
	if rr.started != nil {
		timer := time.NewTimer(p.r.opTimeout)
		defer timer.Stop()
		select {
		case <-rr.started:
		case <-timer.C:
			return errors.New("the remixlet's sandbox did not start")
		}
	}
	if rr = running(); rr == nil {
		return errors.New("the remixlet no longer runs on the page")
	}
	p.mu.Lock()
	handle := rr.handle
	p.mu.Unlock()
	if handle == nil {
		return errors.New("the remixlet's sandbox did not start")
	}
	if err := handle.Dispatch(listener, raw); err != nil {
		return fmt.Errorf("dispatching an event: %w", err)
	}
	return nil
}
