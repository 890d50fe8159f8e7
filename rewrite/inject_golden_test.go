package rewrite

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/iotest"
	"unicode/utf8"

	"golang.org/x/net/html"
)

// goldenInput is one document from x/net's copy of the html5lib tests.
type goldenInput struct {
	name string
	data string
}

var (
	html5libOnce   sync.Once
	html5libInputs []goldenInput
	html5libErr    error
)

// loadHTML5Lib returns every #data section of tree-construction/*.dat and every input of
// tokenizer/*.test in the golang.org/x/net module this package builds with.
func loadHTML5Lib(t testing.TB) []goldenInput {
	t.Helper()
	html5libOnce.Do(func() { html5libInputs, html5libErr = readHTML5Lib() })
	if html5libErr != nil {
		t.Fatalf("loading the html5lib tests: %v", html5libErr)
	}
	return html5libInputs
}

func readHTML5Lib() ([]goldenInput, error) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		return nil, fmt.Errorf("finding the go command to locate golang.org/x/net: %w", err)
	}
	out, err := exec.Command(goTool, "list", "-m", "-f", "{{.Dir}}", "golang.org/x/net").Output()
	if err != nil {
		return nil, fmt.Errorf("locating golang.org/x/net with go list: %w", err)
	}
	dir := filepath.Join(strings.TrimSpace(string(out)), "html", "testdata", "html5lib-tests")
	if _, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("html5lib tests not in the module cache (run go mod download golang.org/x/net): %w", err)
	}
	var inputs []goldenInput
	dats, _ := filepath.Glob(filepath.Join(dir, "tree-construction", "*.dat"))
	for _, f := range dats {
		in, err := readDat(f)
		if err != nil {
			return nil, err
		}
		inputs = append(inputs, in...)
	}
	tests, _ := filepath.Glob(filepath.Join(dir, "tokenizer", "*.test"))
	for _, f := range tests {
		in, err := readTokenizerTest(f)
		if err != nil {
			return nil, err
		}
		inputs = append(inputs, in...)
	}
	if len(dats) == 0 || len(tests) == 0 {
		return nil, fmt.Errorf("no .dat or .test files under %s", dir)
	}
	return inputs, nil
}

// readDat returns the #data sections of a tree-construction file: the lines between "#data"
// and "#errors", without the last newline.
func readDat(path string) ([]goldenInput, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	defer f.Close()
	var inputs []goldenInput
	var data []string
	inData := false
	s := bufio.NewScanner(f)
	s.Buffer(nil, 1<<20)
	for s.Scan() {
		line := s.Text()
		switch {
		case line == "#data" && !inData:
			inData, data = true, nil
		case line == "#errors" && inData:
			inData = false
			name := fmt.Sprintf("%s#%d", filepath.Base(path), len(inputs))
			inputs = append(inputs, goldenInput{name, strings.Join(data, "\n")})
		case inData:
			data = append(data, line)
		}
	}
	if err := s.Err(); err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	return inputs, nil
}

// readTokenizerTest returns the inputs of a tokenizer test file (JSON).
func readTokenizerTest(path string) ([]goldenInput, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	var file map[string][]struct {
		Input         string `json:"input"`
		DoubleEscaped bool   `json:"doubleEscaped"`
	}
	if err := json.Unmarshal(b, &file); err != nil {
		return nil, fmt.Errorf("decoding %s: %w", path, err)
	}
	var inputs []goldenInput
	for key, tests := range file {
		for i, tc := range tests {
			in := tc.Input
			if tc.DoubleEscaped {
				in = unescapeUnicode(in)
			}
			inputs = append(inputs, goldenInput{fmt.Sprintf("%s/%s#%d", filepath.Base(path), key, i), in})
		}
	}
	return inputs, nil
}

// unescapeUnicode decodes the \uXXXX escapes of a doubleEscaped html5lib input (lone
// surrogates become U+FFFD).
func unescapeUnicode(s string) string {
	var b []byte
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+5 < len(s) && s[i+1] == 'u' {
			if v, err := strconv.ParseUint(s[i+2:i+6], 16, 32); err == nil {
				b = utf8.AppendRune(b, rune(v))
				i += 5
				continue
			}
		}
		b = append(b, s[i])
	}
	return string(b)
}

// hasUTF16BOM reports whether a document starts with a UTF-16 byte order mark.
func hasUTF16BOM(s string) bool {
	return strings.HasPrefix(s, "\xFE\xFF") || strings.HasPrefix(s, "\xFF\xFE")
}

