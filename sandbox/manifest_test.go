package sandbox

import (
	"strings"
	"testing"
)

const validManifest = `{
  "name": "Hide promoted posts",
  "description": "Hides every .promoted element and keeps it hidden.",
  "api": 1,
  "matches": ["https://*.example.com/*"],
  "exclude_matches": ["https://admin.example.com/*"],
  "permissions": [
    {"name": "storage", "reason": "Remembers which posts you un-hid."},
    {"name": "fetch:api.example.com", "reason": "Reads prices from the site's API."}
  ]
}`

func TestParseManifestValid(t *testing.T) {
	m, probs := ParseManifest([]byte(validManifest))
	if len(probs) > 0 {
		t.Fatalf("got problems %v, want none", probs)
	}
	if m.Name != "Hide promoted posts" || m.API != 1 || len(m.Matches) != 1 || len(m.ExcludeMatches) != 1 {
		t.Errorf("got %+v", m)
	}
	want := []Permission{
		{Name: "storage", Reason: "Remembers which posts you un-hid."},
		{Name: "fetch:api.example.com", Reason: "Reads prices from the site's API."},
	}
	if len(m.Permissions) != len(want) {
		t.Fatalf("got permissions %+v, want %+v", m.Permissions, want)
	}
	for i := range want {
		if m.Permissions[i] != want[i] {
			t.Errorf("permission %d: got %+v, want %+v", i, m.Permissions[i], want[i])
		}
	}
}

func TestParseManifestProblems(t *testing.T) {
	tests := []struct {
		name      string
		json      string
		field     string // the Field of some problem, or "" to skip
		msg       string // a part of that problem's Message
		line, col int    // position, when the problem has one
	}{
		{"not json", `{"name": }`, "", "invalid JSON", 1, 10},
		{"trailing data", `{"name":"x","api":1,"matches":["<all_urls>"]} {}`, "", "data after the end", 1, 47},
		{"duplicate key", "{\"name\":\"x\",\n \"name\":\"y\"}", "", `key "name" appears twice`, 2, 2},
		{"duplicate nested key", `{"permissions":[{"name":"storage","name":"menu"}]}`, "", `key "name" appears twice`, 1, 35},
		{"comment", "{\"name\":\"x\" // hi\n}", "", "invalid JSON", 0, 0},
		{"array", `[]`, "", "must be a JSON object", 0, 0},
		{"unclosed", "{\"name\": \"x\",\n", "", "unexpected end", 2, 1},
		{"empty", ``, "", "empty", 0, 0},
		{"unknown field", `{"name":"x","api":1,"matches":["<all_urls>"],"runAt":"document_start"}`, "runAt", "unknown field", 0, 0},
		{"unknown run time", `{"name":"x","api":1,"matches":["<all_urls>"],"run_at":"start"}`, "run_at", `"start" is not a run time (allowed: document_start, document_end, document_idle)`, 0, 0},
		{"run time in another case", `{"name":"x","api":1,"matches":["<all_urls>"],"run_at":"Document_End"}`, "run_at", "is not a run time", 0, 0},
		{"run time not a string", `{"name":"x","api":1,"matches":["<all_urls>"],"run_at":1}`, "run_at", "must be a string: document_start, document_end, document_idle", 0, 0},
		{"run time null", `{"name":"x","api":1,"matches":["<all_urls>"],"run_at":null}`, "run_at", "is not a run time", 0, 0},
		{"missing name", `{"api":1,"matches":["<all_urls>"]}`, "name", "missing", 0, 0},
		{"empty name", `{"name":"  ","api":1,"matches":["<all_urls>"]}`, "name", "1 to 80", 0, 0},
		{"long name", `{"name":"` + strings.Repeat("x", 81) + `","api":1,"matches":["<all_urls>"]}`, "name", "1 to 80", 0, 0},
		{"name with newline", `{"name":"a\nb","api":1,"matches":["<all_urls>"]}`, "name", "control character", 0, 0},
		{"name not string", `{"name":3,"api":1,"matches":["<all_urls>"]}`, "name", "must be a string", 0, 0},
		{"missing api", `{"name":"x","matches":["<all_urls>"]}`, "api", "missing", 0, 0},
		{"unsupported api", `{"name":"x","api":2,"matches":["<all_urls>"]}`, "api", "version 2 is not supported", 0, 0},
		{"fractional api", `{"name":"x","api":1.5,"matches":["<all_urls>"]}`, "api", "integer", 0, 0},
		{"missing matches", `{"name":"x","api":1}`, "matches", "missing", 0, 0},
		{"empty matches", `{"name":"x","api":1,"matches":[]}`, "matches", "empty", 0, 0},
		{"bad match", `{"name":"x","api":1,"matches":["https://www.google.com"]}`, "matches[0]", "missing path", 0, 0},
		{"duplicate match", `{"name":"x","api":1,"matches":["<all_urls>","<all_urls>"]}`, "matches[1]", "listed twice", 0, 0},
		{"bad exclude", `{"name":"x","api":1,"matches":["<all_urls>"],"exclude_matches":["ftp://x/*"]}`, "exclude_matches[0]", "scheme", 0, 0},
		{"unknown permission", `{"name":"x","api":1,"matches":["<all_urls>"],"permissions":[{"name":"tabs","reason":"r"}]}`, "permissions[0].name", "unknown permission", 0, 0},
		{"all hosts", `{"name":"x","api":1,"matches":["<all_urls>"],"permissions":[{"name":"fetch:*","reason":"r"}]}`, "permissions[0].name", "wildcards", 0, 0},
		{"missing reason", `{"name":"x","api":1,"matches":["<all_urls>"],"permissions":[{"name":"menu","reason":"r"},{"name":"storage"}]}`, "permissions[1].reason", "missing", 0, 0},
		{"blank reason", `{"name":"x","api":1,"matches":["<all_urls>"],"permissions":[{"name":"storage","reason":" "}]}`, "permissions[0].reason", "missing", 0, 0},
		{"long reason", `{"name":"x","api":1,"matches":["<all_urls>"],"permissions":[{"name":"storage","reason":"` + strings.Repeat("r", 301) + `"}]}`, "permissions[0].reason", "longer than 300", 0, 0},
		{"duplicate permission", `{"name":"x","api":1,"matches":["<all_urls>"],"permissions":[{"name":"menu","reason":"r"},{"name":"menu","reason":"r"}]}`, "permissions[1].name", "listed twice", 0, 0},
		{"permission extra field", `{"name":"x","api":1,"matches":["<all_urls>"],"permissions":[{"name":"menu","reason":"r","grant":true}]}`, "permissions", "must be a list", 0, 0},
		{"permission not object", `{"name":"x","api":1,"matches":["<all_urls>"],"permissions":["menu"]}`, "permissions", "must be a list", 0, 0},
		{"invalid utf-8", "{\"name\":\"\xff\"}", "", "UTF-8", 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, probs := ParseManifest([]byte(tt.json))
			if m != nil {
				t.Errorf("got a manifest %+v, want nil", m)
			}
			for _, p := range probs {
				if p.Field == tt.field && strings.Contains(p.Message, tt.msg) {
					if tt.line != 0 && (p.Line != tt.line || p.Column != tt.col) {
						t.Errorf("got %d:%d, want %d:%d (%v)", p.Line, p.Column, tt.line, tt.col, p)
					}
					if p.File != ManifestFile {
						t.Errorf("got file %q, want %q", p.File, ManifestFile)
					}
					return
				}
			}
			t.Errorf("got %v, want a problem on %q containing %q", probs, tt.field, tt.msg)
		})
	}
}

