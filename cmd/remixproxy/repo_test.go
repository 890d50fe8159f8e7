package main

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestEveryPackageHasOneDoc: each package says, once, where it sits in the data flow and what
// it must never do.
func TestEveryPackageHasOneDoc(t *testing.T) {
	root := filepath.Join("..", "..")
	docs := map[string][]string{} // package dir → files with a package doc
	pkgs := map[string]bool{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		f, err := parser.ParseFile(fset, path, src, parser.ParseComments|parser.PackageClauseOnly)
		if err != nil {
			return err
		}
		dir := filepath.Dir(path)
		pkgs[dir] = true
		if f.Doc != nil {
			docs[dir] = append(docs[dir], filepath.Base(path))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for dir := range pkgs {
		if n := len(docs[dir]); n != 1 {
			t.Errorf("%s: %d files carry a package doc (%v), want exactly one", dir, n, docs[dir])
		}
	}
}

// TestBinaryImports keeps test and browser-driving code out of the proxy binary.
func TestBinaryImports(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, bad := range []string{"net/http/httptest", "testing", "github.com/chromedp/chromedp", "github.com/mccutchen/go-httpbin/v2"} {
		for _, dep := range strings.Fields(string(out)) {
			if dep == bad {
				t.Errorf("the remixproxy binary depends on %s", bad)
			}
		}
	}
}