// checkInjected runs the byte-level properties on one input: (a) with an empty Tag the output
// is the input; (b) with a Tag, the output minus the one Tag is the input (unless the input
// holds a stale bootstrap or a UTF-16 BOM); (c) the tag is inserted into any non-empty input.
// It returns the injected output.
func checkInjected(t *testing.T, input string, r func(io.Reader) io.Reader) string {
	t.Helper()
	out, err := io.ReadAll(NewInjector(r(strings.NewReader(input)), Options{}))
	if err != nil {
		t.Fatalf("reading with an empty tag: got error %v, want none", err)
	}
	if string(out) != input {
		t.Fatalf("with an empty tag:\ngot  %q\nwant %q (the input)", out, input)
	}
	in := NewInjector(r(strings.NewReader(input)), Options{Tag: []byte(testTag)})
	b, err := io.ReadAll(in)
	if err != nil {
		t.Fatalf("reading with a tag: got error %v, want none", err)
	}
	got := string(b)
	wantInjected := input != "" && !hasUTF16BOM(input) && !startsLikeJSON(input)
	if in.Injected() != wantInjected {
		t.Errorf("Injected() = %v, want %v", in.Injected(), wantInjected)
	}
	if strings.Contains(input, "data-remixproxy") {
		return got
	}
	if !wantInjected {
		if got != input {
			t.Errorf("not injected:\ngot  %q\nwant %q (the input)", got, input)
		}
		return got
	}
	without, n := removeInsertion(got, input)
	if n != 1 {
		t.Fatalf("output holds the tag %d times, want once:\n%q", n, got)
	}
	if without != input {
		t.Errorf("output without the tag:\ngot  %q\nwant %q (the input)", without, input)
	}
	return got
}

// firstScript parses a document and reports whether the first script element in document
// order that is not template content is ours (has data-remixproxy), whether there is any
// script at all, and where the first one is.
func firstScript(doc string) (ours bool, found bool, where string) {
	root, err := html.Parse(strings.NewReader(doc))
	if err != nil {
		return false, false, "parse error: " + err.Error()
	}
	var walk func(n *html.Node, path string) bool
	walk = func(n *html.Node, path string) bool {
		if n.Type == html.ElementNode {
			if n.Data == "template" && n.Namespace == "" {
				return false // template contents never run
			}
			path += "/" + n.Data
			if n.Data == "script" {
				found = true
				where = path
				for _, a := range n.Attr {
					if a.Key == "data-remixproxy" {
						ours = true
					}
				}
				return true
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if walk(c, path) {
				return true
			}
		}
		return false
	}
	walk(root, "")
	return ours, found, where
}

// TestInjectHTML5Lib runs every html5lib input through the injector. Besides the byte-level
// properties, the injected output is parsed and our script must be the first script element in
// document order (template contents excluded, as they never run) for every non-empty input:
// there are no exceptions, including documents cut off inside a comment, doctype or tag (the
// tag goes before the unfinished markup), framesets, foreign content and tables.
func TestInjectHTML5Lib(t *testing.T) {
	inputs := loadHTML5Lib(t)
	t.Logf("%d html5lib inputs", len(inputs))
	for _, gi := range inputs {
		t.Run(gi.name, func(t *testing.T) {
			got := checkInjected(t, gi.data, func(r io.Reader) io.Reader { return r })
			if one := checkInjectedOneByte(t, gi.data); one != got {
				t.Errorf("one byte at a time:\ngot  %q\nwant %q", one, got)
			}
			if gi.data == "" || hasUTF16BOM(gi.data) || startsLikeJSON(gi.data) || strings.Contains(gi.data, "data-remixproxy") {
				return
			}
			if ours, found, where := firstScript(got); !ours {
				t.Errorf("first script in the parsed output: found=%v at %s, want ours; input %q\noutput %q", found, where, gi.data, got)
			}
		})
	}
}

func TestFirstScript(t *testing.T) {
	tests := []struct {
		name      string
		doc       string
		wantOurs  bool
		wantFound bool
	}{
		{"ours first", testTag + "<script>a()</script>", true, true},
		{"page script first", "<script>a()</script>" + testTag, false, true},
		{"template content skipped", "<template><script>a()</script></template>" + testTag, true, true},
		{"svg script counts", "<svg><script>a()</script></svg>" + testTag, false, true},
		{"no script", "<p>x", false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ours, found, where := firstScript(tc.doc)
			if ours != tc.wantOurs || found != tc.wantFound {
				t.Errorf("firstScript(%q) = ours %v, found %v (at %s), want %v, %v", tc.doc, ours, found, where, tc.wantOurs, tc.wantFound)
			}
		})
	}
}

// startsLikeJSON mirrors the injector's JSON sniff: after a UTF-8 BOM and whitespace within
// jsonSniffLimit bytes, the first byte opens an object or array. Such inputs pass untouched.
func startsLikeJSON(s string) bool {
	s = strings.TrimPrefix(s, "\xEF\xBB\xBF")
	for i := 0; i < len(s) && i < jsonSniffLimit; i++ {
		switch s[i] {
		case ' ', '\t', '\n', '\r', '\f':
			continue
		case '{', '[':
			return true
		}
		return false
	}
	return false
}

func checkInjectedOneByte(t *testing.T, input string) string {
	t.Helper()
	b, err := io.ReadAll(NewInjector(iotest.OneByteReader(strings.NewReader(input)), Options{Tag: []byte(testTag)}))
	if err != nil {
		t.Fatalf("reading one byte at a time: %v", err)
	}
	return string(b)
}
