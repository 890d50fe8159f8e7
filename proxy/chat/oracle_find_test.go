package chat

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestFindOver(t *testing.T) {
	const secret = "AIzaSyQz9SECRETbodyXXXXXXXXXXXXXXXXXXXX"
	lines := func(s string) []string { return strings.Split(s, "\n") }
	many := func(n int, line string) string { return strings.TrimSuffix(strings.Repeat(line+"\n", n), "\n") }
	for _, tc := range []struct {
		name, want string
		limit      int
		outline    string
		cut        bool
		matches    int
		answer     string
		truncated  bool
	}{
		{"a match only in the secret", "qz9", 20,
			"main [e1]\n \"key: " + secret + "\"", false,
			0, `(no line of the outline contains "qz9")`, false},
		{"a prefix guess", "aizasyq", 20,
			"main [e1]\n link \"maps\" -> /maps?key=" + secret + " [e2]", false,
			0, `(no line of the outline contains "aizasyq")`, false},
		{"text outside the secret stays", "key", 20,
			"main [e1]\n \"key: " + secret + "\"", false,
			1, "main [e1]\n \"key: " + secret + "\"", false},
		{"dropped and kept among others", "qz9", 20,
			"main [e1]\n \"a " + secret + "\"\n \"Qz9 shown\"", false,
			1, "main [e1]\n …\n \"Qz9 shown\"", false}, // the gap: the wrong guess's answer has it too
		{"the model's limit is filled past a dropped match", "x", 1,
			"main [e1]\n \"x " + secret + "\"\n \"x one\"\n \"x two\"", false,
			3, "main [e1]\n \"x " + secret + "\"\n… (2 more matches; raise limit or search for more words)", true},
		{"the limit counts only what remains", "qz9", 1,
			"main [e1]\n \"" + secret + "\"\n \"qz9 one\"\n \"qz9 two\"", false,
			2, "main [e1]\n …\n \"qz9 one\"\n… (1 more matches; raise limit or search for more words)", true},
		{"a gap is kept where lines were left out", "zz", 20,
			"main [e1]\n \"zz a\"\n \"other\"\n \"zz b\"", false,
			2, "main [e1]\n \"zz a\"\n …\n \"zz b\"", false},
		{"the outline's truncation stays", "zz", 20,
			"main [e1]\n \"zz a\"", true,
			1, "main [e1]\n \"zz a\"", true},
		{"heads and the outline's own ellipsis lines are no matches", "page", 20,
			"# page\nmain [e1]\n… (outline cut: page)", true,
			0, `(no line of the outline contains "page")`, true},
		// The limits: whatever stands past the page agent's 100, the count is of what the
		// model may see, and a secret that matches adds nothing.
		{"past a hundred, a secret adds nothing", "zz", 100,
			"main [e1]\n \"zz " + secret + "\"\n" + many(100, " \"zz\""), false,
			101, "main [e1]\n \"zz " + secret + "\"\n" + many(99, " \"zz\"") + "\n… (1 more matches; raise limit or search for more words)", true},
		{"a hundred decoys and the secret", "qz9", 20,
			"main [e1]\n \"" + secret + "\"\n" + many(100, " \"qz9\""), false,
			100, "main [e1]\n …\n" + many(20, " \"qz9\"") + "\n… (80 more matches; raise limit or search for more words)", true},
		{"a hundred decoys without the secret", "qz8", 20,
			"main [e1]\n \"" + secret + "\"\n" + many(100, " \"qz8\""), false,
			100, "main [e1]\n …\n" + many(20, " \"qz8\"") + "\n… (80 more matches; raise limit or search for more words)", true},
		{"many secrets before the decoys", "qz9", 20,
			many(150, "\""+secret+"\"") + "\n\"qz9\"", false,
			1, "\"qz9\"", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var shown []string
			for _, l := range lines(tc.outline) {
				shown = append(shown, fakeRed(l))
			}
			out, err := findOver(shown, tc.want, tc.limit, tc.cut)
			if err != nil {
				t.Fatal(err)
			}
			var got struct {
				Matches   int    `json:"matches"`
				Outline   string `json:"outline"`
				Truncated bool   `json:"truncated"`
			}
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatal(err)
			}
			// The lines go out as shown (redacted).
			if want := fakeRed(tc.answer); got.Matches != tc.matches || got.Outline != want || got.Truncated != tc.truncated {
				t.Errorf("got matches=%d truncated=%v outline:\n%s\nwant matches=%d truncated=%v outline:\n%s", got.Matches, got.Truncated, got.Outline, tc.matches, tc.truncated, want)
			}
		})
	}
}

func TestFindArgs(t *testing.T) {
	for _, tc := range []struct {
		args, want string
		limit      int
		ok         bool
	}{
		{`{"text":"  Save\u00a0 Now "}`, "save now", 20, true},
		{`{"text":"x","limit":5}`, "x", 5, true},
		{`{"text":"x","limit":101}`, "", 0, false},
		{`{"text":"  "}`, "", 20, false},
		{`{"limit":3}`, "", 0, false},
	} {
		want, limit, ok := findArgs(json.RawMessage(tc.args))
		if ok != tc.ok || ok && (want != tc.want || limit != tc.limit) {
			t.Errorf("findArgs(%s) = %q, %d, %v", tc.args, want, limit, ok)
		}
	}
}
