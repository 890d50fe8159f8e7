package sandbox

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/remixproxy/remixproxy/internal/plain"
	"github.com/remixproxy/remixproxy/netrules"
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
	MaxRulesSize    = 1 << 20 // about 10 000 short rules; netrules.MaxRules bounds the count
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
// manifest.json is required, and so is at least one of script.js and style.css. rules.json is
// checked rule by rule (checkRules) and needs the netrules permission when it is not empty.
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
	if m != nil {
		// The name is shown on the cards where the person decides (red-team pass 5b): it must
		// read as what it is. Checked at save, not in ParseManifest, so that a stored version
		// saved before this rule still parses and runs.
		if err := plain.CheckName(m.Name); err != nil {
			probs = append(probs, Problem{File: ManifestFile, Field: "name", Message: err.Error(),
				Fix: "use plain text on one line: letters, digits, spaces and punctuation"})
		}
	}

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
	switch {
	case strings.Contains(reason, "fetch: hosts"):
		return "load only from the remixlet's own sites (on a page, those within the page's site), or ask for a fetch: permission for that host"
	case strings.Contains(reason, "the stylesheet ends"), strings.Contains(reason, "unfinished"):
		return "end style.css outside any comment, string, url( or block: close what is open there, or delete it"
	case strings.Contains(reason, "value attribute"), strings.Contains(reason, "typed into a field"), strings.Contains(reason, "field-sizing"):
		return "select and size fields by class, id or other attributes, never by what is typed into them"
	case strings.Contains(reason, "unmask a field"):
		return "leave the page's masked fields as they are; reset properties one by one instead of with all"
	case strings.Contains(reason, "animations are refused"):
		return "give the rule a class, id or attribute selector, so it animates only the elements it is for"
	}
	return "leave it out; a remixlet stylesheet may load only full https:// addresses on its own sites"
}

// checkRules checks rules.json: a JSON array of declarative network rules (netrules.Parse),
// each within the limits for the remixlet's sites (netrules.Check: redirects of GET only to
// https addresses on its own sites, no security headers, initiators only on its sites, …),
// and the netrules permission when it is not empty. Each problem names the rule's id and field.
func checkRules(b []byte, m *Manifest) []Problem {
	if p, ok := checkStrictJSON(RulesFile, b); !ok {
		return []Problem{p}
	}
	rules, nprobs := netrules.Parse(b)
	if m != nil {
		nprobs = append(nprobs, netrules.Check(rules, RuleSites(m))...)
	}
	var probs []Problem
	for _, np := range nprobs {
		msg := np.Message
		switch {
		case np.RuleID != 0:
			msg = fmt.Sprintf("rule %d: %s", np.RuleID, msg)
		case np.Index >= 0:
			msg = fmt.Sprintf("rule at index %d: %s", np.Index, msg)
		}
		probs = append(probs, Problem{File: RulesFile, Field: np.Field, Message: msg, Fix: np.Fix})
	}
	if (len(rules) > 0 || len(nprobs) > 0) && m != nil && !m.HasPermission(PermNetRules) && !bytes.Equal(bytes.TrimSpace(b), []byte("[]")) {
		probs = append(probs, Problem{File: RulesFile, Message: "has rules but the manifest does not ask for the netrules permission",
			Fix: `add {"name": "netrules", "reason": …} to permissions, or leave rules.json out`})
	}
	return probs
}

// RuleSites are the sites a remixlet's network rules are bounded by: the hosts its matches
// cover (exclude_matches are not subtracted), or every site, and its fetch: hosts (where a
// redirect may go from any of its pages).
func RuleSites(m *Manifest) netrules.Sites {
	s := m.Sites()
	return netrules.Sites{Every: s.Every, Hosts: s.Hosts, Fetch: m.FetchHosts()}
}
