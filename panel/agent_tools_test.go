package panel

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestAgentToolsBehaviour runs the page tools (pageagent/tool_*.js in the page agent) in node
// against a small fake DOM (testdata/agent_tools_harness.js), on the source and on the minified script
// that pages get. e2e/pagetools_test.go runs them in Chromium.
func TestAgentToolsBehaviour(t *testing.T) {
	node := nodePath(t)
	if out, err := exec.Command(node, "--check", "testdata/agent_tools_harness.js").CombinedOutput(); err != nil {
		t.Fatalf("node --check agent_tools_harness.js: %v\n%s", err, out)
	}
	minified := filepath.Join(t.TempDir(), "agent.min.js")
	if err := os.WriteFile(minified, Bootstrap(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, script := range []string{assembledAgent(t), minified} {
		t.Run(filepath.Base(script), func(t *testing.T) {
			out, err := exec.Command(node, "testdata/agent_tools_harness.js", script).CombinedOutput()
			if err != nil {
				t.Fatalf("node agent_tools_harness.js %s: %v\n%s", script, err, out)
			}
			if testing.Verbose() {
				t.Logf("%s", out)
			}
		})
	}
}

// TestAgentToolsSource checks rules of the page tools (pageagent/tool_*.js) that a behavioural
// test would not see: the model's arguments never reach an HTML parser of the live page or a
// code sink, and the files use no language feature that goes through page-replaceable built-ins.
func TestAgentToolsSource(t *testing.T) {
	var b []byte
	for _, name := range agentParts {
		if strings.HasPrefix(name, "tool_") {
			src, err := os.ReadFile(partPath(name))
			if err != nil {
				t.Fatal(err)
			}
			b = append(b, src...)
		}
	}
	if len(b) < 100000 {
		t.Fatalf("the page tools' files hold only %d bytes", len(b))
	}
	// Comments may name what the code must not do.
	src := regexp.MustCompile(`(?m)^\s*//.*$`).ReplaceAllString(string(b), "")
	for _, s := range []string{
		"innerHTML", "outerHTML", "insertAdjacentHTML", "setHTML", "createContextualFragment", "parseHTMLUnsafe",
		"document.write", "srcdoc", "eval(", "Function(", "importScripts", "setTimeout(", "setInterval(",
		"localStorage", "sessionStorage", "indexedDB", "caches", "credentials: 'include'",
	} {
		if strings.Contains(src, s) {
			t.Errorf("the page tools contain %q", s)
		}
	}
	// The only HTML parsing: a fresh DOMParser's inert document for fetch_page.
	if n := strings.Count(src, "apply(parseFromString,"); n != 1 || !strings.Contains(src, "apply(parseFromString, new DOMParserCtor(), [") ||
		strings.Contains(src, "parseFromString(") {
		t.Errorf("the page tools call parseFromString %d times, want once, on a new DOMParser", n)
	}
	// No spread, for-of, template literals or direct promise methods: they run page-replaceable
	// iterators and methods. (Promises are chained with the captured Promise.prototype.then.)
	for _, re := range []string{`\.\.\.`, `for\s*\([^)]*\bof\b`, "`", `\.then\(`, `\.catch\(`, `=>`} {
		if m := regexp.MustCompile(re).FindString(src); m != "" {
			t.Errorf("the page tools have %q (%s)", m, re)
		}
	}
	// fetch_page never follows redirects, so no request leaves the page's origin.
	if !strings.Contains(src, "init.redirect = 'manual';") || !strings.Contains(src, "init.credentials = 'same-origin';") {
		t.Error("fetch_page's fetch does not use redirect 'manual' and credentials 'same-origin'")
	}
}
