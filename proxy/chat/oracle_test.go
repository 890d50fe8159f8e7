package chat

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// fakeRed redacts the test's one secret, as the page redaction would.
func fakeRed(s string) string {
	return strings.ReplaceAll(s, "AIzaSyQz9SECRETbodyXXXXXXXXXXXXXXXXXXXX", "[redacted: key]")
}

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

func TestValueMatchers(t *testing.T) {
	for _, tc := range []struct {
		sel  string
		want []string
	}{
		{`a[href^="/maps?key=AIzaSy"]`, []string{"href"}},
		{`[data-testid*='x]y'] , div[title]`, []string{"data-testid"}},
		{`[ Href $= x ]`, []string{"href"}},
		{`[lang|=en]`, []string{"lang"}},
		{`[svg|href~=a]`, []string{"href"}},
		{`[*|title=a]`, []string{"title"}},
		{`[hr\65f^=a]`, []string{"*"}},
		{`div:has(a[href*=Qz9]) > span`, []string{"href"}},
		{`a.b#c`, nil},
		{`[disabled]`, nil},
		{`[title="a[b=c]"]`, []string{"title"}},
		{`[href/**/*=x]`, []string{"*"}}, // a comment: any attribute
		{`svg [viewBox*=x]`, []string{"viewbox"}},
	} {
		var got []string
		for _, m := range valueMatchers(tc.sel) {
			got = append(got, m.name)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("valueMatchers(%q) = %q, want %q", tc.sel, got, tc.want)
		}
	}
}

func TestAttrMatcherMatch(t *testing.T) {
	for _, tc := range []struct {
		sel, value string
		want       bool
	}{
		{`[href^="/maps"]`, "/maps?key=[redacted: key]", true},
		{`[href^="/maps?key=AIza"]`, "/maps?key=[redacted: key]", false},
		{`[href*=Qz9]`, "/maps?key=[redacted: key]", false},
		{`[href$='key]']`, "/maps?key=[redacted: key]", true},
		{`[class~=big]`, "a big b", true},
		{`[class~=bi]`, "a big b", false},
		{`[lang|=en]`, "en-GB", true},
		{`[title=ABC i]`, "abc", true},
		{`[title=ABC]`, "abc", false},
		{`[title="a\\62 c"]`, "abc", false}, // an escape: not read, holds for nothing
		{`[title*=""]`, "abc", false},
	} {
		ms := valueMatchers(tc.sel)
		if len(ms) != 1 {
			t.Fatalf("valueMatchers(%q) = %v", tc.sel, ms)
		}
		if got := ms[0].match(tc.value); got != tc.want {
			t.Errorf("%s on %q = %v, want %v", tc.sel, tc.value, got, tc.want)
		}
	}
}

func TestFilterQuery(t *testing.T) {
	const secret = "AIzaSyQz9SECRETbodyXXXXXXXXXXXXXXXXXXXX"
	in, _ := json.Marshal(map[string]any{"total": 3, "matches": []any{
		map[string]any{"ref": "e1", "attrs": map[string]string{"href": "/maps?key=" + secret}},
		map[string]any{"ref": "e2", "attrs": map[string]string{"href": "/maps?q=1", "title": secret}},
		map[string]any{"ref": "e3", "attrs": map[string]string{"href": "/maps?q=2"}},
	}})
	for _, tc := range []struct {
		sel   string
		limit int
		refs  []string
		total int
	}{
		{`a[href*=Qz9]`, 20, []string{"e2", "e3"}, 2},
		{`a[href*=Qz9]`, 1, []string{"e2"}, 2},
		{`a[href^="/maps"]`, 20, []string{"e1", "e2", "e3"}, 3}, // holds for the redacted value too
		{`[hr\65f*=Qz9]`, 20, []string{"e3"}, 1},
		{`[id=x]`, 20, []string{"e1", "e2", "e3"}, 3},
	} {
		out, err := filterQuery(fakeRed, valueMatchers(tc.sel), tc.limit, in)
		if err != nil {
			t.Fatal(err)
		}
		var got struct {
			Total   int `json:"total"`
			Matches []struct {
				Ref string `json:"ref"`
			} `json:"matches"`
		}
		json.Unmarshal(out, &got)
		var refs []string
		for _, m := range got.Matches {
			refs = append(refs, m.Ref)
		}
		if got.Total != tc.total || !slices.Equal(refs, tc.refs) {
			t.Errorf("%s limit %d: total %d refs %v, want %d %v", tc.sel, tc.limit, got.Total, refs, tc.total, tc.refs)
		}
	}
}

func TestMatcherSubject(t *testing.T) {
	for _, tc := range []struct {
		sel  string
		want []bool
	}{
		{`a[href*=x]`, []bool{true}},
		{`a[href*=x], p[title=y] span`, []bool{true, false}},
		{`p:has(+ a[href*=x])`, []bool{false}},
		{`[data-k=x] > span`, []bool{false}},
		{`[data-k=x] ~ span`, []bool{false}},
		{`div [title=x]`, []bool{true}},
		{`[title=x]  ,  b`, []bool{true}},
		{`a:not([href*=x])`, []bool{false}},
		{`[title="a b"] :is(b)`, []bool{false}},
	} {
		var got []bool
		for _, m := range valueMatchers(tc.sel) {
			got = append(got, m.subject)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("valueMatchers(%q) subjects %v, want %v", tc.sel, got, tc.want)
		}
	}
}

