package chat

import (
	"sync"
	"time"
)

// A new page the page's handler starts just after an action answered (OPEN-ITEMS 97). The page
// agent says pageLeaves when the page started loading another document while the action ran
// (tool_act.js). A form's submit() fires no submit event, and Chromium fires the navigate event
// of its submission in a task after the one the action ran in, so the answer has gone by then.
// So for actLeaveTail after an action's answer the page agent reports such a navigation
// (TypeLeaving), and the action's watch (act.go guarded) takes a report that came after the call
// started for pageLeaves: the new page's request is waited for, and a held submission reaches the
// action's result instead of the model being told the click was done.

const (
	// maxLeaveNotes bounds the pages whose reports are kept; leaveNoteTTL how long one is.
	maxLeaveNotes = 256
	leaveNoteTTL  = 10 * time.Second
)

// leaveNotes are the pages' reports of a new page started just after an action, by page
// session ID.
type leaveNotes struct {
	mu sync.Mutex
	at map[string]time.Time
}

// note records that the page session id reported a new page now.
func (l *leaveNotes) note(id string, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.at == nil {
		l.at = map[string]time.Time{}
	}
	if len(l.at) >= maxLeaveNotes {
		for k, t := range l.at {
			if now.Sub(t) > leaveNoteTTL || len(l.at) >= maxLeaveNotes {
				delete(l.at, k)
			}
		}
	}
	l.at[id] = now
}

// since reports whether the page session id reported a new page after t.
func (l *leaveNotes) since(id string, t time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	at, ok := l.at[id]
	return ok && at.After(t)
}

// leaveNoter is an actPage that knows of such reports (chatActPage).
type leaveNoter interface {
	leftSince(t time.Time) bool
}

var _ leaveNoter = chatActPage{}

func (p chatActPage) leftSince(t time.Time) bool {
	return p.c.hub.acts.leaves.since(p.sess.ID, t)
}

// leftAfterAnswer reports whether pg's page reported a new page started by its handler since
// called, the action's call (mayLeave: the action's own link or form, waited for already).
func leftAfterAnswer(pg actPage, called time.Time, mayLeave bool) bool {
	ln, ok := pg.(leaveNoter)
	return ok && !mayLeave && ln.leftSince(called)
}
