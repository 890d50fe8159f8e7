package sandbox

import (
	"strings"
	"testing"
)

func TestFilesNeedApproval(t *testing.T) {
	manifest := func(matches, perms string) []byte {
		return []byte(`{"name":"x","description":"d","api":1,"matches":[` + matches + `],"permissions":[` + perms + `]}`)
	}
	one := map[string][]byte{ManifestFile: manifest(`"https://a.example/*"`, ``), ScriptFile: []byte("1")}
	twoSites := map[string][]byte{ManifestFile: manifest(`"https://a.example/*","https://bank.example/*"`, `{"name":"storage","reason":"r"}`), ScriptFile: []byte("1")}
	manySites := map[string][]byte{ManifestFile: manifest(`"https://a.example/*","https://b1.example/*","https://b2.example/*","https://b3.example/*","https://b4.example/*","https://b5.example/*","https://b6.example/*","https://b7.example/*","https://b8.example/*"`, ``), ScriptFile: []byte("1")}
	fetching := map[string][]byte{ManifestFile: manifest(`"https://a.example/*"`, `{"name":"fetch:api.a.example","reason":"r"}`), ScriptFile: []byte("get()")}
	with := func(files map[string][]byte, name, body string) map[string][]byte {
		out := map[string][]byte{}
		for k, v := range files {
			out[k] = v
		}
		if body == "" {
			delete(out, name)
		} else {
			out[name] = []byte(body)
		}
		return out
	}
	cases := []struct {
		name         string
		active, next map[string][]byte
		chat         string
		want         string // a part of the reasons; "" means no approval
	}{
		{"new remixlet on the chat's site", nil, one, "a.example", ""},
		{"new remixlet from the CLI", nil, one, "", "other than this page's: a.example"},
		{"script-only change", one, with(one, ScriptFile, "2"), "", ""},
		{"script-only change from a chat", one, with(one, ScriptFile, "2"), "a.example", ""},
		{"white space around the script", fetching, with(fetching, ScriptFile, "\n get()\n"), "a.example", ""},
		{"more sites", one, with(one, ManifestFile, string(manifest(`"https://a.example/*","https://b.example/*"`, ``))), "", "more sites: b.example"},
		{"new permission", one, with(one, ManifestFile, string(manifest(`"https://a.example/*"`, `{"name":"storage","reason":"keep state"}`))), "", "New permission: Keep its own data"},
		{"rules added", one, with(one, RulesFile, "[]"), "", "network rules changed"},
		{"broken next manifest", one, with(one, ManifestFile, "{"), "", "does not pass the checks"},
		{"agent script change on two sites", twoSites, with(twoSites, ScriptFile, "2"), "a.example", "also runs on other sites than this page's (a.example): bank.example"},
		{"agent style added on two sites", twoSites, with(twoSites, StyleFile, "p{}"), "a.example", "bank.example"},
		{"agent script change on nine sites", manySites, with(manySites, ScriptFile, "2"), "a.example", "(a.example): b1.example, b2.example, b3.example, b4.example, b5.example and 3 more"},
		{"person script change on two sites", twoSites, with(twoSites, ScriptFile, "2"), "", ""},
		{"agent script change under fetch", fetching, with(fetching, ScriptFile, "post()"), "a.example", "Run new code with a permission you allowed for its old code: Send requests to api.a.example"},
		{"agent style change under fetch", fetching, with(fetching, StyleFile, "p{}"), "a.example", "Send requests to api.a.example"},
		{"agent script removed under fetch", fetching, with(fetching, ScriptFile, ""), "a.example", "Send requests to api.a.example"},
		{"person script change under fetch", fetching, with(fetching, ScriptFile, "post()"), "", ""},
		{"agent description change under fetch", fetching, with(fetching, ManifestFile, strings.Replace(string(fetching[ManifestFile]), `"d"`, `"new"`, 1)), "a.example", ""},
		{"broken active manifest", with(one, ManifestFile, "{"), one, "a.example", "Replace a version whose manifest can no longer be read"},
		{"broken active manifest, the person's save", with(one, ManifestFile, "{"), one, "", "can no longer be read"},
		{"broken active manifest, other site", with(one, ManifestFile, "{"), one, "b.example", "other than this page's: a.example"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, why := FilesNeedApproval(c.active, c.next, c.chat)
			if got != (c.want != "") {
				t.Fatalf("got %v (%q), want %v", got, why, c.want != "")
			}
			if !strings.Contains(why, c.want) {
				t.Errorf("got reasons %q, want them to contain %q", why, c.want)
			}
		})
	}
}

func TestFilesChange(t *testing.T) {
	m := []byte(`{"name":"x","api":1,"matches":["https://a.example/*"]}`)
	tests := []struct {
		name         string
		active, next map[string][]byte
		code, rules  bool
	}{
		{"new without code", nil, map[string][]byte{ManifestFile: m}, false, false},
		{"new with a script", nil, map[string][]byte{ManifestFile: m, ScriptFile: []byte("x")}, true, false},
		{"new with rules", nil, map[string][]byte{ManifestFile: m, RulesFile: []byte("[]")}, true, true},
		{"same", map[string][]byte{ManifestFile: m, StyleFile: []byte("p{}")}, map[string][]byte{ManifestFile: m, StyleFile: []byte("p{}\n")}, false, false},
		{"style changed", map[string][]byte{ManifestFile: m, StyleFile: []byte("p{}")}, map[string][]byte{ManifestFile: m, StyleFile: []byte("a{}")}, true, false},
		{"rules removed", map[string][]byte{ManifestFile: m, RulesFile: []byte("[]")}, map[string][]byte{ManifestFile: m}, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, ok := FilesChange(tt.active, tt.next, "a.example")
			if !ok {
				t.Fatal("got not ok, want the change read")
			}
			if c.CodeChanged != tt.code || c.RulesChanged != tt.rules {
				t.Errorf("got code %v rules %v, want code %v rules %v", c.CodeChanged, c.RulesChanged, tt.code, tt.rules)
			}
		})
	}
	if _, ok := FilesChange(nil, map[string][]byte{ManifestFile: []byte("{")}, ""); ok {
		t.Error("got ok for a manifest that does not parse, want not ok")
	}
}
