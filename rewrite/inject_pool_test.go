package rewrite

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
)

// unpooledOutput is the injector's output for doc read with io.ReadAll, from a scratch made for
// it alone (never one a document before it used).
func unpooledOutput(t *testing.T, doc string, opt Options) (string, bool) {
	t.Helper()
	in := newInjector(strings.NewReader(doc), opt, scratchPool.New().(*scratch))
	out, err := io.ReadAll(in)
	if err != nil {
		t.Fatalf("reading unpooled: %v", err)
	}
	return string(out), in.Injected()
}

// chunkReader returns at most n bytes per Read.
type chunkReader struct {
	r io.Reader
	n int
}

func (c chunkReader) Read(p []byte) (int, error) { return c.r.Read(p[:min(len(p), c.n)]) }

// TestInjectorPoolReuse: injectors that borrow their tokenizer and buffers from the pool give,
// byte for byte, what one with a scratch of its own gives — whatever documents used the scratch
// before, read in whatever sizes, alongside other injectors, some abandoned half-way and some
// stopped by their cap. It fails if a scratch goes back to the pool while its output is still
// being read, or carries a tokenizer state, recorded bytes or an error into the next document.
func TestInjectorPoolReuse(t *testing.T) {
	docs := []string{
		"",
		"<!doctype html><html><head><meta charset=utf-8><title>small</title></head><body>" + strings.Repeat("<p>text</p>", 200) + "</body></html>",
		"<html><head><script>a()</script><title>x</title>",
		"<head><meta http-equiv=content-security-policy content=\"script-src 'self'\"><meta charset=utf-8><title>x</title></head>",
		"<html><meta http-equiv=content-security-policy content=\"default-src 'none'\"><meta charset=utf-8>",
		"<head><script data-remixproxy=\"old\">stale()</script><title>t</title></head><body>b",
		"\xEF\xBB\xBF<!-- c --><html><head><style>p{}</style><noscript><meta charset=utf-8></noscript><body>",
		"\xFF\xFEu\x00t\x00f\x00",
		"  {\"json\": true}",
		"<!DOCTYPE html",
		"<!--",
		"<title>" + strings.Repeat("long title ", 9000) + "</title><body>", // past the 64 KiB cap below
		"<head>" + strings.Repeat("<link rel=stylesheet href=/a.css>", 300) + "<meta charset=utf-8></head><body>x",
	}
	docs = append(docs, corpusSample(40)...)
	opts := []Options{
		{Tag: []byte(testTag)},
		{Tag: []byte(testTag), CharsetKnown: true, MetaCSP: func(s string) string { return s + "; connect-src wss://remix.proxy" }},
		{Tag: []byte(testTag), MaxPrefix: 64 << 10, MetaCSP: func(s string) string { return s }},
	}
	type job struct {
		doc  int
		opt  int
		want string
	}
	var jobs []job
	for d, doc := range docs {
		for o, opt := range opts {
			want, _ := unpooledOutput(t, doc, opt)
			jobs = append(jobs, job{d, o, want})
		}
	}

	var wg sync.WaitGroup
	var mu sync.Mutex
	var failures []string
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 14))
			for round := range 3 {
				for _, i := range rng.Perm(len(jobs)) {
					j := jobs[i]
					size := []int{1, 7, 512, 4096, 1 << 16}[rng.IntN(5)]
					in := NewInjector(chunkReader{strings.NewReader(docs[j.doc]), size}, opts[j.opt])
					if rng.IntN(4) == 0 {
						// Abandoned after a read or two, as when the browser goes away: its
						// scratch never returns to the pool, and nothing else may notice.
						in.Read(make([]byte, size))
						continue
					}
					var got bytes.Buffer
					buf := make([]byte, size)
					for {
						n, err := in.Read(buf)
						got.Write(buf[:n])
						if err == io.EOF {
							break
						}
						if err != nil {
							mu.Lock()
							failures = append(failures, fmt.Sprintf("doc %d opt %d: reading: %v", j.doc, j.opt, err))
							mu.Unlock()
							break
						}
					}
					if got.String() != j.want {
						mu.Lock()
						failures = append(failures, fmt.Sprintf("round %d, doc %d, opt %d, %d-byte reads: got %q, want %q",
							round, j.doc, j.opt, size, clipTest(diffFrom(got.String(), j.want)), clipTest(diffFrom(j.want, got.String()))))
						mu.Unlock()
					}
				}
			}
		}()
	}
	wg.Wait()
	sort.Strings(failures)
	for i, f := range failures {
		if i == 10 {
			t.Errorf("… and %d more", len(failures)-10)
			break
		}
		t.Error(f)
	}
}

// TestInjectorScratchReleasedOnlyWhenDone: the scratch goes back to the pool once the output is
// drained and the rest of the document only copied, not before, and an injector abandoned
// half-way keeps it.
func TestInjectorScratchReleasedOnlyWhenDone(t *testing.T) {
	doc := "<!doctype html><html><head><title>t</title></head><body>" + strings.Repeat("x", 5000)
	in := NewInjector(strings.NewReader(doc), Options{Tag: []byte(testTag), MetaCSP: func(s string) string { return s }})
	small := make([]byte, 16)
	if _, err := in.Read(small); err != nil {
		t.Fatalf("first read: %v", err)
	}
	if in.s == nil {
		t.Fatalf("after a 16-byte read of a longer output: scratch released, want it held")
	}
	rest, err := io.ReadAll(in)
	if err != nil {
		t.Fatalf("reading the rest: %v", err)
	}
	if in.s != nil || in.rec != nil || in.z != nil {
		t.Errorf("after the end: scratch %p, recorder %p, tokenizer %p held, want all released", in.s, in.rec, in.z)
	}
	if got, _ := removeInsertion(string(small)+string(rest), doc); got != doc {
		t.Errorf("output minus the tag = %q, want the document", clipTest(got))
	}
}

// corpusSample is the first 16 KiB of the first n corpus pages by name, or none where the corpus is absent
// (TestInjectCorpus says so).
func corpusSample(n int) []string {
	files, _ := filepath.Glob(filepath.Join(corpusDir(), "*.html"))
	sort.Strings(files)
	var pages []string
	for _, f := range files[:min(n, len(files))] {
		if b, err := os.ReadFile(f); err == nil {
			pages = append(pages, string(b[:min(len(b), 16<<10)])) // the head and then some
		}
	}
	return pages
}

// diffFrom is a from a little before where it first differs from b, with its length.
func diffFrom(a, b string) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	return fmt.Sprintf("[%d bytes, from %d] %s", len(a), max(0, i-40), a[max(0, i-40):])
}

func clipTest(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}
