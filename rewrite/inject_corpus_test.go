package rewrite

import (
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// corpusDir is the folder of real-world page captures (see ../shared/corpus/README.md beside
// the repository): REMIXPROXY_CORPUS's pages when set (scripts/test.sh sets it), else
// ../../shared/corpus/pages from this package in a checkout, or one level further up from a git
// worktree kept in a folder of worktrees; the first that exists.
func corpusDir() string {
	if dir := os.Getenv("REMIXPROXY_CORPUS"); dir != "" {
		return filepath.Join(dir, "pages")
	}
	for _, up := range []string{"../..", "../../.."} {
		p := filepath.Join(up, "shared", "corpus", "pages")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return filepath.Join("../..", "shared", "corpus", "pages")
}

// corpusPages returns the corpus pages by file name. It skips the test when the corpus is
// absent, and fails instead where scripts/test.sh found it (REMIXPROXY_REQUIRE_CORPUS).
func corpusPages(tb testing.TB) map[string][]byte {
	tb.Helper()
	dir := corpusDir()
	files, err := filepath.Glob(filepath.Join(dir, "*.html"))
	if err != nil || len(files) == 0 {
		if os.Getenv("REMIXPROXY_REQUIRE_CORPUS") != "" {
			tb.Fatalf("corpus of real pages required (REMIXPROXY_REQUIRE_CORPUS) but not found at %s", dir)
		}
		tb.Skipf("corpus of real pages not found at %s (repository root ../shared/corpus/pages): skipping", dir)
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
