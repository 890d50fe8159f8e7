package rewrite

import (
	"strings"
	"testing"
)

func TestDropCustomProperties(t *testing.T) {
	refuse := func(v string) string {
		if strings.Contains(v, "https://witness.test") {
			return "it holds the witness"
		}
		return ""
	}
	tests := []struct {
		name, in, want string
		problems       int
	}{
		{"kept", `.a { --x: "https://own.test/a"; color: red }`, `.a { --x: "https://own.test/a"; color: red }`, 0},
		{"a string", `.a { --next: "https://witness.test/x"; color: red }`, `.a {   color: red }`, 1},
		{"bare, last in its block", `.a { color: red; --next: https://witness.test/x }`, `.a { color: red;  }`, 1},
		{"escaped", `.a{--n:"https\3a //witness.test/x"}`, `.a{ }`, 1},
		{"split by a comment", `.a{--n:https:/**///witness.test/x;}`, `.a{ }`, 1},
		{"nested", `.a { .b { --n: "https://witness.test/x"; } --m: 1 }`, `.a { .b {   } --m: 1 }`, 1},
		{"escaped name", `.a{\2d-n:"https://witness.test/x"}`, `.a{ }`, 1},
		{"a block value", `.a{--n:{"https://witness.test/x"};b:1}`, `.a{ b:1}`, 1},
		{"not a custom property", `.a{content:"https://witness.test/x"}`, `.a{content:"https://witness.test/x"}`, 0},
	}
	for _, tt := range tests {
		out, problems := DropCustomProperties([]byte(tt.in), refuse)
		if string(out) != tt.want || len(problems) != tt.problems {
			t.Errorf("%s: got %q, %v; want %q with %d problems", tt.name, out, problems, tt.want, tt.problems)
		}
	}
}

func TestStyleValueText(t *testing.T) {
	for in, want := range map[string]string{
		`"https://a.test/x"`:  "https://a.test/x",
		`https\3a //a.test/x`: "https://a.test/x",
		`'a' /* c */ "b"`:     "a  b",
		`url(https://a.test)`: "url(https://a.test)",
	} {
		if got := StyleValueText(in); got != want {
			t.Errorf("StyleValueText(%q) = %q, want %q", in, got, want)
		}
	}
}
