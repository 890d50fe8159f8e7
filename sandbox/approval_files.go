package sandbox

import (
	"bytes"
	"strings"
)

// CodeFiles are the files that hold a remixlet's code, in the order a card shows their diffs:
// what a change of code (Change.CodeChanged) compares.
var CodeFiles = []string{ScriptFile, StyleFile, RulesFile}

// FilesChange reads two versions' files as a Change for NeedsApproval. active is nil for a
// remixlet with no running version; an active manifest that no longer parses is read as none
// (nothing can be read as already allowed) and marked (Change.ActiveUnreadable). ok is false
// when next's manifest does not parse.
func FilesChange(active, next map[string][]byte, chatHost string) (c Change, ok bool) {
	nm, problems := ParseManifest(next[ManifestFile])
	if len(problems) > 0 || nm == nil {
		return Change{}, false
	}
	var am *Manifest
	unreadable := false
	if active != nil {
		if am, problems = ParseManifest(active[ManifestFile]); len(problems) > 0 || am == nil {
			am, unreadable = nil, true
		}
	}
	c = Change{Active: am, ActiveUnreadable: unreadable, Next: nm, ChatHost: chatHost, RulesChanged: fileChanged(active, next, RulesFile)}
	for _, f := range CodeFiles {
		c.CodeChanged = c.CodeChanged || fileChanged(active, next, f)
	}
	return c, true
}

// fileChanged compares one file of two versions, ignoring leading and trailing white space (a
// missing file is an empty one).
func fileChanged(active, next map[string][]byte, name string) bool {
	return !bytes.Equal(bytes.TrimSpace(active[name]), bytes.TrimSpace(next[name]))
}

// FilesApprovalReasons is NeedsApproval over two versions' files (see FilesChange): the reasons
// a card shows. A next version whose manifest does not parse needs approval (it cannot have
// passed the save-time checks, so this is only a safe default).
func FilesApprovalReasons(active, next map[string][]byte, chatHost string) []Reason {
	c, ok := FilesChange(active, next, chatHost)
	if !ok {
		return []Reason{{Text: "the new manifest does not pass the checks"}}
	}
	_, reasons := NeedsApproval(c)
	return reasons
}

// FilesNeedApproval is the form of the policy the store's activation check takes
// (store.Options.NeedsApproval): whether activating next needs approval, and the reasons
// joined with "; ".
func FilesNeedApproval(active, next map[string][]byte, chatHost string) (bool, string) {
	reasons := FilesApprovalReasons(active, next, chatHost)
	texts := make([]string, len(reasons))
	for i, r := range reasons {
		texts[i] = r.Text
	}
	return len(reasons) > 0, strings.Join(texts, "; ")
}
