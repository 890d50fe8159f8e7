package panel

import (
	"fmt"
	"strings"
	"testing"
)

// diffText writes diffs as "file +A -R\n" then one "OP TEXT" line each, and "cut N".
func diffText(ds []CodeDiff) string {
	var b strings.Builder
	for _, d := range ds {
		fmt.Fprintf(&b, "%s +%d -%d\n", d.File, d.Added, d.Removed)
		for _, l := range d.Lines {
			b.WriteString(l.Op + l.Text + "\n")
		}
		if d.Cut > 0 {
			fmt.Fprintf(&b, "cut %d\n", d.Cut)
		}
	}
	return b.String()
}

func TestCardDiffs(t *testing.T) {
	files := []string{"script.js", "style.css", "rules.json"}
	var long []string
	for i := range 20 {
		long = append(long, fmt.Sprintf("line %d", i))
	}
	longer := append(append(append([]string(nil), long[:10]...), "inserted"), long[10:]...)
	tests := []struct {
		name      string
		old, next map[string][]byte
		want      string
	}{
		{"new remixlet", nil, map[string][]byte{"script.js": []byte("a()\nb()\n"), "manifest.json": []byte("{}")},
			"script.js +2 -0\n+a()\n+b()\n"},
		{"unchanged files are left out", map[string][]byte{"script.js": []byte("a()"), "style.css": []byte("p{}")},
			map[string][]byte{"script.js": []byte("a()\n"), "style.css": []byte("a{}")},
			"style.css +1 -1\n-p{}\n+a{}\n"},
		{"a change in the middle keeps two lines of context", map[string][]byte{"script.js": []byte(strings.Join(long, "\n"))},
			map[string][]byte{"script.js": []byte(strings.Join(longer, "\n"))},
			"script.js +1 -0\n~8 unchanged lines\n line 8\n line 9\n+inserted\n line 10\n line 11\n~8 unchanged lines\n"},
		{"removed file", map[string][]byte{"rules.json": []byte("[]")}, map[string][]byte{},
			"rules.json +0 -1\n-[]\n"},
		{"hidden characters are shown", nil, map[string][]byte{"script.js": []byte("ok = 1; // \u202e}\u2066 evil()\x1b")},
			"script.js +1 -0\n+ok = 1; // <U+202E>}<U+2066> evil()<U+001B>\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := diffText(CardDiffs(tt.old, tt.next, files)); got != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

// TestCardDiffsBounds: a huge change is cut at MaxCardDiffLines over all files and says how
// many changed lines were left out; long lines are cut too.
func TestCardDiffsBounds(t *testing.T) {
	var a, b []string
	for i := range 1000 {
		a = append(a, fmt.Sprintf("old %d", i))
		b = append(b, fmt.Sprintf("new %d", i))
	}
	ds := CardDiffs(map[string][]byte{"script.js": []byte(strings.Join(a, "\n")), "style.css": []byte("p{}")},
		map[string][]byte{"script.js": []byte(strings.Join(b, "\n")), "style.css": []byte(strings.Repeat("x", 5000))},
		[]string{"script.js", "style.css"})
	if len(ds) != 2 {
		t.Fatalf("got %d diffs, want 2", len(ds))
	}
	shown := len(ds[0].Lines) + len(ds[1].Lines)
	if shown != MaxCardDiffLines {
		t.Errorf("got %d lines shown, want %d", shown, MaxCardDiffLines)
	}
	if ds[0].Added != 1000 || ds[0].Removed != 1000 || ds[0].Cut != 2000-MaxCardDiffLines {
		t.Errorf("got script.js +%d -%d cut %d, want +1000 -1000 cut %d", ds[0].Added, ds[0].Removed, ds[0].Cut, 2000-MaxCardDiffLines)
	}
	if ds[1].Cut != 2 || len(ds[1].Lines) != 0 {
		t.Errorf("got style.css cut %d with %d lines, want cut 2 with none", ds[1].Cut, len(ds[1].Lines))
	}
	long := CardDiffs(nil, map[string][]byte{"style.css": []byte(strings.Repeat("y", 5000) + "\na{}")}, []string{"style.css"})
	want := strings.Repeat("y", MaxCardDiffLineChars) + fmt.Sprintf("\u2026 [%d more characters of this line are not shown]", 5000-MaxCardDiffLineChars)
	if got := long[0].Lines[0].Text; got != want {
		t.Errorf("got a long line shown as %q, want %q", got, want)
	}
	if long[0].Cut != 1 || len(long[0].Lines) != 2 {
		t.Errorf("got %d lines with cut %d, want 2 lines with the long one counted as cut", len(long[0].Lines), long[0].Cut)
	}
}

// TestCardDiffsShowWhatRuns (red-team pass 5b): a card shows each line the sandbox reads as a
// line of its own — a lone CR, U+2028 and U+2029 end a "//" comment in JavaScript, so code after
// one was shown as part of the comment — and padding cannot push code past the line bound.
func TestCardDiffsShowWhatRuns(t *testing.T) {
	call := "rmx.fetch('https://api.example.com/x', {method: 'POST'});"
	tests := []struct{ name, script, want string }{
		{"CR", "// tax\r" + call, "+// tax\n+" + call + "\n"},
		{"CR LF", "// tax\r\n" + call + "\r\n", "+// tax\n+" + call + "\n"},
		{"line separator", "// tax\u2028" + call, "+// tax\n+" + call + "\n"},
		{"paragraph separator", "// tax\u2029" + call, "+// tax\n+" + call + "\n"},
		{"padding", "ok();" + strings.Repeat(" ", 5000) + call, "+ok();<5000 spaces and tabs>" + call + "\n"},
		{"tabs and spaces", "ok();" + strings.Repeat("\t ", 40) + call, "+ok();<80 spaces and tabs>" + call + "\n"},
		{"indentation stays", "\t\t    ok();", "+\t\t    ok();\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := diffText(CardDiffs(nil, map[string][]byte{"script.js": []byte(tt.script)}, []string{"script.js"}))
			_, got, _ = strings.Cut(got, "\n") // the file's line
			if got != tt.want {
				t.Errorf("got\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}
