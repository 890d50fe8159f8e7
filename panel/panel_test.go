package panel

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// nodePath returns the node binary, failing the test with the install command if it is missing.
func nodePath(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node is needed to check the JavaScript (%v); install it with: apt-get install -y nodejs", err)
	}
	return p
}

// forbiddenHTML ends or confuses the inline script element (HTML is case-insensitive);
// forbiddenJS are Trusted Types sinks and string-to-code (JavaScript is case-sensitive, and the
// minified text has plenty of "function(").
var (
	forbiddenHTML = []string{"</script", "<!--"}
	forbiddenJS   = []string{"innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function", "Function("}
)

func TestBootstrapIsSafeToInline(t *testing.T) {
	b := Bootstrap()
	if len(b) == 0 {
		t.Fatal("Bootstrap() is empty")
	}
	for i, c := range b {
		if c >= 0x80 {
			line := bytes.Count(b[:i], []byte("\n")) + 1
			t.Fatalf("Bootstrap() has a non-ASCII byte 0x%02x on line %d; escape it as \\uXXXX", c, line)
		}
	}
	lower := strings.ToLower(string(b))
	for _, s := range forbiddenHTML {
		if strings.Contains(lower, s) {
			t.Errorf("Bootstrap() contains %q", s)
		}
	}
	for _, src := range [][]byte{b, agentSource} {
		for _, s := range forbiddenJS {
			if bytes.Contains(src, []byte(s)) {
				t.Errorf("page agent contains %q", s)
			}
		}
	}
}

func TestBootstrapReturnsACopy(t *testing.T) {
	a := Bootstrap()
	a[0] ^= 0xff
	if b := Bootstrap(); b[0] == a[0] {
		t.Fatal("changing one Bootstrap() result changed the next")
	}
}

func TestBootstrapHash(t *testing.T) {
	sum := sha256.Sum256(Bootstrap())
	want := "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
	if got := BootstrapHash(); got != want {
		t.Fatalf("BootstrapHash() = %s, want %s", got, want)
	}
}

