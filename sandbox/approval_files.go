package sandbox

import (
	"bytes"
	"strings"
)

// FilesNeedApproval is NeedsApproval over two versions' files, the form the store's activation
// check takes (store.Options.NeedsApproval). active is nil for a remixlet with no running
// version. A next version whose manifest does not parse needs approval (it cannot have passed
// the save-time checks, so this is only a safe default), and so does an active one that no
// longer parses (nothing can be read as already allowed).
func FilesNeedApproval(active, next map[string][]byte, chatHost string) (bool, string) {
	nm, problems := ParseManifest(next[ManifestFile])
	if len(problems) > 0 || nm == nil {
		return true, "the new manifest does not pass the checks"
	}
	var am *Manifest
	if active != nil {
		if am, problems = ParseManifest(active[ManifestFile]); len(problems) > 0 {
			am = nil
		}
	}
	rulesChanged := !bytes.Equal(bytes.TrimSpace(active[RulesFile]), bytes.TrimSpace(next[RulesFile]))
	need, reasons := NeedsApproval(am, nm, chatHost, rulesChanged)
	return need, strings.Join(reasons, "; ")
}
