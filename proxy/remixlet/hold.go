package remixlet

import (
	"context"
	"fmt"

	"github.com/remixproxy/remixproxy/panel"
	"github.com/remixproxy/remixproxy/sandbox"
)

// Early start of document_end scripts, their calls held until the document is parsed.
//
// A document_end script used to start when the page agent reported DOMContentLoaded: the
// report's trip to the proxy and the script's first dom call's trip back came after it, while
// the renderer was busy with the page's first layout. Now, on a page agent that can hold
// (panel.Hello.Holds), such a script starts as soon as the page agent says hello, while the page
// is still parsing, and what it does that anyone can see waits for the parse:
//   - its dom calls go to the page marked panel.Op.After = interactive; the page agent holds
//     them while the document is loading and runs them, in order, right after it reports
//     DOMContentLoaded (rx_ready.js), so they see the parsed document exactly as before. The
//     answer's time limit (opTimeout) counts from the report, not from the send;
//   - its rmx calls wait in the proxy until the page reports DOMContentLoaded, and its log lines
//     (rmx.log, its errors) are kept until then (logLine), so a page that is left before it is
//     parsed gets no storage write, fetch, notification, schedule or log line from the script:
//     only its sandbox ran, and is stopped;
//   - its run is recorded (the manager's "last run") when the page reports DOMContentLoaded.
// document_start scripts are unchanged (their calls never wait). document_idle scripts start as
// before; their ops carry After too, which the page has always passed by then.

// holdsUntilParsed reports whether a script's calls wait for the parsed document: every run
// time but document_start.
func holdsUntilParsed(m *sandbox.Manifest) bool {
	return m.RunAt != sandbox.RunDocumentStart
}

// opAfter is the panel.Op.After of a dom call of a script with manifest m.
func opAfter(m *sandbox.Manifest) string {
	if holdsUntilParsed(m) {
		return panel.ReadyInteractive
	}
	return ""
}

// notParsed returns a channel closed when the page reports DOMContentLoaded, or nil when it has
// or when h did not start before it.
func (h *remixletHost) notParsed() <-chan struct{} {
	if !h.early {
		return nil
	}
	p := h.p
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ready >= readyInteractive {
		return nil
	}
	return p.parsed
}

// waitParsed waits until the page reports DOMContentLoaded, for h's rmx calls. It fails when
// ctx ends first (the script was stopped: its page went away or no longer matches).
func (h *remixletHost) waitParsed(ctx context.Context) error {
	ch := h.notParsed()
	if ch == nil {
		return nil
	}
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// markParsed closes p.parsed when the page first reaches interactive and returns the scripts
// that started early, to record their runs; p.mu must be held.
func (p *pageRun) markParsedLocked(from, to readiness) []*runningRemixlet {
	if from >= readyInteractive || to < readyInteractive {
		return nil
	}
	close(p.parsed)
	var early []*runningRemixlet
	for _, rr := range p.running {
		if rr.early {
			rr.early = false
			early = append(early, rr)
		}
	}
	return early
}

// maxHeldLog bounds the log lines an early script keeps until its page is parsed; the rest are
// counted and said in one line.
const maxHeldLog = 100

// heldLine is one log line kept until the page is parsed.
type heldLine struct{ level, msg string }

// logLine is the script's log (sandbox.RemixletConfig.Log): kept while a script that started
// early waits for its page's parse, written from then on.
func (h *remixletHost) logLine(level, msg string) {
	if ch := h.notParsed(); ch != nil {
		h.mu.Lock()
		select {
		case <-ch:
		default:
			if len(h.heldLog) < maxHeldLog {
				h.heldLog = append(h.heldLog, heldLine{level, msg})
			} else if len(h.heldLog) == maxHeldLog {
				h.heldLog = append(h.heldLog, heldLine{"warn", fmt.Sprintf("more than %d log lines before the page was parsed; the rest were left out", maxHeldLog)})
			}
			h.mu.Unlock()
			return
		}
		h.mu.Unlock()
		h.flushHeldLog()
	}
	h.p.r.logf(h.id, level, "%s", msg)
}

// flushHeldLog writes the lines logLine kept, once the page is parsed.
func (h *remixletHost) flushHeldLog() {
	h.mu.Lock()
	lines := h.heldLog
	h.heldLog = nil
	h.mu.Unlock()
	for _, l := range lines {
		h.p.r.logf(h.id, l.level, "%s", l.msg)
	}
}