func TestFilesServesEverythingButTheAgent(t *testing.T) {
	entries, err := os.ReadDir("static")
	if err != nil {
		t.Fatal(err)
	}
	var onDisk []string
	for _, e := range entries {
		onDisk = append(onDisk, e.Name())
	}
	var served []string
	err = fs.WalkDir(Files(), ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			served = append(served, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(onDisk)
	slices.Sort(served)
	if !slices.Equal(served, onDisk) {
		t.Errorf("Files() serves %q, want %q (panel/static; add new files to the go:embed line)", served, onDisk)
	}
	for _, name := range append([]string{"agent.js", "agent_tools.js"}, agentParts...) {
		if _, err := fs.Stat(Files(), name); err == nil {
			t.Errorf("Files() serves %s; the page agent must only reach pages through the bootstrap", name)
		}
	}
	for _, name := range []string{"panel.html", "panel.js", "panel.css", "confirm.html", "confirm.js"} {
		if _, err := fs.ReadFile(Files(), name); err != nil {
			t.Errorf("Files(): %v", err)
		}
	}
}

func TestJavaScriptParses(t *testing.T) {
	node := nodePath(t)
	for _, file := range []string{assembledAgent(t), "static/panel.js", "static/confirm.js", "testdata/agent_harness.js", "testdata/panel_harness.js", "testdata/confirm_harness.js"} {
		t.Run(filepath.Base(file), func(t *testing.T) {
			out, err := exec.Command(node, "--check", file).CombinedOutput()
			if err != nil {
				t.Fatalf("node --check %s: %v\n%s", file, err, out)
			}
		})
	}
}

func TestPanelJSUsesNoHTMLSinks(t *testing.T) {
	for _, name := range []string{"panel.js", "confirm.js"} {
		b, err := fs.ReadFile(Files(), name)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range forbiddenJS {
			if bytes.Contains(b, []byte(s)) {
				t.Errorf("%s contains %q", name, s)
			}
		}
	}
}

// TestPanelHTMLFitsPanelCSP checks panel.html against what the panel's CSP allows: scripts and
// styles only from files on the same origin, nothing inline.
func TestPanelHTMLFitsPanelCSP(t *testing.T) {
	b, err := fs.ReadFile(Files(), "panel.html")
	if err != nil {
		t.Fatal(err)
	}
	html := string(b)
	checks := []struct {
		name string
		re   string
	}{
		{"inline script", `<script(?:\s[^>]*)?>\s*[^<\s]`},
		{"style element", `<style`},
		{"style attribute", `\sstyle\s*=`},
		{"event handler attribute", `\son[a-z]+\s*=`},
		{"javascript: URL", `javascript:`},
		{"other origin", `(?:src|href)\s*=\s*"(?:https?:)?//`},
	}
	for _, c := range checks {
		if m := regexp.MustCompile(`(?i)` + c.re).FindString(html); m != "" {
			t.Errorf("panel.html has %s: %q", c.name, m)
		}
	}
	for _, tag := range regexp.MustCompile(`(?i)<script\b[^>]*>`).FindAllString(html, -1) {
		if !strings.Contains(tag, ` src="/`) {
			t.Errorf("panel.html has a script without a same-origin src: %s", tag)
		}
	}
	for _, want := range []string{
		`<script src="/panel.js" defer></script>`,
		`<link rel="stylesheet" href="/panel.css">`,
		`<h1>remixproxy</h1>`,
		`<main id="log" class="log" role="log"`,
		`<label for="input" class="sr-only">Message</label>`,
		`<label class="sr-only" for="model">Model</label>`,
		`role="group" aria-label="Mode"`,
		`<a id="manage" target="_blank" rel="noopener" hidden>Manage remixlets</a>`,
		`<div id="announce" class="sr-only" aria-live="polite"></div>`,
	} {
		if !strings.Contains(html, want) {
			t.Errorf("panel.html lacks %s", want)
		}
	}
}

// TestJavaScriptBehaviour runs the page agent and panel.js in node against fake browsers (see the
// harnesses in testdata). The e2e suite tests them in Chromium.
func TestJavaScriptBehaviour(t *testing.T) {
	node := nodePath(t)
	// The minified agent is what pages get; run the harness on it as well as on the source.
	minified := filepath.Join(t.TempDir(), "agent.min.js")
	if err := os.WriteFile(minified, Bootstrap(), 0o644); err != nil {
		t.Fatal(err)
	}
	if len(Bootstrap()) >= len(agentSource) {
		t.Errorf("Bootstrap() is %d bytes, the source %d: the minifier did not run", len(Bootstrap()), len(agentSource))
	}
	for _, tt := range []struct{ harness, script string }{
		{"testdata/agent_harness.js", assembledAgent(t)},
		{"testdata/agent_harness.js", minified},
		{"testdata/panel_harness.js", "static/panel.js"},
		{"testdata/confirm_harness.js", "static/confirm.js"},
	} {
		t.Run(filepath.Base(tt.script), func(t *testing.T) {
			out, err := exec.Command(node, tt.harness, tt.script).CombinedOutput()
			if err != nil {
				t.Fatalf("node %s %s: %v\n%s", tt.harness, tt.script, err, out)
			}
			if testing.Verbose() {
				t.Logf("%s", out)
			}
		})
	}
}

// assembledAgent writes the page agent's source (the files of agentParts joined in their closure)
// to a temporary file and returns its path.
func assembledAgent(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "agent.js")
	if err := os.WriteFile(p, agentSource, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestPanelHTMLHasPanelJSElements checks that every element panel.js and its harness look up by
// id is in panel.html.
func TestPanelHTMLHasPanelJSElements(t *testing.T) {
	html := readStatic(t, "panel.html")
	js := readStatic(t, "panel.js")
	harness, err := os.ReadFile("testdata/panel_harness.js")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, m := range regexp.MustCompile(`byId\('([a-z-]+)'\)`).FindAllStringSubmatch(js, -1) {
		ids = append(ids, m[1])
	}
	if strings.Contains(js, "byId('mode-' + m)") { // for each of MODES
		ids = append(ids, "mode-"+ModeAsk, "mode-"+ModeBuild, "mode-"+ModeAct)
	}
	if len(ids) < 10 {
		t.Fatalf("found only %q in panel.js", ids)
	}
	block := regexp.MustCompile(`(?s)const ELEMENT_IDS = \{(.*?)\};`).FindSubmatch(harness)
	if block == nil {
		t.Fatal("panel_harness.js has no ELEMENT_IDS")
	}
	var fake []string
	for _, m := range regexp.MustCompile(`'?([a-z-]+)'?: '[a-z]+'`).FindAllSubmatch(block[1], -1) {
		fake = append(fake, string(m[1]))
	}
	for _, id := range append(ids, fake...) {
		if !strings.Contains(html, `id="`+id+`"`) {
			t.Errorf("panel.html has no element with id %q", id)
		}
	}
	for _, id := range ids {
		if !slices.Contains(fake, id) {
			t.Errorf("panel_harness.js fakes no element with id %q", id)
		}
	}
}
