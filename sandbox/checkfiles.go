package sandbox

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/remixproxy/remixproxy/rewrite"
)

// The files a remixlet may have and their size limits.
const (
	ManifestFile = "manifest.json"
	ScriptFile   = "script.js"
	StyleFile    = "style.css"
	RulesFile    = "rules.json"

	MaxManifestSize = 16 << 10
	MaxScriptSize   = 256 << 10
	MaxStyleSize    = 128 << 10
	MaxRulesSize    = 64 << 10
)

var fileLimits = map[string]int{
	ManifestFile: MaxManifestSize,
	ScriptFile:   MaxScriptSize,
	StyleFile:    MaxStyleSize,
	RulesFile:    MaxRulesSize,
}

// CheckFiles runs every save-time check on a remixlet's files: the file names and sizes,
// manifest.json (ParseManifest), script.js (CheckScript), style.css (rewrite.CheckStylesheet,
// loading only from hosts the manifest's matches cover or its fetch: permissions name, plus
// extraStyleHosts) and rules.json. A save is accepted only when it returns no problems; the
// Manifest is nil when manifest.json itself has problems.
//
// manifest.json is required, and so is at least one of script.js and style.css. rules.json,
// for now, must be a JSON array of objects and needs the netrules permission when it is not
// empty; the rule-by-rule checks come with network rules in a later release.
func CheckFiles(files map[string][]byte, extraStyleHosts ...string) (*Manifest, []Problem) {
	var probs []Problem
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		limit, known := fileLimits[name]
		if !known {
			probs = append(probs, Problem{File: name, Message: "is not a remixlet file",
				Fix: "a remixlet has manifest.json, script.js, and optionally style.css and rules.json; put everything in those"})
			continue
		}
		if n := len(files[name]); n > limit {
			probs = append(probs, Problem{File: name,
				Message: fmt.Sprintf("is %d KiB; the limit is %d KiB", (n+1023)>>10, limit>>10),
				Fix:     "make it smaller"})
		}
	}
	if len(probs) > 0 {
		return nil, probs
	}

	mb, ok := files[ManifestFile]
	if !ok {
		return nil, []Problem{{File: ManifestFile, Message: "missing", Fix: "every remixlet needs a manifest.json"}}
	}
	m, mprobs := ParseManifest(mb)
	probs = append(probs, mprobs...)

	script, hasScript := files[ScriptFile]
	style, hasStyle := files[StyleFile]
	if !hasScript && !hasStyle {
		probs = append(probs, Problem{File: ScriptFile, Message: "missing", Fix: "add script.js (or style.css for a stylesheet-only remixlet)"})
	}
	if hasScript {
		probs = append(probs, CheckScript(script)...)
	}
	if hasStyle && m != nil {
		allowed := func(host string) bool {
			return m.StyleHostAllowed(host) || slices.Contains(extraStyleHosts, host)
		}
		_, sprobs := rewrite.CheckStylesheet(style, allowed)
		for _, sp := range sprobs {
			probs = append(probs, Problem{File: StyleFile, Line: sp.Line, Column: sp.Column, Message: sp.Reason,
				Fix: styleFix(sp.Reason)})
		}
	}
	if rules, ok := files[RulesFile]; ok {
		probs = append(probs, checkRules(rules, m)...)
	}
	if len(probs) > 0 {
		return nil, probs
	}
	return m, nil
}

func styleFix(reason string) string {
	if strings.Contains(reason, "fetch: hosts") {
		return "load only from the remixlet's own sites, or ask for a fetch: permission for that host"
	}
	return "leave it out; a remixlet stylesheet may load only full https:// addresses on its own sites"
}

// checkRules checks rules.json as far as this release goes: a JSON array of objects, and the
// netrules permission when it is not empty.
func checkRules(b []byte, m *Manifest) []Problem {
	if p, ok := checkStrictJSON(RulesFile, b); !ok {
		return []Problem{p}
	}
	var rules []json.RawMessage
	if err := json.Unmarshal(b, &rules); err != nil {
		return []Problem{{File: RulesFile, Message: "must be a JSON array of rules", Fix: "write [] or a list of rule objects"}}
	}
	var probs []Problem
	for i, r := range rules {
		var obj map[string]json.RawMessage
		if json.Unmarshal(r, &obj) != nil {
			probs = append(probs, Problem{File: RulesFile, Field: fmt.Sprintf("[%d]", i), Message: "must be an object",
				Fix: `write each rule as {"action": …, "condition": …}`})
		}
	}
	if len(rules) > 0 && m != nil && !m.HasPermission(PermNetRules) {
		probs = append(probs, Problem{File: RulesFile, Message: "has rules but the manifest does not ask for the netrules permission",
			Fix: `add {"name": "netrules", "reason": …} to permissions, or leave rules.json out; network rules take effect in a later release`})
	}
	return probs
}
