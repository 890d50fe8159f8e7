package sandbox

import (
	"strings"
	"testing"
)

func remixletFiles(extra map[string]string) map[string][]byte {
	files := map[string][]byte{
		ManifestFile: []byte(validManifest),
		ScriptFile:   []byte(`rmx.keep("hide", { check: async () => true, repair: async () => {} });`),
		StyleFile:    []byte(`.promoted { display: none } .x { background: url(https://img.example.com/a.png) }`),
	}
	for name, body := range extra {
		if body == "-" {
			delete(files, name)
		} else {
			files[name] = []byte(body)
		}
	}
	return files
}

func TestCheckFilesAccepts(t *testing.T) {
	tests := []struct {
		name  string
		extra map[string]string
		hosts []string
	}{
		{"script and style", nil, nil},
		{"script only", map[string]string{StyleFile: "-"}, nil},
		{"style only", map[string]string{ScriptFile: "-"}, nil},
		{"style from fetch host", map[string]string{StyleFile: `a{background:url(https://api.example.com/i.png)}`}, nil},
		{"style from extra host", map[string]string{StyleFile: `a{background:url(https://static.test/i.png)}`}, []string{"static.test"}},
		{"empty rules", map[string]string{RulesFile: `[]`}, nil},
		{"rules with netrules", map[string]string{RulesFile: `[{"id":1,"action":{"type":"block"},"condition":{"urlFilter":"||ads.test^"}},
			{"id":2,"action":{"type":"redirect","redirect":{"url":"https://a.test/lib.js"}},"condition":{"urlFilter":"||cdn.test/lib.js","requestMethods":["get"]}}]`, StyleFile: "-",
			ManifestFile: `{"name":"x","api":1,"matches":["https://a.test/*"],"permissions":[{"name":"netrules","reason":"Blocks the tracker."}]}`}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, probs := CheckFiles(remixletFiles(tt.extra), tt.hosts...)
			if len(probs) > 0 || m == nil {
				t.Fatalf("got %v, want no problems", probs)
			}
		})
	}
}

func TestCheckFilesRefuses(t *testing.T) {
	tests := []struct {
		name  string
		extra map[string]string
		file  string
		msg   string
	}{
		{"unknown file", map[string]string{"payload.js": "x"}, "payload.js", "not a remixlet file"},
		{"nested path", map[string]string{"lib/a.js": "x"}, "lib/a.js", "not a remixlet file"},
		{"script too big", map[string]string{ScriptFile: strings.Repeat("x", MaxScriptSize+1)}, ScriptFile, "the limit is 256 KiB"},
		{"style too big", map[string]string{StyleFile: strings.Repeat(" ", MaxStyleSize+1)}, StyleFile, "the limit is 128 KiB"},
		{"manifest too big", map[string]string{ManifestFile: strings.Repeat(" ", MaxManifestSize+1)}, ManifestFile, "the limit is 16 KiB"},
		{"no manifest", map[string]string{ManifestFile: "-"}, ManifestFile, "missing"},
		{"no script or style", map[string]string{ScriptFile: "-", StyleFile: "-"}, ScriptFile, "missing"},
		{"bad manifest", map[string]string{ManifestFile: `{"name":"x"}`}, ManifestFile, "missing"},
		{"invisible name", map[string]string{ManifestFile: `{"name":"notes\u200b","api":1,"matches":["https://a.test/*"]}`}, ManifestFile, "invisible character U+200B"},
		{"bidirectional name", map[string]string{ManifestFile: `{"name":"a\u202eb","api":1,"matches":["https://a.test/*"]}`}, ManifestFile, "invisible character U+202E"},
		{"bad script", map[string]string{ScriptFile: `eval(x)`}, ScriptFile, "eval"},
		{"style to other host", map[string]string{StyleFile: `a{background:url(https://evil.test/x)}`}, StyleFile, "evil.test"},
		{"style to observed host", map[string]string{StyleFile: `a{background:url(https://api.watch.test/x)}`,
			ManifestFile: `{"name":"x","api":1,"matches":["https://a.test/*"],"permissions":[{"name":"network:observe:api.watch.test","reason":"r"}]}`},
			StyleFile, "api.watch.test"},
		{"style import", map[string]string{StyleFile: `@import "https://img.example.com/x.css";`}, StyleFile, "@import"},
		{"rules not array", map[string]string{RulesFile: `{"rules":[]}`}, RulesFile, "JSON array"},
		{"rules not json", map[string]string{RulesFile: `[`}, RulesFile, "unexpected end"},
		{"rules trailing data", map[string]string{RulesFile: `[] []`}, RulesFile, "data after the end"},
		{"rule not object", map[string]string{RulesFile: `[1]`, ManifestFile: `{"name":"x","api":1,"matches":["https://a.test/*"],"permissions":[{"name":"netrules","reason":"r"}]}`}, RulesFile, "must be an object"},
		{"rules without netrules", map[string]string{RulesFile: `[{"id":1}]`}, RulesFile, "netrules"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, probs := CheckFiles(remixletFiles(tt.extra))
			if m != nil {
				t.Errorf("got a manifest, want nil")
			}
			for _, p := range probs {
				if p.File == tt.file && strings.Contains(p.Error(), tt.msg) {
					return
				}
			}
			t.Errorf("got %v, want a problem in %s containing %q", probs, tt.file, tt.msg)
		})
	}
}

