package panel

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestLineDiff(t *testing.T) {
	tests := []struct {
		name, a, b string
		want       string // one line per DiffLine: op then text
	}{
		{"same", "a\nb\n", "a\nb\n", " a\n b\n"},
		{"added to empty", "", "x\ny\n", "+x\n+y\n"},
		{"removed all", "x\n", "", "-x\n"},
		{"changed middle", "a\nb\nc\n", "a\nB\nc\n", " a\n-b\n+B\n c\n"},
		{"insert", "a\nc\n", "a\nb\nc\n", " a\n+b\n c\n"},
		{"lcs keeps common lines", "x\na\ny\nb\n", "a\nz\nb\n", "-x\n a\n-y\n+z\n b\n"},
		{"no final newline", "a\nb", "a\nc", " a\n-b\n+c\n"},
		{"every JavaScript line terminator", "a\r\nb\rc\u2028d\u2029e\n", "a\nb\nc\nd\ne", " a\n b\n c\n d\n e\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			for _, l := range LineDiff(tt.a, tt.b) {
				b.WriteByte(l.Op)
				b.WriteString(l.Text)
				b.WriteByte('\n')
			}
			if got := b.String(); got != tt.want {
				t.Errorf("LineDiff(%q, %q):\ngot:\n%s\nwant:\n%s", tt.a, tt.b, got, tt.want)
			}
		})
	}
}

func TestLineDiffLargeFallsBack(t *testing.T) {
	var a, b strings.Builder
	for i := range 3000 {
		a.WriteString("a" + strings.Repeat("x", i%7) + "\n")
		b.WriteString("b" + strings.Repeat("y", i%5) + "\n")
	}
	d := LineDiff(a.String(), b.String())
	if len(d) != 6000 || d[0].Op != '-' || d[5999].Op != '+' {
		t.Errorf("large diff: %d lines, first %c last %c; want 6000, all removed then all added", len(d), d[0].Op, d[len(d)-1].Op)
	}
}

// TestManagerPagesEscape renders every manager page with hostile text in each field a remixlet
// author or a site controls, and checks it comes out escaped, never as markup.
func TestManagerPagesEscape(t *testing.T) {
	const evil = `<script>alert(1)</script>"'><img src=x>`
	base := ManagerBase{Token: "tok", Flash: evil}
	row := ManagerRow{ID: "rx_1", Name: evil, State: "on", Sites: evil, ActiveVersion: 1,
		Permissions: []PermissionView{{Name: evil, Text: "Keep its own data in the proxy"}},
		Errors:      []LogLine{{Time: time.Unix(0, 0), Level: evil, Message: evil}}}
	pages := map[string]func(*bytes.Buffer) error{
		"list": func(b *bytes.Buffer) error {
			return RenderManagerList(b, ManagerList{ManagerBase: base, Remixlets: []ManagerRow{row}, Paused: []string{evil}})
		},
		"remixlet": func(b *bytes.Buffer) error {
			return RenderManagerRemixlet(b, ManagerRemixlet{ManagerBase: base, ManagerRow: row,
				Files: []FileView{{Name: "script.js", Content: evil}}, Log: row.Errors})
		},
		"history": func(b *bytes.Buffer) error {
			return RenderManagerHistory(b, ManagerHistory{ManagerBase: base, ID: "rx_1", Name: evil, Versions: []VersionView{{
				ID: 1, Number: 1, Author: evil, Note: evil, Files: []FileView{{Name: "script.js", Content: evil}},
				Diffs: []FileDiff{{Name: "script.js", Lines: LineDiff("", evil)}}}}})
		},
		"restore": func(b *bytes.Buffer) error {
			return RenderManagerRestore(b, ManagerRestore{ManagerBase: base, ID: "rx_1", Name: evil, VersionID: 1, Number: 1,
				Sites: evil, Permissions: []PermissionReason{{Name: "storage", Text: "t", Reason: evil}}})
		},
		"log": func(b *bytes.Buffer) error {
			return RenderManagerLog(b, ManagerLog{ManagerBase: base, ID: "rx_1", Name: evil, Entries: row.Errors})
		},
		"delete": func(b *bytes.Buffer) error {
			return RenderManagerDelete(b, ManagerDelete{ManagerBase: base, ID: "rx_1", Name: evil})
		},
		"edit": func(b *bytes.Buffer) error {
			return RenderManagerEdit(b, ManagerEdit{ManagerBase: base, ID: "rx_1", Name: evil, Manifest: evil + "</textarea>",
				Script: evil, Style: evil, Note: evil, Problems: []ProblemView{{Where: evil, Message: evil, Fix: evil}}})
		},
		"approval": func(b *bytes.Buffer) error {
			return RenderManagerApproval(b, ManagerApproval{ManagerBase: base, ApprovalID: "ap_1", RemixletID: "rx_1", Name: evil,
				Number: 1, Sites: evil, Changes: []string{evil}, Permissions: row.Permissions, State: "pending"})
		},
		"data": func(b *bytes.Buffer) error {
			return RenderManagerData(b, ManagerData{ManagerBase: base, DataDir: evil, Remixlets: []DataRow{{ID: "rx_1", Name: evil}}})
		},
		"message": func(b *bytes.Buffer) error {
			return RenderManagerMessage(b, ManagerMessage{ManagerBase: base, Title: evil, Message: evil, Back: "/manager"})
		},
	}
	for name, render := range pages {
		t.Run(name, func(t *testing.T) {
			var b bytes.Buffer
			if err := render(&b); err != nil {
				t.Fatal(err)
			}
			out := b.String()
			for _, bad := range []string{"<script>", "<img", "</textarea><"} {
				if strings.Contains(out, bad) {
					t.Errorf("the page contains %q unescaped:\n%s", bad, out)
				}
			}
			if !strings.Contains(out, "&lt;script&gt;") {
				t.Errorf("the hostile text is not shown escaped:\n%s", out)
			}
			if !strings.Contains(out, `name="csrf" value="tok"`) && name != "log" && name != "history" && name != "message" {
				t.Errorf("the page has no form token field")
			}
		})
	}
}
