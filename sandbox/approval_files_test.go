package sandbox

import "testing"

func TestFilesNeedApproval(t *testing.T) {
	manifest := func(matches, perms string) []byte {
		return []byte(`{"name":"x","description":"d","api":1,"matches":[` + matches + `],"permissions":[` + perms + `]}`)
	}
	one := map[string][]byte{ManifestFile: manifest(`"https://a.example/*"`, ``), ScriptFile: []byte("1")}
	cases := []struct {
		name         string
		active, next map[string][]byte
		chat         string
		want         bool
	}{
		{"new remixlet on the chat's site", nil, one, "a.example", false},
		{"new remixlet from the CLI", nil, one, "", true},
		{"script-only change", one, map[string][]byte{ManifestFile: one[ManifestFile], ScriptFile: []byte("2")}, "", false},
		{"more sites", one, map[string][]byte{ManifestFile: manifest(`"https://a.example/*","https://b.example/*"`, ``), ScriptFile: []byte("1")}, "", true},
		{"new permission", one, map[string][]byte{ManifestFile: manifest(`"https://a.example/*"`, `{"name":"storage","reason":"keep state"}`), ScriptFile: []byte("1")}, "", true},
		{"rules added", one, map[string][]byte{ManifestFile: one[ManifestFile], ScriptFile: []byte("1"), RulesFile: []byte("[]")}, "", true},
		{"broken next manifest", one, map[string][]byte{ManifestFile: []byte("{"), ScriptFile: []byte("1")}, "", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, why := FilesNeedApproval(c.active, c.next, c.chat)
			if got != c.want {
				t.Errorf("got %v (%q), want %v", got, why, c.want)
			}
			if got && why == "" {
				t.Errorf("approval needed without a reason")
			}
		})
	}
}
