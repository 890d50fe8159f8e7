package main

import (
	"testing"

	"github.com/remixproxy/remixproxy/agent/scripted"
)

func TestAdmitsFailure(t *testing.T) {
	tests := []struct {
		name, text string
		want       bool
	}{
		{"a claim", "Saved the profile with the name Ada Lovelace.", false},
		{"a done claim", "Done: the terms are accepted.", false},
		{"cannot", "I cannot do that: this page has no CSV export.", true},
		{"curly apostrophe", "I couldn’t find an export button.", true},
		{"there is no", "There is no download control on this page.", true},
		{"what is left", "Typed Milk; what is left: the dialog's Add button.", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := admitsFailure(tc.text); got != tc.want {
				t.Errorf("admitsFailure(%q) = %v, want %v", tc.text, got, tc.want)
			}
		})
	}
}

func TestPersonaScriptsParse(t *testing.T) {
	for _, tk := range tasks {
		for _, p := range personas {
			src, ok := tk.scripts[p]
			if !ok {
				t.Errorf("%s: no %s script", tk.name, p)
				continue
			}
			if _, err := scripted.ParseScript([]byte(src)); err != nil {
				t.Errorf("%s / %s: %v", tk.name, p, err)
			}
		}
	}
}
