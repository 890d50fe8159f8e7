package rewrite

import (
	"sync"

	"golang.org/x/net/html"
)

// Every injected page used to allocate its own tokenizer (a 4 KiB buffer), recorder buffer and
// output buffer, most of the injection's cost on a small page once the garbage collector's share
// is counted. An Injector borrows them from scratchPool instead and gives them back once its
// output is drained and it only copies src (phaseRaw) or has ended (phaseDone): from then on it
// never looks at them again, and it drops its pointers so that a mistaken later use fails loudly
// instead of reading another document's bytes.

// maxPooledBuffer is the largest buffer kept for the next document; a page whose head needed
// more lets its buffer go to the garbage collector. It is the default MaxPrefix (the most a head
// is held back): a page with a big inline script or state in its head (100 KB is common for
// server-rendered apps) grew the recorder and the output past the former 32 KiB, and so
// allocated both anew on every visit (624 against 254 KB a page, BenchmarkInjectBigHeadScript;
// OPEN-ITEMS 67). The price is memory held by the pool: at most two such buffers per pooled
// scratch (a few per core), which the pool lets go after two garbage collections unused. The
// tokenizer's own buffer grows too and is not kept: the html package has no Reset, and a
// scratch's tokenizer is reset to a copy of a new one (tokenizer), with a new one's buffer.
const maxPooledBuffer = defaultMaxPrefix

// scratch is what an Injector needs while it holds back and tokenizes the head of a document.
type scratch struct {
	rec   recorder
	z     html.Tokenizer // reset from fresh for every document
	fresh html.Tokenizer // a new tokenizer reading rec, as html.NewTokenizer made it
	out   []byte
	edits []edit
}

var scratchPool = sync.Pool{New: func() any {
	s := &scratch{}
	s.fresh = *html.NewTokenizer(&s.rec)
	return s
}}

// tokenizer returns the scratch's tokenizer reset to a new one reading the recorder. The html
// package has no Reset; a copy of the tokenizer as NewTokenizer made it is one (its buffer
// empty, its state at the start of a document), and reuses the buffer NewTokenizer allocated.
func (s *scratch) tokenizer() *html.Tokenizer {
	s.z = s.fresh
	return &s.z
}

// releaseScratch gives the scratch back to the pool once nothing of it is in use: the output
// drained, the tokens no longer read. Safe to call more than once.
func (in *Injector) releaseScratch() {
	s := in.s
	if s == nil || in.outPos < len(in.out) || (in.phase != phaseRaw && in.phase != phaseDone) {
		return
	}
	in.s, in.rec, in.z = nil, nil, nil
	clear(in.edits[:cap(in.edits)]) // no tag or rewritten meta kept alive by the pool
	s.out, s.edits = in.out[:0], in.edits[:0]
	in.out, in.edits = nil, nil
	if cap(s.out) > maxPooledBuffer {
		s.out = nil
	}
	if cap(s.rec.buf) > maxPooledBuffer {
		s.rec.buf = nil
	}
	s.rec.src, s.rec.err = nil, nil
	s.z = html.Tokenizer{} // drop what the tokenizer read
	scratchPool.Put(s)
}
