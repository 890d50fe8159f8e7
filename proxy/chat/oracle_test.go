package chat

import (
	"encoding/json"
	"strings"
	"testing"
)

// fakeRed redacts the test's one secret, as the page redaction would.
func fakeRed(s string) string {
	return strings.ReplaceAll(s, "AIzaSyQz9SECRETbodyXXXXXXXXXXXXXXXXXXXX", "[redacted: key]")
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
