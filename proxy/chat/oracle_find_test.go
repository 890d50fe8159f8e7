package chat

import (
	"encoding/json"
	"testing"
)

func TestFilterFind(t *testing.T) {
	const secret = "AIzaSyQz9SECRETbodyXXXXXXXXXXXXXXXXXXXX"
	page := func(matches int, outline string, truncated bool) json.RawMessage {
		b, _ := json.Marshal(map[string]any{"matches": matches, "outline": outline, "truncated": truncated})
		return b
	}
	for _, tc := range []struct {
		name, want string
		limit      int
		in         json.RawMessage
		matches    int
		outline    string
		truncated  bool
	}{
		{"a match only in the secret", "qz9", 20,
			page(1, "main [e1]\n \"key: "+secret+"\"", false),
			0, `(no line of the outline contains "qz9")`, false},
		{"a prefix guess", "aizasyq", 20,
			page(1, "main [e1]\n link \"maps\" -> /maps?key="+secret+" [e2]", false),
			0, `(no line of the outline contains "aizasyq")`, false},
		{"text outside the secret stays", "key", 20,
			page(1, "main [e1]\n \"key: "+secret+"\"", false),
			1, "main [e1]\n \"key: " + secret + "\"", false},
		{"dropped and kept among others", "qz9", 20,
			page(2, "main [e1]\n \"a "+secret+"\"\n …\n \"Qz9 shown\"", false),
			1, "main [e1]\n …\n \"Qz9 shown\"", false}, // the gap: the wrong guess's answer has it too
		{"the model's limit is filled past a dropped match", "x", 1,
			page(3, "main [e1]\n \"x "+secret+"\"\n \"x one\"\n \"x two\"", false),
			3, "main [e1]\n \"x " + secret + "\"\n… (2 more matches; raise limit or search for more words)", true},
		{"the limit counts only what remains", "qz9", 1,
			page(3, "main [e1]\n \""+secret+"\"\n \"qz9 one\"\n \"qz9 two\"", false),
			2, "main [e1]\n …\n \"qz9 one\"\n… (1 more matches; raise limit or search for more words)", true},
		{"a gap is kept where lines were left out", "zz", 20,
			page(2, "main [e1]\n \"zz a\"\n …\n \"zz b\"", false),
			2, "main [e1]\n \"zz a\"\n …\n \"zz b\"", false},
		{"the page's own cut tells no count", "zz", 20,
			page(101, "main [e1]\n \"zz a\"\n… (1 more matches; raise limit or search for more words)", true),
			1, "main [e1]\n \"zz a\"\n… (more matches; search for more words)", true},
		{"the outline's truncation stays", "zz", 20,
			page(1, "main [e1]\n \"zz a\"", true),
			1, "main [e1]\n \"zz a\"", true},
		// The page agent says which lines matched: an ancestor that Go's lowercasing would take
		// for a match (İ → i here, i̇ in JavaScript) is not one, and goes with its dropped child.
		{"the page agent's hits, not a lowercasing here", "iz", 20,
			json.RawMessage(`{"matches":1,"outline":"section \"İzone\" [e1]\n \"` + secret + `\"","truncated":false,"hits":[1]}`),
			0, `(no line of the outline contains "iz")`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := filterFind(fakeRed, tc.want, tc.limit, tc.in)
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
			if got.Matches != tc.matches || got.Outline != tc.outline || got.Truncated != tc.truncated {
				t.Errorf("got matches=%d truncated=%v outline:\n%s\nwant matches=%d truncated=%v outline:\n%s", got.Matches, got.Truncated, got.Outline, tc.matches, tc.truncated, tc.outline)
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
