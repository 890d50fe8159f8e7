// Package jslist reads the string lists of the page agent's source files
// (panel/pageagent/*.js), for the tests that check a Go list and its page-agent twin are the
// same. It is used by tests only and never reaches the binary's data flow.
package jslist

import (
	"os"
	"regexp"
	"testing"
)

var quoted = regexp.MustCompile(`'([^']*)'`)

// Read returns the strings of the list declared in src as `var name = [...]` or
// `var name = allowed([...])`, in order; ok is false when src declares no such list.
func Read(src []byte, name string) (items []string, ok bool) {
	m := regexp.MustCompile(`(?s)var ` + regexp.QuoteMeta(name) + ` = (?:allowed\()?\[(.*?)\]`).FindSubmatch(src)
	if m == nil {
		return nil, false
	}
	for _, q := range quoted.FindAllSubmatch(m[1], -1) {
		items = append(items, string(q[1]))
	}
	return items, true
}

// FileReader returns a function that reads the named lists of the page agent's file at path,
// failing t when the file cannot be read or declares no such list.
func FileReader(t testing.TB, path string) func(name string) []string {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading the page agent's lists: %v", err)
	}
	return func(name string) []string {
		t.Helper()
		l, ok := Read(src, name)
		if !ok {
			t.Fatalf("%s has no list %s", path, name)
		}
		return l
	}
}