func TestPickCandidate(t *testing.T) {
	const secret = "AIzaSyQz9SECRETbodyXXXXXXXXXXXXXXXXXXXX"
	c := func(ref, shown string) clickCandidate {
		return clickCandidate{Ref: ref, Name: normalText(shown), Shown: shown, Describe: `button "` + shown + `"`}
	}
	for _, tc := range []struct {
		text  string
		cands []clickCandidate
		ref   string
		err   string
	}{
		{"qz9", []clickCandidate{c("e1", "Copy "+secret)}, "", `no visible clickable element is named "qz9"`},
		{"Copy AIzaSyQ", []clickCandidate{c("e1", "Copy "+secret)}, "", "no visible clickable element"},
		{"copy", []clickCandidate{c("e1", "Copy "+secret)}, "e1", ""},
		{"Save", []clickCandidate{c("e1", "Save"), c("e2", "Save all")}, "e1", ""},
		{"sav", []clickCandidate{c("e1", "Save"), c("e2", "Save all")}, "", "2 elements have"},
		// One of two holds the text only in the secret: the other is the one.
		{"qz9", []clickCandidate{c("e1", "Copy "+secret), c("e2", "Qz9 report")}, "e2", ""},
	} {
		ref, err := pickCandidate(fakeRed, normalText(tc.text), tc.text, "", tc.cands)
		if ref != tc.ref || (err == nil) != (tc.err == "") || err != nil && !strings.Contains(err.Error(), tc.err) {
			t.Errorf("pickCandidate(%q) = %q, %v; want %q, %q", tc.text, ref, err, tc.ref, tc.err)
		}
	}
}

func TestHasShownText(t *testing.T) {
	if hasShownText("Recovery\n  Hint", "recovery hint", false) {
		t.Error("a page text over the page agent's length was collapsed")
	}
	for _, tc := range []struct {
		shown, want string
		ok          bool
	}{
		{"Maps key: [redacted: key]", "maps key", true},
		{"Maps key: [redacted: key]", "qz9", false},
		{"Recovery\n  Hint", "recovery hint", true},
		{"a\u00a0b", "a b", true},
	} {
		if got := hasShownText(tc.shown, tc.want, true); got != tc.ok {
			t.Errorf("hasShownText(%q, %q) = %v", tc.shown, tc.want, got)
		}
	}
}

func TestShownName(t *testing.T) {
	const secret = "AIzaSyQz9SECRETbodyXXXXXXXXXXXXXXXXXXXX"
	for _, tc := range []struct{ in, want string }{
		{`{"clicked":"b","name":"copy ` + strings.ToLower(secret) + `","shownName":"Copy ` + secret + `"}`, `{"clicked":"b","name":"copy [redacted: key]"}`},
		{`{"clicked":"b","name":"save"}`, `{"clicked":"b"}`},
		{`{"probe":null}`, `{"probe":null}`},
	} {
		if got := string(shownName(fakeRed, json.RawMessage(tc.in))); got != tc.want {
			t.Errorf("shownName(%s) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

func TestPickOption(t *testing.T) {
	const secret = "AIzaSyQz9SECRETbodyXXXXXXXXXXXXXXXXXXXX"
	opts := []selectOption{{Text: "Production " + secret, Value: "prod"}, {Text: "Staging", Value: "stage"}, {Text: "Qz9 test", Value: "t"}}
	for _, tc := range []struct {
		option string
		pick   int
		err    string
	}{
		{"staging", 1, ""},
		{"prod", 0, ""},       // by its value, whole
		{"production", 0, ""}, // outside the secret
		{"SyQz9S", -1, `has no option "SyQz9S"`},
		{"qz9", 2, ""}, // the other option holds it only in the secret
		{"Production AIzaSyQ", -1, "Its options: \"Production [redacted: key]\""},
	} {
		pick, err := pickOption(fakeRed, tc.option, `combobox "Env" [e1]`, opts)
		if pick != tc.pick || (err == nil) != (tc.err == "") || err != nil && !strings.Contains(err.Error(), tc.err) {
			t.Errorf("pickOption(%q) = %d, %v; want %d, %q", tc.option, pick, err, tc.pick, tc.err)
		}
	}
}

func TestWholeArg(t *testing.T) {
	for _, tc := range []struct {
		raw  string
		want int
		ok   bool
	}{
		{`20`, 20, true}, {`20.0`, 20, true}, {`null`, 7, true}, {`2e1`, 20, true},
		{`20.5`, 0, false}, {`"20"`, 0, false}, {`0`, 0, false}, {`101`, 0, false}, {`true`, 0, false},
	} {
		got, ok := wholeArg(json.RawMessage(tc.raw), 7, 1, 100)
		if got != tc.want || ok != tc.ok {
			t.Errorf("wholeArg(%s) = %d, %v; want %d, %v", tc.raw, got, ok, tc.want, tc.ok)
		}
	}
	// find with limit 20.0 is still filtered (the page agent takes it).
	if _, limit, ok := findArgs(json.RawMessage(`{"text":"x","limit":20.0}`)); !ok || limit != 20 {
		t.Errorf("findArgs with limit 20.0 = %d, %v", limit, ok)
	}
}
