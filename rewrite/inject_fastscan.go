package rewrite

// Most pages start the same way: a doctype, <html>, <head>, and <meta charset> as the head's
// first element (the HTML5 boilerplate and every common framework write it so), which decides
// the insertion point — right after that meta. Finding it costs the tokenizer about as much as
// the rest of an injection into a small page. fastScan reads exactly that shape from the bytes
// of the tokenizer's first read and decides as the tokenizer's walk would; anything else in
// front of the <meta charset> — a comment, a title, a script, text, a CSP meta, an http-equiv, an
// entity or an unusual character in a tag — and it gives up without a trace, and the tokenizer
// reads the document from the start as before. After the decision the tokenizer walks the rest
// of the head from the end of that meta: a tokenizer starts in the data state, which is where
// one that had read the tokens before would be (none of them is a raw-text element).
// TestInjectFastScanAgrees and FuzzInjectFastScan compare the two on every input, feeding and cap.

// fastScanRead is how much fastScan reads in one go: what the tokenizer's first read asks for
// (its buffer is 4 KiB).
const fastScanRead = 4096

// fastScan decides the insertion point for a document that starts in the usual way, reading
// src once into the recorder (no more than the tokenizer's first read would). It reports false,
// having changed nothing but the recorded bytes, when the document does not start that way or
// its first read does not reach the <meta charset>.
func (in *Injector) fastScan() bool {
	if in.slowOnly {
		return false
	}
	in.rec.readOnce(fastScanRead - in.rec.len())
	from := in.rec.pos
	b := in.rec.bytes(from, in.rec.end())
	for i := 0; ; {
		for i < len(b) && isSpaceByte(b[i]) {
			i++
		}
		if i == len(b) || b[i] != '<' {
			return false // the end of what was read, or text
		}
		if end, ok := scanDoctype(b, i); ok {
			i = end
			continue
		}
		name, end, charset, ok := scanSimpleTag(b, i)
		if !ok {
			return false
		}
		switch name {
		case "html", "head":
		case "meta":
			if charset {
				if from+int64(i) >= charsetWindow {
					return false
				}
				at := from + int64(end)
				in.z = in.s.tokenizer()
				in.rec.pos, in.consumed, in.lastSafeEnd = at, at, at
				in.decide(at, at)
				return true
			}
		default:
			return false
		}
		i = end
	}
}

// readOnce reads src once into the recorder, at most n bytes and no more than the cap allows,
// as the tokenizer's reads through Read would; nothing when src has failed.
func (r *recorder) readOnce(n int) {
	if r.err != nil {
		return
	}
	if r.limit > 0 {
		n = min(n, r.limit-r.len())
	}
	if n <= 0 {
		return
	}
	if r.off > 0 && cap(r.buf)-len(r.buf) < n {
		k := copy(r.buf, r.buf[r.off:])
		r.buf, r.off = r.buf[:k], 0
	}
	if cap(r.buf)-len(r.buf) < n {
		grown := make([]byte, len(r.buf), len(r.buf)+n)
		copy(grown, r.buf)
		r.buf = grown
	}
	m, err := r.src.Read(r.buf[len(r.buf) : len(r.buf)+n])
	r.buf = r.buf[:len(r.buf)+m]
	r.err = err
}

// scanDoctype reads a plain `<!DOCTYPE …>` (letters, digits and spaces inside) at b[i:],
// returning the index after it.
func scanDoctype(b []byte, i int) (int, bool) {
	const open = "<!doctype"
	if len(b)-i < len(open) || !foldEqual(b[i:i+len(open)], open) {
		return 0, false
	}
	for j := i + len(open); j < len(b); j++ {
		switch c := b[j]; {
		case c == '>':
			return j + 1, true
		case isSpaceByte(c), c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		default:
			return 0, false
		}
	}
	return 0, false
}

// scanSimpleTag reads a start tag at b[i:] whose name and attributes are plain — names of
// letters, digits, '-', '_', ':' and '.', values quoted without '&', NUL or CR, or unquoted of
// such characters and a few more ('/', ';', ',', '+', '%', '#', '?', '@', '=') — and returns its lower-cased name if it is html, head or meta (else ""), the
// index after it, and for a meta whether it declares a charset. ok is false for anything else,
// and for a meta with http-equiv or an empty charset, which the tokenizer's walk reads.
func scanSimpleTag(b []byte, i int) (name string, end int, charset, ok bool) {
	j := i + 1
	start := j
	for j < len(b) && isTagNameByte(b[j]) {
		j++
	}
	if j == start || j == len(b) || !isLetter(b[start]) {
		return "", 0, false, false
	}
	switch tag := b[start:j]; {
	case foldEqual(tag, "html"):
		name = "html"
	case foldEqual(tag, "head"):
		name = "head"
	case foldEqual(tag, "meta"):
		name = "meta"
	default:
		return "", 0, false, false
	}
	sawCharset := false
	for {
		ws := j
		for j < len(b) && isSpaceByte(b[j]) {
			j++
		}
		if j == len(b) {
			return "", 0, false, false
		}
		switch b[j] {
		case '>':
			return name, j + 1, charset, true
		case '/':
			if j+1 < len(b) && b[j+1] == '>' {
				return name, j + 2, charset, true
			}
			return "", 0, false, false
		}
		if j == ws {
			return "", 0, false, false // attributes run together: the tokenizer's reading
		}
		ks := j
		for j < len(b) && isAttrNameByte(b[j]) {
			j++
		}
		if j == ks || j == len(b) {
			return "", 0, false, false
		}
		key := b[ks:j]
		var val []byte
		k := j
		for k < len(b) && isSpaceByte(b[k]) {
			k++
		}
		if k < len(b) && b[k] == '=' {
			k++
			for k < len(b) && isSpaceByte(b[k]) {
				k++
			}
			if k == len(b) {
				return "", 0, false, false
			}
			if q := b[k]; q == '"' || q == '\'' {
				vs := k + 1
				for k = vs; k < len(b) && b[k] != q; k++ {
					if c := b[k]; c == '&' || c == 0 || c == '\r' {
						return "", 0, false, false
					}
				}
				if k == len(b) {
					return "", 0, false, false
				}
				val = b[vs:k]
				k++
			} else {
				vs := k
				for k < len(b) && isUnquotedValueByte(b[k]) {
					k++
				}
				if k == vs || k == len(b) || !(isSpaceByte(b[k]) || b[k] == '>') {
					return "", 0, false, false
				}
				val = b[vs:k]
			}
			j = k
		}
		if name == "meta" {
			switch {
			case foldEqual(key, "http-equiv"):
				return "", 0, false, false
			case foldEqual(key, "charset") && !sawCharset:
				sawCharset = true
				if isHTMLSpace(val) {
					return "", 0, false, false // an empty charset: not a declaration
				}
				charset = true
			}
		}
	}
}

// foldEqual reports whether b is lower, ASCII case-insensitively; lower is lower-case ASCII.
func foldEqual(b []byte, lower string) bool {
	if len(b) != len(lower) {
		return false
	}
	for i := range b {
		c := b[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func isTagNameByte(c byte) bool { return isLetter(c) || c >= '0' && c <= '9' || c == '-' }

func isAttrNameByte(c byte) bool {
	return isLetter(c) || c >= '0' && c <= '9' || c == '-' || c == '_' || c == ':' || c == '.'
}

func isUnquotedValueByte(c byte) bool {
	return isAttrNameByte(c) || c == '/' || c == ';' || c == ',' || c == '+' || c == '%' || c == '#' || c == '?' || c == '@' || c == '='
}