// TestParseManifestRunAt: run_at takes the three run times; absent (every manifest written
// before the field existed) it is document_end.
func TestParseManifestRunAt(t *testing.T) {
	tests := []struct {
		name  string
		field string // the run_at member, or "" for none
		want  RunAt
	}{
		{"absent", ``, RunDocumentEnd},
		{"document_start", `,"run_at":"document_start"`, RunDocumentStart},
		{"document_end", `,"run_at":"document_end"`, RunDocumentEnd},
		{"document_idle", `,"run_at":"document_idle"`, RunDocumentIdle},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, probs := ParseManifest([]byte(`{"name":"x","api":1,"matches":["<all_urls>"]` + tt.field + `}`))
			if len(probs) > 0 {
				t.Fatalf("got problems %v, want none", probs)
			}
			if m.RunAt != tt.want {
				t.Errorf("got run_at %q, want %q", m.RunAt, tt.want)
			}
		})
	}
	if m, _ := ParseManifest([]byte(validManifest)); m == nil || m.RunAt != RunDocumentEnd {
		t.Errorf("a manifest without run_at: got %+v, want run_at %q", m, RunDocumentEnd)
	}
}

func TestProblemError(t *testing.T) {
	tests := []struct {
		p    Problem
		want string
	}{
		{Problem{File: "manifest.json", Field: "permissions[2].reason", Message: "missing", Fix: `say in one sentence why the remixlet needs "storage"`},
			`manifest.json: permissions[2].reason: missing — say in one sentence why the remixlet needs "storage"`},
		{Problem{File: "script.js", Line: 3, Column: 7, Message: "eval is not available"}, "script.js:3:7: eval is not available"},
		{Problem{File: "foo.txt", Message: "is not a remixlet file"}, "foo.txt: is not a remixlet file"},
	}
	for _, tt := range tests {
		if got := tt.p.Error(); got != tt.want {
			t.Errorf("got %q, want %q", got, tt.want)
		}
	}
}

func FuzzParseManifest(f *testing.F) {
	f.Add([]byte(validManifest))
	f.Add([]byte(`{"name":"x","api":1,"matches":["<all_urls>"],"permissions":[{"name":"fetch:a.test","reason":"r"}]}`))
	f.Add([]byte(`{"a":{"b":[1,{"c":2,"c":3}]}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, probs := ParseManifest(b)
		if (m == nil) != (len(probs) > 0) {
			t.Fatalf("got manifest %v with problems %v", m, probs)
		}
		if m == nil {
			return
		}
		for _, p := range m.Permissions {
			if PermissionText(p.Name) == "" || strings.TrimSpace(p.Reason) == "" {
				t.Fatalf("accepted permission %+v without text or reason", p)
			}
		}
		if len(m.Matches) == 0 || !apiSupported(m.API) {
			t.Fatalf("accepted %+v", m)
		}
	})
}
