package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// remixletDir writes a remixlet folder and returns its path.
func remixletDir(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// run runs a remixlet or site command with answer on standard input.
func run(t *testing.T, data, answer string, cmd func([]string, cliIO) error, args ...string) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := cmd(append(args, "--data-dir", data), cliIO{in: strings.NewReader(answer), out: &out, err: &errOut})
	return out.String(), errOut.String(), err
}

const hideManifest = `{"name":"hide promoted","description":"Hides promoted posts","api":1,
 "matches":["https://news.example/*"],"permissions":[{"name":"storage","reason":"IGNORE PREVIOUS INSTRUCTIONS"}]}`

func TestRemixletAddAsksWithFixedTexts(t *testing.T) {
	data := t.TempDir()
	dir := remixletDir(t, map[string]string{"manifest.json": hideManifest, "script.js": "dom.queryAll('.promoted');\n"})

	out, _, err := run(t, data, "n\n", remixletCommand, "add", dir)
	if err != nil {
		t.Fatalf("add: %v", err)
	}
	for _, want := range []string{"saved version 1", "news.example", "asks to run with", "not allowed"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "IGNORE PREVIOUS") {
		t.Errorf("the manifest's reason was shown as the permission's description:\n%s", out)
	}
	out, _, _ = run(t, data, "", remixletCommand, "list")
	if !strings.Contains(out, "no active version") {
		t.Errorf("declined version is active:\n%s", out)
	}

	out, _, err = run(t, data, "y\n", remixletCommand, "add", dir)
	if err != nil || !strings.Contains(out, "version 2 is active") {
		t.Fatalf("add with yes: %v\n%s", err, out)
	}
	out, _, _ = run(t, data, "", remixletCommand, "list")
	if !strings.Contains(out, "hide promoted") || !strings.Contains(out, "v2") || !strings.Contains(out, "[storage]") {
		t.Errorf("list:\n%s", out)
	}
	if strings.Contains(out, "run_at") {
		t.Errorf("list names the default run time:\n%s", out)
	}

	// A script-only change needs nothing new: it activates at once.
	os.WriteFile(filepath.Join(dir, "script.js"), []byte("dom.queryAll('.ad');\n"), 0o644)
	out, _, err = run(t, data, "", remixletCommand, "add", dir)
	if err != nil || !strings.Contains(out, "version 3 is active") || strings.Contains(out, "asks to run") {
		t.Errorf("script-only change: %v\n%s", err, out)
	}
	out, _, _ = run(t, data, "", remixletCommand, "show", "hide promoted")
	if !strings.Contains(out, "* v3") || !strings.Contains(out, "dom.queryAll('.ad')") {
		t.Errorf("show:\n%s", out)
	}

	// A run time other than the default is listed; an unknown one is refused, naming the allowed.
	early := strings.Replace(hideManifest, `"api":1,`, `"api":1,"run_at":"document_start",`, 1)
	os.WriteFile(filepath.Join(dir, "manifest.json"), []byte(early), 0o644)
	if out, _, err = run(t, data, "", remixletCommand, "add", dir); err != nil || !strings.Contains(out, "version 4 is active") {
		t.Fatalf("a run_at change: %v\n%s", err, out)
	}
	if out, _, _ = run(t, data, "", remixletCommand, "list"); !strings.Contains(out, "run_at document_start") {
		t.Errorf("list does not name the run time:\n%s", out)
	}
	os.WriteFile(filepath.Join(dir, "manifest.json"), []byte(strings.Replace(early, "document_start", "soon", 1)), 0o644)
	_, errOut, err := run(t, data, "", remixletCommand, "add", dir)
	if err == nil || !strings.Contains(errOut, `run_at: "soon" is not a run time (allowed: document_start, document_end, document_idle)`) {
		t.Errorf("an unknown run time: %v\n%s", err, errOut)
	}
}

func TestRemixletAddRefusesBrokenFiles(t *testing.T) {
	data := t.TempDir()
	dir := remixletDir(t, map[string]string{"manifest.json": hideManifest, "script.js": "let x = ;\n"})
	_, errOut, err := run(t, data, "", remixletCommand, "add", dir, "--yes")
	if err == nil || !strings.Contains(err.Error(), "nothing was saved") {
		t.Fatalf("err = %v, want a refusal", err)
	}
	if !strings.Contains(errOut, "script.js:1:") {
		t.Errorf("problems do not name the line and column: %q", errOut)
	}
	out, _, _ := run(t, data, "", remixletCommand, "list")
	if !strings.Contains(out, "No remixlets yet") {
		t.Errorf("something was saved:\n%s", out)
	}
}

func TestRemixletPauseDeleteAndSites(t *testing.T) {
	data := t.TempDir()
	dir := remixletDir(t, map[string]string{"manifest.json": hideManifest, "script.js": "1\n"})
	if _, _, err := run(t, data, "", remixletCommand, "add", dir, "--yes"); err != nil {
		t.Fatal(err)
	}
	if out, _, err := run(t, data, "", remixletCommand, "pause", "hide promoted"); err != nil || !strings.Contains(out, "paused") {
		t.Fatalf("pause: %v %s", err, out)
	}
	if out, _, _ := run(t, data, "", remixletCommand, "list"); !strings.Contains(out, " off ") {
		t.Errorf("paused remixlet listed as: %s", out)
	}
	if out, _, err := run(t, data, "", siteCommand, "pause", "News.Example"); err != nil || !strings.Contains(out, "paused") {
		t.Fatalf("site pause: %v %s", err, out)
	}
	if out, _, _ := run(t, data, "", siteCommand, "list"); strings.TrimSpace(out) != "news.example" {
		t.Errorf("site list = %q", out)
	}
	if out, _, _ := run(t, data, "n\n", remixletCommand, "delete", "hide promoted"); !strings.Contains(out, "Not deleted") {
		t.Errorf("delete answered no: %s", out)
	}
	if _, _, err := run(t, data, "", remixletCommand, "delete", "hide promoted", "--yes"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := run(t, data, "", remixletCommand, "show", "hide promoted"); err == nil {
		t.Errorf("show after delete succeeded")
	}
}
