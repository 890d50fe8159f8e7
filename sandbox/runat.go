package sandbox

import (
	"fmt"
	"strings"
	"time"
)

// RunAt is when a remixlet's script.js starts on a page, as userscript managers and Chrome
// extensions define their run times. The page agent reports the document's readiness to the
// proxy (its state when the agent connects, DOMContentLoaded, load), and the proxy starts each
// script at its point; a script that becomes due later (enabled, or matched after a
// same-document navigation) on a page already past its point starts at once.
type RunAt string

// The run times of manifest.json's "run_at".
const (
	// RunDocumentStart starts the script as soon as the page agent connects, while the page
	// may still be parsing: dom.query may not find what the parser has not reached yet
	// (dom.waitFor does). Its stylesheet is in place either way.
	RunDocumentStart RunAt = "document_start"
	// RunDocumentEnd, the default, starts the script after DOMContentLoaded: the whole document
	// is parsed, images and frames may still be loading.
	RunDocumentEnd RunAt = "document_end"
	// RunDocumentIdle starts the script after DOMContentLoaded, at the window's load event or
	// IdleGrace after DOMContentLoaded, whichever comes first (Chrome's document_idle).
	RunDocumentIdle RunAt = "document_idle"
)

// IdleGrace is how long after DOMContentLoaded a document_idle script waits for the window's
// load event before it starts anyway (Chrome uses the same 200 ms).
const IdleGrace = 200 * time.Millisecond

// runAts lists the run times in the order they come in a page's life.
var runAts = []RunAt{RunDocumentStart, RunDocumentEnd, RunDocumentIdle}

// ParseRunAt reads a manifest's run_at value; an unknown value is an error naming the allowed
// ones.
func ParseRunAt(s string) (RunAt, error) {
	for _, r := range runAts {
		if string(r) == s {
			return r, nil
		}
	}
	return "", fmt.Errorf("%q is not a run time (allowed: %s)", s, runAtList())
}

func runAtList() string {
	names := make([]string, len(runAts))
	for i, r := range runAts {
		names[i] = string(r)
	}
	return strings.Join(names, ", ")
}

// Describe says in words when a script with this run time starts, for the manager and the CLI.
func (r RunAt) Describe() string {
	switch r {
	case RunDocumentStart:
		return "as soon as the page starts loading (document_start)"
	case RunDocumentIdle:
		return "once the page has loaded, or 200 ms after it was parsed (document_idle)"
	default:
		return "after the page is parsed (document_end)"
	}
}
