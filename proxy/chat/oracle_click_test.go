package chat

import (
	"encoding/json"
	"strings"
	"testing"
)

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