// The rule-by-rule checks of rules.json name the file, the field and the rule's id.
func TestCheckFilesRules(t *testing.T) {
	const manifest = `{"name":"x","api":1,"matches":["https://a.test/*"],"permissions":[{"name":"netrules","reason":"r"}]}`
	tests := []struct {
		name, rules, field, msg string
	}{
		{"redirect of a POST", `[{"id":4,"action":{"type":"redirect","redirect":{"url":"https://a.test/"}},"condition":{"urlFilter":"x","requestMethods":["post"]}}]`,
			"rules[0].condition.requestMethods[0]", "rule 4: a redirect applies only to GET"},
		{"redirect to http", `[{"id":5,"action":{"type":"redirect","redirect":{"url":"http://a.test/"}},"condition":{"urlFilter":"x"}}]`,
			"rules[0].action.redirect.url", "rule 5: goes to http:"},
		{"redirect to another site", `[{"id":6,"action":{"type":"redirect","redirect":{"url":"https://witness.test/"}},"condition":{"urlFilter":"x"}}]`,
			"rules[0].action.redirect.url", "rule 6: goes to witness.test"},
		{"security header", `[{"id":7,"action":{"type":"modifyHeaders","responseHeaders":[{"header":"Content-Security-Policy","operation":"remove"}]},"condition":{}}]`,
			"rules[0].action.responseHeaders[0].header", "rule 7: Content-Security-Policy is a security header"},
		{"another site's requests", `[{"id":8,"action":{"type":"block"},"condition":{"initiatorDomains":["other.test"]}}]`,
			"rules[0].condition.initiatorDomains[0]", "rule 8: \"other.test\" is not one of the remixlet's sites"},
		{"unknown action", `[{"id":9,"action":{"type":"nuke"},"condition":{}}]`, "rules[0].action.type", "rule 9:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, probs := CheckFiles(remixletFiles(map[string]string{ManifestFile: manifest, StyleFile: "-", RulesFile: tt.rules}))
			if m != nil || len(probs) != 1 {
				t.Fatalf("got %v, want one problem", probs)
			}
			p := probs[0]
			if p.File != RulesFile || p.Field != tt.field || !strings.Contains(p.Message, tt.msg) || p.Fix == "" {
				t.Errorf("got %+v, want %s field %s message containing %q and a fix", p, RulesFile, tt.field, tt.msg)
			}
		})
	}
}

func TestCheckFilesStylePosition(t *testing.T) {
	_, probs := CheckFiles(remixletFiles(map[string]string{StyleFile: "a{}\nb { background: \\75rl(https://evil.test/) }"}))
	if len(probs) != 1 {
		t.Fatalf("got %v, want one problem", probs)
	}
	if p := probs[0]; p.Line != 2 || p.Column != 17 || p.Fix == "" {
		t.Errorf("got %v (%d:%d), want style.css:2:17 with a fix", p, p.Line, p.Column)
	}
}

// TestCheckFilesStyleEndsAtTopLevel: a style.css that ends inside a comment is refused at
// save time (it would swallow what the page agent puts after it), with a position and a fix.
func TestCheckFilesStyleEndsAtTopLevel(t *testing.T) {
	tests := []struct{ name, css, msg, fix string }{
		{"open comment", "a{color:red}\n/*", "ends inside a comment", "close what is open"},
		{"value selector", "input[value^=a]{width:1px}", "value attribute", "never by what is typed"},
		{"broad animation", "*{animation:spin 1s infinite}", "animations are refused", "class, id or attribute"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, probs := CheckFiles(remixletFiles(map[string]string{StyleFile: tt.css}))
			if m != nil || len(probs) != 1 {
				t.Fatalf("got %v, want one problem", probs)
			}
			if p := probs[0]; p.File != StyleFile || p.Line < 1 || !strings.Contains(p.Message, tt.msg) || !strings.Contains(p.Fix, tt.fix) {
				t.Errorf("got %+v, want style.css, a position, message %q and fix %q", p, tt.msg, tt.fix)
			}
		})
	}
}
