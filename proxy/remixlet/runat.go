package remixlet

import (
	"encoding/json"
	"time"

	"github.com/remixproxy/remixproxy/panel"
	"github.com/remixproxy/remixproxy/sandbox"
)

// Run times (manifest.json "run_at", sandbox.RunAt): each script starts at its point in the
// page's life, from what the page agent reports (panel.Hello.Ready when it connects, panel.Ready
// when DOMContentLoaded and load fire). document_start scripts start when the page connects;
// document_end ones once DOMContentLoaded fired; document_idle ones at load or idleGrace after
// DOMContentLoaded, whichever comes first. A script taken on for a page that is already past its
// point (enabled or changed while the page is open, matched after an SPA navigation, a page back
// from the back/forward cache, which reconnects with its state in the hello) starts at once.
// Stylesheets never wait.

// readiness is how far a page's document is, as its agent reported it.
type readiness int

const (
	readyUnknown     readiness = iota // connected, no hello read yet
	readyLoading                      // parsing: DOMContentLoaded has not fired
	readyInteractive                  // DOMContentLoaded fired
	readyComplete                     // the window's load fired
)

// parseReadiness reads a reported state; "" is a page agent older than the run times, which
// never reports one: its page is taken as complete, so its scripts start as they always did.
func parseReadiness(s string) (readiness, bool) {
	switch s {
	case panel.ReadyLoading:
		return readyLoading, true
	case panel.ReadyInteractive:
		return readyInteractive, true
	case panel.ReadyComplete, "":
		return readyComplete, true
	}
	return readyUnknown, false
}

// due reports whether a script with run time at starts now; p.mu must be held.
func (p *pageRun) due(at sandbox.RunAt) bool {
	switch at {
	case sandbox.RunDocumentStart:
		return true
	case sandbox.RunDocumentIdle:
		return p.idle
	default:
		// document_end; on a page agent that holds ops, from its hello on (hold.go).
		return p.ready >= readyInteractive || (p.holds && p.ready >= readyLoading)
	}
}

// readinessMessage takes a hello or a ready report of the page agent.
func (p *pageRun) readinessMessage(typ string, raw json.RawMessage) {
	var m struct {
		Ready string `json:"ready"` // hello
		Holds bool   `json:"holds"` // hello
		State string `json:"state"` // ready
	}
	if json.Unmarshal(raw, &m) != nil {
		return
	}
	s := m.State
	if typ == panel.TypeHello {
		s = m.Ready
		p.mu.Lock()
		p.holds = m.Holds
		p.mu.Unlock()
	} else if s == "" {
		return // a ready report always names its state
	}
	if r, ok := parseReadiness(s); ok {
		p.advance(r)
	}
}

// advance moves the page's readiness forward (never back) and starts the scripts now due.
func (p *pageRun) advance(to readiness) {
	p.syncMu.Lock()
	defer p.syncMu.Unlock()
	p.mu.Lock()
	if p.ended || to <= p.ready {
		p.mu.Unlock()
		return
	}
	early := p.markParsedLocked(p.ready, to)
	p.ready = to
	switch {
	case to >= readyComplete:
		p.idle = true
		if p.idleTimer != nil {
			p.idleTimer.Stop()
		}
	case to == readyInteractive && p.idleTimer == nil:
		p.idleTimer = time.AfterFunc(p.r.idleGrace, p.idleReached)
	}
	due := p.takeDueLocked()
	p.mu.Unlock()
	for _, rr := range early {
		rr.host.flushHeldLog()
		p.r.ran(rr.host.id, p.pc.url())
	}
	p.startScripts(due)
}

// idleReached is document_idle's grace after DOMContentLoaded running out before load.
func (p *pageRun) idleReached() {
	p.syncMu.Lock()
	defer p.syncMu.Unlock()
	p.mu.Lock()
	if p.ended || p.idle {
		p.mu.Unlock()
		return
	}
	p.idle = true
	due := p.takeDueLocked()
	p.mu.Unlock()
	p.startScripts(due)
}

// takeDueLocked takes the waiting scripts that are due now out of p.waiting; p.mu must be held.
func (p *pageRun) takeDueLocked() []candidate {
	var due []candidate
	for id, c := range p.waiting {
		if p.due(c.manifest.RunAt) {
			delete(p.waiting, id)
			due = append(due, c)
		}
	}
	return due
}

// startScripts starts the scripts of the page in their sandboxes; p.syncMu must be held.
func (p *pageRun) startScripts(scripts []candidate) {
	if len(scripts) == 0 {
		return
	}
	sup, err := p.r.supervisor()
	if err != nil {
		p.r.log.Error("remixlets not started: the sandbox is not running", "err", err)
		return
	}
	for _, c := range scripts {
		p.start(sup, c)
	}
}
