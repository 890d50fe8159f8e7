package chat

import (
	"strings"
	"testing"
)

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
