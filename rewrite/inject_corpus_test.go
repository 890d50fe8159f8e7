package rewrite

import (
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// corpusDir holds real-world page captures (see ../../shared/corpus/README.md), relative to
// this package's directory.
const corpusDir = "../../shared/corpus/pages"

// corpusPages returns the corpus pages by file name, or skips the test when the corpus is absent.
func corpusPages(tb testing.TB) map[string][]byte {
	tb.Helper()
	files, err := filepath.Glob(filepath.Join(corpusDir, "*.html"))
	if err != nil || len(files) == 0 {
		tb.Skipf("corpus of real pages not found at %s (repository root ../shared/corpus/pages): skipping", corpusDir)
	}
	pages := make(map[string][]byte, len(files))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			tb.Fatalf("reading corpus page: %v", err)
		}
		pages[filepath.Base(f)] = b
	}
	return pages
}

var headTag = regexp.MustCompile(`(?i)<head[\s/>]`)

// TestInjectCorpus checks on real pages that the output minus the tag is the page, that our
// script is the first script of the parsed DOM, and that pages with a <head> get it within
// their first 8 KiB.
func TestInjectCorpus(t *testing.T) {
	for name, page := range corpusPages(t) {
		t.Run(name, func(t *testing.T) {
			input := string(page)
			got := checkInjected(t, input, func(r io.Reader) io.Reader { return r })
			if ours, found, where := firstScript(got); !ours {
				t.Errorf("first script in the parsed output: found=%v at %s, want ours", found, where)
			}
			if headTag.MatchString(input) {
				if i := strings.Index(got, testTag); i < 0 || i >= 8<<10 {
					t.Errorf("tag inserted at byte %d, want within the first 8 KiB of a page with a <head>", i)
				}
			}
		})
	}
}
